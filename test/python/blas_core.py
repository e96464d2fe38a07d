"""`import mbt` picks OpenBLAS's kernels as mbt-run does.

The rule (mbt._blas.better_core, BlasKernels.cpp's betterBlasCoreType):
a generic core OpenBLAS fell back to is replaced by the vector core the
CPU's flags allow; OpenBLAS's own choice of a core it knows stands. Then,
in a fresh process, `import mbt` before NumPy sets OPENBLAS_CORETYPE to
the rule's answer for this host, and after NumPy leaves it unset and
warns where the answer is a core. Exit status 0 when all hold.
"""
import os
import subprocess
import sys

AVX512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma"}


def fresh(code, env):
    return subprocess.run([sys.executable, "-W", "always", "-c", code],
                          capture_output=True, text=True, env=env, timeout=120)


def main():
    from mbt._blas import better_core, _cpu_flags, _PROBE
    checks = [
        (better_core("Prescott", AVX512), "SkylakeX"),
        (better_core("Nehalem", {"avx2", "fma"}), "Haswell"),
        (better_core("Core2", {"sse4_2"}), None),
        (better_core("Zen", AVX512), None),
        (better_core("SkylakeX", AVX512), None),
    ]
    for got, want in checks:
        if got != want:
            print(f"blas_core: FAIL: better_core gave {got!r}, not {want!r}")
            return 1
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    native = fresh(_PROBE, env).stdout.strip()
    want = better_core(native, _cpu_flags())
    first = fresh("import mbt, os; print(os.environ.get('OPENBLAS_CORETYPE'))",
                  env)
    if first.stdout.strip() != str(want):
        print(f"blas_core: FAIL: OpenBLAS takes {native!r} here; import mbt "
              f"set OPENBLAS_CORETYPE={first.stdout.strip()}, not {want}")
        return 1
    late = fresh("import numpy, mbt, os; "
                 "print(os.environ.get('OPENBLAS_CORETYPE'))", env)
    warned = "OPENBLAS_CORETYPE=" in late.stderr
    if late.stdout.strip() != "None" or warned != (want is not None):
        print(f"blas_core: FAIL: after NumPy, import mbt set "
              f"{late.stdout.strip()} and warned {warned} ({late.stderr!r})")
        return 1
    print(f"blas_core: OpenBLAS's core here {native!r}, mbt's "
          f"{want or native!r}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
