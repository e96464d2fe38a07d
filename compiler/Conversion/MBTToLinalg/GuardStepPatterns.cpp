//===- GuardStepPatterns.cpp - mbt.guard_step to linalg -------------------===//
//
// mbt.guard_step is a segmented "any non-finite" over the flat gradient
// buffer, then a select per model (one loop for the step, one for the
// reported loss). The test is on the bits (the exponent
// all ones: inf or NaN) and the per-row reduction an integer OR, which
// LLVM vectorizes; a floating-point formulation (a sum of g * 0, a chain
// of selects) would be a strict in-order reduction it cannot.
//
// On a GPU each reduction loop is one thread, so a model's row of P
// gradients would be P dependent memory round trips, whatever the number
// of models (15 ms of a 17 ms step on an H200). With `chunkRows` (the CUDA
// target) the row is padded with zeros to C chunks of L ~ sqrt(P), the
// chunks are reduced in parallel (M x C threads of L steps) and then their
// flags (M threads of C steps).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// 1 (of `flagType`) where the float `v` is inf or NaN, else 0.
Value nonFiniteBit(OpBuilder &b, Location loc, Value v, IntegerType flagType) {
  auto floatType = cast<FloatType>(v.getType());
  unsigned width = floatType.getWidth();
  auto bitsType = b.getIntegerType(width);
  APInt exponent =
      APInt::getBitsSet(width, floatType.getFPMantissaWidth() - 1, width - 1);
  Value bits = b.create<arith::BitcastOp>(loc, bitsType, v);
  Value mask =
      b.create<arith::ConstantOp>(loc, IntegerAttr::get(bitsType, exponent));
  Value masked = b.create<arith::AndIOp>(loc, bits, mask);
  Value all =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, masked, mask);
  return b.create<arith::ExtUIOp>(loc, flagType, all);
}

/// An integer OR of `bits(element)` along the last dimension of the 2-D
/// or 3-D tensor `values` into `flagsType` (its leading dimensions).
Value orAlongLastDim(OpBuilder &b, Location loc, Value values,
                     RankedTensorType flagsType,
                     function_ref<Value(OpBuilder &, Location, Value)> bits) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = cast<RankedTensorType>(values.getType()).getRank();
  SmallVector<std::pair<Value, int64_t>> dynamicSizes;
  for (int64_t d = 0; d < rank - 1; ++d)
    dynamicSizes.push_back({values, d});
  Value zeros = buildFilled(b, loc, flagsType, dynamicSizes,
                            b.getIntegerAttr(flagsType.getElementType(), 0));
  AffineMap all = b.getMultiDimIdentityMap(rank);
  AffineMap leading = droppingMap(ctx, rank, {rank - 1});
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{flagsType}, ValueRange{values}, ValueRange{zeros},
          ArrayRef<AffineMap>{all, leading}, iterators(rank, {rank - 1}),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value bit = bits(nb, l, a[0]);
            nb.create<linalg::YieldOp>(
                l, ValueRange{nb.create<arith::OrIOp>(l, a[1], bit)});
          })
      .getResult(0);
}

