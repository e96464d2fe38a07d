//===- ArtifactEmitter.h - LLVM dialect to a shared library -----*- C++ -*-===//
#ifndef MBT_COMPILER_DRIVER_ARTIFACTEMITTER_H
#define MBT_COMPILER_DRIVER_ARTIFACTEMITTER_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mbt {

/// Whether the build found LLVM's OpenMP runtime (libomp), which artifacts
/// with parallel loops link against, and the directory it is in.
#ifdef MBT_OPENMP_LIBDIR
constexpr bool kHaveOpenMP = true;
constexpr const char *kOpenMPLibDir = MBT_OPENMP_LIBDIR;
#else
constexpr bool kHaveOpenMP = false;
constexpr const char *kOpenMPLibDir = "";
#endif

/// Why LLVM has no CPU named `cpu` (`mbtc --mcpu`) for this host's target;
/// empty where it has one. Empty or "native" names this host's CPU, with
/// the host's own features; a name, that CPU with its default features.
std::string checkTargetCpu(llvm::StringRef cpu);

/// Prints the CPUs and features LLVM knows for this host's target to
/// stderr (`mbtc --mcpu=help`, as `llc -mcpu=help`).
void printTargetCpus();

/// The width in bits of `cpu`'s vector registers: 512 with AVX-512, 256
/// with AVX, else 128.
int64_t vectorBits(llvm::StringRef cpu);

/// Whether code for `cpu` takes the runtime's attention kernels
/// (attentionKernelsPayOn, for the triple of the CPU's target machine).
bool cpuHasAttentionKernelCode(llvm::StringRef cpu);

/// Translates an LLVM-dialect module to LLVM IR for `cpu` (as in
/// checkTargetCpu: the host's by default), optimizes
/// it at -O3 and adds the manifest and ABI-version symbols of docs/abi.md.
/// With `libraryPath` it writes object files next to it and links them
/// into the artifact (a shared library) with the system C compiler. With
/// `irOut` it prints the optimized IR instead. Code
/// generation runs on `codegenThreads` threads, the module split by
/// function between them (0: as many as the cores, for a module large
/// enough to gain from it; 1: one object, no thread). The manifest gains
/// "cpu": the CPU and the features of kCheckedCpuFeatures it has, which the
/// runtime checks before it calls the artifact.
mlir::LogicalResult
emitArtifact(mlir::ModuleOp llvmModule, llvm::StringRef manifestJson,
             llvm::raw_ostream *irOut, llvm::StringRef libraryPath,
             unsigned codegenThreads = 0, llvm::StringRef cpu = "");

} // namespace mbt

#endif
