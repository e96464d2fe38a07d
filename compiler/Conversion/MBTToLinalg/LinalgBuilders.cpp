//===- LinalgBuilders.cpp - helpers for lowering mbt to linalg ------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::mbt;

Value mlir::mbt::buildEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                            ArrayRef<std::pair<Value, int64_t>> sources) {
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(
          b.create<tensor::DimOp>(loc, sources[d].first, sources[d].second));
  return b.create<tensor::EmptyOp>(loc, type, dynamic);
}

Value mlir::mbt::buildEmptyLike(OpBuilder &b, Location loc,
                                RankedTensorType type, Value like) {
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t d = 0; d < type.getRank(); ++d)
    sources.push_back({like, d});
  return buildEmpty(b, loc, type, sources);
}

Value mlir::mbt::buildFilled(OpBuilder &b, Location loc, RankedTensorType type,
                             ArrayRef<std::pair<Value, int64_t>> sources,
                             Attribute value) {
  Value empty = buildEmpty(b, loc, type, sources);
  Value fill = b.create<arith::ConstantOp>(loc, cast<TypedAttr>(value));
  return b.create<linalg::FillOp>(loc, fill, empty).getResult(0);
}

Value mlir::mbt::buildFilledLike(OpBuilder &b, Location loc,
                                 RankedTensorType type, Value like,
                                 Attribute value) {
  Value empty = buildEmptyLike(b, loc, type, like);
  Value fill = b.create<arith::ConstantOp>(loc, cast<TypedAttr>(value));
  return b.create<linalg::FillOp>(loc, fill, empty).getResult(0);
}

SmallVector<std::pair<Value, int64_t>>
mlir::mbt::sizeSources(RankedTensorType type, ValueRange candidates) {
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    std::pair<Value, int64_t> source{candidates.front(), d};
    for (Value c : candidates)
      if (cast<RankedTensorType>(c.getType()).getDimSize(d) != 1) {
        source = {c, d};
        break;
      }
    sources.push_back(source);
  }
  return sources;
}

AffineMap mlir::mbt::broadcastingMap(MLIRContext *ctx,
                                     ArrayRef<int64_t> operand,
                                     ArrayRef<int64_t> result) {
  SmallVector<AffineExpr> exprs;
  for (size_t d = 0; d < operand.size(); ++d)
    exprs.push_back(operand[d] == 1 && result[d] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(d, ctx));
  return AffineMap::get(result.size(), 0, exprs, ctx);
}

AffineMap mlir::mbt::droppingMap(MLIRContext *ctx, int64_t rank,
                                 ArrayRef<int64_t> dropped) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dropped, d))
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

SmallVector<utils::IteratorType>
mlir::mbt::iterators(int64_t rank, ArrayRef<int64_t> reduced) {
  SmallVector<utils::IteratorType> its;
  for (int64_t d = 0; d < rank; ++d)
    its.push_back(llvm::is_contained(reduced, d)
                      ? utils::IteratorType::reduction
                      : utils::IteratorType::parallel);
  return its;
}

Value mlir::mbt::floatConstant(OpBuilder &b, Location loc, Type type,
                               double value) {
  return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
}

Value mlir::mbt::dimAsFloat(OpBuilder &b, Location loc, Value v, int64_t d,
                            FloatType type) {
  Value dim = b.create<tensor::DimOp>(loc, v, d);
  Value i64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), dim);
  return b.create<arith::SIToFPOp>(loc, type, i64);
}

SmallVector<ReassociationIndices>
mlir::mbt::unitDimGroups(RankedTensorType type, ArrayRef<int64_t> unitDims) {
  // Each other dim closes a group holding the unit dims before it; unit
  // dims after the last other dim join the last group.
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices current;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    current.push_back(d);
    if (!llvm::is_contained(unitDims, d)) {
      groups.push_back(current);
      current.clear();
    }
  }
  if (!current.empty() && !groups.empty())
    llvm::append_range(groups.back(), current);
  return groups;
}

Value mlir::mbt::expandUnitDims(OpBuilder &b, Location loc, Value v,
                                RankedTensorType type,
                                ArrayRef<int64_t> insertedDims) {
  if (insertedDims.empty())
    return v;
  return b.create<tensor::ExpandShapeOp>(loc, type, v,
                                         unitDimGroups(type, insertedDims));
}

SliceAt mlir::mbt::sliceAt(OpBuilder &b, Location loc, Value tensor,
                           ArrayRef<Value> at) {
  auto type = cast<RankedTensorType>(tensor.getType());
  assert(static_cast<int64_t>(at.size()) == type.getRank() &&
         "one index or none per dim");
  SliceAt slice;
  SmallVector<int64_t> shape;
  for (auto [d, index] : llvm::enumerate(at)) {
    slice.strides.push_back(b.getIndexAttr(1));
    if (index) {
      slice.offsets.push_back(index);
      slice.sizes.push_back(b.getIndexAttr(1));
      continue;
    }
    slice.offsets.push_back(b.getIndexAttr(0));
    slice.sizes.push_back(tensor::getMixedSize(b, loc, tensor, d));
    shape.push_back(type.getDimSize(d));
  }
  slice.type = RankedTensorType::get(shape, type.getElementType());
  return slice;
}

SmallVector<Value> mlir::mbt::buildForallOverSlices(
    OpBuilder &b, Location loc, ArrayRef<OpFoldResult> bounds,
    ValueRange inputs, ValueRange outputs,
    function_ref<SliceAt(Value, ValueRange)> sliceOf,
    function_ref<SmallVector<Value>(ValueRange, ValueRange)> body) {
  auto forall = b.create<scf::ForallOp>(loc, bounds, outputs, std::nullopt);
  SmallVector<Value> ivs = forall.getInductionVars();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  auto extract = [&](ValueRange values) {
    SmallVector<Value> slices;
    for (Value v : values) {
      SliceAt s = sliceOf(v, ivs);
      slices.push_back(b.create<tensor::ExtractSliceOp>(
          loc, s.type, v, s.offsets, s.sizes, s.strides));
    }
    return slices;
  };
  SmallVector<Value> results =
      body(extract(inputs), extract(forall.getRegionOutArgs()));
  // The sizes' tensor.dim ops stay outside the terminator, which holds
  // nothing but the inserts.
  SmallVector<SliceAt> into;
  for (Value shared : forall.getRegionOutArgs())
    into.push_back(sliceOf(shared, ivs));
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [result, shared, at] :
       llvm::zip_equal(results, forall.getRegionOutArgs(), into))
    b.create<tensor::ParallelInsertSliceOp>(loc, result, shared, at.offsets,
                                            at.sizes, at.strides);
  return forall.getResults();
}
