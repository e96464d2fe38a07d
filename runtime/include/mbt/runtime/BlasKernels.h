//===- BlasKernels.h - make OpenBLAS use the CPU's vector units -*- C++ -*-===//
//
// OpenBLAS (Debian builds it with DYNAMIC_ARCH) picks its kernels from the
// CPU model when the library loads. On virtual CPUs that report a generic
// model ("Intel Xeon Processor") it can fall back to its SSE3 (Prescott)
// kernels although the CPU has AVX-512 or AVX2, which halves the speed of
// every training step (docs/benchmarks.md). The choice can only be changed
// through OPENBLAS_CORETYPE before the library loads, so the tools that
// train (mbtc, mbt-run) call useVectorBlasKernels() first thing: when the
// user did not set OPENBLAS_CORETYPE and OpenBLAS chose a generic core on a
// CPU with AVX-512 (SkylakeX kernels) or AVX2 + FMA (Haswell kernels), it
// sets the variable and re-executes the program (once; argv unchanged).
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_BLASKERNELS_H
#define MBT_RUNTIME_BLASKERNELS_H

namespace mbt {
namespace runtime {

/// OpenBLAS's core name ("Prescott", "SkylakeX", ...).
const char *blasCoreName();

/// The OPENBLAS_CORETYPE this CPU should use when OpenBLAS's own choice is
/// generic, or null when there is nothing better (or the user chose).
const char *betterBlasCoreType();

/// Re-executes the program with OPENBLAS_CORETYPE set when
/// betterBlasCoreType() says so; returns if it does not (or cannot).
void useVectorBlasKernels(char **argv);

} // namespace runtime
} // namespace mbt

#endif
