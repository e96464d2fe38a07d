//===- PrecisionOps.cpp - mixed precision: verifier, gradient -------------===//

#include "dialects/MBT/IR/MBTOps.h"

using namespace mlir;
using namespace mlir::mbt;

// Rounding an f32 to bf16 is what is lowered (PrecisionPatterns.cpp); other
// formats (f16, which needs a loss scale) come with their lowering.
LogicalResult RoundToOp::verify() {
  Type element = getType().getElementType();
  if (!element.isF32())
    return emitOpError("rounds f32 values, got ") << element;
  if (!getFormat().isBF16())
    return emitOpError("rounds to bf16, got ") << getFormat();
  return success();
}

SmallVector<Value> RoundToOp::buildGradients(OpBuilder &b,
                                             ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<RoundToOp>(getLoc(), resultGrads[0], getFormat())};
}
