//===- PrecisionPatterns.cpp - mixed precision to linalg ------------------===//
//
// mbt.round_to (values rounded to bf16 or f16 while they stay f32) and the
// dynamic loss scale of precision = f16: mbt.unscale_grads and
// mbt.update_loss_scale, each one elementwise linalg.generic (the unscaling
// two: the reciprocals per model, then the rows).
//
// The rounding is integer and f32 operations on the bits, not an
// arith.truncf to the format and back: LLVM lowers an f32 to bf16
// truncation on x86 to a libgcc call that Debian 12's GCC lacks, and the
// f16 one to a call per element where the CPU has no F16C; these loops
// vectorize on any x86-64 and give the same bits (checked value by value
// against c10's conversions, MixedPrecisionReferenceTest).
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

/// Builds the rounding of one f32 value to a narrower format.
class Rounding {
public:
  Rounding(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// The f32 bits of `x` with the low `dropped` mantissa bits rounded away,
  /// to nearest, ties to even: adding half the dropped range less one, plus
  /// the lowest kept bit, carries exactly when the dropped bits are above
  /// half, or at half with an odd kept part (what c10's conversions do).
  /// The carry may reach the exponent, which is the next binade's value.
  Value dropMantissaBits(Value x, int64_t dropped) {
    Value bits = b.create<arith::BitcastOp>(loc, b.getI32Type(), x);
    Value lowestKept = b.create<arith::AndIOp>(
        loc, b.create<arith::ShRUIOp>(loc, bits, i32(dropped)), i32(1));
    Value bias =
        b.create<arith::AddIOp>(loc, lowestKept, i32((1 << (dropped - 1)) - 1));
    Value rounded = b.create<arith::AndIOp>(
        loc, b.create<arith::AddIOp>(loc, bits, bias),
        i32(static_cast<int32_t>(~((1u << dropped) - 1))));
    return b.create<arith::BitcastOp>(loc, x.getType(), rounded);
  }

  /// bf16: f32's exponent range, 8 significant bits.
  Value toBF16(Value x) { return keepNaN(x, dropMantissaBits(x, 16)); }

  /// f16: 11 significant bits between 2^-14 and 65504, multiples of 2^-24
  /// below (subnormals), infinity from 65520 on (where ties round up).
  Value toF16(Value x) {
    Type f32 = x.getType();
    Value magnitude = b.create<math::AbsFOp>(loc, x);
    Value normal = dropMantissaBits(x, 13);
    Value overflows = b.create<arith::CmpFOp>(
        loc, arith::CmpFPredicate::OGT, b.create<math::AbsFOp>(loc, normal),
        floatConstant(b, loc, f32, 65504.0));
    Value infinity = b.create<math::CopySignOp>(
        loc,
        floatConstant(b, loc, f32, std::numeric_limits<double>::infinity()), x);
    normal = b.create<arith::SelectOp>(loc, overflows, infinity, normal);
    // Below 2^-14: |x| + 0.75 lies in [0.5, 1), where an f32's spacing is
    // 2^-24, so the addition rounds |x| to a multiple of 2^-24 (ties to
    // even: 0.75 is an even multiple); taking 0.75 away again is exact.
    Value offset = floatConstant(b, loc, f32, 0.75);
    Value subnormal = b.create<arith::SubFOp>(
        loc, b.create<arith::AddFOp>(loc, magnitude, offset), offset);
    subnormal = b.create<math::CopySignOp>(loc, subnormal, x);
    Value small =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, magnitude,
                                floatConstant(b, loc, f32, 0x1p-14));
    return keepNaN(x, b.create<arith::SelectOp>(loc, small, subnormal, normal));
  }

private:
  Value i32(int64_t v) {
    return b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(v));
  }
  /// `rounded`, or `x` where it is NaN (the carry could make it infinite).
  Value keepNaN(Value x, Value rounded) {
    Value isNan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
    return b.create<arith::SelectOp>(loc, isNan, x, rounded);
  }

  OpBuilder &b;
  Location loc;
};

struct RoundToPattern : public OpConversionPattern<RoundToOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RoundToOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildRoundTo(rewriter, op.getLoc(),
                                        adaptor.getInput(), op.getFormat()));
    return success();
  }
};

struct UnscaleGradsPattern : public OpConversionPattern<UnscaleGradsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UnscaleGradsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value scale = adaptor.getScale();
    auto scaleType = cast<RankedTensorType>(scale.getType());
    Type element = scaleType.getElementType();
    AffineMap id1 = rewriter.getMultiDimIdentityMap(1);
    // 1 / scale in f64, rounded to the gradients' type: GradScaler's
    // `_scale.double().reciprocal().float()`.
    Value inverse =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{scaleType}, ValueRange{scale},
                ValueRange{buildEmpty(rewriter, loc, scaleType, {{scale, 0}})},
                ArrayRef<AffineMap>{id1, id1}, iterators(1),
                [&](OpBuilder &b, Location l, ValueRange a) {
                  Value wide = a[0];
                  if (!element.isF64())
                    wide = b.create<arith::ExtFOp>(l, b.getF64Type(), wide);
                  Value one = floatConstant(b, l, b.getF64Type(), 1.0);
                  Value r = b.create<arith::DivFOp>(l, one, wide);
                  if (!element.isF64())
                    r = b.create<arith::TruncFOp>(l, element, r);
                  b.create<linalg::YieldOp>(l, ValueRange{r});
                })
            .getResult(0);
    Value grads = adaptor.getGrads();
    auto type = cast<RankedTensorType>(grads.getType());
    AffineMap id2 = rewriter.getMultiDimIdentityMap(2);
    AffineMap row = droppingMap(rewriter.getContext(), 2, {1});
    Value init = buildEmpty(rewriter, loc, type, {{grads, 0}, {grads, 1}});
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        op, TypeRange{type}, ValueRange{grads, inverse}, ValueRange{init},
        ArrayRef<AffineMap>{id2, row, id2}, iterators(2),
        [&](OpBuilder &b, Location l, ValueRange a) {
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::MulFOp>(l, a[0], a[1])});
        });
    return success();
  }
};

