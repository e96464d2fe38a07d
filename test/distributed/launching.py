"""What the tests of runs over several processes share: ranks launched as
srun launches them (each its RANK, WORLD_SIZE and rendezvous address in
the environment; rank 0 serves the store), their results, and the checks
of a lost rank."""

import os
import signal
import socket
import subprocess
import sys
import time


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_env(rank, world, port, extra=None):
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world),
               LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(port), OMP_NUM_THREADS="1")
    env.update(extra or {})
    return env


def finish(procs, timeout=600):
    results = []
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        results.append((p.returncode, out, err))
    return results


def expect_ok(results, what):
    for rank, (code, _, err) in enumerate(results):
        if code != 0:
            fail(f"{what}: rank {rank} exited {code}:\n{err}")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def wait_for_file(path, proc, problem):
    """Waits until `path` exists; fails with `problem` if `proc` exits or
    five minutes pass first."""
    deadline = time.time() + 300
    while not os.path.exists(path):
        if time.time() > deadline or proc.poll() is not None:
            fail(problem)
        time.sleep(0.05)


def expect_rank_1_lost(procs, sig, patience, what):
    """Sends `sig` to rank 1; rank 0 must exit non-zero within `patience`
    seconds with an error naming rank 1. Returns rank 0's stderr."""
    procs[1].send_signal(sig)
    sent_at = time.time()
    try:
        code, _, err = finish(procs[:1], timeout=patience)[0]
    except subprocess.TimeoutExpired:
        fail(f"rank 0 still waits {patience} s after rank 1 {what}")
    finally:
        procs[1].send_signal(signal.SIGKILL)
        procs[1].wait()
    if code == 0 or "lost rank 1" not in err:
        fail(f"rank 0 after rank 1 {what}: exit {code}, stderr:\n{err}")
    print(f"ok: rank 0 stopped {time.time() - sent_at:.1f} s after rank 1 "
          f"{what}")
    return err
