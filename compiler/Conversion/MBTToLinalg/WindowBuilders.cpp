//===- WindowBuilders.cpp - gathers over sliding windows ------------------===//
#include "compiler/Conversion/MBTToLinalg/WindowBuilders.h"
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::mbt;

Value mlir::mbt::indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

SmallVector<Value> mlir::mbt::loopIndices(OpBuilder &b, Location loc,
                                          int64_t n) {
  SmallVector<Value> indices;
  for (int64_t d = 0; d < n; ++d)
    indices.push_back(b.create<linalg::IndexOp>(loc, d));
  return indices;
}

/// The input position `pos * stride + offset - pad` that window position
/// `pos` reads at tap offset `offset` (k * dilation), clamped to 0 where it
/// is outside [0, size) (so a gather may read it), and whether it is inside.
std::pair<Value, Value> mlir::mbt::tapSource(OpBuilder &b, Location loc,
                                             Value pos, int64_t stride,
                                             Value offset, int64_t pad,
                                             int64_t size) {
  Value zero = indexConstant(b, loc, 0);
  Value i = b.create<arith::SubIOp>(
      loc,
      b.create<arith::AddIOp>(
          loc, b.create<arith::MulIOp>(loc, pos, indexConstant(b, loc, stride)),
          offset),
      indexConstant(b, loc, pad));
  Value inside = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, i, zero),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, i,
                              indexConstant(b, loc, size)));
  return {b.create<arith::SelectOp>(loc, inside, i, zero), inside};
}

/// The window position whose tap `k` reads input position `pos`:
/// (pos + pad - k * dilation) / stride when that is a whole position in
/// [0, positions), clamped to 0 otherwise; and whether it is one.
std::pair<Value, Value> mlir::mbt::tapReader(OpBuilder &b, Location loc,
                                             Value pos, int64_t k,
                                             int64_t stride, int64_t dilation,
                                             int64_t pad, int64_t positions) {
  Value zero = indexConstant(b, loc, 0);
  Value num = b.create<arith::AddIOp>(
      loc, pos, indexConstant(b, loc, pad - k * dilation));
  Value strideV = indexConstant(b, loc, stride);
  Value q = b.create<arith::DivSIOp>(loc, num, strideV);
  Value ok = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, num, zero),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, q,
                              indexConstant(b, loc, positions)));
  if (stride > 1)
    ok = b.create<arith::AndIOp>(
        loc, ok,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                b.create<arith::RemSIOp>(loc, num, strideV),
                                zero));
  return {b.create<arith::SelectOp>(loc, ok, q, zero), ok};
}

Value mlir::mbt::buildGather(
    OpBuilder &b, Location loc, RankedTensorType type,
    ArrayRef<std::pair<Value, int64_t>> sizeSources, ValueRange inputs,
    ArrayRef<AffineMap> inputMaps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Value init = buildEmpty(b, loc, type, sizeSources);
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(type.getRank()));
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{type}, inputs, ValueRange{init}, maps,
          iterators(type.getRank()),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(l, ValueRange{body(nb, l, args)});
          })
      .getResult(0);
}
