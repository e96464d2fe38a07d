//===- MaskedMeanPatterns.cpp - mbt.masked_mean and its adjoint -----------===//
//
// Both are linalg.generic ops over the values' index space [L..., T, D].
// The count of real tokens per row is its own reduction over T, read by
// both. The mean adds up the real positions first and divides once, as
// torch's sum / n does; a pad position adds an exact 0, so a row gives the
// same bits whatever padding its step adds.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// Whether a token (i32) is real: not the pad token 0.
Value isReal(OpBuilder &b, Location l, Value token) {
  Value pad = b.create<arith::ConstantIntOp>(l, 0, 32);
  return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, token, pad);
}

/// max(1, real tokens) of every row of `tokens` [L..., T]: [L...], of
/// `element` type.
Value realTokenCounts(OpBuilder &b, Location loc, Value tokens,
                      FloatType element) {
  auto type = cast<RankedTensorType>(tokens.getType());
  int64_t rank = type.getRank();
  auto countType = RankedTensorType::get(type.getShape().drop_back(), element);
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t d = 0; d + 1 < rank; ++d)
    sources.push_back({tokens, d});
  Value zeros =
      buildFilled(b, loc, countType, sources, b.getFloatAttr(element, 0.0));
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                              droppingMap(b.getContext(), rank, {rank - 1})};
  Value counts =
      b.create<linalg::GenericOp>(
           loc, TypeRange{countType}, ValueRange{tokens}, ValueRange{zeros},
           maps, iterators(rank, {rank - 1}),
           [&](OpBuilder &nb, Location l, ValueRange a) {
             Value one = floatConstant(nb, l, element, 1.0);
             Value zero = floatConstant(nb, l, element, 0.0);
             Value add =
                 nb.create<arith::SelectOp>(l, isReal(nb, l, a[0]), one, zero);
             nb.create<linalg::YieldOp>(
                 l, ValueRange{nb.create<arith::AddFOp>(l, a[1], add)});
           })
          .getResult(0);
  // A row of padding alone divides by 1 (its sum is 0).
  Value init = buildEmpty(b, loc, countType, sources);
  AffineMap identity = b.getMultiDimIdentityMap(rank - 1);
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{countType}, ValueRange{counts}, ValueRange{init},
          SmallVector<AffineMap>{identity, identity}, iterators(rank - 1),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value one = floatConstant(nb, l, element, 1.0);
            nb.create<linalg::YieldOp>(
                l, ValueRange{nb.create<arith::MaximumFOp>(l, a[0], one)});
          })
      .getResult(0);
}

struct MaskedMeanPattern : public OpConversionPattern<MaskedMeanOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaskedMeanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value values = adaptor.getValues(), tokens = adaptor.getTokens();
    auto type = cast<RankedTensorType>(op.getType());
    auto element = cast<FloatType>(type.getElementType());
    int64_t rank = cast<RankedTensorType>(values.getType()).getRank();
    int64_t t = rank - 2, d = rank - 1;
    MLIRContext *ctx = rewriter.getContext();
    Value counts = realTokenCounts(rewriter, loc, tokens, element);

    // sum over T of the real positions: [L..., D].
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t i = 0; i < t; ++i)
      sources.push_back({values, i});
    sources.push_back({values, d});
    Value zeros = buildFilled(rewriter, loc, type, sources,
                              rewriter.getFloatAttr(element, 0.0));
    SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank),
                                droppingMap(ctx, rank, {d}),
                                droppingMap(ctx, rank, {t})};
    Value sums =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{type}, ValueRange{values, tokens},
                ValueRange{zeros}, maps, iterators(rank, {t}),
                [&](OpBuilder &b, Location l, ValueRange a) {
                  Value zero = floatConstant(b, l, element, 0.0);
                  Value add = b.create<arith::SelectOp>(l, isReal(b, l, a[1]),
                                                        a[0], zero);
                  b.create<linalg::YieldOp>(
                      l, ValueRange{b.create<arith::AddFOp>(l, a[2], add)});
                })
            .getResult(0);

    // sum / n, n broadcast over D.
    int64_t outRank = rank - 1;
    Value init = buildEmpty(rewriter, loc, type, sources);
    SmallVector<AffineMap> divMaps{rewriter.getMultiDimIdentityMap(outRank),
                                   droppingMap(ctx, outRank, {outRank - 1}),
                                   rewriter.getMultiDimIdentityMap(outRank)};
    auto divide = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{sums, counts}, ValueRange{init},
        divMaps, iterators(outRank),
        [&](OpBuilder &b, Location l, ValueRange a) {
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::DivFOp>(l, a[0], a[1])});
        });
    rewriter.replaceOp(op, divide.getResults());
    return success();
  }
};

struct MaskedMeanGradPattern : public OpConversionPattern<MaskedMeanGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaskedMeanGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value tokens = adaptor.getTokens(), grad = adaptor.getGrad(),
          like = adaptor.getLike();
    auto type = cast<RankedTensorType>(op.getType());
    auto element = cast<FloatType>(type.getElementType());
    int64_t rank = type.getRank(), t = rank - 2, d = rank - 1;
    MLIRContext *ctx = rewriter.getContext();
    Value counts = realTokenCounts(rewriter, loc, tokens, element);
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t i = 0; i < rank; ++i)
      sources.push_back({like, i});
    Value init = buildEmpty(rewriter, loc, type, sources);
    SmallVector<AffineMap> maps{
        droppingMap(ctx, rank, {d}), droppingMap(ctx, rank, {t}),
        droppingMap(ctx, rank, {t, d}), rewriter.getMultiDimIdentityMap(rank)};
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{tokens, grad, counts},
        ValueRange{init}, maps, iterators(rank),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value share = b.create<arith::DivFOp>(l, a[1], a[2]);
          Value zero = floatConstant(b, l, element, 0.0);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, isReal(b, l, a[0]),
                                                      share, zero)});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void mlir::mbt::populateMaskedMeanPatterns(RewritePatternSet &patterns) {
  patterns.add<MaskedMeanPattern, MaskedMeanGradPattern>(patterns.getContext());
}
