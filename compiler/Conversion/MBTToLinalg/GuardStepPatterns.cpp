//===- GuardStepPatterns.cpp - mbt.guard_step to linalg -------------------===//
//
// mbt.guard_step is a segmented "any non-finite" over the flat gradient
// buffer, then a select per model (one loop for the step, one for the
// reported loss). The test is on the bits (the exponent
// all ones: inf or NaN) and the per-row reduction an integer OR, which
// LLVM vectorizes; a floating-point formulation (a sum of g * 0, a chain
// of selects) would be a strict in-order reduction it cannot.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

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

struct GuardStepPattern : public OpConversionPattern<GuardStepOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GuardStepOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value grads = adaptor.getGrads();
    Value step = adaptor.getStep();
    auto stepType = cast<RankedTensorType>(op.getResult().getType());
    IntegerType flagType = rewriter.getI32Type();
    auto flagsType = RankedTensorType::get(stepType.getShape(), flagType);
    AffineMap id2 = rewriter.getMultiDimIdentityMap(2);
    AffineMap row = droppingMap(ctx, 2, {1});
    AffineMap id1 = rewriter.getMultiDimIdentityMap(1);

    // Per model: 1 if any gradient element is inf or NaN.
    Value zeros = buildFilled(rewriter, loc, flagsType, {{grads, 0}},
                              rewriter.getI32IntegerAttr(0));
    Value nonFinite =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{flagsType}, ValueRange{grads}, ValueRange{zeros},
                ArrayRef<AffineMap>{id2, row}, iterators(2, {1}),
                [&](OpBuilder &b, Location l, ValueRange a) {
                  Value bit = nonFiniteBit(b, l, a[0], flagType);
                  b.create<linalg::YieldOp>(
                      l, ValueRange{b.create<arith::OrIOp>(l, a[1], bit)});
                })
            .getResult(0);

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

void mlir::mbt::populateGuardStepPatterns(RewritePatternSet &patterns) {
  patterns.add<GuardStepPattern>(patterns.getContext());
}
