//===- ClipPatterns.cpp - per-model gradient clipping to linalg -----------===//
//
// mbt.clip_grad_norm is a segmented reduction over the flat gradient
// buffer: one sum of squares per model row, then one scaling loop. Both
// run in float32, as torch.nn.utils.clip_grad_norm_ does.
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

struct ClipGradNormPattern : public OpConversionPattern<ClipGradNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ClipGradNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value grads = adaptor.getGrads();
    auto type = op.getType();
    int64_t models = type.getDimSize(0);
    MLIRContext *ctx = rewriter.getContext();
    auto elem = cast<FloatType>(type.getElementType());
    auto rowType = RankedTensorType::get({models}, elem);
    AffineMap id2 = rewriter.getMultiDimIdentityMap(2);
    AffineMap row = droppingMap(ctx, 2, {1});
    AffineMap id1 = rewriter.getMultiDimIdentityMap(1);

    // Sum of squares of each model's row.
    Value zeros = buildFilled(rewriter, loc, rowType, {{grads, 0}},
                              rewriter.getFloatAttr(elem, 0.0));
    Value sumSquares =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{rowType}, ValueRange{grads}, ValueRange{zeros},
                ArrayRef<AffineMap>{id2, row}, iterators(2, {1}),
                [](OpBuilder &b, Location l, ValueRange a) {
                  Value sq = b.create<arith::MulFOp>(l, a[0], a[0]);
                  b.create<linalg::YieldOp>(
                      l, ValueRange{b.create<arith::AddFOp>(l, a[1], sq)});
                })
            .getResult(0);

    // coef = min(1, max_norm / (norm + 1e-6)), per model.
    Value empty = buildEmpty(rewriter, loc, rowType, {{grads, 0}});
    Value coef =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{rowType},
                ValueRange{sumSquares, op.getMaxNorm()}, ValueRange{empty},
                ArrayRef<AffineMap>{id1, id1, id1}, iterators(1),
                [&](OpBuilder &b, Location l, ValueRange a) {
                  Value norm = b.create<math::SqrtOp>(l, a[0]);
                  Value eps = floatConstant(b, l, elem, 1e-6);
                  Value one = floatConstant(b, l, elem, 1.0);
                  // max_norm is a double hyperparameter; torch divides in
                  // the gradients' type.
                  Value maxNorm =
                      elem.getWidth() < 64
                          ? b.create<arith::TruncFOp>(l, elem, a[1]).getResult()
                          : a[1];
                  Value c = b.create<arith::DivFOp>(
                      l, maxNorm, b.create<arith::AddFOp>(l, norm, eps));
                  b.create<linalg::YieldOp>(
                      l, ValueRange{b.create<arith::MinimumFOp>(l, c, one)});
                })
            .getResult(0);

    // grads * coef, row by row.
    Value out = buildEmpty(rewriter, loc, type, {{grads, 0}, {grads, 1}});
    rewriter.replaceOp(
        op,
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{type}, ValueRange{grads, coef}, ValueRange{out},
                ArrayRef<AffineMap>{id2, row, id2}, iterators(2),
                [](OpBuilder &b, Location l, ValueRange a) {
                  b.create<linalg::YieldOp>(
                      l, ValueRange{b.create<arith::MulFOp>(l, a[0], a[1])});
                })
            .getResult(0));
    return success();
  }
};

} // namespace

void mlir::mbt::populateClipPatterns(RewritePatternSet &patterns) {
  patterns.add<ClipGradNormPattern>(patterns.getContext());
}
