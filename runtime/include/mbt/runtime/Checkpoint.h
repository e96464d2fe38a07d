//===- Checkpoint.h - A run's full state, to resume it ----------*- C++ -*-===//
//
// What `Trainer` needs to continue a run exactly where it stopped: every
// model's parameters and optimizer state, the data-order cursor (the data
// order itself is a function of the shuffle seed and the epoch, Sampler.h),
// the step counter, the epoch's running sums, which models diverged and
// where, and how long metrics.jsonl was (lines a killed run appended after
// the checkpoint are dropped on resume). Written atomically (FileUtil.h) as
// DIR/checkpoint.mbtrun: a little-endian binary file with a magic, a
// version, the manifest's digest (a checkpoint resumes only the artifact
// that wrote it) and a CRC-32 of everything before it, so a truncated or
// corrupt file is named, with the offset, rather than resumed.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_CHECKPOINT_H
#define MBT_RUNTIME_CHECKPOINT_H

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

struct RunCheckpoint {
  /// manifestDigest(mbt_manifest()) of the artifact that wrote it.
  uint64_t manifestDigest = 0;
  int64_t models = 0, paramCount = 0, bufferCount = 0, slots = 0, outputs = 0;
  /// P_t: the trainable columns of a params row, which the state covers.
  int64_t trainableCount = 0;
  /// 4 (f32) or 8 (f64): the width of the parameter and state elements.
  int64_t elementBytes = 4;
  /// Train steps taken; the data-order cursor: epochs started (0 before
  /// the first), batches taken in the current one.
  int64_t step = 0, epochsStarted = 0, batchInEpoch = 0;
  /// The current epoch's running sums of the outputs [M*K] and their
  /// weight (samples; real target tokens for next-token targets).
  std::vector<double> runningSums;
  int64_t runningWeight = 0;
  /// Per model: the step its loss or gradients were not finite (0: none).
  std::vector<int64_t> divergedStep;
  /// Per model: the step a stopping policy stopped it (0: none), why, and
  /// early stopping's best validation loss and evaluations since it.
  std::vector<int64_t> stoppedStep;
  std::vector<std::string> stopReason;
  std::vector<double> bestValidationLoss;
  std::vector<int64_t> evaluationsSinceBest;
  /// Bytes of metrics.jsonl when the checkpoint was written.
  int64_t metricsBytes = 0;
  /// params [M, P], state [S, M, P_t] and buffers [M, Q], raw elements.
  std::vector<uint8_t> params, state, buffers;
};

/// The file name inside a results directory.
constexpr const char *kCheckpointFile = "checkpoint.mbtrun";

/// Rank `rank` of a run over `ranks` processes keeps its checkpoint in
/// checkpoint.rank<r>-of-<K>.mbtrun (docs/distributed.md); K is read back
/// from such a name, 0 from any other.
std::string rankCheckpointFile(int64_t rank, int64_t ranks);
int64_t ranksOfCheckpointFile(const std::string &name);

/// FNV-1a (64 bits) of the manifest's JSON text.
uint64_t manifestDigest(const std::string &manifestJson);

/// The file's bytes.
std::string serializeCheckpoint(const RunCheckpoint &checkpoint);

/// Parses a checkpoint file's bytes; throws RuntimeError naming `path` and
/// what is wrong (not a checkpoint, another version, truncated at byte N,
/// a checksum mismatch, inconsistent sizes).
RunCheckpoint parseCheckpoint(const std::string &bytes,
                              const std::string &path);

/// Whether the file at `path` starts as a checkpoint does (its magic).
bool isRunCheckpoint(const std::string &path);

/// Reads and parses `path`; RuntimeError if it cannot be read.
RunCheckpoint readCheckpoint(const std::string &path);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_CHECKPOINT_H