struct UpdateLossScalePattern : public OpConversionPattern<UpdateLossScaleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UpdateLossScaleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto stateType = cast<RankedTensorType>(op.getScale().getType());
    auto stepType = cast<RankedTensorType>(op.getStep().getType());
    Value step = adaptor.getStep();
    SmallVector<Value> inits;
    for (RankedTensorType type : {stateType, stateType, stateType, stepType})
      inits.push_back(buildEmpty(rewriter, loc, type, {{step, 0}}));
    double growth = op.getGrowthFactor().convertToDouble();
    double backoff = op.getBackoffFactor().convertToDouble();
    double interval = static_cast<double>(op.getGrowthInterval());
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{stateType, stateType, stateType, stepType},
        ValueRange{step, adaptor.getStepped(), adaptor.getReportedLoss(),
                   adaptor.getScale(), op.getGoodSteps(),
                   adaptor.getSkippedSteps()},
        inits, SmallVector<AffineMap>(10, rewriter.getMultiDimIdentityMap(1)),
        iterators(1), [&](OpBuilder &b, Location l, ValueRange a) {
          Value stepValue = a[0], stepped = a[1], loss = a[2], scale = a[3],
                good = a[4], skipped = a[5];
          Type f64 = stepValue.getType(), element = scale.getType();
          auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
            return b.create<arith::CmpFOp>(l, p, x, y);
          };
          auto select = [&](Value c, Value x, Value y) {
            return b.create<arith::SelectOp>(l, c, x, y);
          };
          auto constant = [&](double v) {
            return floatConstant(b, l, element, v);
          };
          Value zero64 = floatConstant(b, l, f64, 0.0);
          // Trains: asked to and did not diverge (the guard reports NaN).
          Value trains = b.create<arith::AndIOp>(
              l, cmp(arith::CmpFPredicate::ONE, stepValue, zero64),
              cmp(arith::CmpFPredicate::ORD, loss, loss));
          Value didStep = cmp(arith::CmpFPredicate::ONE, stepped, zero64);
          Value overflowed = b.create<arith::AndIOp>(
              l, trains,
              b.create<arith::XOrIOp>(
                  l, didStep,
                  b.create<arith::ConstantOp>(l, b.getBoolAttr(true))));
          // torch._amp_update_scale_: on overflow back off and restart the
          // count; else count, and grow (if finite) at the interval.
          Value counted = b.create<arith::AddFOp>(l, good, constant(1.0));
          Value atInterval =
              cmp(arith::CmpFPredicate::OEQ, counted, constant(interval));
          Value grown = b.create<arith::MulFOp>(l, scale, constant(growth));
          Value growthFinite =
              cmp(arith::CmpFPredicate::ONE, b.create<math::AbsFOp>(l, grown),
                  constant(std::numeric_limits<double>::infinity()));
          Value afterStep =
              select(atInterval, select(growthFinite, grown, scale), scale);
          Value goodAfterStep = select(atInterval, constant(0.0), counted);
          Value backedOff =
              b.create<arith::MulFOp>(l, scale, constant(backoff));
          Value newScale =
              select(trains, select(didStep, afterStep, backedOff), scale);
          Value newGood = select(
              trains, select(didStep, goodAfterStep, constant(0.0)), good);
          Value newSkipped = select(
              overflowed, b.create<arith::AddFOp>(l, skipped, constant(1.0)),
              skipped);
          // The optimizer's own count: the steps it took before this one.
          Value skippedBefore = skipped;
          if (element != f64)
            skippedBefore = b.create<arith::ExtFOp>(l, f64, skipped);
          Value optimizerStep = select(
              didStep, b.create<arith::SubFOp>(l, stepped, skippedBefore),
              zero64);
          b.create<linalg::YieldOp>(
              l, ValueRange{newScale, newGood, newSkipped, optimizerStep});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

Value mlir::mbt::buildRoundTo(OpBuilder &b, Location loc, Value tensor,
                              Type format) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value init = buildEmpty(b, loc, type, sizeSources(type, tensor));
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(type.getRank()));
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{type}, ValueRange{tensor}, ValueRange{init}, maps,
          iterators(type.getRank()),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(
                l, buildRoundedScalar(nb, l, args[0], format));
          })
      .getResult(0);
}

Value mlir::mbt::buildRoundedScalar(OpBuilder &b, Location loc, Value x,
                                    Type format) {
  Rounding rounding(b, loc);
  return format.isF16() ? rounding.toF16(x) : rounding.toBF16(x);
}

void mlir::mbt::populatePrecisionPatterns(RewritePatternSet &patterns) {
  patterns.add<RoundToPattern, UnscaleGradsPattern, UpdateLossScalePattern>(
      patterns.getContext());
}
