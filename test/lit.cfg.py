# -*- Python -*-
# lit configuration of the mbt test suite: .mlir files run through mbt-opt,
# .mbt files through mbtc, .test files through the other tools (mbt-data).
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "MBT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".mbt", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mbt_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "unit", "fuzz", "distributed"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%mbt_src", config.mbt_src_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "MBT_DATA_DIR", "MBT_FORTUNES_DIR"])
llvm_config.use_default_substitutions()

tool_dirs = [config.mbt_tools_dir, config.llvm_tools_dir]
tools = ["mbt-opt", "mbtc", "mbt-run", "mbt-data", "FileCheck", "not", "count",
         "mlir-opt", "mlir-cpu-runner"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
# Lowered IR run by mlir-cpu-runner prints with MLIR's runner utilities.
_llvm_lib = os.path.join(config.llvm_tools_dir, os.pardir, "lib")
config.substitutions.append(("%mlir_runner_libs", ",".join(
    os.path.normpath(os.path.join(_llvm_lib, name))
    for name in ["libmlir_runner_utils.so", "libmlir_c_runner_utils.so"])))

# The default text task (docs/data.md): Debian's fortunes package.
if os.path.isdir("/usr/share/games/fortunes"):
    config.available_features.add("fortunes")

# The CUDA target compiles kernels with the toolkit's ptxas (found by MLIR's
# NVVM target in PATH or /usr/local/cuda); without it those tests skip.
import shutil
if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("cuda")
# Tests of what happens without a GPU run only where nvidia-smi finds none.
import subprocess
def _has_cuda_device():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                              timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
if not _has_cuda_device():
    config.available_features.add("no-cuda-device")

# The host CPU's instruction set extensions that tests of `mbtc --mcpu`
# depend on (whether an artifact for another CPU runs here).
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()
# The kernel's flag names, which spell some features apart
# (avx512_fp16): host-<LLVM's name> where the host has it.
for _feature, _flag in (("avx2", "avx2"), ("avx512fp16", "avx512_fp16")):
    if _flag in _cpu_flags():
        config.available_features.add("host-" + _feature)
