//===- OutputColumns.h - reported outputs from the step's columns -*- C++
//-*-===//
//
// The step writes K columns per model into `out`, each a mean over the
// step's samples; the trainer sums them over steps weighted by samples.
// Most outputs are one column, whose sample-weighted mean is the split's.
// A metric over a whole split (Manifest::splitOutputs: rmse, r2) is not a
// mean of per-step values: it is a function of several such means, made
// here once they cover the split, in double.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_OUTPUTCOLUMNS_H
#define MBT_RUNTIME_OUTPUTCOLUMNS_H

#include "mbt/runtime/Manifest.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mbt {
namespace runtime {

class OutputColumns {
public:
  /// The columns of `manifest`'s outputs.
  explicit OutputColumns(const Manifest &manifest);

  /// K: the step's columns per model.
  int64_t size() const { return columns; }

  /// Makes one step's row of K columns summable over steps: an r2
  /// variance (about that step's mean) becomes the second moment,
  /// variance + mean^2, so that weighted means over steps give the split's
  /// E[y^2] without the cancellation of squaring in the model's type.
  void toSummable(double *row) const;

  /// The reported outputs (Manifest::outputs, in order) from a row of
  /// sample-weighted means of summable columns: a column's mean as it is;
  /// rmse the mean over the K values of sqrt(mean squared error); r2 as
  /// sklearn's r2_score, 1 - MSE / variance for each of the K values,
  /// averaged (a value whose variance is 0 scores 1 if predicted exactly,
  /// else 0). NaN means give NaN outputs.
  std::vector<double> report(const double *means) const;

private:
  /// Where each output's columns start.
  struct Output {
    int64_t first = 0;
    std::optional<SplitOutput> split; // none: one column's mean
  };
  std::vector<Output> outputs;
  int64_t columns = 0;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_OUTPUTCOLUMNS_H
