"""OpenBLAS's vector kernels for the runtime this process loads.

OpenBLAS 0.3.21 takes some CPUs it does not know (Sapphire Rapids Xeons)
for a generic x86-64 core: its products then run at a fifth of their speed,
with other bits than mbt-run's. mbt-run and mbtc re-execute themselves with
OPENBLAS_CORETYPE naming the vector core (runtime/lib/BlasKernels.cpp,
betterBlasCoreType); a Python process cannot, and OpenBLAS reads the
variable once, when it loads. So, before NumPy or `_mbt` loads OpenBLAS
here, a child process asks OpenBLAS which core it takes, and the same rule
as mbt-run's sets the variable where that core is a generic one.
"""

import os
import subprocess
import sys
import warnings

# The generic x86-64 cores OpenBLAS falls back to (BlasKernels.cpp).
_GENERIC_CORES = {"Prescott", "Core2", "Nehalem", "Katmai", "Penryn",
                  "Dunnington"}

_PROBE = """
import ctypes
try:
    blas = ctypes.CDLL("libopenblas.so.0")
except OSError:
    raise SystemExit(0)
blas.openblas_get_corename.restype = ctypes.c_char_p
print((blas.openblas_get_corename() or b"").decode())
"""


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def better_core(core, flags):
    """The vector core for a CPU of `flags` where OpenBLAS took the generic
    `core`; None where OpenBLAS's own choice stands."""
    if core not in _GENERIC_CORES:
        return None
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return None


def _openblas_loaded():
    try:
        with open("/proc/self/maps") as f:
            return any("libopenblas" in line for line in f)
    except OSError:
        return False


def use_vector_kernels():
    """Sets OPENBLAS_CORETYPE as mbt-run would, unless the user set it.

    OpenBLAS reads it when it loads: NumPy (Debian's, through LAPACK) or
    torch imported before mbt have loaded it already, so the variable is
    set only where OpenBLAS is not loaded yet, and a warning says what to
    do where it is."""
    if "OPENBLAS_CORETYPE" in os.environ or not sys.platform.startswith("linux"):
        return
    flags = _cpu_flags()
    if not better_core(next(iter(_GENERIC_CORES)), flags):
        return  # no vector core to offer: OpenBLAS's choice stands anyway
    try:
        probe = subprocess.run([sys.executable, "-c", _PROBE],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return
    core = better_core(probe.stdout.strip(), flags)
    if not core:
        return
    if _openblas_loaded():
        warnings.warn(
            f"OpenBLAS, loaded before mbt, runs its generic x86-64 kernels on "
            f"this CPU, which it does not know: mbt's small f32 products run "
            f"slower than mbt-run's, with other bits. Set "
            f"OPENBLAS_CORETYPE={core} before starting Python, or import mbt "
            f"before NumPy and torch.", RuntimeWarning, stacklevel=3)
        return
    os.environ["OPENBLAS_CORETYPE"] = core
