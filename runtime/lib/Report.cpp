//===- Report.cpp - Render report.html from metrics.jsonl -----------------===//
//
// Charts are SVG polylines in a fixed 720 x 300 viewBox: x is the train
// step (0 to the last logged one), y the output's range over every finite
// value shown, padded 5%. Colors follow the leaderboard: the best model is
// the most saturated; models that diverged are grey. Everything is
// escaped; values that are not finite are gaps in a curve.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <sstream>

namespace mbt {
namespace runtime {

namespace {

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

/// `value` in `format`, or a dash where it is not finite.
std::string number(double value, fmt::format_string<double> format = "{:.4g}") {
  if (!std::isfinite(value))
    return "&ndash;";
  return fmt::format(format, value);
}

/// A model's color by rank: hues around the wheel, best first.
std::string colorOf(int64_t rank, int64_t models, bool diverged) {
  if (diverged)
    return "#9a9a9a";
  double hue = models > 1 ? 300.0 * double(rank - 1) / double(models - 1) : 220;
  return fmt::format("hsl({:.0f},70%,42%)", hue);
}

constexpr double kWidth = 720, kHeight = 300, kLeft = 60, kRight = 24,
                 kTop = 12, kBottom = 36;

struct Series {
  std::vector<std::pair<double, double>> points; // (step, value)
};

/// One chart: every model's train and test series of `output`.
std::string chart(const std::string &output,
                  const std::vector<MetricsRecord> &records,
                  const Leaderboard &board) {
  std::map<int64_t, Series> train, test, validation;
  double maxStep = 0, lo = std::numeric_limits<double>::infinity(),
         hi = -std::numeric_limits<double>::infinity();
  for (const MetricsRecord &r : records) {
    auto it = r.values.find(output);
    if (it == r.values.end())
      continue;
    std::map<int64_t, Series> *target = r.split == "train"        ? &train
                                        : r.split == "test"       ? &test
                                        : r.split == "validation" ? &validation
                                                                  : nullptr;
    if (!target)
      continue;
    (*target)[r.model].points.push_back({double(r.step), it->second});
    maxStep = std::max(maxStep, double(r.step));
    if (std::isfinite(it->second)) {
      lo = std::min(lo, it->second);
      hi = std::max(hi, it->second);
    }
  }
  // Coordinates as an ostream writes a double: {:g}.
  std::string svg;
  auto out = std::back_inserter(svg);
  fmt::format_to(out,
                 "<svg viewBox=\"0 0 {:g} {:g}\" class=\"chart\" role=\"img\" "
                 "aria-label=\"{} by train step\">\n",
                 kWidth, kHeight, escape(output));
  if (!std::isfinite(lo)) {
    fmt::format_to(out,
                   "<text x=\"{:g}\" y=\"{:g}\" text-anchor=\"middle\">no "
                   "finite values</text></svg>\n",
                   kWidth / 2, kHeight / 2);
    return svg;
  }
  if (hi == lo) {
    hi += 0.5;
    lo -= 0.5;
  }
  double pad = 0.05 * (hi - lo);
  lo -= pad;
  hi += pad;
  if (maxStep <= 0)
    maxStep = 1;
  auto x = [&](double step) {
    return kLeft + (kWidth - kLeft - kRight) * step / maxStep;
  };
  auto y = [&](double v) {
    return kTop + (kHeight - kTop - kBottom) * (hi - v) / (hi - lo);
  };
  // Axes, 5 ticks each.
  svg += "<g class=\"axis\">";
  for (int i = 0; i <= 4; ++i) {
    double v = lo + (hi - lo) * i / 4, s = maxStep * i / 4;
    fmt::format_to(
        out,
        "<line x1=\"{:g}\" x2=\"{:g}\" y1=\"{:g}\" y2=\"{:g}\"/>"
        "<text x=\"{:g}\" y=\"{:g}\" text-anchor=\"end\">{}</text>"
        "<text x=\"{:g}\" y=\"{:g}\" text-anchor=\"middle\">{}</text>",
        kLeft, kWidth - kRight, y(v), y(v), kLeft - 6, y(v) + 4, number(v),
        x(s), kHeight - kBottom + 16, number(s, "{:.0f}"));
  }
  fmt::format_to(out,
                 "<text x=\"{:g}\" y=\"{:g}\" text-anchor=\"middle\">train "
                 "step</text></g>\n",
                 (kLeft + kWidth - kRight) / 2, kHeight - 4);
  // Worst first, so the best models are drawn on top.
  for (auto row = board.rows.rbegin(); row != board.rows.rend(); ++row) {
    std::string color =
        colorOf(row->rank, int64_t(board.rows.size()), row->diverged);
    // Train solid, validation dotted, test dashed; points on the latter.
    auto draw = [&](const Series &series, const char *split,
                    const char *dashes) {
      bool dashed = dashes != nullptr;
      std::string path;
      bool open = false;
      for (auto [step, v] : series.points) {
        if (!std::isfinite(v)) {
          open = false;
          continue;
        }
        fmt::format_to(std::back_inserter(path), "{}{:.1f},{:.1f} ",
                       open ? "L" : "M", x(step), y(v));
        open = true;
      }
      if (path.empty())
        return;
      fmt::format_to(out, "<path d=\"{}\" stroke=\"{}\"", path, color);
      if (dashed)
        fmt::format_to(out, " stroke-dasharray=\"{}\"", dashes);
      fmt::format_to(out, "><title>model {} {}</title></path>", row->model,
                     split);
      if (dashed)
        for (auto [step, v] : series.points)
          if (std::isfinite(v))
            fmt::format_to(out,
                           "<circle cx=\"{:g}\" cy=\"{:g}\" r=\"2.5\" "
                           "fill=\"{}\"/>",
                           x(step), y(v), color);
    };
    if (auto it = train.find(row->model); it != train.end())
      draw(it->second, "train", nullptr);
    if (auto it = validation.find(row->model); it != validation.end())
      draw(it->second, "validation", "1.5 2.5");
    if (auto it = test.find(row->model); it != test.end())
      draw(it->second, "test", "5 3");
  }
  svg += "</svg>\n";
  return svg;
}

std::string table(const Leaderboard &board) {
  std::string html = "<table><thead><tr><th></th><th>rank</th><th>model</th>";
  auto out = std::back_inserter(html);
  for (const std::string &h : board.hyperNames)
    fmt::format_to(out, "<th>{}</th>", escape(h));
  html += "<th>seed</th>";
  for (const std::string &o : board.outputs)
    fmt::format_to(out, "<th>{} {}</th>", splitName(board.ranked), escape(o));
  // precision f16: each model's steps skipped on overflow.
  bool scaled = hasLossScale(board);
  if (scaled)
    html += "<th>skipped steps</th>";
  html += "<th>status</th></tr></thead><tbody>\n";
  for (const ModelResult &row : board.rows) {
    fmt::format_to(out,
                   "<tr><td><span class=\"swatch\" style=\"background:{}\">"
                   "</span></td><td>{}</td><td>{}</td>",
                   colorOf(row.rank, int64_t(board.rows.size()), row.diverged),
                   row.rank, row.model);
    for (size_t h = 0; h < board.hyperNames.size(); ++h)
      fmt::format_to(out, "<td>{}</td>",
                     h < row.hyper.size() ? number(row.hyper[h], "{:.6g}")
                                          : "");
    fmt::format_to(out, "<td>{}</td>", row.seed);
    const std::vector<double> &means = rankedMeans(board, row);
    for (size_t k = 0; k < board.outputs.size(); ++k)
      fmt::format_to(out, "<td>{}</td>",
                     k < means.size() ? number(means[k], "{:.6g}") : "");
    if (scaled)
      fmt::format_to(out, "<td>{}</td>", row.skippedSteps);
    fmt::format_to(out, "<td>{}</td></tr>\n", escape(statusOf(row)));
  }
  html += "</tbody></table>\n";
  return html;
}

} // namespace

std::vector<MetricsRecord> parseMetricsLog(const std::string &text) {
  std::vector<MetricsRecord> records;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("step") || !j.contains("model") ||
        !j.contains("split") || !j["step"].is_number_integer() ||
        !j["model"].is_number_integer() || !j["split"].is_string())
      continue;
    MetricsRecord r;
    r.epoch = j.value("epoch", int64_t(0));
    r.step = j["step"].get<int64_t>();
    r.model = j["model"].get<int64_t>();
    r.split = j["split"].get<std::string>();
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string &key = it.key();
      if (key == "epoch" || key == "step" || key == "model" || key == "split")
        continue;
      // Outputs named like a field were written as metric_<name>.
      std::string name =
          key.rfind("metric_", 0) == 0 &&
                  (key == "metric_epoch" || key == "metric_step" ||
                   key == "metric_model" || key == "metric_split")
              ? key.substr(7)
              : key;
      r.values[name] = it->is_number()
                           ? it->get<double>()
                           : std::numeric_limits<double>::quiet_NaN();
    }
    records.push_back(std::move(r));
  }
  return records;
}

