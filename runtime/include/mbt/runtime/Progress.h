//===- Progress.h - Training progress line ----------------------*- C++ -*-===//
//
// One status line per epoch such as
//   epoch 1/2  step 312/469  loss(best) 0.4123  1234.5 samples/s  19745.2
//   model-samples/s
// On a terminal it is redrawn in place ('\r') at most about twice a second;
// in a log file (not a TTY) a full line is written about every 10% of the
// epoch, so logs stay short but still show that training moves.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_PROGRESS_H
#define MBT_RUNTIME_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace mbt {
namespace runtime {

/// What one progress line reports.
struct ProgressSample {
  int64_t epoch = 0, epochs = 0;      // 1-based epoch of `epochs`
  int64_t step = 0, stepsInEpoch = 0; // 1-based step within the epoch
  double bestLoss = 0;                // best running train loss (NaN: none)
  double samplesPerSecond = 0;        // data samples (one model's view)
  int64_t models = 1;                 // model-samples/s = samples/s * M
};

/// Formats the line without any '\r' or newline.
std::string formatProgress(const ProgressSample &sample);

class ProgressMeter {
public:
  /// `out` null or `quiet` disables output. `isTty` picks in-place redraw.
  ProgressMeter(std::ostream *out, bool isTty, bool quiet);

  /// Starts an epoch: resets the throttle and the 10% marks.
  void beginEpoch();
  /// Reports a step; prints when the throttle allows, or always when
  /// `endOfEpoch` (which also ends the in-place line with a newline).
  void update(const ProgressSample &sample, bool endOfEpoch);
  /// Prints `line` on a line of its own (a warning: also when quiet),
  /// clearing an in-place progress line first; the next update redraws it.
  void note(const std::string &line);

private:
  std::ostream *out;
  bool isTty;
  bool enabled;
  std::chrono::steady_clock::time_point lastPrint;
  int64_t nextTenth = 1; // next 10% mark to print at (non-TTY mode)
  size_t lastWidth = 0;  // to blank leftovers of a longer previous line
};

/// Whether standard error is a terminal (decides the default progress mode).
bool stderrIsTty();

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_PROGRESS_H
