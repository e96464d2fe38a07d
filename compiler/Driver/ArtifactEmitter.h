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

/// The width of the host's vector registers in bits: 512 with AVX-512, 256
/// with AVX, else 128 (the artifact is compiled for the host CPU).
int64_t hostVectorBits();

/// Translates an LLVM-dialect module to LLVM IR for the host CPU, optimizes
/// it at -O3 and adds the manifest and ABI-version symbols of docs/abi.md.
/// With `libraryPath` it writes object files next to it and links them
/// into the artifact (a shared library) with the system C compiler. With
/// `irOut` it prints the optimized IR instead. Code
/// generation runs on `codegenThreads` threads, the module split by
/// function between them (0: as many as the cores, for a module large
/// enough to gain from it; 1: one object, no thread).
mlir::LogicalResult emitArtifact(mlir::ModuleOp llvmModule,
                                 llvm::StringRef manifestJson,
                                 llvm::raw_ostream *irOut,
                                 llvm::StringRef libraryPath,
                                 unsigned codegenThreads = 0);

} // namespace mbt

#endif