/// Per model: 1 if any element of its gradient row is inf or NaN. With
/// `chunkRows`, in two levels (file comment).
Value nonFiniteRows(OpBuilder &b, Location loc, Value grads,
                    RankedTensorType flagsType, bool chunkRows) {
  IntegerType flagType = cast<IntegerType>(flagsType.getElementType());
  auto nonFinite = [&](OpBuilder &nb, Location l, Value v) {
    return nonFiniteBit(nb, l, v, flagType);
  };
  auto gradsType = cast<RankedTensorType>(grads.getType());
  int64_t models = gradsType.getDimSize(0), row = gradsType.getDimSize(1);
  int64_t chunk = static_cast<int64_t>(std::ceil(std::sqrt(double(row))));
  if (!chunkRows || ShapedType::isDynamic(row) || chunk < 32)
    return orAlongLastDim(b, loc, grads, flagsType, nonFinite);
  int64_t chunks = llvm::divideCeil(row, chunk);
  Type elementType = gradsType.getElementType();
  Value padded = grads;
  if (chunks * chunk != row) {
    // Zeros are finite: the padding raises no flag.
    SmallVector<OpFoldResult> low(2, b.getIndexAttr(0));
    SmallVector<OpFoldResult> high{b.getIndexAttr(0),
                                   b.getIndexAttr(chunks * chunk - row)};
    padded = b.create<tensor::PadOp>(
        loc, RankedTensorType::get({models, chunks * chunk}, elementType),
        grads, low, high, floatConstant(b, loc, elementType, 0.0));
  }
  Value blocks = b.create<tensor::ExpandShapeOp>(
      loc, RankedTensorType::get({models, chunks, chunk}, elementType), padded,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  auto partialType = RankedTensorType::get({models, chunks}, flagType);
  Value partial = orAlongLastDim(b, loc, blocks, partialType, nonFinite);
  return orAlongLastDim(b, loc, partial, flagsType,
                        [](OpBuilder &, Location, Value flag) { return flag; });
}

struct GuardStepPattern : public OpConversionPattern<GuardStepOp> {
  GuardStepPattern(MLIRContext *ctx, bool chunkRows)
      : OpConversionPattern(ctx), chunkRows(chunkRows) {}
  bool chunkRows;

  LogicalResult
  matchAndRewrite(GuardStepOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value grads = adaptor.getGrads();
    Value step = adaptor.getStep();
    auto stepType = cast<RankedTensorType>(op.getResult().getType());
    IntegerType flagType = rewriter.getI32Type();
    auto flagsType = RankedTensorType::get(stepType.getShape(), flagType);
    AffineMap id1 = rewriter.getMultiDimIdentityMap(1);
    Value nonFinite = nonFiniteRows(rewriter, loc, grads, flagsType, chunkRows);

    // step, or 0 where the gradients or the loss are not finite; the
    // loss, or NaN there. Two loops, each with one use, so that elementwise
    // fusion can pull the step's into the fused update that reads it (on a
    // GPU: no kernel of its own).
    // With skip_overflow, only a non-finite loss is reported as NaN (a
    // model whose gradients alone are not finite overflowed its loss scale).
    Value loss = op.getLoss();
    auto lossType = cast<RankedTensorType>(loss.getType());
    bool skipOverflow = op.getSkipOverflow();
    auto perModel = [&](RankedTensorType type, Value like, bool stepResult) {
      Value init = buildEmpty(rewriter, loc, type, {{like, 0}});
      // The loop reads the gradients' flags unless it reports a loss under
      // skip_overflow; a[0] is the step, a.back() the loss either way.
      bool readsFlags = stepResult || !skipOverflow;
      SmallVector<Value> inputs{step};
      if (readsFlags)
        inputs.push_back(nonFinite);
      inputs.push_back(loss);
      return rewriter
          .create<linalg::GenericOp>(
              loc, TypeRange{type}, inputs, ValueRange{init},
              SmallVector<AffineMap>(inputs.size() + 1, id1), iterators(1),
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value stepValue = args[0], lossValue = args[args.size() - 2];
                Value lossBad = nonFiniteBit(b, l, lossValue, flagType);
                Value bad =
                    readsFlags
                        ? Value(b.create<arith::OrIOp>(l, args[1], lossBad))
                        : lossBad;
                Value zero =
                    b.create<arith::ConstantOp>(l, b.getI32IntegerAttr(0));
                Value none = floatConstant(b, l, stepValue.getType(), 0.0);
                Value finite = b.create<arith::CmpIOp>(
                    l, arith::CmpIPredicate::eq, bad, zero);
                Value steps = b.create<arith::AndIOp>(
                    l, finite,
                    b.create<arith::CmpFOp>(l, arith::CmpFPredicate::ONE,
                                            stepValue, none));
                Value kept =
                    stepResult
                        ? b.create<arith::SelectOp>(l, steps, stepValue, none)
                        : b.create<arith::SelectOp>(
                              l, steps, lossValue,
                              floatConstant(
                                  b, l, lossValue.getType(),
                                  std::numeric_limits<double>::quiet_NaN()));
                b.create<linalg::YieldOp>(l, ValueRange{kept});
              })
          .getResult(0);
    };
    rewriter.replaceOp(
        op, {perModel(stepType, step, true), perModel(lossType, loss, false)});
    return success();
  }
};

} // namespace

void mlir::mbt::populateGuardStepPatterns(RewritePatternSet &patterns,
                                          bool chunkRows) {
  patterns.add<GuardStepPattern>(patterns.getContext(), chunkRows);
}
