"""The machine a benchmark ran on, as its first line prints it."""
import os


def describe(flags=("avx2", "avx512f", "avx512_bf16", "amx_tile")):
    """'N cores, CPU model; flags: ...' with those of `flags` the CPU has
    (as /proc/cpuinfo names them)."""
    model, present = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model == "unknown CPU":
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    present = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    wanted = [flag for flag in flags if flag in present]
    return f"{os.cpu_count()} cores, {model}; flags: {' '.join(wanted)}"
