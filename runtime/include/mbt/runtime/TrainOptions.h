//===- TrainOptions.h - How a Trainer runs ----------------------*- C++ -*-===//
//
// The options of Trainer::run (Trainer.h), in a header of their own so that
// code built without exceptions (mbtc, which links LLVM) can fill them for
// runArtifact (Run.h) without the Trainer's inline code.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_TRAINOPTIONS_H
#define MBT_RUNTIME_TRAINOPTIONS_H

#include "mbt/runtime/DeviceMemory.h"

#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

namespace mbt {
namespace runtime {

class SweepRanks;
class DeviceCollectives;

/// One evaluation of a run (TrainOptions::onEvaluation): where it is, and
/// each model's means of the outputs ([M][K], in the manifest's order) on
/// the test and validation splits, empty for a split the run lacks or did
/// not evaluate.
struct Evaluation {
  int64_t epoch = 0, step = 0;
  std::vector<std::vector<double>> test, validation;
};

struct TrainOptions {
  /// Results directory (metrics.jsonl, leaderboard.json); created if
  /// missing. Empty: write no files.
  std::string outDir;
  /// Number of epochs; negative means the manifest's.
  int64_t epochs = -1;
  /// Suppresses the progress line.
  bool quiet = false;
  /// Where progress goes (null: nowhere).
  std::ostream *progress = &std::cerr;
  /// In-place progress: 1 yes, 0 no, -1 when `progress` is std::cerr and
  /// stderr is a terminal.
  int progressTty = -1;
  /// A safetensors file every model starts from (`--init FILE`), in place
  /// of the files of the sweep's `init = checkpoint(...)`, whose transpose
  /// and partial still apply; empty: the sweep's (InitCheckpoint.h).
  std::string initFile;
  /// Where run() prints the leaderboard table (null: nowhere).
  std::ostream *report = &std::cout;
  /// run() prints the leaderboard as JSON (leaderboard.json's text)
  /// instead of the table.
  bool reportJson = false;
  /// Across ranks: seconds a rank waits for the others (the rendezvous, a
  /// gather) before it stops with an error that names the lost ranks.
  int64_t rankTimeout = 1800;
  /// Under torchrun, what the ranks split (docs/distributed.md): the
  /// sweep's models (each rank trains its slice on every sample), or each
  /// step's samples (each rank trains every model on its share, and the
  /// gradients are summed across the ranks before the update).
  enum class Distribute { Models, Data } distribute = Distribute::Models;
  /// A run over several processes: this rank's place
  /// (distributed/SweepRanks.h). Null: one process.
  std::shared_ptr<SweepRanks> ranks;
  /// For an artifact whose buffers live on a device: opens that device's
  /// memory. Null: the CUDA runtime's (openCudaDeviceMemory). Tests pass a
  /// fake.
  std::function<std::unique_ptr<DeviceMemory>()> openDevice;
  /// Across ranks of data on GPUs: opens the sums on the devices. Null:
  /// NCCL's (joinNccl). Tests pass a fake.
  std::function<std::unique_ptr<DeviceCollectives>()> openDeviceSums;
  /// On a device: capture each shape of train step once as a graph (CUDA
  /// graphs) and replay it, instead of issuing its launches one by one.
  /// MBT_CUDA_GRAPHS=0 in the environment turns it off too.
  bool deviceGraphs = true;
  /// run() appends each model's running train means to metrics.jsonl
  /// every this many steps within an epoch (the curves of report.html);
  /// -1: about 20 times an epoch; 0: at epoch ends only.
  int64_t logEvery = -1;
  /// run() also evaluates the test split (and k-fold held-out folds)
  /// every this many steps, not only at epoch ends; 0: epoch ends only.
  int64_t evalEvery = 0;
  /// Early stopping: run() stops a model (leaves its parameters as they
  /// are, like a diverged one) once its validation loss has not improved
  /// in this many validation evaluations; 0: never. Needs a validation
  /// split (the data's `validation` or `folds`).
  int64_t earlyStopPatience = 0;
  /// Successive halving: every this many steps run() evaluates the
  /// validation split and stops the worse half of the models still
  /// training (by validation accuracy, else loss); 0: never.
  int64_t halveEvery = 0;
  /// run() stops after this many train steps in all (0: never), as at the
  /// end of its last epoch: the evaluations, results and checkpoint of
  /// an epoch's end, for the part of the epoch it trained. A resume with
  /// a larger limit goes on from there.
  int64_t maxSteps = 0;
  /// run() writes outDir/checkpoint.mbtrun (Checkpoint.h) at the end of
  /// every epoch and, when > 0, every this many steps.
  int64_t checkpointEvery = 0;
  /// run() continues the run whose checkpoint is in outDir instead of
  /// starting a new one (metrics.jsonl is cut back to what it held then).
  bool resume = false;
  /// Called at every evaluation of run() (each epoch's end, and every
  /// evalEvery steps); returns models to stop, which freeze as a stopping
  /// policy's do ("stopped by the caller"). Null: none.
  std::function<std::vector<int64_t>(const Evaluation &)> onEvaluation;
  /// Polled by run() after every step: true stops the run there, after it
  /// writes its checkpoint (a resume continues from that step), with
  /// RunInterrupted. Null: never.
  std::function<bool()> interrupted;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_TRAINOPTIONS_H
