#!/usr/bin/env python3
"""Padding, step count and grouping speed of the ways to cut an epoch of
variable-length samples into training steps, side by side in one run:

  fixed            mbt-data batch --strategy fixed        (B = budget // longest)
  fixed-shape      mbt-data batch --strategy fixed-shape  (every step padded to
                                                           the longest sample)
  group-by-length  mbt-data batch --strategy group-by-length (HF-style, mega-
                                                           batch = the window)
  odb              the online-dynamic-batching package's grouping_data (PyPI),
                   driven as its collate loop drives it, same window and budget
  dynamic          mbt-data batch --strategy dynamic      (mbt's batcher)

at several windows W (samples grouped together)

on ODB's synthetic length mix (72% U[64,384), 22% U[384,1400), 6%
U[1400,4096)) and on the fortunes text task (byte tokens). Then, on
fortunes at one window, the training throughput of each plan: every plan
is written as a step file (StepPlan.h) and one compiled model
(tools/bench/fortunes_bag.mbt) trains an epoch of it with
`mbt-run --steps FILE --bench-steps N`. Prints markdown tables; with
--json, one JSON object per row as well.

Run it through tools/bench/batching.sh, which installs the ODB peer first.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time


def odb_mix(n, seed):
    rng = random.Random(seed)
    lengths = []
    for _ in range(n):
        p = rng.random()
        lo, hi = (64, 384) if p < 0.72 else (384, 1400) if p < 0.94 else (1400, 4096)
        lengths.append(rng.randrange(lo, hi))
    return lengths


def run_mbt(mbt_data, source, strategy, args):
    command = [mbt_data, "batch", source, "--strategy", strategy, "--json",
               "--token-budget", str(args.budget), "--window", str(args.window),
               "--seed", str(args.seed)]
    if args.step_cost is not None:
        command += ["--step-cost", str(args.step_cost)]
    row = json.loads(subprocess.run(command, check=True, capture_output=True,
                                    text=True).stdout)
    return {"strategy": strategy, "steps": row["steps"],
            "samples": row["samples"], "real": row["real_tokens"],
            "padded": row["padded_tokens"],
            "largest": row["max_step_tokens"],
            "samples_per_s": row["plan_samples_per_second"]}


def run_odb(lengths, args, warmup, groups_out=None):
    """ODB's collate loop, minus the worker processes: W new samples arrive,
    grouping_data groups them with the overflow of the last round, the
    overflow is recycled, and at the end of the epoch the rest is grouped."""
    import torch
    from odb.grouping import grouping_data
    samples = [{"input_ids": torch.empty(n, dtype=torch.uint8), "mbt_index": i}
               for i, n in enumerate(lengths)]
    order = list(range(len(lengths)))
    random.Random(args.seed).shuffle(order)
    groups, buffer, fresh = [], [], 0
    counter = 0.0 if warmup else 1.0  # ODB's warm-up ramps the window up
    start = time.perf_counter()
    for i in order:
        buffer.append([samples[i]])
        fresh += 1
        if fresh >= int(args.window * counter):
            out, overflow, _, _ = grouping_data(
                buffer, args.budget, None, is_finished=False, idx_budget=fresh,
                max_groups=args.window)
            groups += out
            buffer = [[s] for s in overflow]
            fresh = 0
            counter = min(1.0, counter + 0.05)
    if buffer:
        out, overflow, _, _ = grouping_data(
            buffer, args.budget, None, is_finished=True, idx_budget=0,
            max_groups=args.window)
        groups += out
        assert not overflow
    seconds = time.perf_counter() - start
    seen = sorted(s["mbt_index"] for g in groups for s in g)
    assert seen == list(range(len(lengths))), "ODB lost or repeated samples"
    if groups_out is not None:
        groups_out.extend([s["mbt_index"] for s in g] for g in groups)
    steps = [[lengths[s["mbt_index"]] for s in g] for g in groups]
    return {"strategy": "odb" + (" (warm-up)" if warmup else ""),
            "steps": len(steps), "samples": len(seen),
            "real": sum(sum(g) for g in steps),
            "padded": sum(max(g) * len(g) for g in steps),
            "largest": max(max(g) * len(g) for g in steps),
            "samples_per_s": len(seen) / seconds}


def table(title, results, args):
    """results: {window: [rows]} -> one markdown table, a column pair per
    window (fixed and fixed-shape do not depend on the window)."""
    windows = sorted(results)
    print(f"\n### {title}\n")
    print(f"token budget {args.budget}, seed {args.seed}; steps and padding "
          f"at each window W; grouping speed at W = {windows[-1]}\n")
    print("| strategy | " + " | ".join(f"W={w} steps | W={w} padding"
                                        for w in windows)
          + " | largest step (tokens) | grouping samples/s |")
    print("|---|" + "---:|---:|" * len(windows) + "---:|---:|")
    for k, name in enumerate(r["strategy"] for r in results[windows[0]]):
        cells = []
        for w in windows:
            r = results[w][k]
            r["padding_ratio"] = 1 - r["real"] / r["padded"]
            r["task"], r["window"] = title, w
            cells += [str(r["steps"]), f"{100 * r['padding_ratio']:.2f}%"]
            if args.json:
                print(json.dumps(r), file=sys.stderr)
        last = results[windows[-1]][k]
        print(f"| {name} | " + " | ".join(cells)
              + f" | {last['largest']} | {last['samples_per_s']:.3g} |")


def task_rows(source, lengths, args):
    rows = [run_mbt(args.mbt_data, source, s, args)
            for s in ("fixed", "fixed-shape", "group-by-length")]
    rows.append(run_odb(lengths, args, warmup=False))
    rows.append(run_odb(lengths, args, warmup=True))
    rows.append(run_mbt(args.mbt_data, source, "dynamic", args))
    return rows


def sweep(source, lengths, args):
    results = {}
    for w in args.windows:
        args.window = w
        results[w] = task_rows(source, lengths, args)
    return results


def verdict(results):
    for w in sorted(results):
        by = {r["strategy"]: r for r in results[w]}
        dyn, odb = by["dynamic"], by["odb"]
        print(f"- W={w}: dynamic pads {100 * dyn['padding_ratio']:.2f}% in "
              f"{dyn['steps']} steps, odb {100 * odb['padding_ratio']:.2f}% in "
              f"{odb['steps']} steps; fixed pads "
              f"{100 * by['fixed']['padding_ratio']:.2f}%, fixed-shape "
              f"{100 * by['fixed-shape']['padding_ratio']:.2f}%")


def write_plan(path, groups, lengths):
    with open(path, "w") as f:
        for g in groups:
            f.write(json.dumps({"samples": g,
                                "padded_length": max(lengths[i] for i in g)})
                    + "\n")


def train_rows(lengths, args):
    """Trains one epoch of each strategy's plan of the fortunes training
    split on the same compiled model; returns the table's rows."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.so")
        subprocess.run([args.mbtc, args.train_spec, "-o", model], check=True)
        plans = []
        for strategy in ("fixed", "fixed-shape", "group-by-length", "dynamic"):
            path = os.path.join(tmp, strategy + ".jsonl")
            subprocess.run([args.mbt_data, "batch", "fortunes:train",
                            "--strategy", strategy, "--token-budget",
                            str(args.budget), "--window",
                            str(args.train_window), "--seed", str(args.seed),
                            "--steps-out", path], check=True,
                           capture_output=True)
            plans.append((strategy, path))
        groups = []
        args.window = args.train_window
        run_odb(lengths, args, warmup=False, groups_out=groups)
        path = os.path.join(tmp, "odb.jsonl")
        write_plan(path, groups, lengths)
        plans.insert(3, ("odb", path))
        for strategy, path in plans:
            with open(path) as f:
                steps = [json.loads(line) for line in f]
            padded = sum(len(s["samples"]) * s["padded_length"] for s in steps)
            real = sum(lengths[i] for s in steps for i in s["samples"])
            out = subprocess.run([args.mbt_run, model, "--steps", path,
                                  "--bench-steps", str(len(steps))],
                                 check=True, capture_output=True,
                                 text=True).stdout
            fields = out.split()
            rows.append({"strategy": strategy, "steps": len(steps),
                         "padding_ratio": 1 - real / padded,
                         "ms_per_step": float(fields[fields.index("ms/step") + 1]),
                         "samples_per_s": float(fields[fields.index("samples/s") + 1]),
                         "seconds": float(fields[fields.index("seconds") + 1])})
    return rows


