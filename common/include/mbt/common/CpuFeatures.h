//===- CpuFeatures.h - the CPU features an artifact records -----*- C++ -*-===//
//
// The x86 instruction set extensions that an artifact's generated code
// may use and that a runtime can check before it calls the artifact: the
// compiler records those its target CPU has in the manifest ("cpu"), the
// runtime refuses an artifact that needs one this CPU lacks (rather than
// dying of SIGILL in its first step). Each name is LLVM's feature name
// and GCC's __builtin_cpu_supports name alike.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMMON_CPUFEATURES_H
#define MBT_COMMON_CPUFEATURES_H

namespace mbt {

constexpr const char *kCheckedCpuFeatures[] = {
    "sse4.2",       "popcnt",
    "avx",          "avx2",
    "fma",          "f16c",
    "bmi",          "bmi2",
    "lzcnt",        "movbe",
    "avxvnni",      "avx512f",
    "avx512bw",     "avx512dq",
    "avx512vl",     "avx512cd",
    "avx512vbmi",   "avx512vbmi2",
    "avx512ifma",   "avx512vnni",
    "avx512bitalg", "avx512vpopcntdq",
    "avx512bf16",   "avx512fp16",
    "gfni",         "vaes",
    "vpclmulqdq",   "amx-tile",
    "amx-int8",     "amx-bf16"};

} // namespace mbt

#endif
