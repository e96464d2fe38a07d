//===- ModelStatusTest.cpp - Divergence and the stopping policies ---------===//
//
// ModelStatus decides which models stop: early stopping after `patience`
// evaluations without a lower validation loss, and successive halving of
// the models still training by the leaderboard's key. Each test would fail
// if a policy stopped a model one evaluation early or late, kept the wrong
// half, ranked a NaN score above a number, or stopped a frozen model again.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/ModelStatus.h"

#include "mbt/runtime/Error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

using namespace mbt::runtime;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
/// Outputs whose leaderboard key (chooseRankKey) is the loss, and the
/// accuracy (output 1, higher first).
const std::vector<std::string> kByLoss = {"loss"};
const std::vector<std::string> kByAccuracy = {"loss", "acc"};

std::vector<int64_t> modelsOf(const std::vector<StoppedModel> &stopped) {
  std::vector<int64_t> models;
  for (const StoppedModel &s : stopped)
    models.push_back(s.model);
  return models;
}

TEST(ModelStatus, EarlyStoppingWaitsPatienceEvaluationsWithoutImprovement) {
  ModelStatus status(2);
  // Model 0 improves every time; model 1 never after its first loss.
  std::vector<std::vector<std::vector<double>>> evaluations = {
      {{1.0}, {1.0}}, {{0.9}, {1.0}}, {{0.8}, {1.5}}, {{0.7}, {1.0}}};
  std::vector<int64_t> stoppedAt;
  for (size_t e = 0; e < evaluations.size(); ++e) {
    auto stopped = status.applyStopping(evaluations[e], /*patience=*/3, false,
                                        kByLoss, "", 10 * (e + 1));
    for (const StoppedModel &s : stopped) {
      stoppedAt.push_back(s.model);
      EXPECT_THAT(s.reason, HasSubstr("no lower validation loss in 3"));
    }
  }
  // Equal is not lower: evaluations 2, 3 and 4 fail to improve on 1.0.
  EXPECT_THAT(stoppedAt, ElementsAre(1));
  EXPECT_THAT(status.stoppedSteps(), ElementsAre(0, 40));
  EXPECT_TRUE(status.training(0));
  EXPECT_FALSE(status.training(1));
  EXPECT_FALSE(status.diverged(1));
}

TEST(ModelStatus, HalvingStopsTheWorseHalfOfTheModelsStillTraining) {
  ModelStatus status(5);
  status.markDiverged(2, 3);
  // Accuracy (output 1) ranks, higher first; model 4's NaN is last.
  std::vector<std::vector<double>> held = {
      {0.5, 0.7}, {0.4, 0.9}, {0.1, 0.99}, {0.6, 0.6}, {kNaN, kNaN}};
  auto stopped =
      status.applyStopping(held, 0, /*halve=*/true, kByAccuracy, "", 7);
  // Of the 4 still training (not model 2), the best 2 (1, 0) go on.
  EXPECT_THAT(modelsOf(stopped), ElementsAre(3, 4));
  EXPECT_THAT(stopped[0].reason,
              HasSubstr("worse half of 4 on validation acc"));
  EXPECT_THAT(status.stoppedSteps(), ElementsAre(0, 0, 0, 7, 7));
  EXPECT_THAT(status.divergedSteps(), ElementsAre(0, 0, 3, 0, 0));
  // Halving again halves the two left, rounding the kept half up.
  stopped = status.applyStopping(held, 0, true, kByLoss, "", 9);
  EXPECT_THAT(modelsOf(stopped), ElementsAre(0));
}

TEST(ModelStatus, CheckpointKeepsEveryPolicysState) {
  ModelStatus status(2);
  status.markDiverged(0, 5);
  status.applyStopping({{1.0}, {2.0}}, 2, false, kByLoss, "", 1);
  RunCheckpoint checkpoint;
  status.saveTo(checkpoint);
  ModelStatus restored(2);
  restored.restoreFrom(checkpoint);
  // Model 1's one evaluation without improvement counts after the restore.
  auto stopped =
      restored.applyStopping({{1.0}, {2.0}}, 2, false, kByLoss, "", 2);
  EXPECT_THAT(modelsOf(stopped), ElementsAre());
  stopped = restored.applyStopping({{1.0}, {2.0}}, 2, false, kByLoss, "", 3);
  EXPECT_THAT(modelsOf(stopped), ElementsAre(1));
  EXPECT_THAT(restored.divergedSteps(), ElementsAre(5, 0));
}

TEST(ModelStatus, RanksExchangeSlicesThatMakeTheWholeStatus) {
  // Two ranks' statuses (models 0-2 and 3-4), exchanged as bytes and put
  // together, decide as the whole sweep's status would: a byte format that
  // dropped a field, or an assign at the wrong offset, changes the result.
  ModelStatus whole(5);
  whole.markDiverged(1, 7);
  whole.applyStopping({{1.0}, {1.0}, {1.0}, {3.0}, {1.0}}, 1, false, kByLoss,
                      "", 10);
  whole.stopModel(4, 12, "stopped by the caller");
  ModelStatus joined(5);
  joined.assign(0, ModelStatus::fromBytes(whole.slice(0, 3).toBytes()));
  joined.assign(3, ModelStatus::fromBytes(whole.slice(3, 2).toBytes()));
  EXPECT_EQ(joined.toBytes(), whole.toBytes());
  EXPECT_THAT(joined.divergedSteps(), ElementsAre(0, 7, 0, 0, 0));
  EXPECT_THAT(joined.stoppedSteps(), ElementsAre(0, 0, 0, 0, 12));
  EXPECT_EQ(joined.stopReasons()[4], "stopped by the caller");
  // Early stopping's counters came along: model 3 stops at its next
  // evaluation without a lower loss, in both.
  auto a = whole.applyStopping({{0.9}, {1.0}, {0.9}, {3.0}, {1.0}}, 1, false,
                               kByLoss, "", 20);
  auto b = joined.applyStopping({{0.9}, {1.0}, {0.9}, {3.0}, {1.0}}, 1, false,
                                kByLoss, "", 20);
  EXPECT_THAT(modelsOf(a), ElementsAre(3));
  EXPECT_THAT(modelsOf(b), ElementsAre(3));
  std::string bytes = whole.toBytes();
  EXPECT_THROW(ModelStatus::fromBytes(bytes.substr(0, bytes.size() - 1)),
               RuntimeError);
}

} // namespace
