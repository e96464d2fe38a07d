//===- ReportPanel.cpp - Which hyperparameters won: report.html's panel ---===//
//
// The question a sweep exists to answer, as pictures (after TensorBoard's
// HParams view and Optuna's plot_slice, plot_contour and
// plot_parallel_coordinate):
// - the rank metric of every model against each hyperparameter that
//   varies, one point per model, on a log axis where the values span a
//   factor of ten or more;
// - a heat map where two hyperparameters vary over a full grid;
// - parallel coordinates where three or more vary;
// - where models stopped early (successive halving's rounds, early
//   stopping), a bar per model up to the step it trained to.
// Diverged models are grey crosses at the worse edge; stopped ones hollow.
//
//===----------------------------------------------------------------------===//

#include "ReportSvg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

namespace mbt {
namespace runtime {
namespace report {

namespace {

/// The values of hyperparameter `h` over the models.
std::vector<double> hyperValues(const Leaderboard &board, size_t h) {
  std::vector<double> values;
  for (const ModelResult &row : board.rows)
    values.push_back(h < row.hyper.size() ? row.hyper[h] : std::nan(""));
  return values;
}

/// The distinct finite values of `values`, ascending.
std::vector<double> levels(const std::vector<double> &values) {
  std::set<double> set;
  for (double v : values)
    if (std::isfinite(v))
      set.insert(v);
  return {set.begin(), set.end()};
}

/// Where a hyperparameter's values go on an axis. A few values that the
/// models share (a grid's, a choice's) get a slot each, evenly spaced;
/// others a log axis where every value is positive and they span a factor
/// of ten or more (learning rates, weight decays), else a linear one.
struct HyperScale {
  Axis axis;
  std::vector<double> slots; // the values of the slots, or none

