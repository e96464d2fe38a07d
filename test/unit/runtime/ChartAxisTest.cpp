//===- ChartAxisTest.cpp - Round ticks and the shown range ----------------===//
#include "mbt/runtime/ChartAxis.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace mbt::runtime;
using ::testing::ElementsAre;

namespace {

/// Whether `v` is k * m * 10^e for an integer k and m in {1, 2, 5}: the
/// step of the ticks, up to a double's rounding.
bool isMultipleOf(double v, double step) {
  double k = v / step;
  return std::abs(k - std::round(k)) < 1e-6;
}

/// The step between consecutive ticks, checked to be constant and round.
double roundStep(const Axis &axis) {
  EXPECT_GE(axis.ticks.size(), 2u);
  double step = axis.ticks[1] - axis.ticks[0];
  for (size_t i = 1; i < axis.ticks.size(); ++i)
    EXPECT_NEAR(axis.ticks[i] - axis.ticks[i - 1], step, step * 1e-6);
  double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
  EXPECT_TRUE(std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 ||
              std::abs(mantissa - 5) < 1e-6)
      << "step " << step;
  for (double t : axis.ticks)
    EXPECT_TRUE(isMultipleOf(t, step)) << t << " is not a multiple of " << step;
  return step;
}

void expectDistinct(const std::vector<std::string> &labels) {
  std::set<std::string> unique(labels.begin(), labels.end());
  EXPECT_EQ(unique.size(), labels.size());
}

// The report's old axis: -0.2324, 3.157, ..., 13.32 and steps 234, 469.
TEST(ChartAxisTest, LinearTicksAreRoundAndCoverTheData) {
  Axis loss = linearAxis(0.3, 13.0);
  EXPECT_EQ(roundStep(loss), 2.0); // mutation: step = span / target, unrounded
  EXPECT_THAT(loss.labels,
              ElementsAre("0", "2", "4", "6", "8", "10", "12", "14"));
  EXPECT_LE(loss.lo, 0.3);
  EXPECT_GE(loss.hi, 13.0);
  Axis steps = linearAxis(0, 938, 6);
  EXPECT_EQ(roundStep(steps), 200.0);
  EXPECT_EQ(steps.labels.front(), "0");
  EXPECT_EQ(steps.labels.back(), "1000");
  // No negative tick below a positive range.
  EXPECT_GE(linearAxis(0.01, 2.3).lo, 0.0);
}

TEST(ChartAxisTest, ValuesThatDifferBy1e4GetDistinctTicks) {
  Axis acc = linearAxis(0.8623, 0.8624);
  double step = roundStep(acc);
  EXPECT_LE(step, 5e-5);
  EXPECT_GE(acc.ticks.size(), 3u);
  expectDistinct(acc.labels);
  EXPECT_EQ(acc.labels.front(), "0.86230"); // as many decimals as the step
  // Around a large value, and on a log axis.
  expectDistinct(linearAxis(1234.5001, 1234.5002).labels);
  Axis log = logAxis(0.38510, 0.38520);
  EXPECT_EQ(log.scale, Axis::Scale::Log);
  EXPECT_GE(log.ticks.size(), 3u);
  expectDistinct(log.labels);
}

TEST(ChartAxisTest, EqualEndsGetASpan) {
  Axis one = linearAxis(0.5, 0.5);
  EXPECT_LT(one.lo, 0.5);
  EXPECT_GT(one.hi, 0.5);
  Axis zero = linearAxis(0, 0);
  EXPECT_LT(zero.lo, 0);
  EXPECT_GT(zero.hi, 0);
}

TEST(ChartAxisTest, LabelsSwitchToScientificWhereLong) {
  EXPECT_EQ(tickLabel(2.5e-7, 5e-8), "2.5e-07");
  EXPECT_EQ(tickLabel(1.2e9, 1e8), "1.2e+09");
  EXPECT_EQ(tickLabel(-1.5, 0.5), "-1.5");
  EXPECT_EQ(tickLabel(250, 50), "250");
  EXPECT_EQ(tickLabel(0, 0.01), "0");
}

TEST(ChartAxisTest, LogTicksAreDecadesOrOneTwoFive) {
  // Many decades: the powers of ten inside the span, every third one where
  // there are many.
  Axis wide = logAxis(3e-5, 0.2);
  EXPECT_THAT(wide.labels, ElementsAre("0.0001", "0.001", "0.01", "0.1"));
  // Three decades, four ticks wanted: every decade.
  EXPECT_THAT(logAxis(1e-4, 0.1, 4).labels,
              ElementsAre("0.0001", "0.001", "0.01", "0.1"));
  EXPECT_LE(wide.lo, 3e-5);
  EXPECT_GE(wide.hi, 0.2);
  Axis wider = logAxis(1e-12, 1);
  EXPECT_LE(wider.ticks.size(), 6u);
  for (size_t i = 1; i < wider.ticks.size(); ++i)
    EXPECT_NEAR(std::log10(wider.ticks[i] / wider.ticks[i - 1]), 3, 1e-9);
  // A decade or two: 1, 2 and 5 times them, the span the data's (padded),
  // not widened to the next 1-2-5 value.
  Axis loss = logAxis(0.38, 13.3);
  EXPECT_THAT(loss.labels, ElementsAre("0.5", "1", "2", "5", "10"));
  EXPECT_LE(loss.lo, 0.38);
  EXPECT_GT(loss.lo, 0.3);
  EXPECT_GE(loss.hi, 13.3);
  EXPECT_LT(loss.hi, 16);
  // The fraction is linear in log10: 1 is as far from 0.5 as 10 from 5.
  EXPECT_NEAR(loss.fraction(1) - loss.fraction(0.5),
              loss.fraction(10) - loss.fraction(5), 1e-12);
}

TEST(ChartAxisTest, ASpikeOf100xDoesNotFlattenTheRest) {
  std::vector<double> values;
  for (int i = 0; i < 100; ++i)
    values.push_back(1 + i / 100.0); // the models' values, in [1, 2)
  values.push_back(200);             // one model starting 100 times higher
  for (bool log : {false, true}) {
    ShownRange range = shownRange(values, log, WorseSide::High);
    ASSERT_FALSE(range.empty);
    EXPECT_EQ(range.clipped, 1u) << "log " << log;
    EXPECT_DOUBLE_EQ(range.farthest, 200);
    EXPECT_DOUBLE_EQ(range.lo, 1);
    EXPECT_NEAR(range.hi, 1.99, 1e-12);
    // The rest fills at least half of the axis built on the range.
    Axis axis =
        log ? logAxis(range.lo, range.hi) : linearAxis(range.lo, range.hi);
    EXPECT_GT(axis.fraction(1.99) - axis.fraction(1), 0.5) << "log " << log;
  }
  // The same spike on the better side is data: an accuracy's top is kept.
  ShownRange kept = shownRange(values, false, WorseSide::Low);
  EXPECT_EQ(kept.clipped, 0u);
  EXPECT_DOUBLE_EQ(kept.hi, 200);
}

TEST(ChartAxisTest, ALogRangeKeepsValuesWithinADecade) {
  // Losses from 0.4 to 2.3 (ln 10, an untrained classifier's) stay shown.
  std::vector<double> values;
  for (int i = 0; i < 50; ++i)
    values.push_back(0.4 + 0.01 * i);
  values.push_back(2.3);
  EXPECT_EQ(shownRange(values, true, WorseSide::High).clipped, 0u);
  EXPECT_EQ(shownRange(values, false, WorseSide::High).clipped, 1u);
}

TEST(ChartAxisTest, NoSpreadClipsNothingAndNonFiniteValuesAreIgnored) {
  std::vector<double> values(20, 1.0);
  values.push_back(5.0);
  values.push_back(NAN);
  values.push_back(INFINITY);
  ShownRange range = shownRange(values, false, WorseSide::High);
  EXPECT_EQ(range.clipped, 0u);
  EXPECT_DOUBLE_EQ(range.hi, 5.0);
  // Non-positive values have no place on a log axis.
  ShownRange log = shownRange({-1.0, 0.0, 0.5, 2.0}, true, WorseSide::High);
  EXPECT_DOUBLE_EQ(log.lo, 0.5);
  EXPECT_TRUE(shownRange({NAN}, false, WorseSide::High).empty);
}

} // namespace
