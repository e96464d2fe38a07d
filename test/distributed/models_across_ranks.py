#!/usr/bin/env python3
"""A sweep's models across two ranks equal the one-process run, bit for bit.

docs/distributed.md: `mbtc --ranks 2` compiles each rank's slice of the
models, two mbt-run processes meet over Gloo on loopback and rank 0 writes
the results of the whole sweep. This test trains test/distributed's sweep
(five models: slices of three and two, a per-model dropout rate, a
validation split) with evaluation, successive halving and early stopping:

  1. in one process;
  2. on two ranks launched as srun launches them (rank 0 serves the
     rendezvous store), and, where the host has torchrun, by
     `mbtc train --nproc 2` (torchrun's rendezvous);
  3. on two ranks, one of them SIGKILLed mid-epoch: the other must stop
     with an error naming the lost rank within --rank-timeout, and the run
     resumed on two ranks must end as the uninterrupted one.

Each distributed run must equal (1): every models/model-<i>.safetensors
byte for byte, leaderboard.json (every model's metrics, its stop step and
reason) and metrics.jsonl. Mutations it catches: a slice that keys a model
by its position (init, dropout, data order), a gather out of rank order, a
stopping decision made on one rank's models only, a resume that mixes
checkpoints of two steps, a lost rank that hangs its peer.

Also the bad launches: more ranks than models, a missing slice artifact, a
rank whose peer never comes, a rank artifact from another compile, a port
in use.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess

from launching import (expect_ok, expect_rank_1_lost, fail, finish, free_port,
                       rank_env, read, wait_for_file)

TRAIN_FLAGS = ["--quiet", "--eval-every", "70", "--halve-every", "140",
               "--early-stop", "2", "--checkpoint-every", "20"]


def launch(args, out, world=2, extra_flags=(), port=None):
    """Starts `world` ranks of mbt-run; returns the processes."""
    port = port or free_port()
    procs = []
    for rank in range(world):
        cmd = [args.mbt_run, os.path.join(args.work, "model.so"), "--out", out,
               "--data-dir", args.data, *TRAIN_FLAGS, *extra_flags]
        procs.append(subprocess.Popen(cmd, env=rank_env(rank, world, port),
                                      stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    return procs


def compare(reference, run, what, models):
    for i in range(models):
        name = f"models/model-{i}.safetensors"
        if read(os.path.join(reference, name)) != read(os.path.join(run, name)):
            fail(f"{what}: model {i}'s parameters differ from one process")
    a = json.loads(read(os.path.join(reference, "leaderboard.json")))
    b = json.loads(read(os.path.join(run, "leaderboard.json")))
    if a != b:
        fail(f"{what}: leaderboard.json differs:\n{json.dumps(a)}\n{json.dumps(b)}")
    if read(os.path.join(reference, "metrics.jsonl")) != read(
            os.path.join(run, "metrics.jsonl")):
        fail(f"{what}: metrics.jsonl differs from one process")
    print(f"ok: {what} equals one process ({models} models, bit for bit)")


def check_torchrun(args, reference, models):
    """mbtc train --nproc 2: the spec compiled again, its ranks launched by
    torchrun (where this host has PyTorch)."""
    if not shutil.which("torchrun"):
        print("skip: no torchrun on PATH: mbtc train --nproc is not tried")
        return
    out = os.path.join(args.work, "torchrun")
    run = subprocess.run(
        [args.mbtc, "train", args.spec, "--nproc", "2", "--out", out,
         "--data-dir", args.data, *TRAIN_FLAGS], capture_output=True,
        text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if run.returncode != 0:
        fail(f"mbtc train --nproc 2: exited {run.returncode}:\n"
             f"{run.stderr[-3000:]}")
    compare(reference, out, "mbtc train --nproc 2 (torchrun)", models)


def check_killed_rank(args, reference, models):
    out = os.path.join(args.work, "killed")
    procs = launch(args, out, extra_flags=["--rank-timeout", "60"])
    # Mid-epoch: once rank 1 has written two checkpoints (steps 20, 40).
    wait_for_file(os.path.join(out, "checkpoint.rank1-of-2.mbtrun.previous"),
                  procs[1], "rank 1 wrote no second checkpoint")
    err = expect_rank_1_lost(procs, signal.SIGKILL, 120, "was killed")
    print(f"    {err.strip().splitlines()[-1]}")
    results = finish(launch(args, out, extra_flags=["--resume"]))
    expect_ok(results, "the resumed run")
    compare(reference, out, "two ranks, one killed, resumed", models)
    # Its checkpoints are two ranks': a resume in one process says so.
    alone = subprocess.run(
        [args.mbt_run, os.path.join(args.work, "model.so"), "--out", out,
         "--data-dir", args.data, "--resume", "--quiet"], capture_output=True,
        text=True, timeout=120)
    if alone.returncode == 0 or "checkpointed on 2 processes, not 1" not in \
            alone.stderr:
        fail(f"a two-rank run resumed in one process: {alone.stderr}")


def check_hung_rank(args):
    """A rank that stops answering (SIGSTOP) is a lost rank too, once the
    others have waited --rank-timeout for it."""
    out = os.path.join(args.work, "hung")
    timeout = 10
    procs = launch(args, out, extra_flags=["--rank-timeout", str(timeout)])
    wait_for_file(os.path.join(out, "checkpoint.rank1-of-2.mbtrun"), procs[1],
                  "rank 1 wrote no checkpoint")
    expect_rank_1_lost(procs, signal.SIGSTOP, timeout + 60,
                       f"hung (--rank-timeout {timeout})")


def check_bad_launches(args):
    too_many = subprocess.run(
        [args.mbtc, args.spec, "--ranks", "6", "-o",
         os.path.join(args.work, "six.so")], capture_output=True, text=True)
    if too_many.returncode == 0 or "more processes than the 5" not in too_many.stderr:
        fail(f"mbtc --ranks 6 of 5 models: {too_many.stderr}")
    missing = finish(launch(args, os.path.join(args.work, "three"), world=3))
    if any(code == 0 for code, _, _ in missing) or \
            "mbtc --ranks 3" not in missing[0][2]:
        fail(f"three ranks without their artifacts: {missing[0][2]}")
    # Rank 1 alone: nobody serves the store; it gives up after the timeout.
    port = free_port()
    lonely = subprocess.run(
        [args.mbt_run, os.path.join(args.work, "model.so"), "--out",
         os.path.join(args.work, "lonely"), "--data-dir", args.data,
         "--rank-timeout", "3"], env=rank_env(1, 2, port),
        capture_output=True, text=True, timeout=120)
    if lonely.returncode == 0 or "could not join" not in lonely.stderr:
        fail(f"rank 1 without rank 0: {lonely.stderr}")
    # Rank 1's artifact from another compile (other seeds): both ranks say
    # so, rather than one waiting for the other.
    stale = os.path.join(args.work, "stale")
    os.makedirs(stale)
    subprocess.run([args.mbtc, args.spec, "--ranks", "2", "--set",
                    "seed = range(10, 15)", "-o",
                    os.path.join(stale, "other.so")], check=True)
    for name in ["model.so", "model.rank0-of-2.so"]:
        shutil.copy(os.path.join(args.work, name), stale)
    shutil.copy(os.path.join(stale, "other.rank1-of-2.so"),
                os.path.join(stale, "model.rank1-of-2.so"))
    mixed = args.work
    args.work = stale
    try:
        mismatched = finish(launch(args, os.path.join(stale, "out")),
                            timeout=120)
    finally:
        args.work = mixed
    for code, _, err in mismatched:
        if code == 0 or "rank 1's artifact is not from the compile" not in err:
            fail(f"a stale rank artifact: {err}")
    # A port someone else listens on: rank 0 cannot serve the store there.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = finish(launch(args, os.path.join(args.work, "busy"), port=port,
                             extra_flags=["--rank-timeout", "5"]), timeout=120)
    if busy[0][0] == 0 or "could not join" not in busy[0][2]:
        fail(f"rank 0 on a port in use: {busy[0][2]}")
    print("ok: bad launches: " + " | ".join(
        r.strip().splitlines()[-1] for r in
        [too_many.stderr, missing[0][2], lonely.stderr, mismatched[0][2],
         busy[0][2]]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mbtc", required=True)
    parser.add_argument("--mbt-run", required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    models = 5
    subprocess.run([args.mbtc, args.spec, "--ranks", "2", "-o",
                    os.path.join(args.work, "model.so")], check=True)

    reference = os.path.join(args.work, "one")
    one = subprocess.run(
        [args.mbt_run, os.path.join(args.work, "model.so"), "--out", reference,
         "--data-dir", args.data, *TRAIN_FLAGS], capture_output=True, text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1"))
    if one.returncode != 0:
        fail(f"one process: {one.stderr}")
    board = json.loads(read(os.path.join(reference, "leaderboard.json")))
    stopped = [m for m in board if m.get("stopped_at_step")]
    if not stopped:
        fail("no model stopped in one process: the stopping is not tested")
    print(f"ok: one process: {len(stopped)} of {models} models stopped")

    two = os.path.join(args.work, "two")
    expect_ok(finish(launch(args, two)), "two ranks")
    compare(reference, two, "two ranks (rank 0 serves the store)", models)
    check_torchrun(args, reference, models)
    check_killed_rank(args, reference, models)
    check_hung_rank(args)
    check_bad_launches(args)


if __name__ == "__main__":
    main()
