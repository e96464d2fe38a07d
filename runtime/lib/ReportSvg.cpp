//===- ReportSvg.cpp - The SVG pieces report.html is drawn with -----------===//

#include "ReportSvg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace mbt {
namespace runtime {
namespace report {

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string shortNumber(double value) {
  if (!std::isfinite(value))
    return "&ndash;";
  return fmt::format("{:.4g}", value);
}

std::string colorOf(const Leaderboard &board, const ModelResult &row) {
  if (row.diverged)
    return "#9a9a9a";
  double models = double(board.rows.size());
  double hue = models > 1 ? 300.0 * double(row.rank - 1) / (models - 1) : 220;
  return fmt::format("hsl({:.0f},70%,42%)", hue);
}

std::vector<size_t> varyingHypers(const Leaderboard &board) {
  std::vector<size_t> varying;
  for (size_t h = 0; h < board.hyperNames.size(); ++h)
    if (board.rows.size() > 1 && !sameForEveryModel(board, h))
      varying.push_back(h);
  return varying;
}

std::string modelLabel(const Leaderboard &board, const ModelResult &row) {
  std::string label = fmt::format("model {} (rank {}):", row.model, row.rank);
  for (size_t h : varyingHypers(board))
    if (h < row.hyper.size())
      label += fmt::format(" {} {:.4g},", board.hyperNames[h], row.hyper[h]);
  return escape(label) + fmt::format(" seed {}", row.seed);
}

double rankValue(const Leaderboard &board, const ModelResult &row) {
  size_t k = chooseRankKey(board.outputs, board.rankBy).output;
  const std::vector<double> &means = rankedMeans(board, row);
  return k < means.size() ? means[k] : std::nan("");
}

std::string rankMetricName(const Leaderboard &board) {
  size_t k = chooseRankKey(board.outputs, board.rankBy).output;
  return fmt::format("{} {}", splitName(board.ranked),
                     k < board.outputs.size() ? board.outputs[k] : "loss");
}

WorseSide worseSideOf(const std::string &output) {
  return higherIsBetter(output) ? WorseSide::Low : WorseSide::High;
}

double Frame::px(double value) const {
  double f = x.fraction(value);
  return plotLeft() + (plotRight() - plotLeft()) * std::clamp(f, -50.0, 50.0);
}

double Frame::py(double value) const {
  double f = y.fraction(value);
  return plotBottom() - (plotBottom() - plotTop()) * std::clamp(f, -50.0, 50.0);
}

std::string Frame::open(const std::string &kind, const std::string &label,
                        const std::string &xTitle, const std::string &yTitle,
                        bool xTicks) const {
  auto scaleName = [](const Axis &a) {
    switch (a.scale) {
    case Axis::Scale::Log:
      return "log";
    case Axis::Scale::Categorical:
      return "categorical";
    case Axis::Scale::Linear:
      break;
    }
    return "linear";
  };
  std::string svg;
  auto out = std::back_inserter(svg);
  fmt::format_to(out,
                 "<svg viewBox=\"0 0 {:g} {:g}\" class=\"{}\" role=\"img\" "
                 "aria-label=\"{}\" data-xscale=\"{}\" data-yscale=\"{}\">\n"
                 "<defs><clipPath id=\"clip-{}\"><rect x=\"{:g}\" y=\"{:g}\" "
                 "width=\"{:g}\" height=\"{:g}\"/></clipPath></defs>\n",
                 width, height, kind, label, scaleName(x), scaleName(y), id,
                 plotLeft(), plotTop() - 1, plotRight() - plotLeft(),
                 plotBottom() - plotTop() + 2);
  svg += "<g class=\"axis y\">";
  for (size_t i = 0; i < y.ticks.size(); ++i) {
    double at = py(y.ticks[i]);
    fmt::format_to(out,
                   "<line x1=\"{:g}\" x2=\"{:g}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
                   "<text class=\"tick\" x=\"{:g}\" y=\"{:.1f}\" "
                   "text-anchor=\"end\">{}</text>",
                   plotLeft(), plotRight(), at, at, plotLeft() - 6, at + 4,
                   y.labels[i]);
  }
  fmt::format_to(out,
                 "<text class=\"title\" transform=\"translate({:g},{:g}) "
                 "rotate(-90)\" text-anchor=\"middle\">{}</text></g>\n",
                 14.0, (plotTop() + plotBottom()) / 2, yTitle);
  svg += "<g class=\"axis x\">";
  fmt::format_to(out, "<line x1=\"{:g}\" x2=\"{:g}\" y1=\"{:g}\" y2=\"{:g}\"/>",
                 plotLeft(), plotRight(), plotBottom(), plotBottom());
  for (size_t i = 0; xTicks && i < x.ticks.size(); ++i) {
    double at = px(x.ticks[i]);
    fmt::format_to(out,
                   "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:g}\" y2=\"{:g}\"/>"
                   "<text class=\"tick\" x=\"{:.1f}\" y=\"{:g}\" "
                   "text-anchor=\"middle\">{}</text>",
                   at, at, plotBottom(), plotBottom() + 4, at,
                   plotBottom() + 16, x.labels[i]);
  }
  fmt::format_to(out,
                 "<text class=\"title\" x=\"{:g}\" y=\"{:g}\" "
                 "text-anchor=\"middle\">{}</text></g>\n",
                 (plotLeft() + plotRight()) / 2, height - 6, xTitle);
  return svg;
}

ValueAxis valueAxis(const std::vector<double> &values, bool logScale,
                    WorseSide worse, int target) {
  ValueAxis value;
  value.range = shownRange(values, logScale, worse);
  if (value.range.empty)
    return value;
  value.axis = logScale ? logAxis(value.range.lo, value.range.hi, target)
                        : linearAxis(value.range.lo, value.range.hi, target);
  return value;
}

std::string clipNote(const ValueAxis &value, WorseSide worse) {
  if (value.range.clipped == 0)
    return "";
  bool high = worse == WorseSide::High;
  return fmt::format("{} {} {} the chart (the {}: {})", value.range.clipped,
                     value.range.clipped == 1 ? "value is" : "values are",
                     high ? "above" : "below", high ? "highest" : "lowest",
                     shortNumber(value.range.farthest));
}

} // namespace report
} // namespace runtime
} // namespace mbt
