//===- RecurrentBuilder.cpp - the pieces of recurrent layers' lowering ----===//
#include "compiler/Conversion/MBTToLinalg/RecurrentBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::mbt;

RecurrentBuilder::RecurrentBuilder(OpBuilder &b, Location loc, Value inputs,
                                   Value weight, int64_t gates)
    : b(b), loc(loc), inputs(inputs), gates(gates) {
  auto weightType = cast<RankedTensorType>(weight.getType());
  p = weightType.getRank() - 2;
  hidden = weightType.getDimSize(p);
  element = cast<FloatType>(weightType.getElementType());
}

RankedTensorType RecurrentBuilder::rowsType(int64_t width) {
  auto type = cast<RankedTensorType>(inputs.getType());
  SmallVector<int64_t> shape(type.getShape().take_front(p + 1));
  shape.push_back(width);
  return RankedTensorType::get(shape, element);
}

SmallVector<std::pair<Value, int64_t>> RecurrentBuilder::rowsSources() {
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t d = 0; d <= p; ++d)
    sources.push_back({inputs, d});
  sources.push_back({inputs, p + 2}); // static
  return sources;
}

Value RecurrentBuilder::zeros(RankedTensorType type,
                              ArrayRef<std::pair<Value, int64_t>> sources) {
  return buildFilled(b, loc, type, sources, b.getFloatAttr(element, 0.0));
}

Value RecurrentBuilder::zerosLike(Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  return buildFilledLike(b, loc, type, like, b.getFloatAttr(element, 0.0));
}

void RecurrentBuilder::sliceAt(Value v, Value t,
                               SmallVectorImpl<OpFoldResult> &offsets,
                               SmallVectorImpl<OpFoldResult> &sizes,
                               SmallVectorImpl<OpFoldResult> &strides) {
  auto type = cast<RankedTensorType>(v.getType());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsets.push_back(d == p + 1 ? OpFoldResult(t) : b.getIndexAttr(0));
    if (d == p + 1)
      sizes.push_back(b.getIndexAttr(1));
    else if (type.isDynamicDim(d))
      sizes.push_back(b.create<tensor::DimOp>(loc, v, d).getResult());
    else
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    strides.push_back(b.getIndexAttr(1));
  }
}

Value RecurrentBuilder::at(Value v, Value t) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  sliceAt(v, t, offsets, sizes, strides);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != p + 1)
      shape.push_back(type.getDimSize(d));
  auto sliceType = RankedTensorType::get(shape, type.getElementType());
  return b.create<tensor::ExtractSliceOp>(loc, sliceType, v, offsets, sizes,
                                          strides);
}

Value RecurrentBuilder::put(Value slice, Value dest, Value t) {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  sliceAt(dest, t, offsets, sizes, strides);
  return b.create<tensor::InsertSliceOp>(loc, slice, dest, offsets, sizes,
                                         strides);
}

SmallVector<Value> RecurrentBuilder::adjointInits(Value weight, Value bias) {
  auto type = cast<RankedTensorType>(inputs.getType());
  return {buildEmptyLike(b, loc, type, inputs), zerosLike(weight),
          zerosLike(bias)};
}

Value RecurrentBuilder::emptyPositions(RankedTensorType type) {
  return buildEmptyLike(b, loc, type, inputs);
}

Value RecurrentBuilder::previous(Value all, Value t, Value none) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value any = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, t, zero);
  Value index = b.create<arith::SelectOp>(
      loc, any, b.create<arith::SubIOp>(loc, t, one), zero);
  return b.create<arith::SelectOp>(loc, any, at(all, index), none);
}

ValueRange RecurrentBuilder::loop(
    ValueRange inits, bool backward,
    function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value steps = b.create<tensor::DimOp>(loc, inputs, p + 1);
  Value last = b.create<arith::SubIOp>(loc, steps, one);
  auto forOp = b.create<scf::ForOp>(
      loc, zero, steps, one, inits,
      [&](OpBuilder &lb, Location l, Value s, ValueRange carried) {
        // `b` is the builder the patterns hand in, now inside the body.
        Value t =
            backward ? b.create<arith::SubIOp>(l, last, s).getResult() : s;
        b.create<scf::YieldOp>(l, body(t, carried));
      });
  return forOp.getResults();
}

Value RecurrentBuilder::matmul(Value lhs, Value weight, Value init,
                               bool transposeWeight) {
  SmallVector<Value, 2> ins{lhs, weight};
  Type type = init.getType();
  if (p == 0)
    return transposeWeight
               ? b.create<linalg::MatmulTransposeBOp>(loc, type, ins, init)
                     .getResult(0)
               : b.create<linalg::MatmulOp>(loc, type, ins, init).getResult(0);
  return transposeWeight
             ? b.create<linalg::BatchMatmulTransposeBOp>(loc, type, ins, init)
                   .getResult(0)
             : b.create<linalg::BatchMatmulOp>(loc, type, ins, init)
                   .getResult(0);
}

Value RecurrentBuilder::weightGradient(Value h, Value g, Value init) {
  SmallVector<Value, 2> ins{h, g};
  Type type = init.getType();
  if (p == 0)
    return b.create<linalg::MatmulTransposeAOp>(loc, type, ins, init)
        .getResult(0);
  return b.create<linalg::BatchMatmulTransposeAOp>(loc, type, ins, init)
      .getResult(0);
}

