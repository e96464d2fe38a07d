//===- StepPlanTest.cpp - step plans as JSONL files -----------------------===//
//
// A plan written by formatStepPlan reads back as the same steps; a bad
// line is an error naming the file and line; checkStepPlan rejects a plan
// that does not take every sample of the data once, each within its
// step's padded length.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/StepPlan.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace mbt::runtime;
using mbt::test::errorOf;
using mbt::test::TempDir;
using ::testing::HasSubstr;

namespace {

LengthGroup step(std::vector<int64_t> samples, int64_t padded) {
  LengthGroup group;
  group.samples = std::move(samples);
  group.paddedLength = padded;
  return group;
}

TEST(StepPlanTest, WrittenPlanReadsBack) {
  TempDir dir;
  std::vector<LengthGroup> steps{step({3, 0}, 7), step({1}, 2),
                                 step({2, 4, 5}, 9)};
  std::string path = dir.file("plan.jsonl");
  writeFileAtomically(path, formatStepPlan(steps));
  std::vector<LengthGroup> read = readStepPlan(path);
  ASSERT_EQ(read.size(), steps.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    EXPECT_EQ(read[s].samples, steps[s].samples);
    EXPECT_EQ(read[s].paddedLength, steps[s].paddedLength);
  }
}

TEST(StepPlanTest, BadLinesNameTheFileAndLine) {
  TempDir dir;
  auto errorFor = [&](const std::string &text) {
    std::string path = dir.file("plan.jsonl");
    writeFileAtomically(path, text);
    return errorOf([&] { readStepPlan(path); });
  };
  EXPECT_THAT(errorFor("{\"samples\": [0], \"padded_length\": 3}\n[1, 2]\n"),
              HasSubstr("plan.jsonl:2: expected a JSON object"));
  EXPECT_THAT(errorFor("\n{\"samples\": [], \"padded_length\": 3}\n"),
              HasSubstr("plan.jsonl:2: \"samples\" must be a non-empty array"));
  EXPECT_THAT(errorFor("{\"samples\": [0, -1], \"padded_length\": 3}\n"),
              HasSubstr("plan.jsonl:1: sample indices must be non-negative"));
  EXPECT_THAT(errorFor("{\"samples\": [0], \"padded_length\": 0}\n"),
              HasSubstr("plan.jsonl:1: \"padded_length\" must be a positive"));
  EXPECT_THAT(errorFor("{\"samples\": [0, \"padded_length\": 3}\n"),
              HasSubstr("plan.jsonl:1: expected a JSON object"));
  EXPECT_THAT(errorFor("\n\n"), HasSubstr("the plan has no steps"));
  EXPECT_THAT(errorOf([&] { readStepPlan(dir.file("missing.jsonl")); }),
              HasSubstr("cannot open"));
}

TEST(StepPlanTest, PlanMustTakeEverySampleOnceWithinItsPadding) {
  std::vector<int64_t> lengths{4, 2, 7};
  EXPECT_NO_THROW(
      checkStepPlan({step({2}, 7), step({0, 1}, 4)}, lengths, "data"));
  EXPECT_THAT(errorOf([&] {
                checkStepPlan({step({2, 3}, 7), step({0, 1}, 4)}, lengths,
                              "data");
              }),
              HasSubstr("takes sample 3, but 'data' has 3 samples"));
  EXPECT_THAT(errorOf([&] {
                checkStepPlan({step({2, 0}, 7), step({0, 1}, 4)}, lengths,
                              "data");
              }),
              HasSubstr("takes sample 0 more than once"));
  EXPECT_THAT(errorOf([&] {
                checkStepPlan({step({2}, 6), step({0, 1}, 4)}, lengths, "data");
              }),
              HasSubstr("pads to 6 tokens, but its sample 2 has 7"));
  EXPECT_THAT(errorOf([&] {
                checkStepPlan({step({2}, 7), step({0}, 4)}, lengths, "data");
              }),
              HasSubstr("leaves out sample 1 of 'data'"));
}

} // namespace
