//===- LeaderboardTest.cpp - Ranking, table and JSON ----------------------===//

#include "mbt/runtime/Leaderboard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <sstream>

using namespace mbt::runtime;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

ModelResult row(int64_t model, double loss, double acc, bool diverged = false) {
  ModelResult r;
  r.model = model;
  r.seed = 100 + model;
  r.hyper = {0.001 * (model + 1)};
  r.train = {loss, acc};
  r.test = {loss, acc};
  r.diverged = diverged;
  return r;
}

Leaderboard board(std::vector<std::string> outputs,
                  std::vector<ModelResult> rows) {
  Leaderboard b;
  b.hyperNames = {"lr"};
  b.outputs = std::move(outputs);
  b.rows = std::move(rows);
  return b;
}

std::vector<int64_t> order(const Leaderboard &b) {
  std::vector<int64_t> models;
  for (const ModelResult &r : b.rows)
    models.push_back(r.model);
  return models;
}

TEST(LeaderboardTest, RanksByAccuracyDescendingWhenPresent) {
  Leaderboard b = board({"loss", "acc"}, {row(0, 0.5, 0.80), row(1, 0.4, 0.90),
                                          row(2, 0.3, 0.85)});
  rankModels(b);
  EXPECT_EQ(order(b), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(b.rows[0].rank, 1);
  EXPECT_EQ(b.rows[2].rank, 3);
}

TEST(LeaderboardTest, WithoutATestSplitRanksAndShowsTheValidationSplit) {
  // A data set of the user's files may have no test split: its NaN test
  // means must not decide the order, and the table shows what did.
  std::vector<ModelResult> rows = {row(0, 0.5, kNaN), row(1, 0.4, kNaN),
                                   row(2, 0.3, kNaN)};
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].test = {kNaN, kNaN};
    rows[i].validation = {0.1, 0.7 + 0.1 * double(i % 2)};
  }
  Leaderboard b = board({"loss", "acc"}, rows);
  b.ranked = Leaderboard::Split::Validation;
  rankModels(b);
  EXPECT_EQ(order(b), (std::vector<int64_t>{1, 0, 2}));
  std::string table = formatLeaderboard(b);
  EXPECT_THAT(table, HasSubstr("validation_acc"));
  EXPECT_THAT(table, Not(HasSubstr("test_acc")));
  EXPECT_THAT(table, HasSubstr("0.8"));
}

TEST(LeaderboardTest, RanksByTheOutputTheSweepNames) {
  // rank_by = loss beats the accuracy default; rank_by = r2 ranks higher
  // first, rank_by = mae lower first.
  std::vector<ModelResult> rows = {row(0, 0.3, 0.80), row(1, 0.4, 0.90),
                                   row(2, 0.5, 0.85)};
  Leaderboard byLoss = board({"loss", "acc"}, rows);
  byLoss.rankBy = "loss";
  rankModels(byLoss);
  EXPECT_EQ(order(byLoss), (std::vector<int64_t>{0, 1, 2}));
  Leaderboard byR2 = board({"loss", "r2"}, rows);
  byR2.rankBy = "r2";
  rankModels(byR2);
  EXPECT_EQ(order(byR2), (std::vector<int64_t>{1, 2, 0}));
  Leaderboard byMae = board({"loss", "mae"}, rows);
  byMae.rankBy = "mae";
  rankModels(byMae);
  EXPECT_EQ(order(byMae), (std::vector<int64_t>{0, 2, 1}));
}

TEST(LeaderboardTest, RanksByLossAscendingWithoutAccuracy) {
  Leaderboard b = board({"loss", "f1"}, {row(0, 0.5, 0.80), row(1, 0.4, 0.90),
                                         row(2, 0.3, 0.85)});
  rankModels(b);
  EXPECT_EQ(order(b), (std::vector<int64_t>{2, 1, 0}));
}

TEST(LeaderboardTest, UsesTheLastAccuracyNamedOutput) {
  EXPECT_EQ(chooseRankKey({"loss", "acc", "top5", "accuracy"}).output, 3u);
  EXPECT_TRUE(chooseRankKey({"loss", "acc"}).descending);
  EXPECT_EQ(chooseRankKey({"loss"}).output, 0u);
  EXPECT_FALSE(chooseRankKey({"loss"}).descending);
  // outputs[0] is the loss even if someone names it "acc".
  EXPECT_EQ(chooseRankKey({"acc"}).output, 0u);
}

TEST(LeaderboardTest, NaNScoresAndDivergedModelsGoLast) {
  Leaderboard b =
      board({"loss", "acc"},
            {row(0, kNaN, kNaN, true), row(1, 0.4, kNaN), row(2, 0.3, 0.85),
             row(3, 0.6, 0.95, true), row(4, 0.5, 0.70)});
  rankModels(b);
  // Healthy finite first (by acc), then healthy NaN, then diverged by index.
  EXPECT_EQ(order(b), (std::vector<int64_t>{2, 4, 1, 0, 3}));
}

TEST(LeaderboardTest, TiesKeepModelOrder) {
  Leaderboard b =
      board({"loss"}, {row(2, 0.5, 0), row(0, 0.5, 0), row(1, 0.5, 0)});
  rankModels(b);
  EXPECT_EQ(order(b), (std::vector<int64_t>{0, 1, 2}));
}

