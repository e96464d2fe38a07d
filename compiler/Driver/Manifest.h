//===- Manifest.h - the artifact's manifest from the fused module -*- C++ -*-===//
#ifndef MBT_COMPILER_DRIVER_MANIFEST_H
#define MBT_COMPILER_DRIVER_MANIFEST_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mbt {

/// The manifest JSON of docs/abi.md for a module at the "fused" stage (it
/// reads mbt.sweep and the mbt.* module attributes that mbt-fuse-optimizer
/// records). Fails with an error on the module when something is missing.
mlir::FailureOr<std::string> buildManifest(mlir::ModuleOp fused,
                                           llvm::StringRef device = "cpu");

} // namespace mbt

#endif
