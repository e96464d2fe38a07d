//===- Run.h - train a compiled artifact, the whole job ---------*- C++ -*-===//
//
// The one entry point that mbtc and mbt-run share: load the artifact and
// its data, train, report. It catches every error and returns an exit
// status, so callers built without exceptions (mbtc links LLVM, which is
// built with -fno-exceptions) can use it.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_RUN_H
#define MBT_RUNTIME_RUN_H

#include "mbt/runtime/TrainOptions.h"

#include <cstdint>
#include <string>

namespace mbt {
namespace runtime {

struct RunRequest {
  std::string artifact; ///< path of the compiled shared library
  std::string dataDir;  ///< empty: $MBT_DATA_DIR or the Debian default
  /// > 0: instead of training, time this many steps (after a short warm-up)
  /// and print one line of throughput; writes nothing.
  int64_t benchSteps = 0;
  /// Instead of training, load the data as training would, print what
  /// each split holds and how long loading took, and write nothing: a
  /// check of the user's own files before a long run.
  bool checkData = false;
  /// A plan of steps (StepPlan.h) to train every epoch of token sequences
  /// on, instead of the manifest's batching; empty: none.
  std::string stepsFile;
  /// How to train: results directory, epochs, logging, evaluation,
  /// checkpoints, resume, stopping policies. With `reportJson` (for
  /// scripts) stdout gets the leaderboard as JSON and nothing else, and
  /// the run is quiet.
  TrainOptions train;
};

/// Trains, prints the leaderboard, writes the results. Returns 0 on
/// success, 1 after printing "<tool>: error: ..." on stderr.
int runArtifact(const RunRequest &request, const char *tool) noexcept;

} // namespace runtime
} // namespace mbt

#endif
