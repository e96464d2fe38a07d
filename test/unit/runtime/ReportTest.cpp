//===- ReportTest.cpp - report.html from metrics.jsonl --------------------===//
#include "mbt/runtime/Report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

using namespace mbt::runtime;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const char *kLog =
    "{\"epoch\":1,\"step\":5,\"model\":0,\"split\":\"train\",\"loss\":2.0,"
    "\"acc\":0.3}\n"
    "{\"epoch\":1,\"step\":5,\"model\":1,\"split\":\"train\",\"loss\":null,"
    "\"acc\":0.1}\n"
    "not json at all\n"
    "{\"junk\": 1}\n"
    "{\"epoch\":1,\"step\":10,\"model\":0,\"split\":\"test\",\"loss\":1.5,"
    "\"metric_step\":4.0}\n";

TEST(ReportTest, ParsesRecordsAndSkipsOtherLines) {
  std::vector<MetricsRecord> records = parseMetricsLog(kLog);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].step, 5);
  EXPECT_EQ(records[0].split, "train");
  EXPECT_DOUBLE_EQ(records[0].values.at("acc"), 0.3);
  EXPECT_TRUE(std::isnan(records[1].values.at("loss")));
  // An output named like a field was written as metric_<name>.
  EXPECT_DOUBLE_EQ(records[2].values.at("step"), 4.0);
}

TEST(ReportTest, RendersAChartPerOutputAndTheLeaderboard) {
  Leaderboard board;
  board.hyperNames = {"lr"};
  board.outputs = {"loss", "acc"};
  ModelResult best, diverged;
  best.model = 0;
  best.rank = 1;
  best.hyper = {0.1};
  best.test = {1.5, 0.8};
  diverged.model = 1;
  diverged.rank = 2;
  diverged.hyper = {10.0};
  diverged.test = {NAN, 0.1};
  diverged.diverged = true;
  diverged.divergedStep = 3;
  board.rows = {best, diverged};
  std::string html =
      renderReport("run <a&b>", {"loss", "acc"}, parseMetricsLog(kLog), board);
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(html, HasSubstr("<title>run &lt;a&amp;b&gt;</title>"));
  EXPECT_THAT(html, Not(HasSubstr("<a&b>")));
  EXPECT_THAT(html, HasSubstr("aria-label=\"loss by train step\""));
  EXPECT_THAT(html, HasSubstr("aria-label=\"acc by train step\""));
  // Model 0's train curve (solid) and its test point (dashed, with a dot).
  EXPECT_THAT(html, HasSubstr("<title>model 0 train</title>"));
  EXPECT_THAT(html, HasSubstr("stroke-dasharray"));
  EXPECT_THAT(html, HasSubstr("<circle"));
  // The diverged model is grey and its step is in the table.
  EXPECT_THAT(html, HasSubstr("#9a9a9a"));
  EXPECT_THAT(html, HasSubstr("diverged at step 3"));
  // No script, nothing fetched: it opens offline.
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http")));
  EXPECT_THAT(html, Not(HasSubstr("skipped steps")));
  // Under a loss scale (precision f16) the table counts skipped steps.
  for (ModelResult &row : board.rows)
    row.lossScale = 1024.0;
  board.rows[0].skippedSteps = 7;
  html = renderReport("run", {"loss", "acc"}, parseMetricsLog(kLog), board);
  EXPECT_THAT(html, HasSubstr("<th>skipped steps</th><th>status</th>"));
  EXPECT_THAT(html, HasSubstr("<td>7</td><td>ok</td>"));
}

TEST(ReportTest, AnOutputWithoutFiniteValuesSaysSo) {
  Leaderboard board;
  board.outputs = {"loss"};
  std::string html = renderReport("r", {"loss"}, {}, board);
  EXPECT_THAT(html, HasSubstr("no finite values"));
}

} // namespace
