//===- MBTGradients.cpp - vector-Jacobian products of the mbt ops ---------===//
//
// GradientOpInterface implementations: given the adjoints of an op's
// results, build the adjoints of its operands. `mbt-autodiff` walks a
// function backwards and calls these; it knows nothing about any op.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/MBTOps.h"

using namespace mlir;
using namespace mlir::mbt;

/// Sums `grad` down to the shape of `operand` if broadcasting widened it.
static Value unbroadcastTo(OpBuilder &b, Location loc, Value grad,
                           Value operand) {
  if (grad.getType() == operand.getType())
    return grad;
  return b.create<UnbroadcastOp>(loc, operand.getType(), grad);
}

SmallVector<Value> MatmulOp::buildGradients(OpBuilder &b,
                                            ValueRange resultGrads) {
  Value g = resultGrads[0];
  if (!g)
    return {Value(), Value()};
  Location loc = getLoc();
  Value a = getLhs(), w = getRhs();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  auto mm = [&](Value x, Value y, bool tx, bool ty) -> Value {
    return b.create<MatmulOp>(loc, x, y, tx, ty);
  };
  // C = op(A) op(B). With G = dC: for C = A B, dA = G B^T and dB = A^T G;
  // each transpose flag mirrors the corresponding product.
  Value da, dw;
  if (!ta && !tb) {
    da = mm(g, w, false, true);
    dw = mm(a, g, true, false);
  } else if (ta && !tb) {
    da = mm(w, g, false, true);
    dw = mm(a, g, false, false);
  } else if (!ta && tb) {
    da = mm(g, w, false, false);
    dw = mm(g, a, true, false);
  } else {
    da = mm(w, g, true, true);
    dw = mm(g, a, true, true);
  }
  return {da, dw};
}

SmallVector<Value> AddOp::buildGradients(OpBuilder &b, ValueRange resultGrads) {
  Value g = resultGrads[0];
  if (!g)
    return {Value(), Value()};
  return {unbroadcastTo(b, getLoc(), g, getLhs()),
          unbroadcastTo(b, getLoc(), g, getRhs())};
}

SmallVector<Value> SubOp::buildGradients(OpBuilder &b, ValueRange resultGrads) {
  Value g = resultGrads[0];
  if (!g)
    return {Value(), Value()};
  Value neg = b.create<NegOp>(getLoc(), g);
  return {unbroadcastTo(b, getLoc(), g, getLhs()),
          unbroadcastTo(b, getLoc(), neg, getRhs())};
}

SmallVector<Value> MulOp::buildGradients(OpBuilder &b, ValueRange resultGrads) {
  Value g = resultGrads[0];
  if (!g)
    return {Value(), Value()};
  Value dl = b.create<MulOp>(getLoc(), g, getRhs());
  Value dr = b.create<MulOp>(getLoc(), g, getLhs());
  return {unbroadcastTo(b, getLoc(), dl, getLhs()),
          unbroadcastTo(b, getLoc(), dr, getRhs())};
}

SmallVector<Value> DivOp::buildGradients(OpBuilder &b, ValueRange resultGrads) {
  Value g = resultGrads[0];
  if (!g)
    return {Value(), Value()};
  // d(a/b)/da = 1/b; d(a/b)/db = -a/b^2 = -(1/b) (a/b).
  Value q = b.create<DivOp>(getLoc(), g, getRhs());
  Value dr =
      b.create<NegOp>(getLoc(), b.create<MulOp>(getLoc(), q, getResult()));
  return {unbroadcastTo(b, getLoc(), q, getLhs()),
          unbroadcastTo(b, getLoc(), dr, getRhs())};
}

SmallVector<Value> NegOp::buildGradients(OpBuilder &b, ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<NegOp>(getLoc(), resultGrads[0])};
}

SmallVector<Value> ReluOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<ReluGradOp>(getLoc(), getInput(), resultGrads[0])};
}

SmallVector<Value> TanhOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<TanhGradOp>(getLoc(), getResult(), resultGrads[0])};
}

SmallVector<Value> SigmoidOp::buildGradients(OpBuilder &b,
                                             ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<SigmoidGradOp>(getLoc(), getResult(), resultGrads[0])};
}

