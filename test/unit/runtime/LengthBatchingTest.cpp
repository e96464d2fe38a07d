//===- LengthBatchingTest.cpp - Steps of variable-length samples ----------===//

#include "mbt/runtime/LengthBatching.h"
#include "mbt/runtime/Error.h"

#include <algorithm>
#include <cstdint>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <random>

using namespace mbt::runtime;
using ::testing::HasSubstr;

namespace {
/// ODB's synthetic length mix: 72% U[64,384), 22% U[384,1400), 6%
/// U[1400,4096).
std::vector<int64_t> odbMix(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> pick(0, 1);
  std::vector<int64_t> lengths;
  for (int64_t i = 0; i < n; ++i) {
    double p = pick(rng);
    int64_t lo = p < 0.72 ? 64 : p < 0.94 ? 384 : 1400;
    int64_t hi = p < 0.72 ? 384 : p < 0.94 ? 1400 : 4096;
    lengths.push_back(std::uniform_int_distribution<int64_t>(lo, hi - 1)(rng));
  }
  return lengths;
}

BatchingOptions options(BatchingStrategy strategy) {
  BatchingOptions o;
  o.strategy = strategy;
  o.tokenBudget = 8192;
  o.window = 1024;
  o.seed = 7;
  return o;
}

/// Every sample appears in exactly one step, and each step's padded length
/// covers its samples.
void expectEpochCovered(const std::vector<LengthGroup> &steps,
                        const std::vector<int64_t> &lengths) {
  std::vector<int> seen(lengths.size(), 0);
  for (const LengthGroup &step : steps) {
    ASSERT_FALSE(step.samples.empty());
    int64_t real = 0;
    for (int64_t s : step.samples) {
      ++seen[s];
      EXPECT_LE(lengths[s], step.paddedLength);
      real += lengths[s];
    }
    EXPECT_EQ(real, step.realTokens);
  }
  for (size_t i = 0; i < seen.size(); ++i)
    EXPECT_EQ(seen[i], 1) << "sample " << i;
}

const BatchingStrategy kAll[] = {
    BatchingStrategy::Fixed, BatchingStrategy::FixedShape,
    BatchingStrategy::GroupByLength, BatchingStrategy::Dynamic};
} // namespace

TEST(LengthBatching, EveryStrategyCoversTheEpochWithinTheBudget) {
  std::vector<int64_t> lengths = odbMix(5000, 1);
  for (BatchingStrategy strategy : kAll) {
    SCOPED_TRACE(batchingStrategyName(strategy));
    std::vector<LengthGroup> steps = planEpoch(lengths, options(strategy), 0);
    expectEpochCovered(steps, lengths);
    for (const LengthGroup &step : steps)
      EXPECT_LE(step.paddedTokens(), 8192);
  }
}

TEST(LengthBatching, FixedStepsHoldBudgetOverLongestSamples) {
  std::vector<int64_t> lengths = {10, 40, 20, 30, 5, 1};
  BatchingOptions o = options(BatchingStrategy::Fixed);
  o.tokenBudget = 100; // 100 // 40 = 2 samples a step
  std::vector<LengthGroup> steps = planEpoch(lengths, o, 0);
  ASSERT_EQ(steps.size(), 3u);
  for (const LengthGroup &step : steps)
    EXPECT_EQ(step.samples.size(), 2u);
  o.strategy = BatchingStrategy::FixedShape;
  for (const LengthGroup &step : planEpoch(lengths, o, 0))
    EXPECT_EQ(step.paddedLength, 40);
}

TEST(LengthBatching, GroupByLengthSortsEachWindow) {
  std::vector<int64_t> lengths = {1, 9, 2, 8, 3, 7, 4, 6};
  BatchingOptions o = options(BatchingStrategy::GroupByLength);
  o.tokenBudget = 18; // 2 samples of up to 9
  o.window = 8;
  std::vector<LengthGroup> steps = planEpoch(lengths, o, 0);
  BatchingStats stats = summarizeSteps(steps);
  EXPECT_EQ(stats.steps, 4);
  // Sorted pairs (9,8) (7,6) (4,3) (2,1): one padding token per step.
  EXPECT_EQ(stats.paddedTokens - stats.realTokens, 4);
}

namespace {
/// (padded length, samples) of each step, sorted.
std::vector<std::pair<int64_t, size_t>>
shapesOf(const std::vector<LengthGroup> &steps) {
  std::vector<std::pair<int64_t, size_t>> shapes;
  for (const LengthGroup &step : steps)
    shapes.emplace_back(step.paddedLength, step.samples.size());
  std::sort(shapes.begin(), shapes.end());
  return shapes;
}
} // namespace

TEST(LengthBatching, DynamicCutsTheSortedWindowAtTheLeastCost) {
  // One window: sorted 100, 60, 50, 50, 20, 10, 10, 10, budget 200.
  std::vector<int64_t> lengths = {10, 50, 100, 10, 20, 60, 50, 10};
  BatchingOptions o = options(BatchingStrategy::Dynamic);
  o.tokenBudget = 200;
  o.window = 8;
  // Steps cost more than any padding: the fewest steps (3), and of those
  // the least padded: [100] [60 50 50] [20 10 10 10] (360 tokens), where
  // ODB's greedy "as many as fit" gives [100 60] [50 50 20 10] [10 10] (420).
  o.stepCost = 1000000;
  std::vector<LengthGroup> steps = planEpoch(lengths, o, 0);
  expectEpochCovered(steps, lengths);
  EXPECT_EQ(shapesOf(steps), (std::vector<std::pair<int64_t, size_t>>{
                                 {20, 4}, {60, 3}, {100, 1}}));
  EXPECT_EQ(summarizeSteps(steps).paddedTokens, 360);
  // The least padding in 4 steps is 330 and in 5 it is 310 (none): a step
  // cost of 25 picks 4 steps (330 + 100 < 360 + 75 and < 310 + 125).
  o.stepCost = 25;
  steps = planEpoch(lengths, o, 0);
  EXPECT_EQ(shapesOf(steps), (std::vector<std::pair<int64_t, size_t>>{
                                 {10, 3}, {20, 1}, {60, 3}, {100, 1}}));
  // Steps cost nothing: no padding at all, equal lengths share a step.
  o.stepCost = 0;
  steps = planEpoch(lengths, o, 0);
  EXPECT_EQ(summarizeSteps(steps).paddedTokens, 310);
  EXPECT_EQ(summarizeSteps(steps).steps, 5);
}

