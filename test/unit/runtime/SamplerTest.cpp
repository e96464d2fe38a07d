//===- SamplerTest.cpp - Per-epoch data order -----------------------------===//

#include "mbt/runtime/Sampler.h"

#include "mbt/runtime/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

using namespace mbt::runtime;

namespace {

bool isPermutation(std::vector<int64_t> order) {
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

TEST(SamplerTest, PermutationContainsEveryIndexExactlyOnce) {
  for (int64_t n : {0, 1, 2, 3, 10, 1000, 60000})
    EXPECT_TRUE(isPermutation(epochPermutation(n, 42, 3))) << "n = " << n;
}

TEST(SamplerTest, SameSeedAndEpochGiveTheSameOrder) {
  EXPECT_EQ(epochPermutation(5000, 9, 2), epochPermutation(5000, 9, 2));
}

TEST(SamplerTest, EpochsAndSeedsGiveDifferentOrders) {
  std::vector<int64_t> base = epochPermutation(1000, 9, 0);
  EXPECT_NE(base, epochPermutation(1000, 9, 1));
  EXPECT_NE(base, epochPermutation(1000, 10, 0));
  std::vector<int64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), int64_t(0));
  EXPECT_NE(base, identity);
}

// Pins the algorithm (Fisher-Yates from the top, Lemire bounded draws over
// the (seed, epoch, "SHUF") Philox stream): a change here silently changes
// every run's data order, so it must be deliberate. The expected order was
// cross-checked with an independent Python transcription of the algorithm.
TEST(SamplerTest, OrderIsPinnedForAFixedSeed) {
  std::vector<int64_t> expected = {2, 0, 4, 1, 5, 9, 8, 3, 6, 7};
  EXPECT_EQ(epochPermutation(10, 42, 0), expected);
}

TEST(SamplerTest, EveryPositionIsRoughlyUniform) {
  // Over many seeds, element 0 should land in each of 4 slots ~1/4 of the
  // time (a biased shuffle such as the naive swap-with-any fails this).
  std::vector<int> where(4, 0);
  for (uint64_t seed = 0; seed < 8000; ++seed) {
    std::vector<int64_t> order = epochPermutation(4, seed, 0);
    ++where[std::find(order.begin(), order.end(), 0) - order.begin()];
  }
  for (int count : where)
    EXPECT_NEAR(count, 2000, 200);
}

TEST(SamplerTest, BatchesWalkThePermutationAndKeepTheShortLastBatch) {
  EpochBatches batches(10, 4, 1, 0);
  ASSERT_EQ(batches.numBatches(), 3);
  EXPECT_EQ(batches.batchLength(0), 4);
  EXPECT_EQ(batches.batchLength(1), 4);
  EXPECT_EQ(batches.batchLength(2), 2);
  std::vector<int64_t> walked;
  for (int64_t b = 0; b < batches.numBatches(); ++b)
    walked.insert(walked.end(), batches.batch(b),
                  batches.batch(b) + batches.batchLength(b));
  EXPECT_EQ(walked, epochPermutation(10, 1, 0));
}

TEST(SamplerTest, ExactMultipleHasNoEmptyLastBatch) {
  EpochBatches batches(12, 4, 1, 0);
  EXPECT_EQ(batches.numBatches(), 3);
  EXPECT_EQ(batches.batchLength(2), 4);
}

TEST(SamplerTest, RejectsNonPositiveBatchSize) {
  EXPECT_THROW(EpochBatches(10, 0, 1, 0), RuntimeError);
}

// Steps planned elsewhere (length batching): each step its own run of the
// order and its own padded width.
TEST(SamplerTest, PlannedStepsKeepTheirSamplesAndWidths) {
  EpochBatches steps({7, 2, 5, 0, 1}, {0, 2, 3, 5}, {12, 30, 4});
  ASSERT_EQ(steps.numBatches(), 3);
  EXPECT_EQ(steps.batchLength(0), 2);
  EXPECT_EQ(steps.batchLength(1), 1);
  EXPECT_EQ(steps.batchLength(2), 2);
  EXPECT_EQ(steps.batch(1)[0], 5);
  EXPECT_EQ(steps.batch(2)[1], 1);
  EXPECT_EQ(steps.batchWidth(1), 30);
  // A permutation's batches have no planned width.
  EXPECT_EQ(EpochBatches(10, 4, 1, 0).batchWidth(0), 0);
}

TEST(SamplerTest, RejectsPlannedStepsThatDoNotCoverTheOrder) {
  EXPECT_THROW(EpochBatches({1, 2, 3}, {0, 2}), RuntimeError);       // short
  EXPECT_THROW(EpochBatches({1, 2, 3}, {0, 2, 2, 3}), RuntimeError); // empty
  EXPECT_THROW(EpochBatches({1, 2, 3}, {1, 3}), RuntimeError);       // offset
  EXPECT_THROW(EpochBatches({1, 2, 3}, {0, 3}, {4, 5}), RuntimeError);
}

} // namespace
