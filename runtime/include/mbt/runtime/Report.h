//===- Report.h - DIR/report.html: curves, panel, leaderboard ---*- C++ -*-===//
//
// One self-contained HTML file (inline SVG, CSS and a short script; nothing
// fetched) that a browser opens from disk: for every output (the loss, each
// metric, a language model's perplexity) a chart of every model's curves
// over the train steps, colored by rank, losses on a log axis; a panel of
// the rank metric against each hyperparameter that varies; and the
// leaderboard. It is rendered from metrics.jsonl, so a resumed run's report
// shows the whole run. docs/report.md shows and explains it.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_REPORT_H
#define MBT_RUNTIME_REPORT_H

#include "mbt/runtime/Leaderboard.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// One line of metrics.jsonl.
struct MetricsRecord {
  int64_t epoch = 0, step = 0, model = 0;
  std::string split;
  /// Output name -> value (NaN where the line has null).
  std::map<std::string, double> values;
};

/// Parses metrics.jsonl's text; lines that are not records are skipped.
std::vector<MetricsRecord> parseMetricsLog(const std::string &text);

/// The report's HTML. `title` names the run (the model and the results
/// directory); `outputs` are the manifest's (outputs[0] is the loss); a
/// "perplexity" last in `board.outputs` gets a chart of exp(outputs[0]).
std::string renderReport(const std::string &title,
                         const std::vector<std::string> &outputs,
                         const std::vector<MetricsRecord> &records,
                         const Leaderboard &board);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_REPORT_H
