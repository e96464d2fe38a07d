//===- NormOps.cpp - batch normalization's verifier and training form -----===//
//
// mbt.batch_norm is the evaluation form (given statistics); the training
// form is not an op of its own but the reductions and elementwise ops
// buildTrainingForm emits, so its gradient is theirs and needs no rule here.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/MBTShapes.h"

using namespace mlir;
using namespace mlir::mbt;

LogicalResult BatchNormOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto stats = cast<RankedTensorType>(getMean().getType());
  if (stats.getElementType() != input.getElementType())
    return emitOpError("needs statistics of the input's element type ")
           << input.getElementType() << ", got " << stats;
  if (stats.getRank() < 1)
    return emitOpError("needs statistics with a channel dimension, got ")
           << stats;
  int64_t leading = stats.getRank() - 1;
  if (input.getRank() < leading + 2)
    return emitOpError("needs an input [L..., B, C, S...] for statistics ")
           << formatShape(stats.getShape()) << ", got "
           << formatShape(input.getShape());
  for (int64_t d = 0; d < leading; ++d)
    if (!sameSize(stats.getDimSize(d), input.getDimSize(d)))
      return emitOpError("has statistics ")
             << formatShape(stats.getShape())
             << " whose leading dims differ from the input's "
             << formatShape(input.getShape());
  if (!sameSize(stats.getDimSize(leading), input.getDimSize(leading + 1)))
    return emitOpError("has ")
           << stats.getDimSize(leading)
           << " channels of statistics for an input with "
           << input.getDimSize(leading + 1) << " channels (dim " << leading + 1
           << " of " << formatShape(input.getShape()) << ")";
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("needs a positive epsilon, got ")
           << getEpsilon().convertToDouble();
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError("needs a momentum in [0, 1], got ") << momentum;
  return success();
}

SmallVector<int64_t> BatchNormOp::getReducedAxes() {
  int64_t leading = getNumLeadingDims();
  int64_t rank = cast<RankedTensorType>(getInput().getType()).getRank();
  SmallVector<int64_t> axes{leading};
  for (int64_t d = leading + 2; d < rank; ++d)
    axes.push_back(d);
  return axes;
}

BatchNormOp::TrainingForm BatchNormOp::buildTrainingForm(OpBuilder &b) {
  Location loc = getLoc();
  Value x = getInput();
  auto statsType = cast<RankedTensorType>(getMean().getType());
  Type element = statsType.getElementType();
  DenseI64ArrayAttr axes = b.getDenseI64ArrayAttr(getReducedAxes());
  auto splat = [&](double value) -> Value {
    return b.create<ConstantOp>(
        loc, statsType,
        DenseElementsAttr::get(statsType, b.getFloatAttr(element, value)));
  };
  // n: the values per channel (B times the spatial sizes), read at run
  // time. Mean and biased variance in two passes, as PyTorch takes them.
  Value n = b.create<CountOp>(loc, x, axes);
  Value mean = b.create<DivOp>(loc, b.create<ReduceSumOp>(loc, x, axes), n);
  Value centered =
      b.create<SubOp>(loc, x, b.create<BroadcastOp>(loc, mean, x, axes));
  Value variance =
      b.create<DivOp>(loc,
                      b.create<ReduceSumOp>(
                          loc, b.create<MulOp>(loc, centered, centered), axes),
                      n);
  Value stddev = b.create<SqrtOp>(
      loc,
      b.create<AddOp>(loc, variance, splat(getEpsilon().convertToDouble())));
  Value result = b.create<DivOp>(loc, centered,
                                 b.create<BroadcastOp>(loc, stddev, x, axes));

  // The running statistics: (1 - momentum) * running + momentum * batch,
  // the variance unbiased by n / (n - 1). With one value per channel
  // (where PyTorch refuses to train) the factor is n / 1, so the running
  // variance decays instead of becoming NaN: max(n - 1, 1) = relu(n - 2) + 1.
  double momentum = getMomentum().convertToDouble();
  Value keep = splat(1.0 - momentum), take = splat(momentum);
  Value one = splat(1.0), two = splat(2.0);
  Value denominator = b.create<AddOp>(
      loc, b.create<ReluOp>(loc, b.create<SubOp>(loc, n, two)), one);
  Value unbiased =
      b.create<MulOp>(loc, variance, b.create<DivOp>(loc, n, denominator));
  Value newMean = b.create<AddOp>(loc, b.create<MulOp>(loc, getMean(), keep),
                                  b.create<MulOp>(loc, mean, take));
  Value newVariance =
      b.create<AddOp>(loc, b.create<MulOp>(loc, getVariance(), keep),
                      b.create<MulOp>(loc, unbiased, take));
  return {result, newMean, newVariance};
}
