//===- BatchMatmul.cpp - recognizing the batched matmuls of a step --------===//
#include "compiler/Conversion/Utils/BatchMatmul.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

std::optional<mbt::BatchMatmulKind> mbt::matchBatchMatmul(linalg::LinalgOp op) {
  BatchMatmulKind kind;
  if (isa<linalg::BatchMatmulOp>(op))
    kind = {false, false};
  else if (isa<linalg::BatchMatmulTransposeAOp>(op))
    kind = {true, false};
  else if (isa<linalg::BatchMatmulTransposeBOp>(op))
    kind = {false, true};
  else
    return std::nullopt;
  Type element = getElementTypeOrSelf(op->getOperand(0).getType());
  if (!element.isF32() && !element.isF64())
    return std::nullopt;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || type.getElementType() != element)
      return std::nullopt;
    int64_t offset;
    SmallVector<int64_t> strides;
    if (failed(getStridesAndOffset(type, strides, offset)) ||
        strides.back() != 1)
      return std::nullopt;
  }
  return kind;
}

/// Whether `op` is a linalg.fill of 0.0.
static bool isZeroFill(Operation *op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op);
  if (!fill)
    return false;
  auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto value = constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
  return value && value.getValue().isZero();
}

/// The previous op that may read or write memory (not a view, a constant
/// or an allocation), or null.
static Operation *previousAccess(Operation *op) {
  Operation *prev = op->getPrevNode();
  while (prev && (isMemoryEffectFree(prev) || isa<memref::AllocOp>(prev)))
    prev = prev->getPrevNode();
  return prev;
}

Operation *mbt::zeroingBefore(linalg::LinalgOp op) {
  Value out = op.getDpsInitOperand(0)->get();
  Operation *prev = previousAccess(op);
  if (isZeroFill(prev))
    return cast<linalg::FillOp>(prev).getOutputs()[0] == out ? prev : nullptr;
  auto copy = dyn_cast_or_null<memref::CopyOp>(prev);
  if (!copy || copy.getTarget() != out)
    return nullptr;
  Operation *filler = previousAccess(copy);
  if (!isZeroFill(filler) ||
      cast<linalg::FillOp>(filler).getOutputs()[0] != copy.getSource())
    return nullptr;
  return copy;
}
