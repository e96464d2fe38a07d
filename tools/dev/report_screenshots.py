#!/usr/bin/env python3
"""Screenshots of report.html for docs/report.md: trains examples with
mbtc and saves each report, whole, as headless Chromium renders it at
1200 px, to docs/images/report-<name>.png.

    tools/dev/report_screenshots.py [--build build] [--only NAME]

Needs Debian's chromium (tools/dev/bootstrap.sh installs it). Takes about
two minutes on 2 cores (the byte-level LM is most of it).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# name, example, extra mbtc arguments
REPORTS = [
    ("lr-sweep", "fashion_mlp_sweep.mbt", []),
    ("grid", "fashion_grid_sweep.mbt", []),
    ("halving", "fashion_mlp_sweep.mbt",
     ["--set", "data = fashion_mnist(batch = 128, validation = 0.1)",
      "--halve-every", "100"]),
    ("random-search", "fashion_random_search.mbt", []),
    ("regression", "housing_regression.mbt", []),
    ("char-lm", "fortunes_char_lm.mbt", []),
]

HEIGHT = ("<script>document.body.setAttribute('data-height', "
          "document.documentElement.scrollHeight)</script></body>")


def chromium(*args):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if not binary:
        sys.exit("report_screenshots: no chromium (apt-get install chromium)")
    return subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu",
         "--hide-scrollbars", *args],
        capture_output=True, text=True, timeout=120)


def page_height(report, work):
    probe = os.path.join(work, "probe.html")
    with open(report) as f, open(probe, "w") as out:
        out.write(f.read().replace("</body>", HEIGHT))
    dom = chromium("--window-size=1200,900", "--dump-dom",
                   "file://" + probe).stdout
    found = re.search(r'data-height="(\d+)"', dom)
    return int(found.group(1)) if found else 3000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--only")
    args = parser.parse_args()
    mbtc = os.path.join(args.build, "bin", "mbtc")
    images = os.path.join(ROOT, "docs", "images")
    os.makedirs(images, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        for name, example, extra in REPORTS:
            if args.only and name != args.only:
                continue
            # Run in `work`, so that the report's title names `name`.
            subprocess.run([mbtc, "train", os.path.join(ROOT, "examples",
                                                        example),
                            "--out", name, "--quiet", *extra],
                           check=True, stdout=subprocess.DEVNULL, cwd=work)
            report = os.path.join(work, name, "report.html")
            height = page_height(report, work)
            png = os.path.join(images, f"report-{name}.png")
            chromium(f"--window-size=1200,{height}", f"--screenshot={png}",
                     "file://" + report)
            print(f"{png}: 1200 x {height}")


if __name__ == "__main__":
    main()
