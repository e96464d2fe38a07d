//===- ChartAxis.h - Round ticks and the range a chart shows ----*- C++ -*-===//
//
// The axes of report.html's charts. Ticks are round numbers: multiples of
// 1, 2 or 5 times a power of ten on a linear axis (Heckbert's "nice
// numbers", as d3 and matplotlib choose them), decades or 1-2-5 steps on a
// logarithmic one. The range comes from the values that matter: outliers
// on the worse side of an output (a loss far above the others, an accuracy
// far below) are clipped, and the chart says how many.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_CHARTAXIS_H
#define MBT_RUNTIME_CHARTAXIS_H

#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// One axis of a chart: what it spans, how, and where its ticks are.
struct Axis {
  /// Categorical: a slot per value of a few (a grid's), ticks at the
  /// slots 0, 1, ... labeled with the values; placed as Linear.
  enum class Scale { Linear, Log, Categorical } scale = Scale::Linear;
  double lo = 0, hi = 1;           // the span shown, lo < hi (both > 0: Log)
  std::vector<double> ticks;       // ascending, within [lo, hi]
  std::vector<std::string> labels; // one per tick, all distinct

  /// Where `value` lies: 0 at lo, 1 at hi (in log10 on a Log axis; values
  /// outside the span give fractions outside [0, 1]).
  double fraction(double value) const;
};

/// Round ticks over [lo, hi]: the step is 1, 2 or 5 times a power of ten,
/// chosen so that about `target` steps cover the span, and the axis widens
/// to the ticks just outside the data. Equal ends get a span around them.
Axis linearAxis(double lo, double hi, int target = 5);

/// A logarithmic axis over [lo, hi] (lo > 0), padded by 3% of the span:
/// ticks at the powers of ten inside it where it covers more than 2.2
/// decades (every k-th one where there are many), at 1, 2 and 5 times them
/// where it covers fewer, and where those give fewer than three ticks (the
/// values are within a factor of a few), at round linear steps placed on
/// the log scale (the span then widens to them).
Axis logAxis(double lo, double hi, int target = 5);

/// The label of a tick on a linear axis whose step is `step`: fixed-point
/// with as many decimals as the step needs ("0.86232", "250", "-1.5"), in
/// scientific notation where that would be long ("2.5e-07", "1.2e+09").
std::string tickLabel(double value, double step);

/// Which side of an output's values is worse: a loss's high values, an
/// accuracy's low ones.
enum class WorseSide { High, Low };

/// The span of `values` worth showing. Every finite value counts, except
/// outliers on the worse side: beyond the quartile fence (Q3 + 3 IQR above,
/// Q1 - 3 IQR below, computed in log10 when `logScale`), so that one model
/// starting 100 times higher does not flatten the others' curves. Values
/// that are not finite (and, when `logScale`, not positive) are ignored.
struct ShownRange {
  double lo = 0, hi = 0;
  bool empty = true;   // no value to show
  size_t clipped = 0;  // values outside [lo, hi]
  double farthest = 0; // the clipped value farthest out (when clipped > 0)
};
ShownRange shownRange(const std::vector<double> &values, bool logScale,
                      WorseSide worse);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_CHARTAXIS_H
