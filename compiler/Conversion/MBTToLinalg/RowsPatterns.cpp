//===- RowsPatterns.cpp - merge_rows, split_rows and positions ------------===//
//
// merge_rows is a tensor.collapse_shape of the batch and position
// dimensions, split_rows a tensor.expand_shape back (memref views after
// bufferization, no copy); positions one generic writing each element's
// last index.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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

/// The inverse view: a tensor.expand_shape of the rows into [..., B, T, D],
/// its sizes those of `like` but for the last, the input's. The batch and
/// position sizes are both dynamic, which MLIR 19 bufferizes and lowers
/// only through mbt's own model and mbt-resolve-dynamic-expand-shapes.
struct SplitRowsPattern : public OpConversionPattern<SplitRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d + 1 < rank; ++d)
      sizes.push_back(
          tensor::getMixedSize(rewriter, loc, adaptor.getLike(), d));
    sizes.push_back(
        tensor::getMixedSize(rewriter, loc, adaptor.getInput(), rank - 2));
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, type, adaptor.getInput(), rowGroups(rank), sizes);
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
