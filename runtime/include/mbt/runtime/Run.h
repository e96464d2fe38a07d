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

#include <cstdint>
#include <string>

namespace mbt {
namespace runtime {

struct RunRequest {
  std::string artifact; ///< path of the compiled shared library
  std::string outDir;   ///< results directory
  std::string dataDir;  ///< empty: $MBT_DATA_DIR or the Debian default
  int64_t epochs = -1;  ///< -1: the manifest's
  bool quiet = false;   ///< no progress line
  /// The leaderboard as JSON on stdout instead of the table, and nothing
  /// else there or on stderr but warnings and errors (for scripts).
  bool json = false;
  /// > 0: instead of training, time this many steps (after a short warm-up)
  /// and print one line of throughput; writes nothing.
  int64_t benchSteps = 0;
  /// > 0: also write the run's checkpoint every this many steps (it is
  /// always written at the end of every epoch).
  int64_t checkpointEvery = 0;
  /// Continue the run whose checkpoint is in outDir.
  bool resume = false;
  /// Train-curve points every this many steps (-1: ~20 an epoch; 0: none
  /// within epochs) and test evaluations every this many (0: epoch ends).
  int64_t logEvery = -1;
  int64_t evalEvery = 0;
  /// Stopping policies (TrainOptions): early stopping's patience in
  /// validation evaluations, successive halving's period in steps; 0: off.
  int64_t earlyStop = 0;
  int64_t halveEvery = 0;
};

/// Trains, prints the leaderboard, writes the results. Returns 0 on
/// success, 1 after printing "<tool>: error: ..." on stderr.
int runArtifact(const RunRequest &request, const char *tool) noexcept;

} // namespace runtime
} // namespace mbt

#endif
