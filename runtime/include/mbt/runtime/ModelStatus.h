//===- ModelStatus.h - Which models of a batch still train ------*- C++ -*-===//
//
// Every model of the batch trains until it diverges (its loss or gradients
// were not finite at a step) or a stopping policy stops it: early stopping
// (no lower validation loss in `patience` evaluations) or successive
// halving (the worse half of the models still training, on the validation
// split). A model that does not train any more is frozen: the train steps
// leave its parameters as they were (docs/abi.md, version 6).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_MODELSTATUS_H
#define MBT_RUNTIME_MODELSTATUS_H

#include "mbt/runtime/Checkpoint.h"
#include "mbt/runtime/Leaderboard.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// A model a stopping policy stopped, and why.
struct StoppedModel {
  int64_t model;
  std::string reason;
};

class ModelStatus {
public:
  explicit ModelStatus(int64_t models = 0);

  /// Whether `model`'s loss or gradients were ever not finite.
  bool diverged(int64_t model) const { return divergedAt[model] != 0; }
  /// Whether `model` takes part in train steps (not diverged or stopped).
  bool training(int64_t model) const {
    return !divergedAt[model] && !stoppedAt[model];
  }
  /// Whether any model still trains: a run whose models have all
  /// diverged or stopped has nothing left to train and ends.
  bool anyTraining() const {
    for (size_t model = 0; model < divergedAt.size(); ++model)
      if (training(static_cast<int64_t>(model)))
        return true;
    return false;
  }
  /// Records that `model` diverged at train step `step` (1-based).
  void markDiverged(int64_t model, int64_t step) { divergedAt[model] = step; }

  /// Applies early stopping with `patience` evaluations (0: off) and, when
  /// `halve`, successive halving by the leaderboard's key of `outputs`
  /// (chooseRankKey with `rankBy`) to the validation means `held` ([M][K],
  /// output 0 the loss) evaluated at step `step`. Early stopping watches
  /// the `rankBy` output where the sweep names one, else the loss. Returns
  /// the models it stopped, in the order it stopped them.
  std::vector<StoppedModel>
  applyStopping(const std::vector<std::vector<double>> &held, int64_t patience,
                bool halve, const std::vector<std::string> &outputs,
                const std::string &rankBy, int64_t step);

  /// Stops `model` at `step` for `reason` if it is still training; returns
  /// whether it did.
  bool stopModel(int64_t model, int64_t step, const std::string &reason);

  /// Per model, the step it diverged or was stopped at (0: never), and the
  /// policy that stopped it.
  const std::vector<int64_t> &divergedSteps() const { return divergedAt; }
  const std::vector<int64_t> &stoppedSteps() const { return stoppedAt; }
  const std::vector<std::string> &stopReasons() const { return stopReason; }

  /// How many models it tracks.
  int64_t size() const { return static_cast<int64_t>(divergedAt.size()); }
  /// Models [first, first + count), as a status of their own.
  ModelStatus slice(int64_t first, int64_t count) const;
  /// Models [first, first + part.size()) become `part`'s.
  void assign(int64_t first, const ModelStatus &part);
  /// The whole state as bytes, and back (what the ranks of a run over
  /// several processes exchange). fromBytes throws RuntimeError on bytes
  /// toBytes did not write.
  std::string toBytes() const;
  static ModelStatus fromBytes(const std::string &bytes);

  /// The checkpoint's part of this state, and back.
  void saveTo(RunCheckpoint &checkpoint) const;
  void restoreFrom(const RunCheckpoint &checkpoint);

private:
  void stop(int64_t model, int64_t step, std::string reason,
            std::vector<StoppedModel> &stopped);

  std::vector<int64_t> divergedAt, stoppedAt;
  std::vector<std::string> stopReason;
  /// Early stopping's best validation loss, and evaluations since it.
  std::vector<double> bestValidationLoss;
  std::vector<int64_t> evaluationsSinceBest;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_MODELSTATUS_H
