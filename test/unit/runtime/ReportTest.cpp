//===- ReportTest.cpp - report.html from metrics.jsonl --------------------===//
#include "mbt/runtime/Report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

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
  // Model 0's train curve (solid), named with the hyperparameter that
  // varies, and its test point (dashed, with a dot).
  EXPECT_THAT(
      html,
      HasSubstr("<title>model 0 (rank 1): lr 0.1, seed 0: train</title>"));
  EXPECT_THAT(html, HasSubstr("stroke-dasharray"));
  EXPECT_THAT(html, HasSubstr("<circle"));
  // The diverged model is grey and its step is in the table.
  EXPECT_THAT(html, HasSubstr("#9a9a9a"));
  EXPECT_THAT(html, HasSubstr("diverged at step 3"));
  // Nothing fetched: it opens offline (the script is inline).
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("href=")));
  EXPECT_THAT(html, Not(HasSubstr("http")));
  EXPECT_THAT(html, Not(HasSubstr("skipped steps")));
  // Under a loss scale (precision f16) the table counts skipped steps.
  for (ModelResult &row : board.rows)
    row.lossScale = 1024.0;
  board.rows[0].skippedSteps = 7;
  html = renderReport("run", {"loss", "acc"}, parseMetricsLog(kLog), board);
  EXPECT_THAT(html, HasSubstr("<th>skipped steps</th><th>status</th>"));
  EXPECT_THAT(html, HasSubstr("<td data-v=\"7\">7</td><td>ok</td>"));
}

TEST(ReportTest, AnOutputWithoutFiniteValuesSaysSo) {
  Leaderboard board;
  board.outputs = {"loss"};
  std::string html = renderReport("r", {"loss"}, {}, board);
  EXPECT_THAT(html, HasSubstr("no finite values"));
}

} // namespace

