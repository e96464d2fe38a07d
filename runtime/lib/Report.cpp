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

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
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

std::string number(double value, const char *format = "%.4g") {
  if (!std::isfinite(value))
    return "&ndash;";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

/// A model's color by rank: hues around the wheel, best first.
std::string colorOf(int64_t rank, int64_t models, bool diverged) {
  if (diverged)
    return "#9a9a9a";
  double hue = models > 1 ? 300.0 * double(rank - 1) / double(models - 1) : 220;
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "hsl(%.0f,70%%,42%%)", hue);
  return buffer;
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
  std::ostringstream svg;
  svg << "<svg viewBox=\"0 0 " << kWidth << " " << kHeight
      << "\" class=\"chart\" role=\"img\" aria-label=\"" << escape(output)
      << " by train step\">\n";
  if (!std::isfinite(lo)) {
    svg << "<text x=\"" << kWidth / 2 << "\" y=\"" << kHeight / 2
        << "\" text-anchor=\"middle\">no finite values</text></svg>\n";
    return svg.str();
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
  svg << "<g class=\"axis\">";
  for (int i = 0; i <= 4; ++i) {
    double v = lo + (hi - lo) * i / 4, s = maxStep * i / 4;
    svg << "<line x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\""
        << y(v) << "\" y2=\"" << y(v) << "\"/>"
        << "<text x=\"" << kLeft - 6 << "\" y=\"" << y(v) + 4
        << "\" text-anchor=\"end\">" << number(v) << "</text>"
        << "<text x=\"" << x(s) << "\" y=\"" << kHeight - kBottom + 16
        << "\" text-anchor=\"middle\">" << number(s, "%.0f") << "</text>";
  }
  svg << "<text x=\"" << (kLeft + kWidth - kRight) / 2 << "\" y=\""
      << kHeight - 4 << "\" text-anchor=\"middle\">train step</text></g>\n";
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
        char buffer[64];
        std::snprintf(buffer, sizeof(buffer), "%s%.1f,%.1f ", open ? "L" : "M",
                      x(step), y(v));
        path += buffer;
        open = true;
      }
      if (path.empty())
        return;
      svg << "<path d=\"" << path << "\" stroke=\"" << color << "\"";
      if (dashed)
        svg << " stroke-dasharray=\"" << dashes << "\"";
      svg << "><title>model " << row->model << " " << split
          << "</title></path>";
      if (dashed)
        for (auto [step, v] : series.points)
          if (std::isfinite(v))
            svg << "<circle cx=\"" << x(step) << "\" cy=\"" << y(v)
                << "\" r=\"2.5\" fill=\"" << color << "\"/>";
    };
    if (auto it = train.find(row->model); it != train.end())
      draw(it->second, "train", nullptr);
    if (auto it = validation.find(row->model); it != validation.end())
      draw(it->second, "validation", "1.5 2.5");
    if (auto it = test.find(row->model); it != test.end())
      draw(it->second, "test", "5 3");
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string table(const Leaderboard &board) {
  std::ostringstream html;
  html << "<table><thead><tr><th></th><th>rank</th><th>model</th>";
  for (const std::string &h : board.hyperNames)
    html << "<th>" << escape(h) << "</th>";
  html << "<th>seed</th>";
  for (const std::string &o : board.outputs)
    html << "<th>test " << escape(o) << "</th>";
  // precision f16: each model's steps skipped on overflow.
  bool scaled = hasLossScale(board);
  if (scaled)
    html << "<th>skipped steps</th>";
  html << "<th>status</th></tr></thead><tbody>\n";
  for (const ModelResult &row : board.rows) {
    html << "<tr><td><span class=\"swatch\" style=\"background:"
         << colorOf(row.rank, int64_t(board.rows.size()), row.diverged)
         << "\"></span></td><td>" << row.rank << "</td><td>" << row.model
         << "</td>";
    for (size_t h = 0; h < board.hyperNames.size(); ++h)
      html << "<td>"
           << (h < row.hyper.size() ? number(row.hyper[h], "%.6g") : "")
           << "</td>";
    html << "<td>" << row.seed << "</td>";
    for (size_t k = 0; k < board.outputs.size(); ++k)
      html << "<td>" << (k < row.test.size() ? number(row.test[k], "%.6g") : "")
           << "</td>";
    if (scaled)
      html << "<td>" << row.skippedSteps << "</td>";
    html << "<td>" << escape(statusOf(row)) << "</td></tr>\n";
  }
  html << "</tbody></table>\n";
  return html.str();
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
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       << "<title>" << escape(title) << "</title>\n<style>\n"
       << "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\n"
       << ".chart{width:100%;max-width:900px;height:auto;display:block}\n"
       << ".chart path{fill:none;stroke-width:1.4;stroke-opacity:.85}\n"
       << ".axis line{stroke:#ddd}.axis text{font-size:11px;fill:#555}\n"
       << "table{border-collapse:collapse;font-size:13px}\n"
       << "td,th{padding:2px 8px;text-align:right;border-bottom:1px solid "
          "#eee}\n"
       << ".swatch{display:inline-block;width:10px;height:10px}\n"
       << "</style></head><body>\n<h1>" << escape(title) << "</h1>\n"
       << "<p>" << board.rows.size()
       << " models. Solid: the running mean of the epoch's train batches; "
       << "dotted with points: the validation split; dashed with points: the "
       << "test split. Colors follow the rank (grey: diverged).</p>\n";
  for (const std::string &output : outputs)
    html << "<h2>" << escape(output) << "</h2>\n"
         << chart(output, records, board);
  html << "<h2>Leaderboard</h2>\n" << table(board) << "</body></html>\n";
  return html.str();
}

} // namespace runtime
} // namespace mbt
