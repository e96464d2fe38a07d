//===- MetricsLogTest.cpp - metrics.jsonl lines ---------------------------===//

#include "mbt/runtime/MetricsLog.h"

#include "TestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>

using namespace mbt::runtime;
using mbt::test::TempDir;

namespace {

TEST(MetricsLogTest, LineHasFieldsInOrderAndOneValuePerOutput) {
  EXPECT_EQ(formatMetricsLine(1, 469, 3, "test", {"loss", "acc"}, {0.25, 0.5}),
            "{\"epoch\":1,\"step\":469,\"model\":3,\"split\":\"test\","
            "\"loss\":0.25,\"acc\":0.5}\n");
}

TEST(MetricsLogTest, NonFiniteValuesBecomeNull) {
  std::string line = formatMetricsLine(
      2, 10, 0, "train", {"loss"}, {std::numeric_limits<double>::infinity()});
  EXPECT_TRUE(nlohmann::json::parse(line)["loss"].is_null());
}

TEST(MetricsLogTest, OutputNamedLikeAFieldIsPrefixed) {
  nlohmann::json line = nlohmann::json::parse(
      formatMetricsLine(2, 10, 0, "train", {"loss", "step"}, {1.0, 2.0}));
  EXPECT_EQ(line["step"], 10);
  EXPECT_EQ(line["metric_step"], 2.0);
}

TEST(MetricsLogTest, ResetEmptiesAndAppendAccumulates) {
  TempDir dir;
  MetricsLog log(dir.path());
  log.append("old\n");
  log.reset();
  log.append("a\n");
  log.append("b\n");
  EXPECT_EQ(mbt::test::readWholeFile(log.path()), "a\nb\n");
}

TEST(MetricsLogTest, EmptyDirectoryMeansNoFile) {
  MetricsLog log("");
  log.reset();
  log.append("ignored\n");
  EXPECT_EQ(log.path(), "");
}

} // namespace
