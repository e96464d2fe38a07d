//===- Report.cpp - Render report.html from metrics.jsonl -----------------===//
//
// The page: a chart per output of every model's curves over the train
// steps, the hyperparameter panel (ReportPanel.cpp), and the leaderboard.
// Everything is inline SVG and CSS; a short inline script sorts the table
// and picks out the model under the pointer, and the page reads the same
// without it. Losses get a log axis (a checkbox, pure CSS, switches to the
// linear one); a loss's range leaves out the far outliers above the rest
// (ChartAxis.h) and says so under the chart.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Report.h"

#include "ReportSvg.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <sstream>

namespace mbt {
namespace runtime {

using namespace report;

namespace {

struct Point {
  double step, value;
};
using Series = std::vector<Point>;

/// Every model's series of one output, by split, and every value in them.
struct OutputSeries {
  std::map<int64_t, Series> train, validation, test;
  int64_t lastStep = 0;
  std::vector<double> values;
};

/// `output`'s series; a language model's perplexity, which metrics.jsonl
/// does not hold, is exp of its loss per token (`loss`).
OutputSeries collect(const std::string &output, const std::string &loss,
                     const std::vector<MetricsRecord> &records) {
  bool perplexity = output == "perplexity";
  OutputSeries series;
  for (const MetricsRecord &r : records) {
    auto it = r.values.find(output);
    if (it == r.values.end() && perplexity)
      it = r.values.find(loss);
    if (it == r.values.end())
      continue;
    double value = it->first == output ? it->second : std::exp(it->second);
    std::map<int64_t, Series> *split = r.split == "train"  ? &series.train
                                       : r.split == "test" ? &series.test
                                       : r.split == "validation"
                                           ? &series.validation
                                           : nullptr;
    if (!split)
      continue;
    (*split)[r.model].push_back({double(r.step), value});
    series.lastStep = std::max(series.lastStep, r.step);
    series.values.push_back(value);
  }
  return series;
}

/// `series` as path data: a gap at each value the axis cannot show (not
/// finite, or not positive on a log axis). Each pixel column keeps its
/// lowest and highest point (one where they are within a pixel), so
/// thousands of logged steps cost what the chart's width does.
std::string pathData(const Series &series, const Frame &frame) {
  bool log = frame.y.scale == Axis::Scale::Log;
  std::string d;
  auto out = std::back_inserter(d);
  bool open = false;
  double column = std::nan("");
  Point lowest{}, highest{};
  auto flush = [&] {
    if (std::isnan(column))
      return;
    const Point &a = lowest.step <= highest.step ? lowest : highest;
    const Point &b = lowest.step <= highest.step ? highest : lowest;
    // Within a pixel of each other they are one point.
    bool one = std::abs(frame.py(a.value) - frame.py(b.value)) < 1;
    for (const Point *p : {&a, &b}) {
      if (p == &b && one)
        break;
      fmt::format_to(out, "{}{:.1f},{:.1f} ", open ? "L" : "M",
                     frame.px(p->step), frame.py(p->value));
      open = true;
    }
    column = std::nan("");
  };
  for (const Point &p : series) {
    if (!std::isfinite(p.value) || (log && p.value <= 0)) {
      flush();
      open = false;
      continue;
    }
    double at = std::floor(frame.px(p.step));
    if (at != column) {
      flush();
      column = at;
      lowest = highest = p;
    } else if (p.value < lowest.value) {
      lowest = p;
    } else if (p.value > highest.value) {
      highest = p;
    }
  }
  flush();
  return d;
}

/// The curves of every model, worst first so that the best is on top:
/// train solid, validation dotted, test dashed with its points.
std::string curves(const OutputSeries &series, const Leaderboard &board,
                   const Frame &frame) {
  std::string svg;
  auto out = std::back_inserter(svg);
  fmt::format_to(out, "<g clip-path=\"url(#clip-{})\">", frame.id);
  for (auto row = board.rows.rbegin(); row != board.rows.rend(); ++row) {
    std::string color = colorOf(board, *row), label = modelLabel(board, *row);
    const char *best = row->rank == 1 && !row->diverged ? " best" : "";
    auto draw = [&](const std::map<int64_t, Series> &split, const char *name,
                    const char *dashes) {
      auto it = split.find(row->model);
      if (it == split.end())
        return;
      std::string d = pathData(it->second, frame);
      if (d.empty())
        return;
      fmt::format_to(out,
                     "<path class=\"m{}\" data-model=\"{}\" d=\"{}\" "
                     "stroke=\"{}\"",
                     best, row->model, d, color);
      if (dashes)
        fmt::format_to(out, " stroke-dasharray=\"{}\"", dashes);
      fmt::format_to(out, "><title>{}: {}</title></path>", label, name);
      if (!dashes)
        return;
      for (const Point &p : it->second)
        if (std::isfinite(p.value) &&
            (frame.y.scale == Axis::Scale::Linear || p.value > 0))
          fmt::format_to(out,
                         "<circle class=\"m\" data-model=\"{}\" cx=\"{:.1f}\" "
                         "cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{}: {} "
                         "{} at step {:g}</title></circle>",
                         row->model, frame.px(p.step), frame.py(p.value), color,
                         label, name, shortNumber(p.value), p.step);
    };
    draw(series.train, "train", nullptr);
    draw(series.validation, "validation", "1.5 2.5");
    draw(series.test, "test", "5 3");
  }
  svg += "</g></svg>\n";
  return svg;
}

/// One chart of `output` on a log or linear axis, with the note saying
/// what its range leaves out.
std::string chartOf(const std::string &output, const OutputSeries &series,
                    const Leaderboard &board, bool log, const std::string &id) {
  WorseSide worse = worseSideOf(output);
  ValueAxis value = valueAxis(series.values, log, worse);
  if (value.range.empty)
    return "<p class=\"note\">no finite values</p>\n";
  Frame frame;
  frame.id = id;
  frame.y = value.axis;
  double last = double(std::max<int64_t>(series.lastStep, 1));
  frame.x = linearAxis(0, last, int(std::min(last, 6.0)));
  std::string svg =
      frame.open("chart", escape(output) + " by train step", "train step",
                 escape(output) + (log ? " (log scale)" : "")) +
      curves(series, board, frame);
  std::string note = clipNote(value, worse);
  if (!note.empty())
    svg += fmt::format("<p class=\"note clip\">{}</p>\n", note);
  return svg;
}

/// The figure of one output: a loss whose values are all positive is
/// drawn on a log axis, with a checkbox for the linear one.
std::string figure(const std::string &output, const std::string &loss,
                   size_t index, const std::vector<MetricsRecord> &records,
                   const Leaderboard &board) {
  OutputSeries series = collect(output, loss, records);
  bool positive = std::any_of(series.values.begin(), series.values.end(),
                              [](double v) { return std::isfinite(v); });
  for (double v : series.values)
    if (std::isfinite(v) && v <= 0)
      positive = false;
  std::string id = fmt::format("out{}", index);
  if (worseSideOf(output) == WorseSide::Low || !positive)
    return fmt::format("<div class=\"fig\">{}</div>\n",
                       chartOf(output, series, board, false, id));
  return fmt::format(
      "<div class=\"fig\"><input type=\"checkbox\" class=\"scale\" id=\"{0}\" "
      "checked><label for=\"{0}\">log scale</label>\n"
      "<div class=\"when-log\">{1}</div><div class=\"when-linear\">{2}</div>"
      "</div>\n",
      id + "-log", chartOf(output, series, board, true, id + "-log"),
      chartOf(output, series, board, false, id + "-linear"));
}

/// A table cell whose sort key is `key` (a number, or "" for none).
std::string cell(const std::string &text, const std::string &key) {
  return fmt::format("<td data-v=\"{}\">{}</td>", key, text);
}

std::string numberCell(double value) {
  if (!std::isfinite(value))
    return cell("&ndash;", "");
  std::string text = fmt::format("{:.6g}", value);
  return cell(text, text);
}

std::string leaderboardTable(const Leaderboard &board) {
  std::vector<size_t> columns;
  std::vector<std::string> constants;
  for (size_t h = 0; h < board.hyperNames.size(); ++h) {
    if (hasHyperColumn(board, h))
      columns.push_back(h);
    else
      constants.push_back(fmt::format("{} {:.6g}", escape(board.hyperNames[h]),
                                      board.rows.front().hyper[h]));
  }
  RankKey key = chooseRankKey(board.outputs, board.rankBy);
  std::string html;
  auto out = std::back_inserter(html);
  fmt::format_to(out,
                 "<p>Ranked by <b>{}</b> ({} is better). Click a column to "
                 "sort by it.</p>\n",
                 escape(rankMetricName(board)),
                 key.descending ? "higher" : "lower");
  if (!constants.empty())
    fmt::format_to(out, "<p class=\"same\">Same for every model: {}.</p>\n",
                   fmt::join(constants, ", "));
  html += "<div class=\"board-wrap\"><table class=\"board\"><thead><tr>"
          "<th></th><th>rank</th><th>model</th>";
  for (size_t h : columns)
    fmt::format_to(out, "<th>{}</th>", escape(board.hyperNames[h]));
  html += "<th>seed</th>";
  for (size_t k = 0; k < board.outputs.size(); ++k)
    fmt::format_to(out, "<th{}>{} {}</th>",
                   k == key.output ? " class=\"key\"" : "",
                   splitName(board.ranked), escape(board.outputs[k]));
  // precision f16: each model's steps skipped on overflow.
  bool scaled = hasLossScale(board);
  if (scaled)
    html += "<th>skipped steps</th>";
  html += "<th>status</th></tr></thead><tbody>\n";
  for (const ModelResult &row : board.rows) {
    fmt::format_to(out,
                   "<tr data-model=\"{}\"><td><span class=\"swatch\" "
                   "style=\"background:{}\"></span></td>{}{}",
                   row.model, colorOf(board, row),
                   cell(std::to_string(row.rank), std::to_string(row.rank)),
                   cell(std::to_string(row.model), std::to_string(row.model)));
    for (size_t h : columns)
      html += h < row.hyper.size() ? numberCell(row.hyper[h]) : cell("", "");
    html += cell(std::to_string(row.seed), std::to_string(row.seed));
    const std::vector<double> &means = rankedMeans(board, row);
    for (size_t k = 0; k < board.outputs.size(); ++k)
      html += k < means.size() ? numberCell(means[k]) : cell("", "");
    if (scaled)
      html += cell(std::to_string(row.skippedSteps),
                   std::to_string(row.skippedSteps));
    fmt::format_to(out, "<td>{}</td></tr>\n", escape(statusOf(row)));
  }
  html += "</tbody></table></div>\n";
  return html;
}

// The style sheet and the script are arguments to fmt: their braces are
// not fmt's.
const char *kStyle = R"css(
body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em 2em;max-width:1100px;color:#222}
h2{margin:1.2em 0 .3em}
.fig{margin-bottom:.5em}
.chart{width:100%;max-width:900px;height:auto;display:block}
.panel{width:100%;max-width:350px;height:auto}
.panel.wide{max-width:900px}
.panels{display:flex;flex-wrap:wrap;gap:8px 16px}
.m{fill:none;stroke-width:1.4;stroke-opacity:.85}
circle.m{stroke:none;fill-opacity:.9}
.m.best{stroke-width:2.6;stroke-opacity:1}
.axis line{stroke:#e4e4e4}svg .tick{font-size:11px;fill:#555}
svg .title{font-size:12px;fill:#333}.cell text{font-size:12px}
.note{font-size:12px;color:#666;margin:.2em 0 .6em}
.scale{margin-left:0}label{font-size:12px;color:#444}
.scale:checked~.when-linear,.scale:not(:checked)~.when-log{display:none}
.board-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px}
td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #eee;white-space:nowrap}
th{cursor:pointer;user-select:none}th.key{text-decoration:underline}
th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
td:last-child{text-align:left}
.swatch{display:inline-block;width:10px;height:10px}
.same{color:#444}
body.hl-on .m{stroke-opacity:.12;fill-opacity:.15}
body.hl-on .m.hl{stroke-opacity:1;fill-opacity:1;stroke-width:2.6}
body.hl-on .pt,body.hl-on .bar{opacity:.25}
body.hl-on .pt.hl,body.hl-on .bar.hl{opacity:1}
tr.hl td{background:#eef3ff}
)css";

const char *kScript = R"js(
(function(){
  var on = null;
  function mark(model) {
    if (model === on) return;
    var all = document.querySelectorAll('[data-model="' + on + '"]');
    for (var i = 0; i < all.length; ++i) all[i].classList.remove('hl');
    on = model;
    document.body.classList.toggle('hl-on', on !== null);
    all = document.querySelectorAll('[data-model="' + on + '"]');
    for (var i = 0; i < all.length; ++i) all[i].classList.add('hl');
  }
  document.addEventListener('mouseover', function(e) {
    var t = e.target.closest ? e.target.closest('[data-model]') : null;
    mark(t ? t.getAttribute('data-model') : null);
  });
  function keyOf(row, i) {
    var c = row.cells[i];
    var v = c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent;
    var n = parseFloat(v);
    return {n: n, s: v};
  }
  var tables = document.querySelectorAll('table.board');
  for (var t = 0; t < tables.length; ++t) (function(table) {
    var heads = table.tHead.rows[0].cells;
    for (var i = 1; i < heads.length; ++i) (function(th, i) {
      th.addEventListener('click', function() {
        var up = th.getAttribute('aria-sort') !== 'ascending';
        for (var j = 0; j < heads.length; ++j) heads[j].removeAttribute('aria-sort');
        th.setAttribute('aria-sort', up ? 'ascending' : 'descending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function(a, b) {
          var x = keyOf(a, i), y = keyOf(b, i);
          if (isNaN(x.n) !== isNaN(y.n)) return isNaN(x.n) ? 1 : -1;
          var c = isNaN(x.n) ? x.s.localeCompare(y.s) : x.n - y.n;
          return up ? c : -c;
        });
        for (var r = 0; r < rows.length; ++r) body.appendChild(rows[r]);
      });
    })(heads[i], i);
  })(tables[t]);
})();
)js";

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
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width\">"
      "<title>{0}</title>\n<style>{1}</style></head><body>\n<h1>{0}</h1>\n",
      escape(title), kStyle);
  auto out = std::back_inserter(html);
  if (!board.rows.empty() && !board.rows.front().diverged) {
    const ModelResult &best = board.rows.front();
    fmt::format_to(out, "<p class=\"lead\">{} models. Best: {}, {} {}.</p>\n",
                   board.rows.size(), modelLabel(board, best),
                   escape(rankMetricName(board)),
                   shortNumber(rankValue(board, best)));
  }
  html += "<p class=\"note\">Solid: the running mean of the epoch's train "
          "batches; dotted: the validation split; dashed with points: the "
          "test split. Colors follow the rank (grey: diverged), the best "
          "model drawn on top. Point at a curve or a row to pick out its "
          "model.</p>\n";
  int64_t lastStep = 0;
  for (const MetricsRecord &r : records)
    lastStep = std::max(lastStep, r.step);
  // The outputs, and a language model's perplexity after them.
  std::vector<std::string> charted = outputs;
  if (!outputs.empty() && !board.outputs.empty() &&
      board.outputs.back() == "perplexity" &&
      std::find(outputs.begin(), outputs.end(), "perplexity") == outputs.end())
    charted.push_back("perplexity");
  for (size_t k = 0; k < charted.size(); ++k)
    fmt::format_to(out, "<h2>{}</h2>\n{}", escape(charted[k]),
                   figure(charted[k], outputs.front(), k, records, board));
  fmt::format_to(out, "<h2>Hyperparameters</h2>\n{}",
                 hyperparameterPanel(board, lastStep));
  fmt::format_to(out,
                 "<h2>Leaderboard</h2>\n{}<script>{}</script>\n"
                 "</body></html>\n",
                 leaderboardTable(board), kScript);
  return html;
}

} // namespace runtime
} // namespace mbt
