//===- BlasKernels.cpp - make OpenBLAS use the CPU's vector units ---------===//
#include "mbt/runtime/BlasKernels.h"

#ifdef MBT_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace mbt {
namespace runtime {

const char *blasCoreName() {
#ifdef MBT_HAVE_OPENBLAS
  const char *name = openblas_get_corename();
  return name ? name : "";
#else
  return "none (built without OpenBLAS)";
#endif
}

const char *betterBlasCoreType() {
#ifndef MBT_HAVE_OPENBLAS
  return nullptr;
#endif
  if (std::getenv("OPENBLAS_CORETYPE"))
    return nullptr; // the user's choice (or our re-execution)
  const char *core = blasCoreName();
  // The generic x86-64 cores OpenBLAS falls back to.
  bool generic = !std::strcmp(core, "Prescott") ||
                 !std::strcmp(core, "Core2") || !std::strcmp(core, "Nehalem") ||
                 !std::strcmp(core, "Katmai") || !std::strcmp(core, "Penryn") ||
                 !std::strcmp(core, "Dunnington");
  if (!generic)
    return nullptr;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
#endif
  return nullptr;
}

void useVectorBlasKernels(char **argv) {
  const char *core = betterBlasCoreType();
  if (!core)
    return;
  if (setenv("OPENBLAS_CORETYPE", core, /*overwrite=*/0) != 0)
    return;
  execv("/proc/self/exe", argv);
  // execv returned: keep running with the kernels OpenBLAS chose.
}

} // namespace runtime
} // namespace mbt
