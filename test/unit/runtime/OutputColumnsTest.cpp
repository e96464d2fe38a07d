//===- OutputColumnsTest.cpp - metrics over a whole split -----------------===//
//
// The runtime makes rmse and r2 from per-step means that the trainer sums
// over steps weighted by samples. These tests feed it what a compiled step
// writes (computed here in double from predictions and targets, one step
// per batch of uneven sizes) and compare with the formulas of sklearn's
// root_mean_squared_error and r2_score (multioutput uniform_average)
// applied to every sample at once.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/OutputColumns.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;

namespace {

Manifest manifestWith(int64_t width) {
  Manifest m;
  m.outputs = {"loss", "rmse", "acc", "r2"};
  m.splitOutputs = {{"rmse", SplitOutput::Reduce::Rmse, width},
                    {"r2", SplitOutput::Reduce::R2, width}};
  return m;
}

/// A step's columns for samples [begin, end) of row-major [n, K] values:
/// the loss and acc columns hold 0.5 and 0.25.
std::vector<double> stepRow(const std::vector<double> &prediction,
                            const std::vector<double> &y, int64_t width,
                            int64_t begin, int64_t end) {
  double b = static_cast<double>(end - begin);
  std::vector<double> squared(width), mean(width), variance(width);
  for (int64_t j = 0; j < width; ++j) {
    for (int64_t i = begin; i < end; ++i) {
      double e = prediction[i * width + j] - y[i * width + j];
      squared[j] += e * e / b;
      mean[j] += y[i * width + j] / b;
    }
    for (int64_t i = begin; i < end; ++i)
      variance[j] += std::pow(y[i * width + j] - mean[j], 2) / b;
  }
  std::vector<double> row{0.5};
  row.insert(row.end(), squared.begin(), squared.end());
  row.push_back(0.25);
  row.insert(row.end(), squared.begin(), squared.end());
  row.insert(row.end(), mean.begin(), mean.end());
  row.insert(row.end(), variance.begin(), variance.end());
  return row;
}

/// sklearn's metrics over all n samples at once.
void sklearnMetrics(const std::vector<double> &prediction,
                    const std::vector<double> &y, int64_t width, double &rmse,
                    double &r2) {
  int64_t n = static_cast<int64_t>(y.size()) / width;
  rmse = r2 = 0;
  for (int64_t j = 0; j < width; ++j) {
    double sse = 0, mean = 0, sst = 0;
    for (int64_t i = 0; i < n; ++i)
      mean += y[i * width + j] / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) {
      sse += std::pow(prediction[i * width + j] - y[i * width + j], 2);
      sst += std::pow(y[i * width + j] - mean, 2);
    }
    rmse += std::sqrt(sse / static_cast<double>(n)) / width;
    r2 += (1 - sse / sst) / width;
  }
}

} // namespace

// Mutations caught: r2 or rmse averaged over steps (or over columns
// before the square root), the variance about each step's mean without
// the means' spread between steps (toSummable not adding mean^2), the
// columns read at the wrong offsets, and the other outputs not passed
// through.
TEST(OutputColumnsTest, MatchesSklearnOverTheWholeSplit) {
  const int64_t width = 3, n = 101;
  std::mt19937 gen(7);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<double> y(n * width), prediction(n * width);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < width; ++j) {
      // Targets far from 0 and drifting along the split, so that batches
      // differ in mean: the spread between steps matters.
      y[i * width + j] = 100.0 * (j + 1) + 0.05 * i + noise(gen);
      prediction[i * width + j] = y[i * width + j] + 0.5 * noise(gen);
    }
  Manifest manifest = manifestWith(width);
  OutputColumns columns(manifest);
  ASSERT_EQ(columns.size(), manifest.numColumns());
  std::vector<double> sums(columns.size());
  for (int64_t begin = 0, b = 7; begin < n; begin += b, b = b % 13 + 5) {
    int64_t end = std::min(n, begin + b);
    std::vector<double> row = stepRow(prediction, y, width, begin, end);
    columns.toSummable(row.data());
    for (size_t c = 0; c < row.size(); ++c)
      sums[c] += row[c] * static_cast<double>(end - begin);
  }
  for (double &sum : sums)
    sum /= static_cast<double>(n);
  std::vector<double> reported = columns.report(sums.data());
  double rmse, r2;
  sklearnMetrics(prediction, y, width, rmse, r2);
  ASSERT_EQ(reported.size(), 4u);
  EXPECT_DOUBLE_EQ(reported[0], 0.5);
  EXPECT_DOUBLE_EQ(reported[2], 0.25);
  // Double rounding over 101 samples of values near 300: far below 1e-9.
  EXPECT_NEAR(reported[1], rmse, 1e-9);
  EXPECT_NEAR(reported[3], r2, 1e-9);
  EXPECT_GT(r2, 0.5); // the data is not degenerate
}

// sklearn's force_finite convention for a constant target; NaN (a model
// that did not step) stays NaN.
TEST(OutputColumnsTest, ConstantTargetsAndNaN) {
  Manifest manifest = manifestWith(1);
  OutputColumns columns(manifest);
  // loss, rmse: se, acc, r2: se, mean, variance
  std::vector<double> exact{0, 0, 0, 0, 2, 0};
  columns.toSummable(exact.data());
  EXPECT_DOUBLE_EQ(exact[5], 4.0); // variance 0 + mean^2
  EXPECT_DOUBLE_EQ(columns.report(exact.data())[3], 1.0);
  std::vector<double> missed{0, 1, 0, 1, 2, 0};
  columns.toSummable(missed.data());
  EXPECT_DOUBLE_EQ(columns.report(missed.data())[3], 0.0);
  EXPECT_DOUBLE_EQ(columns.report(missed.data())[1], 1.0);
  std::vector<double> frozen(6, std::nan(""));
  columns.toSummable(frozen.data());
  for (double v : columns.report(frozen.data()))
    EXPECT_TRUE(std::isnan(v));
}
