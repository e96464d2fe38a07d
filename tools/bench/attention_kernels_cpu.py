#!/usr/bin/env python3
"""The attention kernels against the compiled generics, for a CPU named
by `mbtc --mcpu`: whether the pipelines' default (the kernels on every
x86-64 CPU) pays on that CPU.

For each workload (the transformer classifier and the byte-level LM of
tools/bench/sequence_peers.py, on its step plans) it compiles the example
twice for the CPU, `--attention-kernels=false` (generics and a BLAS call
per head's product) and `=true`, and times `mbt-run --bench-steps` of
each, the two interleaved round by round (the VM's speed drifts).
`--mcpu=haswell` (the default) on a host with AVX-512 stands in for an
AVX2 machine: the artifacts hold no AVX-512 code, and the runtime's
kernels are held to the same level (OpenBLAS's Haswell kernels, oneDNN's
AVX2 ones, the attention's x86-64-v3 code).

  tools/bench/attention_kernels_cpu.py [--mcpu haswell] [--rounds 4]
      [--steps 30] [--threads 2] [--workloads transformer,lm]

Prints the machine, then one row per workload: the model-samples/s of each
(min-max, median) and the ratio of the medians.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402  (tools/bench/machine.py)
import sequence_peers  # noqa: E402  (the workloads and their step plans)

# The runtime's own kernels held to the level of the named CPU, where the
# host has more.
LEVELS = {
    "haswell": dict(OPENBLAS_CORETYPE="Haswell", ONEDNN_MAX_CPU_ISA="AVX2",
                    MBT_ATTENTION_CODE="x86-64-v3"),
    "x86-64-v3": dict(OPENBLAS_CORETYPE="Haswell", ONEDNN_MAX_CPU_ISA="AVX2",
                      MBT_ATTENTION_CODE="x86-64-v3"),
    "x86-64": dict(OPENBLAS_CORETYPE="Prescott", ONEDNN_MAX_CPU_ISA="SSE41",
                   MBT_ATTENTION_CODE="baseline"),
}


def rate(mbt_run, artifact, plan, args, env):
    out = subprocess.run([mbt_run, artifact, "--steps", plan,
                          "--bench-steps", str(args.steps)], check=True,
                         capture_output=True, text=True, env=env).stdout
    match = re.search(r"model-samples/s ([0-9.]+)", out)
    if not match:
        sys.exit(f"mbt-run printed no throughput:\n{out}")
    return float(match.group(1))


def summary(rates):
    return (f"{min(rates):,.0f}-{max(rates):,.0f} "
            f"(median {statistics.median(rates):,.0f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mcpu", default="haswell")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workloads", default="transformer,lm")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    mbtc, mbt_run = (os.path.join(bin_dir, t) for t in ("mbtc", "mbt-run"))
    args.mbt_data = os.path.join(bin_dir, "mbt-data")
    env = dict(os.environ, MBT_NUM_THREADS=str(args.threads),
               OMP_NUM_THREADS=str(args.threads),
               **LEVELS.get(args.mcpu, {}))
    print(f"{machine.describe()}; --mcpu={args.mcpu}, {args.threads} threads, "
          f"{args.rounds} interleaved rounds of {args.steps} steps")
    print("| workload | generics and BLAS | kernels | kernels / generics |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        for workload in args.workloads.split(","):
            _, plan = sequence_peers.prepare(workload, work, args)
            example = os.path.join(
                ROOT, sequence_peers.WORKLOADS[workload]["example"])
            artifacts = {}
            for kernels in ("false", "true"):
                artifacts[kernels] = os.path.join(
                    work, f"{workload}-{kernels}.so")
                subprocess.run([mbtc, example, f"--mcpu={args.mcpu}",
                                f"--attention-kernels={kernels}", "-o",
                                artifacts[kernels]], check=True)
            rates = {"false": [], "true": []}
            for _ in range(args.rounds):
                for kernels, artifact in artifacts.items():
                    rates[kernels].append(
                        rate(mbt_run, artifact, plan, args, env))
            ratio = (statistics.median(rates["true"]) /
                     statistics.median(rates["false"]))
            print(f"| {workload} | {summary(rates['false'])} | "
                  f"{summary(rates['true'])} | {ratio:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
