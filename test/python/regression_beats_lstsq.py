#!/usr/bin/env python3
"""The regression example beats a linear least-squares fit.

Splits the Boston housing CSV that Debian's python3-sklearn ships into a
training and a test file (every fifth row is a test row), trains the model
and sweep of examples/housing_regression.mbt on them (its `data =` pointed
at the two files instead of a validation split), and computes on the test
rows:
  - the best model's r2 = 1 - MSE / Var(y), its MSE being its test loss
    (mse, a mean over the test split's samples, leaderboard.json);
  - the r2 of np.linalg.lstsq with an intercept, fitted on the same
    training rows and features.
Exit status 0 when the best model's r2 is the larger; 1 otherwise. A model
that learned nothing (r2 near 0), a target read from the wrong column or a
test split scaled by its own statistics would fail it.

It checks the metrics over a whole split that the runtime reports, for
every model: test_r2 against sklearn's r2_score formula 1 - MSE / Var(y)
with Var(y) of the test file's targets (population variance) and the
model's MSE from its loss, and test_rmse against sqrt(MSE), within 1e-4
(the float32 rounding of the step's means, bounded by 32 * 2^-24 relative
over a batch of 32 and Var(y)'s cancellation factor 1 + mean^2/var ~ 7,
is ~3e-6 on r2); and that the leaderboard ranks by r2, highest first
(rank_by = r2). An r2 averaged over steps instead of made over the split,
the variance taken about each step's mean only, a sample variance
(ddof = 1: 1e-3 off here) or the training split's variance fails it.

It also trains 2 models of a small regression sweep with bootstrap
sampling (each model its own draw of the rows, so each its own targets in
y) and each of them alone, and compares their state dicts byte for byte: a
target written to another model's row of y, or one model's values read
for another, fails it.
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

DROPPED = "B"  # the example leaves this column out


def read_boston(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[1]
    body = [r for r in rows[2:] if r]
    return header, body


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def r2(y, prediction_mse):
    return 1.0 - prediction_mse / np.var(y)


def lstsq_r2(train, test, header):
    features = [i for i, name in enumerate(header)
                if name not in ("MEDV", DROPPED)]
    target = header.index("MEDV")

    def split(rows):
        a = np.array(rows, dtype=np.float64)
        return a[:, features], a[:, target]

    x, y = split(train)
    tx, ty = split(test)
    design = np.hstack([x, np.ones((len(x), 1))])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    predicted = np.hstack([tx, np.ones((len(tx), 1))]) @ coef
    return r2(ty, np.mean((predicted - ty) ** 2)), ty


ALONE_SPEC = """
import "losses"
model m {
  input  x: f32[12]
  target price: f32[1]
  param  w1: f32[12, 8] = kaiming_uniform
  param  b1: f32[8] = zeros
  param  w2: f32[8, 1] = kaiming_uniform
  param  b2: f32[1] = zeros
  loss = huber(tanh(x @ w1 + b1) @ w2 + b2, price, delta = 2.0)
}
sweep {
  models = %d
  seed   = %s
  optim  = adam(lr = %s)
  data   = csv("train.csv", target = "MEDV", columns = %s,
               standardize = true, bootstrap = 1, batch = 16)
  epochs = 2
}
"""
COLUMNS = ('["CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", '
           '"RAD", "TAX", "PTRATIO", "LSTAT"]')


def train_spec(mbtc, work, name, text):
    path = os.path.join(work, name + ".mbt")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(work, name)
    run = subprocess.run([mbtc, "train", path, "--out", out, "--quiet"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stdout + run.stderr)
    return out


def batch_equals_alone(mbtc, work):
    seeds, rates = [5, 9], [0.01, 0.03]
    batch = train_spec(mbtc, work, "batch", ALONE_SPEC % (
        2, str(seeds), str(rates), COLUMNS))
    failures = 0
    for i in range(2):
        alone = train_spec(mbtc, work, "alone-%d" % i, ALONE_SPEC % (
            1, "[%d]" % seeds[i], "[%g]" % rates[i], COLUMNS))
        with open(os.path.join(batch, "models", "model-%d.pt" % i), "rb") as f:
            in_batch = f.read()
        with open(os.path.join(alone, "models", "model-0.pt"), "rb") as f:
            by_itself = f.read()
        same = in_batch == by_itself
        print("model %d: in the batch and alone %s" %
              (i, "identical" if same else "DIFFER"))
        failures += not same
    return failures == 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mbtc", required=True)
    parser.add_argument("--example", required=True)
    parser.add_argument("--csv", required=True, help="boston_house_prices.csv")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)

    header, rows = read_boston(args.csv)
    train = [r for i, r in enumerate(rows) if i % 5 != 0]
    test = [r for i, r in enumerate(rows) if i % 5 == 0]
    write_csv(os.path.join(args.work, "train.csv"), header, train)
    write_csv(os.path.join(args.work, "test.csv"), header, test)

    with open(args.example) as f:
        spec = f.read()
    # The example's data = csv(...) spans lines; its columns hold no ')'.
    spec, count = re.subn(
        r"data\s*=\s*csv\((?:[^()]|\n)*?standardize = true[^)]*\)",
        'data = csv("train.csv", test = "test.csv", target = "MEDV", '
        'columns = ["CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", '
        '"DIS", "RAD", "TAX", "PTRATIO", "LSTAT"], standardize = true, '
        'batch = 32)', spec)
    if count != 1:
        print("cannot find the example's data = csv(...)")
        return 1
    path = os.path.join(args.work, "housing.mbt")
    with open(path, "w") as f:
        f.write(spec)
    out = os.path.join(args.work, "out")
    run = subprocess.run([args.mbtc, "train", path, "--out", out, "--quiet"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout + run.stderr)
        return 1
    with open(os.path.join(out, "leaderboard.json")) as f:
        leaderboard = json.load(f)
    best = min(entry["test_loss"] for entry in leaderboard)

    baseline, test_y = lstsq_r2(train, test, header)
    ours = r2(test_y, best)
    print("test rows %d: best model r2 %.4f (MSE %.3f), least squares r2 %.4f"
          % (len(test), ours, best, baseline))
    metrics_ok = split_metrics_match(leaderboard, test_y)
    alone_ok = batch_equals_alone(args.mbtc, args.work)
    return 0 if ours > baseline and metrics_ok and alone_ok else 1


def split_metrics_match(leaderboard, test_y, tolerance=1e-4):
    worst_r2 = worst_rmse = 0.0
    for entry in leaderboard:
        mse = entry["test_loss"]
        worst_r2 = max(worst_r2, abs(entry["test_r2"] - r2(test_y, mse)))
        worst_rmse = max(worst_rmse, abs(entry["test_rmse"] - np.sqrt(mse)))
    reported = [entry["test_r2"] for entry in leaderboard]
    ranked = reported == sorted(reported, reverse=True)
    print("test_r2 vs 1 - MSE / Var(y): largest difference %.2e; test_rmse "
          "vs sqrt(MSE): %.2e (tolerance %g); ranked by r2: %s"
          % (worst_r2, worst_rmse, tolerance, ranked))
    return worst_r2 <= tolerance and worst_rmse <= tolerance and ranked


if __name__ == "__main__":
    sys.exit(main())
