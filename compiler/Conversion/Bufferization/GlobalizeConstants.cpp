//===- GlobalizeConstants.cpp - tensor constants' globals in order --------===//
//
// Makes bufferization deterministic: see MBTGlobalizeConstants in
// Passes.td.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTGLOBALIZECONSTANTS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {
struct GlobalizeConstantsPass
    : public mlir::mbt::impl::MBTGlobalizeConstantsBase<
          GlobalizeConstantsPass> {
  using MBTGlobalizeConstantsBase::MBTGlobalizeConstantsBase;

  void runOnOperation() override {
    // What One-Shot Bufferize's arith.constant model globalizes: ranked
    // tensors in the default memory space (the only one mbt uses).
    auto result = getOperation().walk([&](arith::ConstantOp constant) {
      if (!isa<RankedTensorType>(constant.getType()))
        return WalkResult::advance();
      if (failed(bufferization::getGlobalFor(constant, alignment))) {
        constant.emitOpError("has no module to hold its global");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
