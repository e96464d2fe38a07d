//===- CpuFeaturesTest.cpp - the runtime's check of an artifact's CPU -----===//
#include "mbt/common/CpuFeatures.h"
#include "mbt/runtime/CpuFeatures.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

namespace {

using mbt::runtime::cpuHasFeature;
using mbt::runtime::missingCpuFeatures;

/// The flags of /proc/cpuinfo (empty where there is none).
std::set<std::string> cpuinfoFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      return {std::istream_iterator<std::string>(words),
              std::istream_iterator<std::string>()};
    }
  return {};
}

#if defined(__x86_64__)
TEST(CpuFeatures, TheRuntimeChecksEveryFeatureTheCompilerRecords) {
  // A feature the compiler writes into a manifest that the runtime could
  // not check would refuse every artifact of a CPU that has it.
  for (const char *feature : mbt::kCheckedCpuFeatures)
    EXPECT_TRUE(cpuHasFeature(feature).has_value()) << feature;
}

TEST(CpuFeatures, AgreesWithTheKernelsFlags) {
  // The kernel's names of a few (/proc/cpuinfo spells some differently):
  // catches a feature checked under another's name.
  std::set<std::string> flags = cpuinfoFlags();
  if (flags.empty())
    GTEST_SKIP() << "no /proc/cpuinfo flags";
  for (auto [feature, flag] :
       {std::pair<const char *, const char *>{"avx", "avx"},
        {"avx2", "avx2"},
        {"fma", "fma"},
        {"sse4.2", "sse4_2"},
        {"avx512f", "avx512f"},
        {"avx512bw", "avx512bw"},
        {"avx512bf16", "avx512_bf16"},
        {"avx512fp16", "avx512_fp16"},
        {"amx-tile", "amx_tile"}})
    EXPECT_EQ(*cpuHasFeature(feature), flags.count(flag) == 1) << feature;
}
#endif

TEST(CpuFeatures, MissingListsWhatThisCpuLacksOrCannotCheck) {
  EXPECT_TRUE(missingCpuFeatures({}).empty());
  EXPECT_FALSE(cpuHasFeature("no-such-feature").has_value());
  std::vector<std::string> missing =
      missingCpuFeatures({"no-such-feature", "another"});
  EXPECT_EQ(missing, (std::vector<std::string>{"no-such-feature", "another"}));
  // What this CPU has is not missing; what it lacks is, in order.
  std::vector<std::string> has, lacks;
  for (const char *feature : mbt::kCheckedCpuFeatures)
    (cpuHasFeature(feature).value_or(false) ? has : lacks).push_back(feature);
  EXPECT_TRUE(missingCpuFeatures(has).empty());
  EXPECT_EQ(missingCpuFeatures(lacks), lacks);
}

} // namespace
