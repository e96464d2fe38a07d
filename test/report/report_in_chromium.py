"""report.html as a browser shows it: trains real small sweeps with mbtc,
opens each report in headless Chromium at 1200 px and checks from the
rendered DOM that

- every visible axis has round ticks: a constant step of 1, 2 or 5 times a
  power of ten (or powers of ten, or 1-2-5 values, on a log axis), each
  tick placed where its value belongs (linear in the value, or in its
  log10);
- the loss's chart is logarithmic by default;
- each scatter of the hyperparameter panel has one point per model, and
  the grid gets a heat map with a cell per grid point;
- nothing overflows the page: no horizontal scroll, no element past the
  window's edge, no label outside its chart;
- the page's script works: a click on the leaderboard's "model" column
  sorts by it, a second click reverses; the checkbox swaps the loss's log
  chart for the linear one.

Exits 77 (ctest's skip) with the reason where Chromium is missing or cannot
start. Mutations it catches: the loss on a linear axis, ticks at the
range's fifths, a panel that drops or repeats models, a chart wider than
the page.
"""

import argparse
import html
import json
import math
import os
import re
import shutil
import subprocess
import sys

CHECKER = r"""
<script>
(function() {
  var W = window.innerWidth, out = {width: W,
    scrollWidth: document.documentElement.scrollWidth, overflow: [],
    charts: [], rows: document.querySelectorAll('table.board tbody tr').length};
  function shown(e) { var b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; }
  function inScroller(e) { return e.closest('.board-wrap') !== null; }
  var all = document.querySelectorAll('body *');
  for (var i = 0; i < all.length; ++i) {
    var e = all[i];
    if (!shown(e) || inScroller(e) || e.tagName === 'SCRIPT') continue;
    var b = e.getBoundingClientRect();
    if (b.right > W + 0.5 || b.left < -0.5)
      out.overflow.push(e.tagName + '.' + (e.getAttribute('class') || '') + ' ' + b.left + '..' + b.right);
  }
  var svgs = document.querySelectorAll('svg');
  for (var i = 0; i < svgs.length; ++i) {
    var s = svgs[i];
    if (!shown(s)) continue;
    var box = s.getBoundingClientRect();
    var texts = s.querySelectorAll('text');
    for (var t = 0; t < texts.length; ++t) {
      var b = texts[t].getBoundingClientRect();
      if (b.left < box.left - 0.5 || b.right > box.right + 0.5 ||
          b.top < box.top - 0.5 || b.bottom > box.bottom + 0.5)
        out.overflow.push('text "' + texts[t].textContent + '" outside ' + s.getAttribute('aria-label'));
    }
    function ticks(axis, vertical) {
      var g = s.querySelector('g.axis.' + axis), r = [];
      if (!g) return r;
      var ts = g.querySelectorAll('text.tick');
      for (var t = 0; t < ts.length; ++t) {
        var b = ts[t].getBoundingClientRect();
        r.push({text: ts[t].textContent, at: vertical ? (b.top + b.bottom) / 2 : (b.left + b.right) / 2});
      }
      return r;
    }
    out.charts.push({label: s.getAttribute('aria-label'), cls: s.getAttribute('class'),
      xscale: s.getAttribute('data-xscale'), yscale: s.getAttribute('data-yscale'),
      xticks: ticks('x', false), yticks: ticks('y', true),
      points: s.querySelectorAll('.pt').length,
      cells: s.querySelectorAll('.cell').length});
  }
  // The script: a click on a column sorts by it, a second reverses.
  var heads = document.querySelectorAll('table.board thead th'), model = -1;
  for (var i = 0; i < heads.length; ++i)
    if (heads[i].textContent === 'model') model = i;
  function column() {
    var rows = document.querySelectorAll('table.board tbody tr'), r = [];
    for (var i = 0; i < rows.length; ++i) r.push(parseInt(rows[i].cells[model].textContent));
    return r;
  }
  if (model >= 0) {
    heads[model].click();
    out.sortedUp = column();
    heads[model].click();
    out.sortedDown = column();
  }
  // The checkbox swaps the loss's log chart for its linear one.
  var box = document.querySelector('input.scale');
  if (box) {
    box.click();
    var fig = box.parentNode;
    out.afterToggle = {log: shown(fig.querySelector('.when-log svg')),
                       linear: shown(fig.querySelector('.when-linear svg'))};
  }
  var pre = document.createElement('pre');
  pre.id = 'mbt-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""

failures = []


def check(ok, message):
    if not ok:
        failures.append(message)
    return ok


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render(chromium, page, work):
    """The checker's findings on `page` at 1200 px."""
    probe = os.path.join(work, "probe.html")
    with open(page) as f:
        text = f.read()
    with open(probe, "w") as f:
        f.write(text.replace("</body>", CHECKER + "</body>"))
    result = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu",
         "--hide-scrollbars", "--window-size=1200,900", "--dump-dom",
         "file://" + os.path.abspath(probe)],
        capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="mbt-check">(.*?)</pre>', result.stdout,
                      re.S)
    if not found:
        return None, result.stderr[-2000:]
    return json.loads(html.unescape(found.group(1))), ""


