//===- TokenLossOps.cpp - per-token loss: verifiers, gradient -------------===//

#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/MBTShapes.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {
/// Checks that `targets` is [L..., B, T] and `result` [L...] for `logits`
/// [L..., B, T, V]; `result` is the loss (or accuracy) of every L.
LogicalResult verifyTokenLoss(Operation *op, RankedTensorType logits,
                              RankedTensorType targets, RankedTensorType result,
                              StringRef resultName) {
  int64_t rank = logits.getRank();
  if (rank < 3)
    return op->emitOpError("needs logits [L..., B, T, V], got ")
           << formatShape(logits.getShape());
  bool targetsOk = targets.getRank() == rank - 1;
  for (int64_t d = 0; targetsOk && d + 1 < rank; ++d)
    targetsOk = sameSize(targets.getDimSize(d), logits.getDimSize(d));
  if (!targetsOk)
    return op->emitOpError("needs targets of shape [L..., B, T] = ")
           << formatShape(logits.getShape().drop_back()) << ", got "
           << formatShape(targets.getShape());
  if (result.getElementType() != logits.getElementType())
    return op->emitOpError("needs a ")
           << resultName << " of the logits' element type "
           << logits.getElementType() << ", got " << result.getElementType();
  bool resultOk = result.getRank() == rank - 3;
  for (int64_t d = 0; resultOk && d + 3 < rank; ++d)
    resultOk = sameSize(result.getDimSize(d), logits.getDimSize(d));
  if (!resultOk)
    return op->emitOpError("needs a ")
           << resultName << " of shape [L...] = "
           << formatShape(logits.getShape().drop_back(3)) << ", got "
           << formatShape(result.getShape());
  return success();
}
} // namespace

LogicalResult TokenCrossEntropyOp::verify() {
  return verifyTokenLoss(*this, getLogits().getType(), getTargets().getType(),
                         getType(), "result");
}

LogicalResult TokenAccuracyOp::verify() {
  return verifyTokenLoss(*this, getLogits().getType(), getTargets().getType(),
                         getType(), "result");
}

LogicalResult TokenCrossEntropyGradOp::verify() {
  if (getType() != getLogits().getType())
    return emitOpError("needs a result of the logits' type ")
           << getLogits().getType() << ", got " << getType();
  return verifyTokenLoss(*this, getLogits().getType(), getTargets().getType(),
                         getGrad().getType(), "gradient");
}

SmallVector<Value> TokenCrossEntropyOp::buildGradients(OpBuilder &b,
                                                       ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value(), Value()};
  Value dLogits = b.create<TokenCrossEntropyGradOp>(
      getLoc(), getLogits().getType(), getLogits(), getTargets(),
      resultGrads[0]);
  return {dLogits, Value()};
}

// The targets are data: nothing differentiable may flow into them.
bool TokenCrossEntropyOp::isDifferentiableOperand(unsigned index) {
  return index == 0;
}
