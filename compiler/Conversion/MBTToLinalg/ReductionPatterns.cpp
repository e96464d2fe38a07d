//===- ReductionPatterns.cpp - sums and broadcasts to linalg.generic ------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::mbt;

/// Sums `input` over `axes` into a tensor of the remaining dims.
static Value buildSum(PatternRewriter &rewriter, Location loc, Value input,
                      ArrayRef<int64_t> axes) {
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t rank = inType.getRank();
  SmallVector<int64_t> shape;
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d)) {
      shape.push_back(inType.getDimSize(d));
      sources.push_back({input, d});
    }
  auto outType = RankedTensorType::get(shape, inType.getElementType());
  Value init = buildFilled(rewriter, loc, outType, sources,
                           rewriter.getF32FloatAttr(0.0f));
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank),
                              droppingMap(ctx, rank, axes)};
  auto generic = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{outType}, ValueRange{input}, ValueRange{init}, maps,
      iterators(rank, axes), [](OpBuilder &b, Location l, ValueRange args) {
        b.create<linalg::YieldOp>(
            l, ValueRange{b.create<arith::AddFOp>(l, args[1], args[0])});
      });
  return generic.getResult(0);
}

namespace {

struct ReduceSumPattern : public OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceSumOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       buildSum(rewriter, op.getLoc(), op.getInput(), op.getAxes()));
    return success();
  }
};

/// Sum over the broadcast dims, then put their unit dims back.
struct UnbroadcastPattern : public OpRewritePattern<UnbroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(UnbroadcastOp op,
                                PatternRewriter &rewriter) const override {
    auto in = op.getInput().getType();
    auto out = op.getType();
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < in.getRank(); ++d)
      if (out.getDimSize(d) == 1 && in.getDimSize(d) != 1)
        axes.push_back(d);
    Value sum = buildSum(rewriter, op.getLoc(), op.getInput(), axes);
    rewriter.replaceOp(op, expandUnitDims(rewriter, op.getLoc(), sum, out, axes));
    return success();
  }
};

struct BroadcastPattern : public OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    int64_t rank = type.getRank();
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t d = 0; d < rank; ++d)
      sources.push_back({op.getLike(), d});
    Value init = buildEmpty(rewriter, loc, type, sources);
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps{droppingMap(ctx, rank, op.getDims()),
                                rewriter.getMultiDimIdentityMap(rank)};
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{op.getInput()}, ValueRange{init}, maps,
        iterators(rank), [](OpBuilder &b, Location l, ValueRange args) {
          b.create<linalg::YieldOp>(l, ValueRange{args[0]});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void mlir::mbt::populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceSumPattern, UnbroadcastPattern, BroadcastPattern>(
      patterns.getContext());
}
