//===- NormPatterns.cpp - mbt.batch_norm to one elementwise linalg.generic ===//
//
// The evaluation form reads each channel's statistics through a map that
// drops the batch and spatial dims: (x - mean[c]) / sqrt(variance[c] + eps).
// The training form was already expanded into reductions and elementwise
// ops by mbt-autodiff, which lower on their own.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

struct BatchNormPattern : public OpConversionPattern<BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap perChannel =
        droppingMap(rewriter.getContext(), rank, op.getReducedAxes());
    Value init = buildEmpty(rewriter, loc, type,
                            sizeSources(type, ValueRange{adaptor.getInput()}));
    double epsilon = op.getEpsilon().convertToDouble();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type},
        ValueRange{adaptor.getInput(), adaptor.getMean(),
                   adaptor.getVariance()},
        ValueRange{init},
        SmallVector<AffineMap>{identity, perChannel, perChannel, identity},
        iterators(rank), [&](OpBuilder &b, Location l, ValueRange args) {
          Type element = args[0].getType();
          Value centered = b.create<arith::SubFOp>(l, args[0], args[1]);
          Value stddev = b.create<math::SqrtOp>(
              l, b.create<arith::AddFOp>(
                     l, args[2], floatConstant(b, l, element, epsilon)));
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::DivFOp>(l, centered, stddev)});
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void mlir::mbt::populateNormPatterns(RewritePatternSet &patterns) {
  patterns.add<BatchNormPattern>(patterns.getContext());
}
