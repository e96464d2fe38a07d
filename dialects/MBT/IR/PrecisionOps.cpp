//===- PrecisionOps.cpp - mixed precision: verifiers, gradient ------------===//

#include "dialects/MBT/IR/LossScaleRules.h"
#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/MBTShapes.h"

using namespace mlir;
using namespace mlir::mbt;

LogicalResult RoundToOp::verify() {
  Type element = getType().getElementType();
  if (!element.isF32())
    return emitOpError("rounds f32 values, got ") << element;
  if (!getFormat().isBF16() && !getFormat().isF16())
    return emitOpError("rounds to bf16 or f16, got ") << getFormat();
  return success();
}

SmallVector<Value> RoundToOp::buildGradients(OpBuilder &b,
                                             ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<RoundToOp>(getLoc(), resultGrads[0], getFormat())};
}

LogicalResult UnscaleGradsOp::verify() {
  auto grads = getGrads().getType();
  auto scale = getScale().getType();
  if (grads.getRank() != 2 || scale.getRank() != 1 ||
      grads.getDimSize(0) != scale.getDimSize(0))
    return emitOpError("needs grads [M, P] and scale [M], got ")
           << formatShape(grads.getShape()) << " and "
           << formatShape(scale.getShape());
  if (grads.getElementType() != scale.getElementType())
    return emitOpError("needs a scale of the gradients' type, got ")
           << scale.getElementType();
  return success();
}

LogicalResult UpdateLossScaleOp::verify() {
  auto step = getStep().getType();
  auto scale = getScale().getType();
  if (step.getRank() != 1 || scale.getShape() != step.getShape())
    return emitOpError("needs step and scale [M], got ")
           << formatShape(step.getShape()) << " and "
           << formatShape(scale.getShape());
  LossScaleSettings settings;
  settings.growthFactor = getGrowthFactor().convertToDouble();
  settings.backoffFactor = getBackoffFactor().convertToDouble();
  settings.growthInterval = getGrowthInterval();
  if (std::optional<std::string> problem = lossScaleProblem(settings))
    return emitOpError(*problem);
  return success();
}