TEST(LengthBatching, DynamicHoldsTheUnfilledShortStepForTheNextWindow) {
  DynamicBatcher batcher(/*tokenBudget=*/100, /*window=*/4,
                         /*stepCost=*/1000, /*seed=*/0, /*epoch=*/0);
  for (int64_t i = 0; i < 4; ++i)
    batcher.push(i, i == 0 ? 50 : 10);
  std::vector<LengthGroup> ready;
  while (batcher.hasStep())
    ready.push_back(batcher.popStep());
  // Two steps either way; [50] [10 10 10] pads less than [50 10] [10 10].
  // The short step holds 3 of 10: it waits for the next window.
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].samples, (std::vector<int64_t>{0}));
  for (int64_t i = 4; i < 8; ++i)
    batcher.push(i, 10);
  EXPECT_FALSE(batcher.hasStep()); // 3 held + 4 new = 7 < 10 slots
  batcher.finish();
  ASSERT_TRUE(batcher.hasStep());
  LengthGroup last = batcher.popStep();
  EXPECT_EQ(last.samples.size(), 7u);
  EXPECT_EQ(last.paddedLength, 10);
  EXPECT_FALSE(batcher.hasStep());
}

TEST(LengthBatching, DynamicPaddingIsUnderFivePercentOnTheOdbMix) {
  // At a window of 1024 (the default; docs/benchmarks.md has the sweep).
  std::vector<int64_t> lengths = odbMix(20000, 3);
  BatchingStats fixed =
      summarizeSteps(planEpoch(lengths, options(BatchingStrategy::Fixed), 0));
  BatchingStats dynamic =
      summarizeSteps(planEpoch(lengths, options(BatchingStrategy::Dynamic), 0));
  EXPECT_LT(dynamic.paddingRatio(), 0.05);
  EXPECT_GT(fixed.paddingRatio(), 0.30);
  EXPECT_LT(dynamic.steps, fixed.steps / 5);
  EXPECT_EQ(dynamic.samples, 20000);
  EXPECT_LE(dynamic.maxStepTokens, 8192);
}

TEST(LengthBatching, OrderIsSeededAndChangesWithTheEpoch) {
  std::vector<int64_t> lengths = odbMix(2000, 5);
  for (BatchingStrategy strategy : kAll) {
    SCOPED_TRACE(batchingStrategyName(strategy));
    auto samplesOf = [&](uint64_t seed, uint32_t epoch) {
      BatchingOptions o = options(strategy);
      o.seed = seed;
      std::vector<int64_t> flat;
      for (const LengthGroup &step : planEpoch(lengths, o, epoch))
        flat.insert(flat.end(), step.samples.begin(), step.samples.end());
      return flat;
    };
    EXPECT_EQ(samplesOf(1, 0), samplesOf(1, 0));
    EXPECT_NE(samplesOf(1, 0), samplesOf(1, 1));
    EXPECT_NE(samplesOf(1, 0), samplesOf(2, 0));
  }
}

TEST(LengthBatching, SamplesThatCannotFitAreErrors) {
  BatchingOptions o = options(BatchingStrategy::Dynamic);
  o.tokenBudget = 100;
  try {
    planEpoch({10, 101}, o, 0);
    FAIL() << "expected a RuntimeError";
  } catch (const RuntimeError &error) {
    EXPECT_THAT(error.what(),
                HasSubstr("sample 1 has 101 tokens, more than the token "
                          "budget 100"));
  }
  EXPECT_THROW(planEpoch({10, 0}, o, 0), RuntimeError);
  o.window = 0;
  EXPECT_THROW(planEpoch({10}, o, 0), RuntimeError);
  o.window = 4;
  o.stepCost = -2;
  EXPECT_THROW(planEpoch({10}, o, 0), RuntimeError);
  o = options(BatchingStrategy::Fixed);
  o.tokenBudget = 100;
  o.batchSize = 3;
  EXPECT_THROW(planEpoch({10, 50}, o, 0), RuntimeError); // 3 x 50 > 100
  o.batchSize = INT64_MAX; // no overflow in the check
  EXPECT_THROW(planEpoch({10, 50}, o, 0), RuntimeError);
  // Absurd windows and step costs are only "everything" and "fewest steps".
  o = options(BatchingStrategy::Dynamic);
  o.window = INT64_MAX;
  o.stepCost = INT64_MAX;
  BatchingStats huge = summarizeSteps(planEpoch(odbMix(500, 9), o, 0));
  o.window = 500;
  o.stepCost = int64_t(1) << 40;
  BatchingStats capped = summarizeSteps(planEpoch(odbMix(500, 9), o, 0));
  EXPECT_EQ(huge.steps, capped.steps);
  EXPECT_EQ(huge.paddedTokens, capped.paddedTokens);
  BatchingStrategy parsed;
  EXPECT_TRUE(parseBatchingStrategy("group-by-length", parsed));
  EXPECT_EQ(parsed, BatchingStrategy::GroupByLength);
  EXPECT_FALSE(parseBatchingStrategy("bucketed", parsed));
}
