//===- MetricsLog.h - Per-epoch metrics as JSON lines -----------*- C++ -*-===//
//
// DIR/metrics.jsonl gets one object per model, split and epoch, e.g.
//   {"epoch":1,"step":469,"model":3,"split":"test","loss":0.41,"acc":0.85}
// JSON lines append cheaply and survive a crash up to the last complete
// epoch; non-finite values are written as null (JSON has no NaN).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_METRICSLOG_H
#define MBT_RUNTIME_METRICSLOG_H

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// One JSON line (with trailing newline) for model `model` on `split`.
std::string formatMetricsLine(int64_t epoch, int64_t step, int64_t model,
                              const std::string &split,
                              const std::vector<std::string> &outputs,
                              const std::vector<double> &values);

class MetricsLog {
public:
  /// Logs to DIR/metrics.jsonl; an empty `dir` makes every call a no-op.
  explicit MetricsLog(const std::string &dir);

  /// Empties the file: a new run starts a new log.
  void reset();
  /// Cuts the file back to its first `bytes` bytes: a resumed run drops
  /// what the killed one appended after its checkpoint. Throws
  /// RuntimeError if the file is shorter (it is not that run's log).
  void truncate(int64_t bytes);
  /// Appends `lines` and flushes them, so each epoch is on disk when the
  /// call returns. Throws RuntimeError naming the file on failure.
  void append(const std::string &lines);

  const std::string &path() const { return filePath; }

private:
  std::string filePath;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_METRICSLOG_H
