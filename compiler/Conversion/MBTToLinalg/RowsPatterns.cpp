//===- RowsPatterns.cpp - merge_rows, split_rows and positions ------------===//
//
// merge_rows is a tensor.collapse_shape of the batch and position
// dimensions (a memref view after bufferization, no copy); split_rows a
// generic copying each row back (see below); positions one generic writing
// each element's last index.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// [[0], ..., [rank - 3, rank - 2], [rank - 1]] for a split rank `rank`.
SmallVector<ReassociationIndices> rowGroups(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 3 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 3, rank - 2});
  groups.push_back({rank - 1});
  return groups;
}

struct MergeRowsPattern : public OpConversionPattern<MergeRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MergeRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t rank = op.getInput().getType().getRank();
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, op.getType(), adaptor.getInput(), rowGroups(rank));
    return success();
  }
};

/// A copy rather than a tensor.expand_shape: the batch and position
/// sizes are both dynamic, and one-shot bufferization (MLIR 19) builds the
/// memref.expand_shape by inferring its sizes, which it cannot for two
/// dynamic sizes in one group. Each element reads its row b * T + t.
struct SplitRowsPattern : public OpConversionPattern<SplitRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    int64_t rank = type.getRank();
    Value input = adaptor.getInput(), like = adaptor.getLike();
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t d = 0; d + 1 < rank; ++d)
      sources.push_back({like, d});
    sources.push_back({input, rank - 2});
    Value init = buildEmpty(rewriter, loc, type, sources);
    Value positions = rewriter.create<tensor::DimOp>(loc, like, rank - 2);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        iterators(rank), [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> at;
          for (int64_t d = 0; d + 3 < rank; ++d)
            at.push_back(b.create<linalg::IndexOp>(l, d));
          Value sample = b.create<linalg::IndexOp>(l, rank - 3);
          Value position = b.create<linalg::IndexOp>(l, rank - 2);
          at.push_back(b.create<arith::AddIOp>(
              l, b.create<arith::MulIOp>(l, sample, positions), position));
          at.push_back(b.create<linalg::IndexOp>(l, rank - 1));
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<tensor::ExtractOp>(l, input, at)});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct PositionsPattern : public OpConversionPattern<PositionsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PositionsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = op.getType();
    int64_t rank = type.getRank();
    Value init =
        buildEmptyLike(rewriter, op.getLoc(), type, adaptor.getTokens());
    auto generic = rewriter.create<linalg::GenericOp>(
        op.getLoc(), TypeRange{type}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(rank)},
        iterators(rank), [&](OpBuilder &b, Location l, ValueRange) {
          Value t = b.create<linalg::IndexOp>(l, rank - 1);
          b.create<linalg::YieldOp>(l, ValueRange{b.create<arith::IndexCastOp>(
                                           l, b.getI32Type(), t)});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void mlir::mbt::populateRowsPatterns(RewritePatternSet &patterns) {
  patterns.add<MergeRowsPattern, SplitRowsPattern, PositionsPattern>(
      patterns.getContext());
}
