//===- Progress.cpp - Throttled progress output ---------------------------===//

#include "mbt/runtime/Progress.h"

#include <fmt/format.h>

#include <cmath>
#include <unistd.h>

namespace mbt {
namespace runtime {

namespace {
/// Minimum time between two in-place redraws.
constexpr std::chrono::milliseconds kRedrawInterval(500);
} // namespace

std::string formatProgress(const ProgressSample &s) {
  std::string loss =
      std::isfinite(s.bestLoss) ? fmt::format("{:.4f}", s.bestLoss) : "nan";
  return fmt::format("epoch {}/{}  step {}/{}  loss(best) {}  {:.1f} "
                     "samples/s  {:.1f} model-samples/s",
                     s.epoch, s.epochs, s.step, s.stepsInEpoch, loss,
                     s.samplesPerSecond,
                     s.samplesPerSecond * static_cast<double>(s.models));
}

ProgressMeter::ProgressMeter(std::ostream *out, bool isTty, bool quiet)
    : out(out), isTty(isTty), enabled(out && !quiet) {}

void ProgressMeter::note(const std::string &line) {
  if (!out)
    return;
  // Blank the in-place line, so the note does not run into it.
  if (isTty && enabled && lastWidth > 0)
    *out << '\r' << std::string(lastWidth, ' ') << '\r';
  *out << line << '\n';
  out->flush();
  // Redraw at the next update.
  lastWidth = 0;
  lastPrint = std::chrono::steady_clock::time_point();
}

void ProgressMeter::beginEpoch() {
  lastPrint = std::chrono::steady_clock::now();
  nextTenth = 1;
  lastWidth = 0;
}

void ProgressMeter::update(const ProgressSample &sample, bool endOfEpoch) {
  if (!enabled)
    return;
  auto now = std::chrono::steady_clock::now();
  if (isTty) {
    if (!endOfEpoch && now - lastPrint < kRedrawInterval)
      return;
    std::string line = formatProgress(sample);
    size_t width = line.size();
    if (width < lastWidth)
      line.append(lastWidth - width, ' ');
    lastWidth = width;
    *out << '\r' << line;
    if (endOfEpoch)
      *out << '\n';
    out->flush();
    lastPrint = now;
    return;
  }
  // Log mode: one line each time the step crosses the next 10% mark.
  bool crossed = sample.stepsInEpoch > 0 &&
                 sample.step * 10 >= nextTenth * sample.stepsInEpoch;
  if (!crossed && !endOfEpoch)
    return;
  while (sample.stepsInEpoch > 0 &&
         sample.step * 10 >= nextTenth * sample.stepsInEpoch)
    ++nextTenth;
  // Marks passed in one step (tiny epochs) print one line, not several.
  *out << formatProgress(sample) << '\n';
  out->flush();
  lastPrint = now;
}

bool stderrIsTty() { return ::isatty(STDERR_FILENO) == 1; }

} // namespace runtime
} // namespace mbt
