//===- RunResults.h - What a run reports: metrics, leaderboard --*- C++ -*-===//
//
// Turns a run's means into what it reports: the lines of metrics.jsonl
// (MetricsLog.h), the ranked leaderboard (Leaderboard.h) and, in the
// results directory, leaderboard.json and report.html (Report.h). It only
// reads the trainer's state (the manifest, which models still train, the
// buffers of a loss scale); when and what to report is the train loop's
// call.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_RUNRESULTS_H
#define MBT_RUNTIME_RUNRESULTS_H

#include "mbt/runtime/Leaderboard.h"
#include "mbt/runtime/Manifest.h"
#include "mbt/runtime/ModelStatus.h"
#include "mbt/runtime/StepRunner.h"
#include "mbt/runtime/distributed/SweepRanks.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

class RunResults {
public:
  /// Every model's means of every output: [M][K].
  using Means = std::vector<std::vector<double>>;

  /// Reports the models of `manifest`, which must outlive the RunResults.
  /// `outDir` is the results directory (empty: publish() writes nothing);
  /// `nextTokens` whether the target is the input's next tokens (a
  /// language model, whose leaderboard adds the perplexity); `hasTestData`
  /// whether the test split has samples (only then is a non-finite test
  /// loss a divergence).
  RunResults(const Manifest &manifest, std::string outDir, bool nextTokens,
             bool hasTestData);

  /// metrics.jsonl lines of every model's `split` means at `step`.
  std::string metricsLines(int64_t epoch, int64_t step,
                           const std::string &split, const Means &means) const;
  /// The lines at an epoch's end: model by model, its train, test and (if
  /// any) validation means.
  std::string epochMetricsLines(int64_t epoch, int64_t step, const Means &train,
                                const Means &test,
                                const Means &validation) const;

  /// The ranked leaderboard of these means (`validation` may be empty),
  /// each model with its varying arguments and hyperparameters, its seed
  /// and `status`; under a loss scale, its scale and skipped steps
  /// (`lossScales`, one per model).
  Leaderboard
  leaderboard(const Means &train, const Means &test, const Means &validation,
              const ModelStatus &status,
              const std::vector<LossScaleReading> &lossScales) const;

  /// Each model's loss scale and skipped steps, read from the buffers of
  /// `steps` (which may be on the GPU); empty without a loss scale.
  static std::vector<LossScaleReading> readLossScales(const Manifest &manifest,
                                                      const StepRunner &steps);

  /// Writes `board` as outDir/leaderboard.json and renders report.html
  /// from it and the metrics at `metricsPath`: at the end, after every
  /// epoch and at every --eval-every evaluation, so both files follow the
  /// run while it trains.
  void publish(const std::string &metricsPath, const Leaderboard &board) const;

private:
  const Manifest &manifest;
  std::string outDir;
  bool nextTokens, hasTestData;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_RUNRESULTS_H
