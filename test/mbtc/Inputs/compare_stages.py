"""Compiles specs through mbtc and through mbt-opt's pipelines and checks
that both print the same IR at every stage.

  compare_stages.py MBTC MBT_OPT WORKDIR SPEC...

For each spec: `mbtc --emit=mbt` gives the mbt stage; then for each later
stage S, `mbtc --emit=S spec` must print what
`mbt-opt --mbt-to-S mbt.mlir` prints (`mbt-to-llvm` for llvm-dialect).
Prints one line per spec and stage; exits 1 at the first difference,
with a diff of the two outputs.
"""
import concurrent.futures
import difflib
import os
import subprocess
import sys

STAGES = [("grad", "mbt-to-grad"), ("batched", "mbt-to-batched"),
          ("fused", "mbt-to-fused"), ("linalg", "mbt-to-linalg"),
          ("llvm-dialect", "mbt-to-llvm")]


def run(args):
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def compare(mbtc, mbt_opt, workdir, spec):
    name = os.path.splitext(os.path.basename(spec))[0]
    mbt = os.path.join(workdir, name + ".mbt.mlir")
    with open(mbt, "w") as f:
        f.write(run([mbtc, "--emit=mbt", spec]))
    lines = []
    for stage, pipeline in STAGES:
        by_mbtc = run([mbtc, f"--emit={stage}", spec])
        by_opt = run([mbt_opt, f"--{pipeline}", mbt])
        if by_mbtc != by_opt:
            diff = difflib.unified_diff(
                by_mbtc.splitlines(), by_opt.splitlines(),
                f"mbtc --emit={stage} {spec}", f"mbt-opt --{pipeline}",
                lineterm="", n=2)
            return lines, f"{name} {stage}: DIFFERENT\n" + "\n".join(
                list(diff)[:60])
        lines.append(f"{name} {stage}: same")
    return lines, None


def main():
    mbtc, mbt_opt, workdir, *specs = sys.argv[1:]
    os.makedirs(workdir, exist_ok=True)
    failed = False
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        jobs = [pool.submit(compare, mbtc, mbt_opt, workdir, s) for s in specs]
        for job in jobs:
            lines, error = job.result()
            print("\n".join(lines))
            if error:
                print(error)
                failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