  /// `value` in the axis's units.
  double position(double value) const {
    if (slots.empty())
      return value;
    return double(std::lower_bound(slots.begin(), slots.end(), value) -
                  slots.begin());
  }
};

HyperScale hyperScale(const std::vector<double> &values) {
  HyperScale scale;
  std::vector<double> distinct = levels(values);
  if (distinct.empty()) {
    scale.axis = linearAxis(0, 1);
    return scale;
  }
  if (distinct.size() >= 2 && distinct.size() <= 8 &&
      values.size() > distinct.size()) {
    scale.slots = distinct;
    scale.axis.scale = Axis::Scale::Categorical;
    scale.axis.lo = -0.5;
    scale.axis.hi = double(distinct.size()) - 0.5;
    for (size_t i = 0; i < distinct.size(); ++i) {
      scale.axis.ticks.push_back(double(i));
      scale.axis.labels.push_back(fmt::format("{:.4g}", distinct[i]));
    }
    return scale;
  }
  double lo = distinct.front(), hi = distinct.back();
  scale.axis =
      lo > 0 && hi >= 10 * lo ? logAxis(lo, hi, 4) : linearAxis(lo, hi, 4);
  return scale;
}

/// The rank metric's axis over the models' values.
struct MetricAxis {
  ValueAxis value;
  WorseSide worse;
  std::string name;
};

MetricAxis metricAxis(const Leaderboard &board) {
  MetricAxis metric;
  size_t k = chooseRankKey(board.outputs, board.rankBy).output;
  std::string output = k < board.outputs.size() ? board.outputs[k] : "loss";
  metric.worse = worseSideOf(output);
  metric.name = rankMetricName(board);
  std::vector<double> values;
  bool positive = true;
  for (const ModelResult &row : board.rows) {
    double v = rankValue(board, row);
    if (std::isfinite(v) && !row.diverged) {
      values.push_back(v);
      positive = positive && v > 0;
    }
  }
  metric.value = valueAxis(values, metric.worse == WorseSide::High && positive,
                           metric.worse, 4);
  return metric;
}

/// One model's marker at (x, its metric): a dot, hollow where the model
/// stopped early, a triangle at the edge where its value is off the
/// chart, a grey cross at the worse edge where it diverged.
std::string marker(const Leaderboard &board, const ModelResult &row, double x,
                   const Frame &frame, const MetricAxis &metric) {
  double v = rankValue(board, row);
  std::string title =
      fmt::format("{}: {} {}; {}", modelLabel(board, row), escape(metric.name),
                  shortNumber(v), escape(statusOf(row)));
  bool high = metric.worse == WorseSide::High;
  double worseEdge = high ? frame.plotTop() : frame.plotBottom();
  if (row.diverged || !std::isfinite(v))
    return fmt::format(
        "<path class=\"pt diverged\" data-model=\"{0}\" d=\"M{1:.1f},{2:.1f}"
        "l8,8m0,-8l-8,8\" transform=\"translate(-4,-4)\" stroke=\"#9a9a9a\" "
        "stroke-width=\"2\"><title>{3}</title></path>",
        row.model, x, worseEdge, title);
  std::string color = colorOf(board, row);
  double f = metric.value.axis.fraction(v);
  if (f < 0 || f > 1) {
    bool up = f > 1;
    double y = up ? frame.plotTop() : frame.plotBottom();
    return fmt::format("<path class=\"pt clipped\" data-model=\"{}\" "
                       "d=\"M{:.1f},{:.1f}l-5,{}h10z\" fill=\"{}\"><title>{} "
                       "(off the chart)</title></path>",
                       row.model, x, y, up ? 8 : -8, color, title);
  }
  bool stopped = row.stoppedStep > 0;
  return fmt::format("<circle class=\"pt{}\" data-model=\"{}\" cx=\"{:.1f}\" "
                     "cy=\"{:.1f}\" r=\"4\" fill=\"{}\" stroke=\"{}\" "
                     "stroke-width=\"1.5\"><title>{}</title></circle>",
                     stopped ? " stopped" : "", row.model, x, frame.py(v),
                     stopped ? "#fff" : color, color, title);
}

/// The metric of every model against one hyperparameter's values.
std::string scatter(const Leaderboard &board, const std::string &name,
                    const std::vector<double> &xs, const MetricAxis &metric,
                    const std::string &id, bool alone) {
  Frame frame;
  frame.width = alone ? 720 : 350;
  frame.height = alone ? 300 : 260;
  frame.left = 60;
  frame.id = id;
  HyperScale scale = hyperScale(xs);
  frame.x = scale.axis;
  frame.y = metric.value.axis;
  bool logX = frame.x.scale == Axis::Scale::Log;
  std::string svg = frame.open(alone ? "panel wide" : "panel",
                               escape(metric.name) + " against " + escape(name),
                               escape(name) + (logX ? " (log scale)" : ""),
                               escape(metric.name));
  // Worst first: the best models' points on top.
  for (size_t i = board.rows.size(); i-- > 0;) {
    const ModelResult &row = board.rows[i];
    double x = std::isfinite(xs[i]) ? frame.px(scale.position(xs[i]))
                                    : frame.plotLeft();
    // Models sharing a slot spread a little, so that none hides another.
    if (!scale.slots.empty())
      x += 2.0 * double(row.model % 7) - 6.0;
    svg += marker(board, row, x, frame, metric);
  }
  svg += "</svg>\n";
  return svg;
}

/// A color from worst (light yellow) to best (dark blue) for t in [0, 1].
std::string ramp(double t) {
  static const double stops[][3] = {{255, 247, 188},
                                    {161, 218, 180},
                                    {65, 182, 196},
                                    {44, 127, 184},
                                    {37, 52, 148}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  int i = std::min(int(t), 3);
  double w = t - i;
  int c[3];
  for (int k = 0; k < 3; ++k)
    c[k] = int(std::lround(stops[i][k] * (1 - w) + stops[i + 1][k] * w));
  return fmt::format("rgb({},{},{})", c[0], c[1], c[2]);
}

/// Where hyperparameters `a` and `b` vary over a full grid (every pair of
/// their values trained, each at most 12 values): the mean metric of each
/// cell's models, colored from worst to best. "" where they do not.
std::string heatMap(const Leaderboard &board, size_t a, size_t b,
                    const MetricAxis &metric) {
  std::vector<double> as = hyperValues(board, a), bs = hyperValues(board, b);
  std::vector<double> rowsOf = levels(as), colsOf = levels(bs);
  std::map<std::pair<double, double>, std::vector<const ModelResult *>> cells;
  for (size_t i = 0; i < board.rows.size(); ++i)
    cells[{as[i], bs[i]}].push_back(&board.rows[i]);
  if (rowsOf.size() > 12 || colsOf.size() > 12 || rowsOf.size() < 2 ||
      colsOf.size() < 2 || cells.size() != rowsOf.size() * colsOf.size())
    return "";
  double cellW = std::min(90.0, 560.0 / double(colsOf.size())), cellH = 34;
  double left = 80, top = 10;
  double width = left + cellW * double(colsOf.size()) + 16;
  double height = top + cellH * double(rowsOf.size()) + 44;
  std::string svg;
  auto out = std::back_inserter(svg);
  const std::string &an = board.hyperNames[a], &bn = board.hyperNames[b];
  fmt::format_to(out,
                 "<svg viewBox=\"0 0 {:g} {:g}\" class=\"panel heat\" "
                 "style=\"max-width:{:g}px\" role=\"img\" aria-label=\"{} by "
                 "{} and {}\">\n",
                 width, height, width * 1.2, escape(metric.name), escape(an),
                 escape(bn));
  const Axis &scale = metric.value.axis;
  bool low = metric.worse == WorseSide::Low;
  for (size_t r = 0; r < rowsOf.size(); ++r) {
    double y = top + cellH * double(rowsOf.size() - 1 - r);
    fmt::format_to(out,
                   "<text class=\"tick\" x=\"{:g}\" y=\"{:g}\" "
                   "text-anchor=\"end\">{:.4g}</text>",
                   left - 6, y + cellH / 2 + 4, rowsOf[r]);
    for (size_t c = 0; c < colsOf.size(); ++c) {
      const auto &models = cells[{rowsOf[r], colsOf[c]}];
      double sum = 0;
      int finite = 0;
      std::string names;
      for (const ModelResult *m : models) {
        double v = rankValue(board, *m);
        if (!m->diverged && std::isfinite(v)) {
          sum += v;
          ++finite;
        }
        names += fmt::format("{}model {}", names.empty() ? "" : ", ", m->model);
      }
      double mean = finite ? sum / finite : std::nan("");
      double t = std::isfinite(mean) ? scale.fraction(mean) : 0;
      std::string fill = finite ? ramp(low ? t : 1 - t) : "#ddd";
      bool dark = finite && (low ? t : 1 - t) > 0.55;
      double x = left + cellW * double(c);
      fmt::format_to(
          out,
          "<g class=\"cell\"><rect x=\"{:g}\" y=\"{:g}\" width=\"{:g}\" "
          "height=\"{:g}\" fill=\"{}\" stroke=\"#fff\"/><text x=\"{:g}\" "
          "y=\"{:g}\" text-anchor=\"middle\" fill=\"{}\">{}</text><title>{} "
          "{:.4g}, {} {:.4g}: {} {} ({})</title></g>",
          x, y, cellW, cellH, fill, x + cellW / 2, y + cellH / 2 + 4,
          dark ? "#fff" : "#222", finite ? shortNumber(mean) : "diverged",
          escape(an), rowsOf[r], escape(bn), colsOf[c], escape(metric.name),
          shortNumber(mean), names);
    }
  }
  for (size_t c = 0; c < colsOf.size(); ++c)
    fmt::format_to(out,
                   "<text class=\"tick\" x=\"{:g}\" y=\"{:g}\" "
                   "text-anchor=\"middle\">{:.4g}</text>",
                   left + cellW * (double(c) + 0.5),
                   top + cellH * double(rowsOf.size()) + 16, colsOf[c]);
  fmt::format_to(out,
                 "<text class=\"title\" x=\"{:g}\" y=\"{:g}\" "
                 "text-anchor=\"middle\">{} (columns); {} (rows)</text>"
                 "</svg>\n",
                 left + cellW * double(colsOf.size()) / 2, height - 6,
                 escape(bn), escape(an));
  return svg;
}

/// Every model as a line through one axis per varying hyperparameter and
/// a last one for the metric.
std::string parallelCoordinates(const Leaderboard &board,
                                const std::vector<size_t> &varying,
                                const MetricAxis &metric) {
  double width = 900, height = 300, top = 24, bottom = 270, left = 60,
         right = 840;
  std::vector<HyperScale> axes;
  std::vector<std::string> names;
  for (size_t h : varying) {
    axes.push_back(hyperScale(hyperValues(board, h)));
    names.push_back(escape(board.hyperNames[h]));
  }
  axes.push_back({metric.value.axis, {}});
  names.push_back(escape(metric.name));
  size_t n = axes.size();
  auto xOf = [&](size_t i) {
    return left + (right - left) * double(i) / double(n - 1);
  };
  auto yOf = [&](size_t i, double v) {
    double f = axes[i].axis.fraction(axes[i].position(v));
    return bottom - (bottom - top) * std::clamp(f, 0.0, 1.0);
  };
  std::string svg;
  auto out = std::back_inserter(svg);
  fmt::format_to(out,
                 "<svg viewBox=\"0 0 {:g} {:g}\" class=\"panel wide parallel\" "
                 "role=\"img\" aria-label=\"parallel coordinates\">\n",
                 width, height);
  for (size_t i = board.rows.size(); i-- > 0;) {
    const ModelResult &row = board.rows[i];
    double v = rankValue(board, row);
    std::string points;
    for (size_t a = 0; a + 1 < n; ++a)
      fmt::format_to(std::back_inserter(points), "{:.1f},{:.1f} ", xOf(a),
                     yOf(a, row.hyper[varying[a]]));
    bool bad = row.diverged || !std::isfinite(v);
    double worseEnd = metric.worse == WorseSide::High ? top : bottom;
    fmt::format_to(std::back_inserter(points), "{:.1f},{:.1f}", xOf(n - 1),
                   bad ? worseEnd : yOf(n - 1, v));
    fmt::format_to(out,
                   "<polyline class=\"m{}\" data-model=\"{}\" points=\"{}\" "
                   "stroke=\"{}\"><title>{}: {} {}</title></polyline>",
                   row.rank == 1 && !bad ? " best" : "", row.model, points,
                   colorOf(board, row), modelLabel(board, row),
                   escape(metric.name), shortNumber(v));
  }
  for (size_t a = 0; a < n; ++a) {
    double x = xOf(a);
    fmt::format_to(out,
                   "<g class=\"axis\"><line x1=\"{0:g}\" x2=\"{0:g}\" "
                   "y1=\"{1:g}\" y2=\"{2:g}\" style=\"stroke:#888\"/>"
                   "<text class=\"title\" x=\"{0:g}\" y=\"{3:g}\" "
                   "text-anchor=\"middle\">{4}</text>",
                   x, top, bottom, top - 10, names[a]);
    const Axis &axis = axes[a].axis;
    for (size_t t = 0; t < axis.ticks.size(); ++t) {
      double y = bottom - (bottom - top) * axis.fraction(axis.ticks[t]);
      fmt::format_to(out,
                     "<text class=\"tick\" x=\"{:g}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\">{}</text>",
                     x - 4, y + 4, axis.labels[t]);
    }
    svg += "</g>";
  }
  svg += "</svg>\n";
  return svg;
}

/// Where any model stopped early: a bar per model from step 0 to the step
/// it trained to, longest first, and a line at each step where some
/// stopped, saying how many trained on.
std::string stoppingRounds(const Leaderboard &board, int64_t lastStep) {
  std::vector<const ModelResult *> rows;
  std::map<int64_t, int> stops;
  for (const ModelResult &row : board.rows) {
    rows.push_back(&row);
    if (row.stoppedStep > 0)
      ++stops[row.stoppedStep];
  }
  if (stops.empty())
    return "";
  auto endOf = [&](const ModelResult *row) {
    return row->stoppedStep > 0                     ? row->stoppedStep
           : row->diverged && row->divergedStep > 0 ? row->divergedStep
                                                    : lastStep;
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const ModelResult *a, const ModelResult *b) {
                     return endOf(a) > endOf(b);
                   });
  double bar = std::clamp(360.0 / double(rows.size()), 3.0, 14.0);
  Frame frame;
  frame.width = 720;
  frame.top = 24;
  frame.height = frame.top + bar * double(rows.size()) + frame.bottom;
  frame.id = "rounds";
  frame.x = linearAxis(0, double(std::max<int64_t>(lastStep, 1)), 6);
  frame.y = linearAxis(0, double(rows.size()), 1);
  frame.y.ticks.clear();
  frame.y.labels.clear();
  std::string svg = frame.open("chart rounds", "where the models stopped",
                               "train step", "models, longest trained first");
  auto out = std::back_inserter(svg);
  for (size_t i = 0; i < rows.size(); ++i)
    fmt::format_to(out,
                   "<rect class=\"bar\" data-model=\"{}\" x=\"{:g}\" "
                   "y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                   "fill=\"{}\"><title>{}; {}</title></rect>",
                   rows[i]->model, frame.plotLeft(),
                   frame.plotTop() + bar * double(i),
                   frame.px(double(endOf(rows[i]))) - frame.plotLeft(),
                   std::max(1.0, bar - 1), colorOf(board, *rows[i]),
                   modelLabel(board, *rows[i]), escape(statusOf(*rows[i])));
  int left = int(board.rows.size());
  for (auto [step, count] : stops) {
    left -= count;
    double x = frame.px(double(step));
    fmt::format_to(out,
                   "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:g}\" "
                   "y2=\"{2:g}\" stroke=\"#555\" stroke-dasharray=\"3 3\"/>"
                   "<text class=\"tick\" x=\"{0:.1f}\" y=\"{3:g}\" "
                   "text-anchor=\"middle\">{4} on</text>",
                   x, frame.plotTop() - 4, frame.plotBottom(),
                   frame.plotTop() - 8, left);
  }
  svg += "</svg>\n";
  return svg;
}

} // namespace

std::string hyperparameterPanel(const Leaderboard &board, int64_t lastStep) {
  if (board.rows.empty())
    return "<p class=\"note\">no models</p>\n";
  MetricAxis metric = metricAxis(board);
  if (metric.value.range.empty)
    return fmt::format("<p class=\"note\">no model has a finite {}</p>\n",
                       escape(metric.name));
  std::vector<size_t> varying = varyingHypers(board);
  std::string html;
  auto out = std::back_inserter(html);
  if (varying.empty())
    html += "<p class=\"note\">No hyperparameter varies: the models differ "
            "by their seeds, so this is the spread the seed alone "
            "gives.</p>\n";
  else
    fmt::format_to(out,
                   "<p class=\"note\">Each point is a model: its {} against "
                   "each hyperparameter that varies. Hollow: stopped early; "
                   "grey cross: diverged; a triangle at the edge: off the "
                   "chart.</p>\n",
                   escape(metric.name));
  html += "<div class=\"panels\">";
  if (varying.empty()) {
    std::vector<double> seeds;
    for (const ModelResult &row : board.rows)
      seeds.push_back(double(row.seed));
    html += scatter(board, "seed", seeds, metric, "panel-seed", true);
  }
  for (size_t h : varying)
    html += scatter(board, board.hyperNames[h], hyperValues(board, h), metric,
                    fmt::format("panel-{}", h), varying.size() == 1);
  if (varying.size() == 2)
    html += heatMap(board, varying[0], varying[1], metric);
  html += "</div>\n";
  if (varying.size() >= 3)
    html += parallelCoordinates(board, varying, metric);
  std::string note = clipNote(metric.value, metric.worse);
  if (!note.empty())
    fmt::format_to(out, "<p class=\"note clip\">{}</p>\n", note);
  std::string rounds = stoppingRounds(board, lastStep);
  if (!rounds.empty())
    fmt::format_to(out, "<h3>Where the models stopped</h3>\n{}", rounds);
  return html;
}

} // namespace report
} // namespace runtime
} // namespace mbt
