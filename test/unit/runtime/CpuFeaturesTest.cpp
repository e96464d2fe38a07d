//===- CpuFeaturesTest.cpp - the runtime's check of an artifact's CPU -----===//
#include "mbt/common/CpuFeatures.h"
#include "mbt/runtime/CpuFeatures.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

using mbt::runtime::cpuFeaturesFromCpuinfo;
using mbt::runtime::CpuFeatureTable;
using mbt::runtime::cpuHasFeature;
using mbt::runtime::hostCpuFeatures;
using mbt::runtime::missingCpuFeatures;

/// The features of `table` it marks present, in its order.
std::vector<std::string> present(const CpuFeatureTable &table) {
  std::vector<std::string> names;
  for (const auto &[name, has] : table)
    if (has)
      names.push_back(name);
  return names;
}

TEST(CpuFeatures, TheCpuinfoReaderMapsTheKernelsFlags) {
  // The kernel spells some features its own way (sse4_2, abm for lzcnt,
  // avx512_bf16); only the first processor's flags count.
  std::istringstream cpuinfo("processor\t: 0\n"
                             "model name\t: some flags in a name\n"
                             "flags\t\t: fpu sse4_2 abm avx2 avx512_bf16 "
                             "amx_tile\n"
                             "processor\t: 1\n"
                             "flags\t\t: avx512f\n");
  CpuFeatureTable table = cpuFeaturesFromCpuinfo(cpuinfo);
  ASSERT_EQ(table.size(), std::size(mbt::kCheckedCpuFeatures));
  for (size_t i = 0; i < table.size(); ++i)
    EXPECT_STREQ(table[i].first, mbt::kCheckedCpuFeatures[i]);
  EXPECT_EQ(present(table),
            (std::vector<std::string>{"sse4.2", "avx2", "lzcnt", "avx512bf16",
                                      "amx-tile"}));
  std::istringstream none("processor\t: 0\nflagsome: avx2\n");
  EXPECT_TRUE(present(cpuFeaturesFromCpuinfo(none)).empty());
}

#if defined(__x86_64__)
TEST(CpuFeatures, TheRuntimeChecksEveryFeatureTheCompilerRecords) {
  // A feature the compiler writes into a manifest that the runtime could
  // not check would refuse every artifact of a CPU that has it.
  for (const char *feature : mbt::kCheckedCpuFeatures)
    EXPECT_TRUE(cpuHasFeature(feature).has_value()) << feature;
}

TEST(CpuFeatures, AgreesWithTheKernelsFlags) {
  // Built with GCC, the runtime asks __builtin_cpu_supports; the kernel's
  // flags must give the same answer for every feature, or one of them is
  // checked under another's name (or mapped to the wrong flag in
  // CpuFeatures.def, which the other compilers' runtimes read).
  std::ifstream in("/proc/cpuinfo");
  if (!in)
    GTEST_SKIP() << "no /proc/cpuinfo";
  CpuFeatureTable fromFlags = cpuFeaturesFromCpuinfo(in);
  if (present(fromFlags).empty())
    GTEST_SKIP() << "no x86 flags in /proc/cpuinfo";
  const CpuFeatureTable &host = hostCpuFeatures();
  ASSERT_EQ(host.size(), fromFlags.size());
  for (size_t i = 0; i < host.size(); ++i)
    EXPECT_EQ(host[i].second, fromFlags[i].second) << host[i].first;
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
