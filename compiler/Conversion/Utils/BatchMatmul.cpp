//===- BatchMatmul.cpp - recognizing the batched matmuls of a step --------===//
#include "compiler/Conversion/Utils/BatchMatmul.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

std::optional<mbt::BatchMatmulKind> mbt::matchBatchMatmul(linalg::LinalgOp op,
                                                          bool anyStrides) {
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
        (!anyStrides && strides.back() != 1))
      return std::nullopt;
  }
  return kind;
}

/// Whether `body` is `yield out + a * b` (either order) over its arguments
/// (a, b, out).
static bool isMultiplyAccumulate(Block &body) {
  if (body.getNumArguments() != 3 || body.getOperations().size() != 3)
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body.getArgument(2);
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if (add.getLhs() != out && add.getRhs() != out)
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

std::optional<mbt::GenericMatmul>
mbt::matchGenericMatmul(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !isMultiplyAccumulate(*op.getBlock()))
    return std::nullopt;
  Type element = getElementTypeOrSelf(op->getOperand(0).getType());
  if ((!element.isF32() && !element.isF64()) ||
      llvm::any_of(op->getOperands(), [&](Value v) {
        return getElementTypeOrSelf(v.getType()) != element;
      }))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned loops = op.getNumLoops();
  // Bit i of uses[d]: operand i indexes loop d.
  SmallVector<unsigned> uses(loops, 0);
  for (auto [i, map] : llvm::enumerate(maps)) {
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return std::nullopt;
    for (AffineExpr e : map.getResults())
      uses[cast<AffineDimExpr>(e).getPosition()] |= 1u << i;
  }
  GenericMatmul matmul;
  int m = -1, n = -1, k = -1;
  auto iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < loops; ++d) {
    bool reduction = iterators[d] == utils::IteratorType::reduction;
    int *role;
    switch (uses[d]) {
    case 0b111: // A, B and C: a batch loop
      if (reduction)
        return std::nullopt;
      continue;
    case 0b101: // A and C
      role = &m;
      break;
    case 0b110: // B and C
      role = &n;
      break;
    case 0b011: // A and B
      role = &k;
      break;
    default:
      return std::nullopt;
    }
    if ((role == &k) != reduction || *role != -1)
      return std::nullopt;
    *role = d;
  }
  if (m < 0 || n < 0 || k < 0)
    return std::nullopt;
  matmul.m = m;
  matmul.n = n;
  matmul.k = k;
  for (AffineExpr e : maps[2].getResults()) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (uses[d] == 0b111)
      matmul.batch.push_back(d);
  }
  return matmul;
}

SmallVector<unsigned> mbt::GenericMatmul::permutation(AffineMap map,
                                                      unsigned rows,
                                                      unsigned cols) const {
  SmallVector<unsigned> loops(batch);
  loops.push_back(rows);
  loops.push_back(cols);
  SmallVector<unsigned> dims;
  for (unsigned loop : loops)
    dims.push_back(
        *map.getResultPosition(getAffineDimExpr(loop, map.getContext())));
  return dims;
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