Value RecurrentBuilder::biasGradient(Value g, Value init) {
  int64_t loops = p + 2; // (P..., B, c)
  SmallVector<AffineExpr> exprs = leading(p);
  exprs.push_back(b.getAffineDimExpr(p + 1));
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{init.getType()}, ValueRange{g}, ValueRange{init},
          SmallVector<AffineMap>{
              b.getMultiDimIdentityMap(loops),
              AffineMap::get(loops, 0, exprs, b.getContext())},
          iterators(loops, {p}),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            nb.create<linalg::YieldOp>(
                nl, ValueRange{nb.create<arith::AddFOp>(nl, a[1], a[0])});
          })
      .getResult(0);
}

SmallVector<Value> RecurrentBuilder::gatesOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = hidden;
  auto gateType = RankedTensorType::get(shape, type.getElementType());
  SmallVector<Value> slices;
  for (int64_t k = 0; k < type.getShape().back() / hidden; ++k) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
        strides(rank, b.getIndexAttr(1));
    offsets.back() = b.getIndexAttr(k * hidden);
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(
          d + 1 == rank ? b.getIndexAttr(hidden)
          : type.isDynamicDim(d)
              ? OpFoldResult(b.create<tensor::DimOp>(loc, v, d).getResult())
              : b.getIndexAttr(type.getDimSize(d)));
    slices.push_back(b.create<tensor::ExtractSliceOp>(loc, gateType, v, offsets,
                                                      sizes, strides));
  }
  return slices;
}

Value RecurrentBuilder::concat(ArrayRef<Value> parts, Value into) {
  RankedTensorType type = rowsType(hidden);
  int64_t rank = type.getRank();
  Value joined =
      into ? into : buildEmpty(b, loc, rowsType(gates * hidden), rowsSources());
  for (auto [k, part] : llvm::enumerate(parts)) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
        strides(rank, b.getIndexAttr(1));
    offsets.back() = b.getIndexAttr(k * hidden);
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(
          type.isDynamicDim(d)
              ? OpFoldResult(b.create<tensor::DimOp>(loc, part, d).getResult())
              : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
    joined = b.create<tensor::InsertSliceOp>(loc, part, joined, offsets, sizes,
                                             strides);
  }
  return joined;
}

SmallVector<Value> RecurrentBuilder::gateOperands(Value gx, Value gh,
                                                  Value bias) {
  SmallVector<Value> operands = gatesOf(gx);
  llvm::append_range(operands, gatesOf(gh));
  llvm::append_range(operands, gatesOf(bias));
  return operands;
}

SmallVector<AffineMap> RecurrentBuilder::gateMaps() {
  SmallVector<AffineMap> maps(2 * gates, row());
  maps.append(gates, biasRow());
  return maps;
}

AffineMap RecurrentBuilder::row() { return b.getMultiDimIdentityMap(p + 2); }

AffineMap RecurrentBuilder::biasRow() {
  SmallVector<AffineExpr> exprs = leading(p);
  exprs.push_back(b.getAffineDimExpr(p + 1));
  return AffineMap::get(p + 2, 0, exprs, b.getContext());
}

AffineMap RecurrentBuilder::token() {
  return AffineMap::get(p + 2, 0, leading(p + 1), b.getContext());
}

Value RecurrentBuilder::isReal(OpBuilder &nb, Location l, Value token) {
  Value pad = nb.create<arith::ConstantIntOp>(l, 0, 32);
  return nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, token, pad);
}

Value RecurrentBuilder::sigmoid(OpBuilder &nb, Location l, Value x) {
  Value one = floatConstant(nb, l, x.getType(), 1.0);
  Value e = nb.create<math::ExpOp>(l, nb.create<arith::NegFOp>(l, x));
  return nb.create<arith::DivFOp>(l, one, nb.create<arith::AddFOp>(l, one, e));
}

SmallVector<AffineExpr> RecurrentBuilder::leading(int64_t count) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < count; ++d)
    exprs.push_back(b.getAffineDimExpr(d));
  return exprs;
}

SmallVector<Value> RecurrentBuilder::perModel(
    ValueRange inputs, ValueRange outputs, bool enabled,
    function_ref<SmallVector<Value>(ValueRange, ValueRange)> body) {
  if (!enabled || p != 1)
    return body(inputs, outputs);
  // The slice [model : model + 1, ...] of a tensor: the model dim stays, of
  // size 1, so that the scan's products remain batched matmuls (what
  // mbt-linalg-to-blas hands to BLAS) of one model.
  auto modelSlice = [&](Value v, ValueRange model) {
    auto type = cast<RankedTensorType>(v.getType());
    SliceAt at;
    SmallVector<int64_t> shape(type.getShape());
    shape.front() = 1;
    at.type = RankedTensorType::get(shape, type.getElementType());
    for (int64_t d = 0; d < type.getRank(); ++d) {
      at.offsets.push_back(d == 0 ? OpFoldResult(model.front())
                                  : b.getIndexAttr(0));
      at.sizes.push_back(d == 0 ? b.getIndexAttr(1)
                                : tensor::getMixedSize(b, loc, v, d));
      at.strides.push_back(b.getIndexAttr(1));
    }
    return at;
  };
  return buildForallOverSlices(
      b, loc, {tensor::getMixedSize(b, loc, inputs.front(), 0)}, inputs,
      outputs, modelSlice, body);
}
