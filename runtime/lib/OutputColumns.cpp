//===- OutputColumns.cpp - reported outputs from the step's columns -------===//
#include "mbt/runtime/OutputColumns.h"

#include <algorithm>
#include <cmath>

namespace mbt {
namespace runtime {

OutputColumns::OutputColumns(const Manifest &manifest) {
  for (const std::string &name : manifest.outputs) {
    Output output{columns, std::nullopt};
    if (const SplitOutput *split = manifest.splitOutput(name))
      output.split = *split;
    outputs.push_back(output);
    columns += manifest.columnsOf(name);
  }
}

void OutputColumns::toSummable(double *row) const {
  for (const Output &output : outputs) {
    if (!output.split || output.split->reduce != SplitOutput::Reduce::R2)
      continue;
    int64_t k = output.split->width;
    const double *mean = row + output.first + k;
    double *variance = row + output.first + 2 * k;
    for (int64_t j = 0; j < k; ++j)
      variance[j] += mean[j] * mean[j];
  }
}

/// sklearn's r2_score of one value: 1 - SSE / SST, with its convention
/// for a constant target (force_finite).
static double r2Score(double meanSquaredError, double variance) {
  if (std::isnan(meanSquaredError) || std::isnan(variance))
    return std::nan("");
  if (variance > 0)
    return 1.0 - meanSquaredError / variance;
  return meanSquaredError == 0 ? 1.0 : 0.0;
}

std::vector<double> OutputColumns::report(const double *means) const {
  std::vector<double> reported;
  for (const Output &output : outputs) {
    const double *columnMeans = means + output.first;
    if (!output.split) {
      reported.push_back(*columnMeans);
      continue;
    }
    int64_t k = output.split->width;
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      double squaredError = columnMeans[j];
      if (output.split->reduce == SplitOutput::Reduce::Rmse) {
        sum += std::sqrt(squaredError);
        continue;
      }
      double mean = columnMeans[k + j];
      double variance = columnMeans[2 * k + j] - mean * mean;
      sum += r2Score(squaredError, std::max(variance, 0.0));
    }
    reported.push_back(sum / static_cast<double>(k));
  }
  return reported;
}

} // namespace runtime
} // namespace mbt
