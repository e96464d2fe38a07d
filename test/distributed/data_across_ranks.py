#!/usr/bin/env python3
"""A sweep with its data across two ranks equals one process on the union.

docs/distributed.md: with `--distribute=data` every rank holds every model
(the artifact of `mbtc --distribute=data`, which has mbt_grad_step) and
takes its half of each step's samples; the ranks sum their weighted
gradients (weighted by samples, or by real target tokens for a language
model) and the optimizer step applies the sum. Up to the order of the
sums, each step is one process's step over the whole batch. This test
trains, in one process and on two ranks:

  1. test/distributed/data_mlp.mbt (four models, 53 steps of 1024 samples)
     with evaluations, successive halving and early stopping;
  2. examples/fortunes_transformer.mbt (a classifier over token sequences,
     dynamic batches of a 4096-token budget) for 50 steps;
  3. test/distributed/data_lm.mbt, examples/fortunes_char_lm.mbt with
     tanh for relu (a language model: a loss per real token, normalized by
     the step's count over both ranks) for 50 steps. With relu, a
     pre-activation at the kink may fall on different sides in the two
     runs, and momentum carries that past any rounding bound: the file
     says more.

Each model's parameters must end within 1e-6 of one process's (relative to
the largest parameter of the model, where it is above 1: two ulps of a
float of 4 are 1e-6), the leaderboard must rank and stop the same models at
the same steps, and its metrics agree to 1e-5. Rounding alone moves a
parameter by an ulp in a step; the learning rates are low enough that 50
steps do not amplify it past the bound (a chaotic rate would, as it would
amplify any other change of the order of the sums).

Also: `mbtc train --nproc 2 --distribute=data` (torchrun) equals the two
ranks launched by hand, bit for bit; a rank SIGKILLed mid-epoch stops the
other with an error naming it, and the resumed run ends bit for bit as the
uninterrupted one; an artifact without mbt_grad_step, and ranks with
different artifacts, are errors on every rank.

Mutations it catches: gradients summed without their weights (or weighted
by samples where a language model's loss is per token), a share that
skips or repeats a sample, outputs averaged per rank, an optimizer step on
one rank's gradients, an evaluation on one rank's steps only, a model that
diverged on one rank's share stepping on the other.
"""

import argparse
import json
import math
import os
import shutil
import signal
import struct
import subprocess
from array import array

from launching import (expect_ok, expect_rank_1_lost, fail, finish, free_port,
                       rank_env, read, wait_for_file)

MLP_FLAGS = ["--quiet", "--eval-every", "10", "--halve-every", "20",
             "--early-stop", "2", "--checkpoint-every", "10"]
SEQUENCE_SGD = ("optim = sgd(lr = [0.002, 0.005, 0.01], momentum = 0.9)")


