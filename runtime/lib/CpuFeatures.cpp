//===- CpuFeatures.cpp - whether this CPU runs an artifact's code ---------===//
#include "mbt/runtime/CpuFeatures.h"

#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace mbt {
namespace runtime {
namespace {

using FeatureTable = std::vector<std::pair<const char *, bool>>;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/// kCheckedCpuFeatures and whether this CPU has each (and the OS keeps its
/// registers): __builtin_cpu_supports takes its name as a literal only.
FeatureTable detectFeatures() {
  FeatureTable all;
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
FeatureTable detectFeatures() {
  FeatureTable all;
#if defined(__x86_64__)
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (flags.empty() && std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string word; words >> word;)
        flags.insert(word);
    }
#define MBT_CPU_FEATURE(NAME, FLAG) all.emplace_back(NAME, flags.count(FLAG));
#include "mbt/common/CpuFeatures.def"
#undef MBT_CPU_FEATURE
#endif
  return all;
}
#endif

const FeatureTable &hostFeatures() {
  static const FeatureTable features = detectFeatures();
  return features;
}

} // namespace

std::optional<bool> cpuHasFeature(const std::string &feature) {
  for (const auto &[name, has] : hostFeatures())
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