def train_table(rows, args):
    print(f"\n### Training throughput on fortunes (W = {args.train_window}, "
          f"token budget {args.budget})\n")
    print(f"one epoch of each plan, {os.path.basename(args.train_spec)} "
          "(4 models), mbt-run --steps PLAN --bench-steps STEPS\n")
    print("| strategy | steps | padding | ms/step | samples/s | vs fixed |")
    print("|---|---:|---:|---:|---:|---:|")
    fixed = next(r for r in rows if r["strategy"] == "fixed")
    for r in rows:
        if args.json:
            print(json.dumps(dict(r, task="training")), file=sys.stderr)
        print(f"| {r['strategy']} | {r['steps']} | "
              f"{100 * r['padding_ratio']:.2f}% | {r['ms_per_step']:.2f} | "
              f"{r['samples_per_s']:.0f} | "
              f"{r['samples_per_s'] / fixed['samples_per_s']:.2f}x |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mbt-data", default="build/bin/mbt-data")
    parser.add_argument("--budget", type=int, default=8192)
    parser.add_argument("--windows", default="256,1024,4096",
                        help="comma-separated windows to compare at")
    parser.add_argument("--step-cost", type=int, default=None,
                        help="mbt's dynamic step cost (default: its own)")
    parser.add_argument("--samples", type=int, default=50000,
                        help="samples of the synthetic mix")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-fortunes", action="store_true",
                        help="skip the text task")
    parser.add_argument("--mbtc", default="build/bin/mbtc")
    parser.add_argument("--mbt-run", default="build/bin/mbt-run")
    parser.add_argument("--train-spec", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "fortunes_bag.mbt"))
    parser.add_argument("--train-window", type=int, default=1024,
                        help="the window of the training comparison")
    parser.add_argument("--no-training", action="store_true",
                        help="skip the training throughput comparison")
    parser.add_argument("--json", action="store_true",
                        help="also print each row as JSON on stderr")
    args = parser.parse_args()
    args.windows = [int(w) for w in args.windows.split(",")]

    lengths = odb_mix(args.samples, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "odb-mix.lengths")
        with open(path, "w") as f:
            f.write("\n".join(map(str, lengths)) + "\n")
        results = sweep(path, lengths, args)
    table(f"ODB synthetic mix ({args.samples} samples)", results, args)
    verdict(results)

    if not args.no_fortunes:
        text = subprocess.run([args.mbt_data, "lengths", "fortunes:train"],
                              check=True, capture_output=True, text=True).stdout
        lengths = [int(x) for x in text.split()]
        results = sweep("fortunes:train", lengths, args)
        table(f"fortunes, training split ({len(lengths)} texts, byte tokens)",
              results, args)
        verdict(results)
        if not args.no_training:
            train_table(train_rows(lengths, args), args)


if __name__ == "__main__":
    main()
