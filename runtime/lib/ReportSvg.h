//===- ReportSvg.h - The SVG pieces report.html is drawn with ---*- C++ -*-===//
//
// Shared by the curves (Report.cpp) and the hyperparameter panel
// (ReportPanel.cpp): escaping, model colors and labels, and a chart frame
// that maps values to a plot area and draws its round ticks.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_LIB_REPORTSVG_H
#define MBT_RUNTIME_LIB_REPORTSVG_H

#include "mbt/runtime/ChartAxis.h"
#include "mbt/runtime/Leaderboard.h"

#include <string>
#include <vector>

namespace mbt {
namespace runtime {
namespace report {

/// `text` with &, <, > and " escaped for HTML text and attributes.
std::string escape(const std::string &text);

/// `value` to 4 significant digits, or a dash where it is not finite.
std::string shortNumber(double value);

/// A model's color by rank: hues around the wheel, best first; grey for a
/// model that diverged.
std::string colorOf(const Leaderboard &board, const ModelResult &row);

/// "model 9 (rank 1): lr 0.00631, seed 9": a curve's or a point's hover
/// label, naming the hyperparameters that tell the models apart.
std::string modelLabel(const Leaderboard &board, const ModelResult &row);

/// Which of `board.hyperNames` differ between the models.
std::vector<size_t> varyingHypers(const Leaderboard &board);

/// The value of the output the models are ranked by on the ranked split
/// (NaN where the model has none).
double rankValue(const Leaderboard &board, const ModelResult &row);

/// "test acc": the rank metric's name as the columns show it.
std::string rankMetricName(const Leaderboard &board);

/// Whether an output is better high (an accuracy) or low (a loss).
WorseSide worseSideOf(const std::string &output);

/// A chart: a `width` x `height` SVG whose plot area the margins leave,
/// with an axis for each direction.
struct Frame {
  double width = 720, height = 300;
  double left = 64, right = 16, top = 12, bottom = 40;
  Axis x, y;
  std::string id; // unique in the page: names the plot area's clip path

  double px(double value) const;
  double py(double value) const;
  double plotLeft() const { return left; }
  double plotRight() const { return width - right; }
  double plotTop() const { return top; }
  double plotBottom() const { return height - bottom; }

  /// The <svg> start tag, the clip path of the plot area, grid lines,
  /// ticks, tick labels and the axes' titles. `kind` is the svg's class
  /// ("chart", "panel"); `label` its accessible name.
  std::string open(const std::string &kind, const std::string &label,
                   const std::string &xTitle, const std::string &yTitle,
                   bool xTicks = true) const;
};

/// The y axis of an output's values: logarithmic when `logScale` (every
/// shown value is then positive), over shownRange's span of `values`.
struct ValueAxis {
  Axis axis;
  ShownRange range;
};
ValueAxis valueAxis(const std::vector<double> &values, bool logScale,
                    WorseSide worse, int target = 5);

/// "3 values are above the chart (the highest: 13.3)", or "" when none
/// is.
std::string clipNote(const ValueAxis &value, WorseSide worse);

/// The hyperparameter panel: the rank metric of every model against each
/// hyperparameter that varies, a heat map for a two-way grid, parallel
/// coordinates for three or more, and where models stopped early, when.
/// `lastStep` is the run's last logged train step.
std::string hyperparameterPanel(const Leaderboard &board, int64_t lastStep);

} // namespace report
} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_REPORTSVG_H