std::string renderReport(const std::string &title,
                         const std::vector<std::string> &outputs,
                         const std::vector<MetricsRecord> &records,
                         const Leaderboard &board) {
  // The style sheet is an argument: its braces are not fmt's.
  const char *style =
      "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\n"
      ".chart{width:100%;max-width:900px;height:auto;display:block}\n"
      ".chart path{fill:none;stroke-width:1.4;stroke-opacity:.85}\n"
      ".axis line{stroke:#ddd}.axis text{font-size:11px;fill:#555}\n"
      "table{border-collapse:collapse;font-size:13px}\n"
      "td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #eee}\n"
      ".swatch{display:inline-block;width:10px;height:10px}\n";
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>{0}</title>\n<style>\n{1}</style></head><body>\n<h1>{0}</h1>\n"
      "<p>{2} models. Solid: the running mean of the epoch's train batches; "
      "dotted with points: the validation split; dashed with points: the "
      "test split. Colors follow the rank (grey: diverged).</p>\n",
      escape(title), style, board.rows.size());
  auto out = std::back_inserter(html);
  for (const std::string &output : outputs)
    fmt::format_to(out, "<h2>{}</h2>\n{}", escape(output),
                   chart(output, records, board));
  fmt::format_to(out, "<h2>Leaderboard</h2>\n{}</body></html>\n", table(board));
  return html;
}

} // namespace runtime
} // namespace mbt
