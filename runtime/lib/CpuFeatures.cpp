//===- CpuFeatures.cpp - whether this CPU runs an artifact's code ---------===//
#include "mbt/runtime/CpuFeatures.h"

#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace mbt {
namespace runtime {

CpuFeatureTable cpuFeaturesFromCpuinfo(std::istream &cpuinfo) {
  std::string line;
  std::set<std::string> flags;
  while (flags.empty() && std::getline(cpuinfo, line)) {
    // "flags\t\t: fpu vme ...": the key, then blanks, then the colon.
    size_t colon = line.find(':');
    if (colon == std::string::npos || line.rfind("flags", 0) != 0 ||
        line.find_first_not_of(" \t", 5) != colon)
      continue;
    std::istringstream words(line.substr(colon + 1));
    for (std::string word; words >> word;)
      flags.insert(word);
  }
  CpuFeatureTable all;
#define MBT_CPU_FEATURE(NAME, FLAG) all.emplace_back(NAME, flags.count(FLAG));
#include "mbt/common/CpuFeatures.def"
#undef MBT_CPU_FEATURE
  return all;
}

namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/// kCheckedCpuFeatures and whether this CPU has each (and the OS keeps its
/// registers): __builtin_cpu_supports takes its name as a literal only.
CpuFeatureTable detectFeatures() {
  CpuFeatureTable all;
  __builtin_cpu_init();
#define MBT_CPU_FEATURE(NAME, FLAG)                                            \
  all.emplace_back(NAME, bool(__builtin_cpu_supports(NAME)));
#include "mbt/common/CpuFeatures.def"
#undef MBT_CPU_FEATURE
  return all;
}
#else
/// The same from the kernel's flags in /proc/cpuinfo, for compilers whose
/// __builtin_cpu_supports lacks some of the names (Clang before 19), and
/// nothing on other CPUs.
CpuFeatureTable detectFeatures() {
#if defined(__x86_64__)
  std::ifstream in("/proc/cpuinfo");
  return cpuFeaturesFromCpuinfo(in);
#else
  return {};
#endif
}
#endif

} // namespace

const CpuFeatureTable &hostCpuFeatures() {
  static const CpuFeatureTable features = detectFeatures();
  return features;
}

std::optional<bool> cpuHasFeature(const std::string &feature) {
  for (const auto &[name, has] : hostCpuFeatures())
    if (feature == name)
      return has;
  return std::nullopt;
}

std::vector<std::string>
missingCpuFeatures(const std::vector<std::string> &needed) {
  std::vector<std::string> missing;
  for (const std::string &feature : needed)
    if (!cpuHasFeature(feature).value_or(false))
      missing.push_back(feature);
  return missing;
}

} // namespace runtime
} // namespace mbt