def launch(args, model, out, flags, world=2, port=None):
    """Starts `world` ranks of mbt-run with their data across ranks."""
    port = port or free_port()
    return [subprocess.Popen(
        [args.mbt_run, model, "--out", out, "--data-dir", args.data,
         "--distribute", "data", *flags], env=rank_env(rank, world, port),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for rank in range(world)]


def one_process(args, model, out, flags):
    run = subprocess.run(
        [args.mbt_run, model, "--out", out, "--data-dir", args.data, *flags],
        capture_output=True, text=True, timeout=900,
        env=dict(os.environ, OMP_NUM_THREADS="1"))
    if run.returncode != 0:
        fail(f"one process ({model}): {run.stderr}")


def safetensors(path):
    """The float32 tensors of a .safetensors file, as arrays."""
    data = read(path)
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        tensors[name] = array("f", data[8 + size + begin:8 + size + end])
    return tensors


def close_numbers(a, b, rel=1e-5, abs_=2e-4):
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(
            close_numbers(a[key], b[key], rel, abs_) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(
            close_numbers(x, y, rel, abs_) for x, y in zip(a, b))
    return a == b


def compare_close(reference, run, what, models):
    worst = 0.0
    for i in range(models):
        name = os.path.join("models", f"model-{i}.safetensors")
        mine, theirs = safetensors(os.path.join(reference, name)), \
            safetensors(os.path.join(run, name))
        scale = max(1.0, max(abs(v) for t in mine.values() for v in t))
        drift = max(abs(x - y) for key in mine
                    for x, y in zip(mine[key], theirs[key]))
        if drift > 1e-6 * scale:
            fail(f"{what}: model {i}'s parameters are {drift:.3g} from one "
                 f"process's (bound {1e-6 * scale:.3g})")
        worst = max(worst, drift / scale)
    a = json.loads(read(os.path.join(reference, "leaderboard.json")))
    b = json.loads(read(os.path.join(run, "leaderboard.json")))
    if not close_numbers(a, b):
        fail(f"{what}: leaderboard.json differs:\n{json.dumps(a)}\n"
             f"{json.dumps(b)}")
    print(f"ok: {what} is one process's run ({models} models, parameters "
          f"within {worst:.2g} of the largest)")


def compare_bits(reference, run, what, models):
    for i in range(models):
        name = os.path.join("models", f"model-{i}.safetensors")
        if read(os.path.join(reference, name)) != read(os.path.join(run, name)):
            fail(f"{what}: model {i}'s parameters differ")
    for name in ["leaderboard.json", "metrics.jsonl"]:
        if read(os.path.join(reference, name)) != read(os.path.join(run, name)):
            fail(f"{what}: {name} differs")
    print(f"ok: {what}, bit for bit")


def check_mlp(args):
    model = os.path.join(args.work, "model.so")
    subprocess.run([args.mbtc, args.spec, "--distribute=data", "-o", model],
                   check=True)
    reference = os.path.join(args.work, "one")
    one_process(args, model, reference, MLP_FLAGS)
    board = json.loads(read(os.path.join(reference, "leaderboard.json")))
    if not any(m.get("stopped_at_step") for m in board):
        fail("no model stopped in one process: the stopping is not tested")
    two = os.path.join(args.work, "two")
    expect_ok(finish(launch(args, model, two, MLP_FLAGS)), "two ranks")
    compare_close(reference, two, "the MLP on two ranks of data", 4)
    return model, two


def check_torchrun(args, two):
    if not shutil.which("torchrun"):
        print("skip: no torchrun on PATH: mbtc train --nproc is not tried")
        return
    out = os.path.join(args.work, "torchrun")
    run = subprocess.run(
        [args.mbtc, "train", args.spec, "--nproc", "2", "--distribute=data",
         "--out", out, "--data-dir", args.data, *MLP_FLAGS],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, OMP_NUM_THREADS="1"))
    if run.returncode != 0:
        fail(f"mbtc train --nproc 2 --distribute=data: exited "
             f"{run.returncode}:\n{run.stderr[-3000:]}")
    compare_bits(two, out, "mbtc train --nproc 2 --distribute=data "
                 "(torchrun) equals the ranks launched by hand", 4)


def check_killed_rank(args, model, two):
    out = os.path.join(args.work, "killed")
    procs = launch(args, model, out, MLP_FLAGS + ["--rank-timeout", "60"])
    # Mid-epoch: once rank 1 has written two checkpoints (steps 10, 20).
    wait_for_file(os.path.join(out, "checkpoint.rank1-of-2.mbtrun.previous"),
                  procs[1], "rank 1 wrote no second checkpoint")
    err = expect_rank_1_lost(procs, signal.SIGKILL, 120, "was killed")
    print(f"    {err.strip().splitlines()[-1]}")
    expect_ok(finish(launch(args, model, out, MLP_FLAGS + ["--resume"])),
              "the resumed run")
    compare_bits(two, out, "two ranks of data, one killed, resumed, end as "
                 "the uninterrupted run", 4)


def check_sequences(args, example, what):
    name = os.path.splitext(os.path.basename(example))[0]
    model = os.path.join(args.work, f"{name}.so")
    subprocess.run([args.mbtc, example, "--distribute=data", "--set",
                    SEQUENCE_SGD, "--set", "models = 3", "--set",
                    "seed = range(models)", "--set", "epochs = 1", "-o",
                    model], check=True)
    flags = ["--quiet", "--max-steps", "50"]
    reference = os.path.join(args.work, f"{name}-one")
    one_process(args, model, reference, flags)
    two = os.path.join(args.work, f"{name}-two")
    expect_ok(finish(launch(args, model, two, flags), timeout=900), what)
    compare_close(reference, two, what, 3)


def check_bad_launches(args, model):
    plain = os.path.join(args.work, "plain.so")
    subprocess.run([args.mbtc, args.spec, "-o", plain], check=True)
    results = finish(launch(args, plain, os.path.join(args.work, "plain"),
                            ["--quiet"]), timeout=120)
    for code, _, err in results:
        if code == 0 or "compile the spec with mbtc --distribute=data" not in err:
            fail(f"an artifact without mbt_grad_step: {err}")
    other = os.path.join(args.work, "other.so")
    subprocess.run([args.mbtc, args.spec, "--distribute=data", "--set",
                    "seed = range(10, 14)", "-o", other], check=True)
    port = free_port()
    procs = [subprocess.Popen(
        [args.mbt_run, artifact, "--out", os.path.join(args.work, "mixed"),
         "--data-dir", args.data, "--distribute", "data", "--quiet"],
        env=rank_env(rank, 2, port), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
        for rank, artifact in enumerate([model, other])]
    mixed = finish(procs, timeout=120)
    for code, _, err in mixed:
        if code == 0 or "rank 1 loaded another artifact than rank 0" not in err:
            fail(f"ranks with different artifacts: {err}")
    print("ok: bad launches: " + " | ".join(
        err.strip().splitlines()[-1] for err in [results[0][2], mixed[0][2]]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mbtc", required=True)
    parser.add_argument("--mbt-run", required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--examples", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    model, two = check_mlp(args)
    check_torchrun(args, two)
    check_killed_rank(args, model, two)
    check_bad_launches(args, model)
    check_sequences(args, os.path.join(args.examples,
                                       "fortunes_transformer.mbt"),
                    "the transformer classifier on two ranks of data")
    check_sequences(args, os.path.join(os.path.dirname(__file__),
                                       "data_lm.mbt"),
                    "the language model on two ranks of data")


if __name__ == "__main__":
    main()