namespace {

/// A sweep of `models` models whose hyperparameters `names` take the
/// values `hyper(i)`; each logs `points` train losses and accuracies and
/// one test point, and ranks as its index.
struct Sweep {
  Leaderboard board;
  std::vector<MetricsRecord> records;
};

Sweep makeSweep(const std::vector<std::string> &names,
                const std::function<std::vector<double>(int)> &hyper,
                int models, int points = 20) {
  Sweep sweep;
  sweep.board.hyperNames = names;
  sweep.board.outputs = {"loss", "acc"};
  for (int i = 0; i < models; ++i) {
    ModelResult row;
    row.model = i;
    row.rank = i + 1;
    row.seed = uint64_t(i);
    row.hyper = hyper(i);
    row.test = {0.3 + 0.01 * i, 0.9 - 0.01 * i};
    sweep.board.rows.push_back(row);
    for (int p = 1; p <= points; ++p) {
      MetricsRecord r;
      r.step = p * 10;
      r.model = i;
      r.split = "train";
      // A decaying loss with a wiggle, so that columns differ.
      r.values["loss"] = 0.3 + 0.01 * i + 2.0 / p + 0.02 * ((p * 7 + i) % 5);
      r.values["acc"] = 0.9 - 0.01 * i - 0.5 / p;
      sweep.records.push_back(r);
    }
    MetricsRecord test;
    test.step = points * 10;
    test.model = i;
    test.split = "test";
    test.values = {{"loss", row.test[0]}, {"acc", row.test[1]}};
    sweep.records.push_back(test);
  }
  return sweep;
}

std::string render(const Sweep &sweep) {
  return renderReport("sweep", sweep.board.outputs, sweep.records, sweep.board);
}

/// The part of `html` from `from` to `to`.
std::string section(const std::string &html, const std::string &from,
                    const std::string &to) {
  size_t a = html.find(from), b = html.find(to, a);
  EXPECT_NE(a, std::string::npos) << from;
  EXPECT_NE(b, std::string::npos) << to;
  return html.substr(a, b - a);
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(ReportTest, TheLossIsOnALogAxisWithALinearOneAChecboxAway) {
  Sweep sweep = makeSweep(
      {"lr", "beta1"},
      [](int i) { return std::vector<double>{1e-4 * std::pow(2, i), 0.9}; }, 8);
  std::string html = render(sweep);
  std::string loss = section(html, "<h2>loss</h2>", "<h2>acc</h2>");
  // Mutation caught: the loss drawn on a linear axis only.
  EXPECT_THAT(loss, HasSubstr("class=\"scale\" id=\"out0-log\" checked"));
  EXPECT_EQ(count(loss, "data-yscale=\"log\""), 1u);
  EXPECT_EQ(count(loss, "data-yscale=\"linear\""), 1u);
  // An accuracy is linear, with no toggle.
  std::string acc = section(html, "<h2>acc</h2>", "<h2>Hyperparameters</h2>");
  EXPECT_THAT(acc, Not(HasSubstr("log")));
  // The loss's ticks are 1-2-5 values.
  EXPECT_THAT(loss, HasSubstr(">0.5</text>"));
  EXPECT_THAT(loss, HasSubstr(">1</text>"));
  EXPECT_THAT(loss, HasSubstr(">2</text>"));
}

TEST(ReportTest, ThePanelHasAPointPerModelAndTheConstantsAreListedOnce) {
  Sweep sweep = makeSweep(
      {"lr", "beta1"},
      [](int i) { return std::vector<double>{1e-4 * std::pow(2, i), 0.9}; }, 8);
  sweep.board.rows[7].diverged = true;
  sweep.board.rows[6].stoppedStep = 100;
  sweep.board.rows[6].stopReason = "halving";
  std::string html = render(sweep);
  std::string panel =
      section(html, "<h2>Hyperparameters</h2>", "<h2>Leaderboard</h2>");
  // One point per model against lr, on a log axis (2^7 spans 128x); beta1
  // is the same for all, so it has no chart.
  EXPECT_EQ(count(panel, "class=\"pt"), 8u);
  EXPECT_EQ(count(panel, "class=\"pt diverged\""), 1u);
  EXPECT_EQ(count(panel, "class=\"pt stopped\""), 1u);
  EXPECT_THAT(panel, HasSubstr("aria-label=\"test acc against lr\""));
  EXPECT_THAT(panel, HasSubstr("data-xscale=\"log\""));
  EXPECT_THAT(panel, Not(HasSubstr("against beta1")));
  // The stopped model's round: 7 of 8 trained on after step 100.
  EXPECT_THAT(panel, HasSubstr("Where the models stopped"));
  EXPECT_THAT(panel, HasSubstr(">7 on</text>"));
  // The leaderboard names its rank metric and lists beta1 once above it.
  std::string board = section(html, "<h2>Leaderboard</h2>", "</body>");
  EXPECT_THAT(board, HasSubstr("Ranked by <b>test acc</b> (higher is better)"));
  EXPECT_THAT(board, HasSubstr("Same for every model: beta1 0.9."));
  EXPECT_THAT(board, Not(HasSubstr("<th>beta1</th>")));
  EXPECT_THAT(board, HasSubstr("<th>lr</th>"));
  EXPECT_THAT(board, HasSubstr("<th class=\"key\">test acc</th>"));
}

TEST(ReportTest, AGridGetsAHeatMapAndThreeHyperparametersParallelLines) {
  Sweep grid = makeSweep(
      {"lr", "momentum"},
      [](int i) {
        return std::vector<double>{std::pow(10, -(i / 3)), 0.45 * (i % 3)};
      },
      12);
  std::string html = render(grid);
  EXPECT_THAT(html, HasSubstr("class=\"panel heat\""));
  EXPECT_EQ(count(html, "<g class=\"cell\">"), 12u);
  EXPECT_THAT(html, Not(HasSubstr("parallel")));
  // Not a full grid (one pair missing): no heat map.
  grid.board.rows.pop_back();
  EXPECT_THAT(render(grid), Not(HasSubstr("panel heat")));

  Sweep three = makeSweep(
      {"lr", "momentum", "wd"},
      [](int i) {
        return std::vector<double>{1e-3 * (i + 1), 0.1 * i, 1e-5 * i};
      },
      6);
  html = render(three);
  EXPECT_THAT(html, Not(HasSubstr("panel heat")));
  EXPECT_EQ(count(section(html, "parallel", "</svg>"), "<polyline"), 6u);
}

TEST(ReportTest, ALanguageModelGetsAPerplexityChart) {
  Sweep sweep = makeSweep(
      {"lr"}, [](int i) { return std::vector<double>{1e-3 * i}; }, 2, 3);
  sweep.board.outputs.push_back("perplexity"); // as RunResults adds it
  for (MetricsRecord &r : sweep.records)
    if (r.split == "test")
      r.values["loss"] = 2.0;
  std::string html =
      renderReport("lm", {"loss", "acc"}, sweep.records, sweep.board);
  std::string chart = section(html, "<h2>perplexity</h2>", "<h2>Hyper");
  EXPECT_THAT(chart, HasSubstr("aria-label=\"perplexity by train step\""));
  // exp of the per-token loss: 2.0 is 7.389. Mutation caught: the loss
  // charted again under the perplexity's name.
  EXPECT_THAT(chart, HasSubstr("test 7.389 at step 30"));
}

TEST(ReportTest, ThousandsOfPointsPerModelStayAFewMegabytes) {
  // 100 models x 5000 logged steps: 500,000 points per output, about 18 MB
  // as unthinned path data.
  Sweep sweep = makeSweep(
      {"lr"}, [](int i) { return std::vector<double>{1e-3 * i}; }, 100, 5000);
  std::string html = render(sweep);
  EXPECT_LT(html.size(), 5u << 20) << html.size();
  // Every model still has its train curve in each chart.
  EXPECT_EQ(count(html, ": train</title></path>"), 300u);
}

} // namespace
