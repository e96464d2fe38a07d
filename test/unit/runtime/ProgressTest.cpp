//===- ProgressTest.cpp - Progress line format and throttling -------------===//

#include "mbt/runtime/Progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

using namespace mbt::runtime;

namespace {

ProgressSample sample(int64_t step, int64_t steps) {
  ProgressSample s;
  s.epoch = 1;
  s.epochs = 2;
  s.step = step;
  s.stepsInEpoch = steps;
  s.bestLoss = 0.41234;
  s.samplesPerSecond = 1234.5;
  s.models = 16;
  return s;
}

TEST(ProgressTest, LineShowsEpochStepLossAndBothRates) {
  EXPECT_EQ(formatProgress(sample(312, 469)),
            "epoch 1/2  step 312/469  loss(best) 0.4123  1234.5 samples/s  "
            "19752.0 model-samples/s");
}

TEST(ProgressTest, LogModePrintsAboutTenLinesPerEpoch) {
  std::ostringstream out;
  ProgressMeter meter(&out, /*isTty=*/false, /*quiet=*/false);
  meter.beginEpoch();
  for (int64_t step = 1; step <= 469; ++step)
    meter.update(sample(step, 469), step == 469);
  std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_NE(text.find("step 469/469"), std::string::npos);
}

TEST(ProgressTest, LogModeWithFewStepsPrintsEachCrossingOnce) {
  std::ostringstream out;
  ProgressMeter meter(&out, false, false);
  meter.beginEpoch();
  for (int64_t step = 1; step <= 3; ++step)
    meter.update(sample(step, 3), step == 3);
  std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

TEST(ProgressTest, TtyModeRedrawsInPlaceAndEndsEpochWithNewline) {
  std::ostringstream out;
  ProgressMeter meter(&out, /*isTty=*/true, false);
  meter.beginEpoch();
  // Steps come faster than the redraw interval: only the end is drawn.
  for (int64_t step = 1; step <= 100; ++step)
    meter.update(sample(step, 100), step == 100);
  std::string text = out.str();
  EXPECT_EQ(text.front(), '\r');
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 1);
}

TEST(ProgressTest, QuietPrintsNothing) {
  std::ostringstream out;
  ProgressMeter meter(&out, false, /*quiet=*/true);
  meter.beginEpoch();
  meter.update(sample(1, 1), true);
  EXPECT_EQ(out.str(), "");
}

} // namespace