TEST(LeaderboardTest, TableIsAlignedAndFlagsDivergence) {
  Leaderboard b =
      board({"loss", "acc"}, {row(0, 0.5, 0.8), row(1, kNaN, kNaN, true)});
  rankModels(b);
  std::string table = formatLeaderboard(b);
  std::istringstream lines(table);
  std::string header, rule, first, second;
  std::getline(lines, header);
  std::getline(lines, rule);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_THAT(
      header,
      HasSubstr("rank  model     lr  seed  test_loss  test_acc  status"));
  EXPECT_THAT(first, HasSubstr("ok"));
  EXPECT_THAT(second, HasSubstr("nan"));
  EXPECT_THAT(second, HasSubstr("diverged"));
  // Numeric columns are right-aligned: "test_acc" ends where the values end.
  size_t accEnd = header.find("test_acc") + 8;
  EXPECT_EQ(first.substr(accEnd - 3, 3), "0.8");
}

// A hyperparameter that is the same for every model is listed once under
// the table; the learning rate and those that differ are columns.
TEST(LeaderboardTest, ConstantHyperparametersGoUnderTheTable) {
  Leaderboard b = board({"loss"}, {row(0, 0.5, 0.8), row(1, 0.4, 0.9)});
  b.hyperNames = {"lr", "momentum", "beta", "dampening"};
  b.rows[0].hyper = {0.1, 0.9, 0.5, 0.0};
  b.rows[1].hyper = {0.1, 0.9, 0.7, 0.0};
  rankModels(b);
  std::string table = formatLeaderboard(b);
  std::istringstream lines(table);
  std::string header, rule, first, second, footer;
  std::getline(lines, header);
  std::getline(lines, rule);
  std::getline(lines, first);
  std::getline(lines, second);
  std::getline(lines, footer);
  EXPECT_THAT(header, HasSubstr("rank  model   lr  beta  seed  test_loss"));
  EXPECT_EQ(footer, "same for every model: momentum 0.9, dampening 0");
  // With one model there is nothing to compare: every value is a column.
  Leaderboard one = board({"loss"}, {row(0, 0.5, 0.8)});
  one.hyperNames = {"lr", "momentum"};
  one.rows[0].hyper = {0.1, 0.9};
  rankModels(one);
  EXPECT_THAT(formatLeaderboard(one), HasSubstr("lr  momentum  seed"));
}

TEST(LeaderboardTest, JsonHasOneObjectPerModelWithNullForNaN) {
  Leaderboard b =
      board({"loss", "acc"}, {row(0, 0.5, 0.8), row(1, kNaN, kNaN, true)});
  rankModels(b);
  nlohmann::json json = nlohmann::json::parse(leaderboardToJson(b));
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["rank"], 1);
  EXPECT_EQ(json[0]["model"], 0);
  EXPECT_EQ(json[0]["seed"], 100);
  EXPECT_DOUBLE_EQ(json[0]["lr"].get<double>(), 0.001);
  EXPECT_DOUBLE_EQ(json[0]["test_acc"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(json[0]["train_loss"].get<double>(), 0.5);
  EXPECT_EQ(json[0]["diverged"], false);
  EXPECT_TRUE(json[1]["test_loss"].is_null());
  EXPECT_EQ(json[1]["diverged"], true);
  // No train step to blame (it diverged at evaluation only): null.
  EXPECT_TRUE(json[1]["diverged_at_step"].is_null());
  EXPECT_TRUE(json[0]["diverged_at_step"].is_null());
}

// A model frozen by the train step carries the step where it diverged,
// in the table's status column and in the JSON.
TEST(LeaderboardTest, DivergedModelShowsItsStep) {
  Leaderboard b =
      board({"loss", "acc"}, {row(0, 0.5, 0.8), row(1, 2.3, 0.1, true)});
  b.rows[1].divergedStep = 17;
  rankModels(b);
  EXPECT_THAT(formatLeaderboard(b), HasSubstr("diverged at step 17"));
  nlohmann::json json = nlohmann::json::parse(leaderboardToJson(b));
  EXPECT_EQ(json[1]["diverged_at_step"], 17);
}

// Under a loss scale (precision f16) the table counts each model's skipped
// steps and the JSON adds them and the final scale; without one, neither.
TEST(LeaderboardTest, LossScaledModelsShowTheirSkippedSteps) {
  Leaderboard b = board({"loss", "acc"}, {row(0, 0.5, 0.8), row(1, 0.6, 0.7)});
  EXPECT_THAT(formatLeaderboard(b), ::testing::Not(HasSubstr("skipped")));
  EXPECT_THAT(leaderboardToJson(b), ::testing::Not(HasSubstr("loss_scale")));
  b.rows[0].lossScale = 16384.0;
  b.rows[0].skippedSteps = 3;
  b.rows[1].lossScale = 32768.0;
  b.rows[1].skippedSteps = 12;
  rankModels(b);
  std::string table = formatLeaderboard(b);
  EXPECT_THAT(table, HasSubstr("test_acc  skipped  status"));
  EXPECT_THAT(table, HasSubstr("       3  ok"));
  EXPECT_THAT(table, HasSubstr("      12  ok"));
  nlohmann::json json = nlohmann::json::parse(leaderboardToJson(b));
  EXPECT_EQ(json[1]["skipped_steps"], 12);
  EXPECT_DOUBLE_EQ(json[1]["loss_scale"].get<double>(), 32768.0);
}

TEST(LeaderboardTest, HyperparameterNamedLikeAFieldDoesNotOverwriteIt) {
  Leaderboard b = board({"loss"}, {row(0, 0.5, 0)});
  b.hyperNames = {"seed"};
  rankModels(b);
  nlohmann::json json = nlohmann::json::parse(leaderboardToJson(b));
  EXPECT_EQ(json[0]["seed"], 100);
  EXPECT_DOUBLE_EQ(json[0]["hyper_seed"].get<double>(), 0.001);
}

} // namespace