def is_round_step(step):
    mantissa = step / 10 ** math.floor(math.log10(step))
    return any(abs(mantissa - m) < 1e-6 for m in (1, 2, 5, 10))


def check_linear(values, name):
    steps = [b - a for a, b in zip(values, values[1:])]
    step = steps[0]
    check(step > 0 and all(abs(s - step) <= 1e-6 * step for s in steps),
          f"{name}: ticks not evenly spaced: {values}")
    check(step > 0 and is_round_step(step),
          f"{name}: step {step} is not 1, 2 or 5 times a power of ten")
    check(all(abs(v / step - round(v / step)) < 1e-6 for v in values),
          f"{name}: ticks {values} are not multiples of their step")


def check_axis(ticks, scale, name):
    """Round labels, and positions linear in the value or its log."""
    if scale == "categorical" or len(ticks) < 2:
        return
    try:
        values = [float(t["text"]) for t in ticks]
    except ValueError:
        check(False, f"{name}: a tick is not a number: {ticks}")
        return
    if scale == "log":
        one_two_five = all(
            any(abs(v / 10 ** math.floor(math.log10(v)) - m) < 1e-6
                for m in (1, 2, 5)) for v in values)
        if not one_two_five:
            check_linear(values, name)
        coords = [math.log10(v) for v in values]
    else:
        check_linear(values, name)
        coords = values
    # The pixel positions are an affine function of coords.
    at = [t["at"] for t in ticks]
    slope = (at[-1] - at[0]) / (coords[-1] - coords[0])
    for c, a in zip(coords, at):
        predicted = at[0] + slope * (c - coords[0])
        check(abs(predicted - a) < 1.5,
              f"{name}: tick {c} at {a:.1f} px, {scale} scale puts it at "
              f"{predicted:.1f}")


def check_report(found, models, name, grid=None):
    check(found["rows"] == models,
          f"{name}: the leaderboard has {found['rows']} rows, not {models}")
    check(found["scrollWidth"] <= found["width"],
          f"{name}: the page scrolls sideways ({found['scrollWidth']} px "
          f"in a {found['width']} px window)")
    check(not found["overflow"],
          f"{name}: past the edge: {found['overflow'][:5]}")
    ids = list(range(models))
    check(found.get("sortedUp") == ids and
          found.get("sortedDown") == ids[::-1],
          f"{name}: clicking 'model' twice gave {found.get('sortedUp')} "
          f"and {found.get('sortedDown')}")
    check(found.get("afterToggle") == {"log": False, "linear": True},
          f"{name}: the checkbox left {found.get('afterToggle')} shown")
    charts = {c["label"]: c for c in found["charts"]}
    loss = charts.get("loss by train step")
    if check(loss is not None, f"{name}: no loss chart shown"):
        check(loss["yscale"] == "log",
              f"{name}: the loss axis is {loss['yscale']}, not log")
    for c in found["charts"]:
        label = f"{name}: {c['label']}"
        check_axis(c["xticks"], c["xscale"], label + " (x)")
        check_axis(c["yticks"], c["yscale"], label + " (y)")
    scatters = [c for c in found["charts"] if " against " in c["label"]]
    check(scatters, f"{name}: the panel has no scatter")
    for c in scatters:
        check(c["points"] == models,
              f"{name}: {c['label']} has {c['points']} points for "
              f"{models} models")
    if grid:
        heat = [c for c in found["charts"] if "heat" in (c["cls"] or "")]
        check(heat and heat[0]["cells"] == grid,
              f"{name}: no heat map of {grid} cells: "
              f"{[c['cells'] for c in heat]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mbtc", required=True)
    parser.add_argument("--examples", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    chromium = find_chromium()
    if not chromium:
        print("SKIP: no chromium on PATH (Debian: apt-get install chromium; "
              "tools/dev/bootstrap.sh installs it)")
        return 77
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    runs = [
        # An lr sweep with successive halving: hollow points, the rounds.
        ("halving", "fashion_mlp_sweep.mbt",
         ["--set", "epochs = 1", "--set",
          "data = fashion_mnist(batch = 128, validation = 0.1)",
          "--halve-every", "100"], 16, None),
        # A 4 x 3 grid: a heat map.
        ("grid", "fashion_grid_sweep.mbt", ["--set", "epochs = 1"], 12, 12),
    ]
    for name, spec, extra, models, grid in runs:
        out = os.path.join(args.work, name)
        run = subprocess.run(
            [args.mbtc, "train", os.path.join(args.examples, spec), "--out",
             out, "--quiet"] + extra,
            capture_output=True, text=True, timeout=900)
        if run.returncode != 0:
            print(f"FAIL: {name}: mbtc train exited {run.returncode}:\n"
                  f"{run.stderr[-3000:]}")
            return 1
        found, err = render(chromium, os.path.join(out, "report.html"),
                            args.work)
        if found is None:
            print(f"SKIP: chromium did not render the page: {err}")
            return 77
        check_report(found, models, name, grid)
        print(f"{name}: {len(found['charts'])} charts checked")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
