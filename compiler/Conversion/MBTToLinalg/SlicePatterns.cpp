//===- SlicePatterns.cpp - concat and slices to tensor slices -------------===//
//
// concat, slice and slice_grad move blocks of a tensor without computing:
// they become tensor.insert_slice / extract_slice, which bufferization
// turns into subviews and copies.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

using namespace mlir;
using namespace mlir::mbt;

/// The sizes of `v` (static or read with tensor.dim), with dim `axis`
/// replaced by `axisSize`.
static SmallVector<OpFoldResult> sizesWith(OpBuilder &b, Location loc, Value v,
                                           int64_t axis, int64_t axisSize) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  sizes[axis] = b.getIndexAttr(axisSize);
  return sizes;
}

/// Offsets that are 0 except `offset` at `axis`; unit strides.
static SmallVector<OpFoldResult> offsetsAt(OpBuilder &b, int64_t rank,
                                           int64_t axis, int64_t offset) {
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  offsets[axis] = b.getIndexAttr(offset);
  return offsets;
}

static SmallVector<OpFoldResult> unitStrides(OpBuilder &b, int64_t rank) {
  return SmallVector<OpFoldResult>(rank, b.getIndexAttr(1));
}

namespace {

struct ConcatPattern : public OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    int64_t rank = type.getRank(), axis = op.getAxis();
    Value result = buildEmptyLike(rewriter, loc, type, adaptor.getLhs());
    int64_t offset = 0;
    for (Value part : {adaptor.getLhs(), adaptor.getRhs()}) {
      int64_t size = cast<RankedTensorType>(part.getType()).getDimSize(axis);
      result = rewriter.create<tensor::InsertSliceOp>(
          loc, part, result, offsetsAt(rewriter, rank, axis, offset),
          sizesWith(rewriter, loc, part, axis, size),
          unitStrides(rewriter, rank));
      offset += size;
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SlicePattern : public OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = op.getType().getRank(), axis = op.getAxis();
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), adaptor.getInput(),
        offsetsAt(rewriter, rank, axis, op.getStart()),
        sizesWith(rewriter, loc, adaptor.getInput(), axis,
                  op.getEnd() - op.getStart()),
        unitStrides(rewriter, rank));
    return success();
  }
};

struct SliceGradPattern : public OpConversionPattern<SliceGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    int64_t rank = type.getRank(), axis = op.getAxis();
    Value zeros =
        buildFilledLike(rewriter, loc, type, adaptor.getLike(),
                        rewriter.getFloatAttr(type.getElementType(), 0.0));
    int64_t size = op.getGrad().getType().getDimSize(axis);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, adaptor.getGrad(), zeros,
        offsetsAt(rewriter, rank, axis, op.getStart()),
        sizesWith(rewriter, loc, adaptor.getGrad(), axis, size),
        unitStrides(rewriter, rank));
    return success();
  }
};

} // namespace

void mlir::mbt::populateSlicePatterns(RewritePatternSet &patterns) {
  patterns.add<ConcatPattern, SlicePattern, SliceGradPattern>(
      patterns.getContext());
}
