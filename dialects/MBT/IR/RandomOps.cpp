//===- RandomOps.cpp - dropout and the seeds that key it ------------------===//
//
// mbt.model_seed and mbt.dropout: their verifiers, dropout's folder (the
// evaluation form is the identity), its gradient (the same mask applied to
// the adjoint) and model_seed's batching rule (one seed per model).
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/MBTShapes.h"

using namespace mlir;
using namespace mlir::mbt;

LogicalResult ModelSeedOp::verify() {
  if (getSeeds().empty())
    return emitOpError("needs at least one seed");
  return success();
}

/// Model i's seed at index i of the model dimension.
Operation *ModelSeedOp::buildBatched(OpBuilder &b, ValueRange, int64_t n) {
  ArrayRef<int64_t> seeds = getSeeds();
  if (static_cast<int64_t>(seeds.size()) != n) {
    emitOpError("has ") << seeds.size() << " seeds for " << n << " models";
    return nullptr;
  }
  auto type = RankedTensorType::get({n}, b.getI64Type());
  return b.create<ConstantOp>(getLoc(), type,
                              DenseElementsAttr::get(type, seeds));
}

LogicalResult DropoutOp::verify() {
  auto input = getInput().getType();
  auto rate = cast<RankedTensorType>(getRate().getType());
  if (rate.getElementType() != input.getElementType())
    return emitOpError("needs a rate of the input's element type ")
           << input.getElementType() << ", got " << rate;
  // The per-model scalars index the leading dims of the input.
  ArrayRef<int64_t> prefix = rate.getShape();
  auto isPrefixOfInput = [&](ArrayRef<int64_t> shape) {
    if (shape.size() > static_cast<size_t>(input.getRank()))
      return false;
    for (auto [s, d] : llvm::zip(shape, input.getShape()))
      if (s != d && !ShapedType::isDynamic(s) && !ShapedType::isDynamic(d))
        return false;
    return true;
  };
  if (!isPrefixOfInput(prefix))
    return emitOpError("needs a rate whose shape ")
           << formatShape(prefix) << " is a prefix of the input's "
           << formatShape(input.getShape());
  int64_t sharedDims = static_cast<int64_t>(getSharedDims());
  if (sharedDims < 0 ||
      sharedDims > input.getRank() - static_cast<int64_t>(prefix.size()))
    return emitOpError("shares a draw over ")
           << sharedDims << " trailing dims, but the input "
           << formatShape(input.getShape()) << " has only "
           << input.getRank() - static_cast<int64_t>(prefix.size())
           << " per model";
  if (getKey().empty())
    return success();
  if (getKey().size() != 2)
    return emitOpError("needs a key of a seed and a step, or none, got ")
           << getKey().size() << " values";
  auto seed = cast<RankedTensorType>(getSeed().getType());
  auto step = cast<RankedTensorType>(getStep().getType());
  if (!seed.getElementType().isInteger(64) || !step.getElementType().isF64())
    return emitOpError("needs an i64 seed and an f64 step, got ")
           << seed << " and " << step;
  if (seed.getShape() != prefix || step.getShape() != prefix)
    return emitOpError("needs the seed and the step shaped like the rate ")
           << formatShape(prefix) << ", got " << formatShape(seed.getShape())
           << " and " << formatShape(step.getShape());
  return success();
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (isTraining())
    return {};
  return getInput();
}

/// d(x * keep / (1 - rate)) / dx is the same mask and scale: the adjoint
/// goes through the same op, key and site. The rate, seed and step are
/// not differentiable (Sema keeps the rate free of parameters).
SmallVector<Value> DropoutOp::buildGradients(OpBuilder &b,
                                             ValueRange resultGrads) {
  SmallVector<Value> grads(getNumOperands());
  if (Value g = resultGrads[0])
    grads[0] =
        b.create<DropoutOp>(getLoc(), g.getType(), g, getRate(), getKey(),
                            getSiteAttr(), getSharedDimsAttr());
  return grads;
}

/// Only the input: the mask does not vary smoothly with the rate.
bool DropoutOp::isDifferentiableOperand(unsigned index) { return index == 0; }
