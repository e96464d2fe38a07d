//===- SweepRanks.h - A sweep's models split across ranks -------*- C++ -*-===//
//
// A run with its models across ranks (docs/distributed.md): rank r trains
// models [first, first + count) of the sweep with its slice's artifact
// (mbtc --ranks), on the same data as every other rank. What the run
// reports is about the whole sweep: at each evaluation the ranks gather
// their models' means and statuses, every rank applies the stopping
// policies to all of them (the same decisions everywhere, so no rank need
// tell another), and rank 0 writes the results. In one process the same
// class is the identity, so the train loop has one path.
//
// A run with its data across ranks: every rank holds every model (the
// same artifact, with mbt_grad_step) and takes its share of each step's
// samples; the ranks sum their gradients and the outputs of the step, and
// share the evaluations' steps. Every rank then holds the same models, so
// what it gathers is its own already.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DISTRIBUTED_SWEEPRANKS_H
#define MBT_RUNTIME_DISTRIBUTED_SWEEPRANKS_H

#include "mbt/common/ModelSlices.h"
#include "mbt/runtime/Leaderboard.h"
#include "mbt/runtime/Manifest.h"
#include "mbt/runtime/ModelStatus.h"
#include "mbt/runtime/distributed/DeviceCollectives.h"
#include "mbt/runtime/distributed/RankGroup.h"

#include <memory>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// A model's loss scale and the steps it skipped (precision f16).
struct LossScaleReading {
  double scale = 0;
  int64_t skippedSteps = 0;
};

class SweepRanks {
public:
  /// One process: the sweep is `manifest`'s models.
  explicit SweepRanks(const Manifest &manifest);
  /// This rank of `group` trains the slice `mine` of the whole sweep
  /// `sweep` (both must outlive this). Throws RuntimeError unless `mine`
  /// is the slice mbtc compiled for this rank.
  SweepRanks(std::shared_ptr<RankGroup> group, const Manifest &sweep,
             const Manifest &mine);
  /// This rank of `group` trains every model of `sweep` on its share of
  /// the data. Throws RuntimeError unless every rank loaded the same
  /// artifact, with mbt_grad_step.
  struct DataAcrossRanks {};
  SweepRanks(std::shared_ptr<RankGroup> group, const Manifest &sweep,
             DataAcrossRanks);

  bool distributed() const { return group != nullptr; }
  /// Whether the ranks split the data (each holds every model).
  bool sharesData() const { return group && dataAcrossRanks; }
  /// Whether this rank writes the models' files: across ranks of models
  /// each rank writes its own; across ranks of data, rank 0.
  bool writesModels() const { return !sharesData() || leader(); }
  /// The rank that writes the results and prints: rank 0, or the process.
  bool leader() const { return !group || group->rank() == 0; }
  int64_t rank() const { return group ? group->rank() : 0; }
  int64_t ranks() const { return group ? group->size() : 1; }
  /// The whole sweep's manifest, whose models the results report.
  const Manifest &sweepManifest() const { return sweep; }
  /// The ranks (null in one process).
  const RankGroup *rankGroup() const { return group.get(); }
  /// This rank's first model in the whole sweep.
  int64_t firstModel() const { return mine.firstModel; }

  /// Every rank's `bytes`, in rank order (one process: `bytes` alone).
  std::vector<std::string> allGather(const std::string &bytes,
                                     const std::string &what);

  using Means = std::vector<std::vector<double>>;
  /// Every model's rows from each rank's rows of its models ([count][K] ->
  /// [N][K]); an empty `mine` (a split this run lacks) stays empty. `what`
  /// names the gathered values for the error if a rank is lost.
  Means gather(const Means &mine, const std::string &what);
  /// Every model's status from each rank's status of its models.
  ModelStatus gather(const ModelStatus &mine, const std::string &what);
  /// Every model's loss scale (empty without one).
  std::vector<LossScaleReading>
  gather(const std::vector<LossScaleReading> &mine, const std::string &what);

  /// Across ranks of data: this rank's share [first, first + count) of a
  /// step of `samples` (contiguous, the first ranks one more; empty when
  /// there are fewer samples than ranks); in one process, all of them.
  ModelSlice shareOf(int64_t samples) const;
  /// Across ranks of data on GPUs: NCCL's communicator over the ranks, on
  /// the rank's GPU (LOCAL_RANK); null, with `why`, without the plugin.
  std::unique_ptr<DeviceCollectives> joinDeviceCollectives(std::string &why);
  /// data[0, count) becomes its sum over the ranks (one process: as is).
  void sumAcrossRanks(float *data, size_t count, const std::string &what);
  void sumAcrossRanks(double *data, size_t count, const std::string &what);

private:
  std::shared_ptr<RankGroup> group;
  const Manifest &sweep;
  const Manifest &mine;
  bool dataAcrossRanks = false;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DISTRIBUTED_SWEEPRANKS_H
