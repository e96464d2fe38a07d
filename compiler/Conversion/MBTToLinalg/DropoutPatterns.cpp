//===- DropoutPatterns.cpp - mbt.dropout to a linalg.generic with Philox --===//
//
// The training form becomes one elementwise linalg.generic whose body draws
// each element's random word with Philox4x32-10 from (model seed, call
// site, step, element index) — mbt::dropoutBits, the generator the
// runtime's tests check it against — so no mask is stored: the gradient's
// copy of the op draws the same words again. The evaluation form is the
// identity.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"
#include "mbt/common/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

Value i32Constant(OpBuilder &b, Location loc, uint32_t value) {
  return b.create<arith::ConstantOp>(
      loc, b.getI32IntegerAttr(static_cast<int32_t>(value)));
}

/// Word 0 of philox4x32x10(counter, key) (Random123's round function, as
/// mbt::philox4x32x10): ten rounds of two 32x32->64 products, but the last
/// round's word 0 needs only one of them (and not the second key word).
Value philoxWord0(OpBuilder &b, Location loc, std::array<Value, 4> c,
                  std::array<Value, 2> k) {
  Value m0 = i32Constant(b, loc, 0xD2511F53),
        m1 = i32Constant(b, loc, 0xCD9E8D57);
  Value w0 = i32Constant(b, loc, 0x9E3779B9),
        w1 = i32Constant(b, loc, 0xBB67AE85);
  constexpr int kRounds = 10;
  for (int round = 0;; ++round) {
    bool last = round == kRounds - 1;
    if (round > 0) {
      k[0] = b.create<arith::AddIOp>(loc, k[0], w0);
      if (!last)
        k[1] = b.create<arith::AddIOp>(loc, k[1], w1);
    }
    arith::MulUIExtendedOp p0;
    if (!last)
      p0 = b.create<arith::MulUIExtendedOp>(loc, m0, c[0]);
    auto p1 = b.create<arith::MulUIExtendedOp>(loc, m1, c[2]);
    Value x0 = b.create<arith::XOrIOp>(
        loc, b.create<arith::XOrIOp>(loc, p1.getHigh(), c[1]), k[0]);
    if (last)
      return x0;
    Value x2 = b.create<arith::XOrIOp>(
        loc, b.create<arith::XOrIOp>(loc, p0.getHigh(), c[3]), k[1]);
    c = {x0, p1.getLow(), x2, p0.getLow()};
  }
}

struct DropoutPattern : public OpConversionPattern<DropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.isTraining()) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank();
    int64_t prefix = cast<RankedTensorType>(op.getRate().getType()).getRank();
    // The dims the draw is indexed by: those after the per-model prefix and
    // before the trailing dims that share a draw (dropout2d's planes).
    int64_t drawn = type.getRank() - static_cast<int64_t>(op.getSharedDims());
    MLIRContext *ctx = rewriter.getContext();

    // The sizes of the per-model dims but the first, to linearize the
    // element index.
    SmallVector<Value> sizes(rank);
    for (int64_t d = prefix + 1; d < drawn; ++d)
      sizes[d] = type.isDynamicDim(d)
                     ? Value(rewriter.create<tensor::DimOp>(
                           loc, adaptor.getInput(), d))
                     : Value(rewriter.create<arith::ConstantIndexOp>(
                           loc, type.getDimSize(d)));

    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    SmallVector<int64_t> perModelDims;
    for (int64_t d = prefix; d < rank; ++d)
      perModelDims.push_back(d);
    AffineMap perModel = droppingMap(ctx, rank, perModelDims);
    SmallVector<AffineMap> maps{identity, perModel, perModel, perModel,
                                identity};
    Value init = buildEmpty(rewriter, loc, type,
                            sizeSources(type, ValueRange{adaptor.getInput()}));
    Type element = type.getElementType();
    uint32_t site = static_cast<uint32_t>(op.getSite());
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type},
        ValueRange{adaptor.getInput(), adaptor.getRate(), adaptor.getKey()[0],
                   adaptor.getKey()[1]},
        ValueRange{init}, maps, iterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], rate = args[1], seed = args[2], step = args[3];
          // Row-major index of this element within its model's slice.
          Value index = prefix < drawn
                            ? Value(b.create<linalg::IndexOp>(l, prefix))
                            : Value(b.create<arith::ConstantIndexOp>(l, 0));
          for (int64_t d = prefix + 1; d < drawn; ++d) {
            index = b.create<arith::MulIOp>(l, index, sizes[d]);
            index = b.create<arith::AddIOp>(l, index,
                                            b.create<linalg::IndexOp>(l, d));
          }
          Type i32 = b.getI32Type(), i64 = b.getI64Type();
          Value e = b.create<arith::IndexCastUIOp>(l, i32, index);
          Value stepWord = b.create<arith::TruncIOp>(
              l, i32, b.create<arith::FPToUIOp>(l, i64, step));
          Value seedLo = b.create<arith::TruncIOp>(l, i32, seed);
          Value seedHi = b.create<arith::TruncIOp>(
              l, i32,
              b.create<arith::ShRUIOp>(
                  l, seed,
                  b.create<arith::ConstantOp>(l, b.getI64IntegerAttr(32))));
          Value word = philoxWord0(b, l,
                                   {e, i32Constant(b, l, site), stepWord,
                                    i32Constant(b, l, ::mbt::kDropoutDomain)},
                                   {seedLo, seedHi});
          // u = (word >> 8) * 2^-24, exact in f32 and f64.
          Value top = b.create<arith::ShRUIOp>(l, word, i32Constant(b, l, 8));
          Value u = b.create<arith::MulFOp>(
              l, b.create<arith::UIToFPOp>(l, element, top),
              floatConstant(b, l, element, 1.0 / 16777216.0));
          Value keep =
              b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGE, u, rate);
          Value one = floatConstant(b, l, element, 1.0);
          Value scale = b.create<arith::DivFOp>(
              l, one, b.create<arith::SubFOp>(l, one, rate));
          Value scaled = b.create<arith::MulFOp>(l, x, scale);
          Value zero = floatConstant(b, l, element, 0.0);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, keep, scaled, zero)});
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void mlir::mbt::populateDropoutPatterns(RewritePatternSet &patterns) {
  patterns.add<DropoutPattern>(patterns.getContext());
}
