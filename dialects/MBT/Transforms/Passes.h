//===- Passes.h - the mbt passes --------------------------------*- C++ -*-===//
#ifndef MBT_DIALECT_MBT_TRANSFORMS_PASSES_H
#define MBT_DIALECT_MBT_TRANSFORMS_PASSES_H

#include "dialects/MBT/IR/MBTOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mbt {

#define GEN_PASS_DECL
#include "dialects/MBT/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/MBT/Transforms/Passes.h.inc"

/// The sweep of `module`, or null after emitting an error.
SweepOp getSweep(ModuleOp module);

} // namespace mlir::mbt

#endif
