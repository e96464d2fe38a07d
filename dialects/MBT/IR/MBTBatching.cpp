//===- MBTBatching.cpp - how each op gains the model dimension ------------===//
//
// BatchableOpInterface implementations. Most ops batch by prepending the
// model dimension to every type (their semantics already treat leading
// dimensions as independent); ops with explicit axes shift them.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/MBTOps.h"

using namespace mlir;
using namespace mlir::mbt;

static Type prependModelDim(Type type, int64_t numModels) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape{numModels};
  llvm::append_range(shape, tensor.getShape());
  return RankedTensorType::get(shape, tensor.getElementType());
}

Operation *mlir::mbt::detail::buildBatchedByPrependingModelDim(
    Operation *op, OpBuilder &builder, ValueRange batchedOperands,
    int64_t numModels) {
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(batchedOperands);
  state.addAttributes(op->getAttrs());
  for (Type t : op->getResultTypes())
    state.addTypes(prependModelDim(t, numModels));
  return builder.create(state);
}

/// A splat is the same for every model.
Operation *ConstantOp::buildBatched(OpBuilder &b, ValueRange, int64_t n) {
  auto splat = dyn_cast<SplatElementsAttr>(getValue());
  if (!splat) {
    emitOpError("only splat constants can be batched");
    return nullptr;
  }
  auto type = cast<ShapedType>(prependModelDim(getType(), n));
  return b.create<ConstantOp>(
      getLoc(), type,
      SplatElementsAttr::get(type, splat.getSplatValue<Attribute>()));
}

/// Model i's value at index i of the model dimension.
Operation *ModelConstantOp::buildBatched(OpBuilder &b, ValueRange, int64_t n) {
  ArrayRef<double> values = getValues();
  if (static_cast<int64_t>(values.size()) != n) {
    emitOpError("has ") << values.size() << " values for " << n << " models";
    return nullptr;
  }
  Type element = getType().getElementType();
  auto type = RankedTensorType::get({n}, element);
  SmallVector<Attribute> asElements;
  for (double v : values)
    asElements.push_back(b.getFloatAttr(element, v));
  return b.create<ConstantOp>(getLoc(), type,
                              DenseElementsAttr::get(type, asElements));
}

static DenseI64ArrayAttr shiftAxes(OpBuilder &b, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shifted;
  for (int64_t a : axes)
    shifted.push_back(a + 1);
  return b.getDenseI64ArrayAttr(shifted);
}

Operation *ReduceSumOp::buildBatched(OpBuilder &b, ValueRange operands,
                                     int64_t) {
  return b.create<ReduceSumOp>(getLoc(), operands[0], shiftAxes(b, getAxes()));
}

Operation *BroadcastOp::buildBatched(OpBuilder &b, ValueRange operands,
                                     int64_t) {
  return b.create<BroadcastOp>(getLoc(), operands[0], operands[1],
                               shiftAxes(b, getDims()));
}

Operation *ReduceMaxOp::buildBatched(OpBuilder &b, ValueRange operands,
                                     int64_t) {
  return b.create<ReduceMaxOp>(getLoc(), operands[0], shiftAxes(b, getAxes()));
}

Operation *ReduceMaxGradOp::buildBatched(OpBuilder &b, ValueRange operands,
                                         int64_t) {
  return b.create<ReduceMaxGradOp>(getLoc(), operands[0].getType(), operands[0],
                                   operands[1], operands[2],
                                   shiftAxes(b, getAxes()));
}

Operation *LogSumExpOp::buildBatched(OpBuilder &b, ValueRange operands,
                                     int64_t) {
  return b.create<LogSumExpOp>(getLoc(), operands[0], shiftAxes(b, getAxes()));
}

Operation *CountOp::buildBatched(OpBuilder &b, ValueRange operands, int64_t) {
  return b.create<CountOp>(getLoc(), operands[0], shiftAxes(b, getAxes()));
}

/// The model dimension stays in front: [0, p0 + 1, p1 + 1, ...].
Operation *TransposeOp::buildBatched(OpBuilder &b, ValueRange operands,
                                     int64_t) {
  SmallVector<int64_t> perm{0};
  for (int64_t p : getPermutation())
    perm.push_back(p + 1);
  return b.create<TransposeOp>(getLoc(), operands[0],
                               b.getDenseI64ArrayAttr(perm));
}

Operation *ConcatOp::buildBatched(OpBuilder &b, ValueRange operands, int64_t) {
  return b.create<ConcatOp>(getLoc(), operands[0], operands[1], getAxis() + 1);
}

Operation *SliceOp::buildBatched(OpBuilder &b, ValueRange operands, int64_t) {
  return b.create<SliceOp>(getLoc(), operands[0], getAxis() + 1, getStart(),
                           getEnd());
}

Operation *SliceGradOp::buildBatched(OpBuilder &b, ValueRange operands,
                                     int64_t) {
  return b.create<SliceGradOp>(getLoc(), operands[1].getType(), operands[0],
                               operands[1], getAxis() + 1, getStart());
}
