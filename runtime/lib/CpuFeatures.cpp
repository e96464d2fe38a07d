//===- CpuFeatures.cpp - whether this CPU runs an artifact's code ---------===//
#include "mbt/runtime/CpuFeatures.h"

#include <cstring>
#include <utility>

namespace mbt {
namespace runtime {
namespace {

/// kCheckedCpuFeatures and whether this CPU has each:
/// __builtin_cpu_supports takes its name as a literal only.
const std::vector<std::pair<const char *, bool>> &hostFeatures() {
  static const std::vector<std::pair<const char *, bool>> features = [] {
    std::vector<std::pair<const char *, bool>> all;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
#define MBT_CPU_FEATURE(NAME)                                                  \
  all.emplace_back(NAME, bool(__builtin_cpu_supports(NAME)));
    MBT_CPU_FEATURE("sse4.2")
    MBT_CPU_FEATURE("popcnt")
    MBT_CPU_FEATURE("avx")
    MBT_CPU_FEATURE("avx2")
    MBT_CPU_FEATURE("fma")
    MBT_CPU_FEATURE("f16c")
    MBT_CPU_FEATURE("bmi")
    MBT_CPU_FEATURE("bmi2")
    MBT_CPU_FEATURE("lzcnt")
    MBT_CPU_FEATURE("movbe")
    MBT_CPU_FEATURE("avxvnni")
    MBT_CPU_FEATURE("avx512f")
    MBT_CPU_FEATURE("avx512bw")
    MBT_CPU_FEATURE("avx512dq")
    MBT_CPU_FEATURE("avx512vl")
    MBT_CPU_FEATURE("avx512cd")
    MBT_CPU_FEATURE("avx512vbmi")
    MBT_CPU_FEATURE("avx512vbmi2")
    MBT_CPU_FEATURE("avx512ifma")
    MBT_CPU_FEATURE("avx512vnni")
    MBT_CPU_FEATURE("avx512bitalg")
    MBT_CPU_FEATURE("avx512vpopcntdq")
    MBT_CPU_FEATURE("avx512bf16")
    MBT_CPU_FEATURE("avx512fp16")
    MBT_CPU_FEATURE("gfni")
    MBT_CPU_FEATURE("vaes")
    MBT_CPU_FEATURE("vpclmulqdq")
    MBT_CPU_FEATURE("amx-tile")
    MBT_CPU_FEATURE("amx-int8")
    MBT_CPU_FEATURE("amx-bf16")
#undef MBT_CPU_FEATURE
#endif
    return all;
  }();
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
