//===- Manifest.h - the artifact's manifest from the module -----*- C++ -*-===//
//
// The manifest (docs/abi.md) tells the runtime what an artifact trains:
// the models, their parameter layout, optimizer, data and outputs. It is
// read off the module while the sweep and the mbt.* module attributes are
// still there (the fused and linalg stages), by mbt-export-manifest.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_MANIFEST_MANIFEST_H
#define MBT_COMPILER_MANIFEST_MANIFEST_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir::mbt {

#define GEN_PASS_DECL
#include "compiler/Manifest/Passes.h.inc"

/// mbt-export-manifest that writes the manifest into `out` (the driver's
/// way: the artifact emitter embeds it).
std::unique_ptr<Pass> createMBTExportManifest(std::string &out,
                                              StringRef device);

#define GEN_PASS_REGISTRATION
#include "compiler/Manifest/Passes.h.inc"

} // namespace mlir::mbt

namespace mbt {

/// The manifest JSON of docs/abi.md for a module at the fused or linalg
/// stage (it reads mbt.sweep and the mbt.* module attributes that
/// mbt-fuse-optimizer records). Fails with an error on the module when
/// something is missing.
mlir::FailureOr<std::string> buildManifest(mlir::ModuleOp module,
                                           llvm::StringRef device = "cpu");

} // namespace mbt

#endif // MBT_COMPILER_MANIFEST_MANIFEST_H