SmallVector<Value> ExpOp::buildGradients(OpBuilder &b, ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<MulOp>(getLoc(), resultGrads[0], getResult())};
}

SmallVector<Value> LogOp::buildGradients(OpBuilder &b, ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<DivOp>(getLoc(), resultGrads[0], getInput())};
}

/// grad * 0.5 / sqrt(x), with 0.5 a splat of the result's rank.
SmallVector<Value> SqrtOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  auto type = getType();
  auto halfType = RankedTensorType::get(SmallVector<int64_t>(type.getRank(), 1),
                                        type.getElementType());
  Value half = b.create<ConstantOp>(
      getLoc(), halfType,
      DenseElementsAttr::get(halfType,
                             b.getFloatAttr(type.getElementType(), 0.5)));
  Value scaled = b.create<MulOp>(getLoc(), resultGrads[0], half);
  return {b.create<DivOp>(getLoc(), scaled, getResult())};
}

SmallVector<Value> SoftplusOp::buildGradients(OpBuilder &b,
                                              ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  Value sigmoid = b.create<SigmoidOp>(getLoc(), getInput());
  return {b.create<MulOp>(getLoc(), resultGrads[0], sigmoid)};
}

SmallVector<Value> SiluOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<SiluGradOp>(getLoc(), getInput(), resultGrads[0])};
}

SmallVector<Value> GeluOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<GeluGradOp>(getLoc(), getInput(), resultGrads[0])};
}

SmallVector<Value> ReshapeOp::buildGradients(OpBuilder &b,
                                             ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<ReshapeOp>(getLoc(), getInput().getType(), resultGrads[0])};
}

SmallVector<Value> ReduceSumOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<BroadcastOp>(getLoc(), resultGrads[0], getInput(),
                                getAxesAttr())};
}

SmallVector<Value> BroadcastOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value(), Value()};
  return {b.create<ReduceSumOp>(getLoc(), resultGrads[0], getDimsAttr()),
          Value()};
}

SmallVector<Value> ReduceMaxOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<ReduceMaxGradOp>(getLoc(), getInput().getType(), getInput(),
                                    getResult(), resultGrads[0],
                                    getAxesAttr())};
}

/// d lse / dx = exp(x - lse), the softmax over the reduced dimensions.
SmallVector<Value> LogSumExpOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  Location loc = getLoc();
  Value x = getInput();
  Value lse = b.create<BroadcastOp>(loc, getResult(), x, getAxesAttr());
  Value softmax = b.create<ExpOp>(loc, b.create<SubOp>(loc, x, lse));
  Value g = b.create<BroadcastOp>(loc, resultGrads[0], x, getAxesAttr());
  return {b.create<MulOp>(loc, g, softmax)};
}

/// A count depends on the input's shape, not its values.
SmallVector<Value> CountOp::buildGradients(OpBuilder &, ValueRange) {
  return {Value()};
}

SmallVector<Value> TransposeOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  return {b.create<TransposeOp>(getLoc(), resultGrads[0],
                                b.getDenseI64ArrayAttr(inverse))};
}

SmallVector<Value> CrossEntropyOp::buildGradients(OpBuilder &b,
                                                  ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value(), Value()};
  Value dl = b.create<CrossEntropyGradOp>(getLoc(), getLogits(), getLabels(),
                                          resultGrads[0]);
  return {dl, Value()};
}

/// The adjoint of each operand is its slice of the result's adjoint.
SmallVector<Value> ConcatOp::buildGradients(OpBuilder &b,
                                            ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value(), Value()};
  int64_t axis = getAxis();
  int64_t n = getLhs().getType().getDimSize(axis);
  int64_t total = getType().getDimSize(axis);
  Value g = resultGrads[0];
  return {b.create<SliceOp>(getLoc(), g, axis, 0, n),
          b.create<SliceOp>(getLoc(), g, axis, n, total)};
}

SmallVector<Value> SliceOp::buildGradients(OpBuilder &b,
                                           ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<SliceGradOp>(getLoc(), getInput().getType(), resultGrads[0],
                                getInput(), getAxis(), getStart())};
}
