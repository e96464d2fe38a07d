//===- PoolPatterns.cpp - max and average pooling to gathers
//---------------===//
//
// Each pooling is one all-parallel linalg.generic over its result whose body
// reads the window's taps (unrolled: kernels are small and static); each
// adjoint one over the input whose body reads, for every tap, the window
// position that reads this element (WindowBuilders.h). Max pooling also
// writes where each maximum was, which its adjoint compares against.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "compiler/Conversion/MBTToLinalg/WindowBuilders.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <limits>

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// The sizes of one pooling: the plane [H, W], the window and the pooled
/// plane [OH, OW].
struct PoolGeometry {
  int64_t height, width, kh, kw, sh, sw, ph, pw, oh, ow;

  template <typename OpTy>
  static PoolGeometry of(OpTy op, RankedTensorType input,
                         RankedTensorType pooled) {
    int64_t r = input.getRank();
    return {input.getDimSize(r - 2),  input.getDimSize(r - 1),
            op.getKernel()[0],        op.getKernel()[1],
            op.getStride()[0],        op.getStride()[1],
            op.getPadding()[0],       op.getPadding()[1],
            pooled.getDimSize(r - 2), pooled.getDimSize(r - 1)};
  }
};

/// Every dim's size from the same dim of `v` (the leading dims agree).
SmallVector<std::pair<Value, int64_t>> sameDimsOf(Value v, int64_t rank) {
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t d = 0; d < rank; ++d)
    sources.push_back({v, d});
  return sources;
}

/// `indices` (the leading ones of a loop nest) with `row`, `col` appended.
SmallVector<Value> at(ArrayRef<Value> indices, Value row, Value col) {
  SmallVector<Value> result(indices.drop_back(2));
  result.push_back(row);
  result.push_back(col);
  return result;
}

/// Visits the taps of the window at the loop indices `i` in row-major order:
/// each tap's (clamped) plane position, its element of `x` and whether it
/// lies inside the unpadded plane.
void forEachTap(
    OpBuilder &b, Location l, Value x, ArrayRef<Value> i, const PoolGeometry &g,
    function_ref<void(Value row, Value col, Value v, Value inside)> visit) {
  int64_t rank = static_cast<int64_t>(i.size());
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    auto [row, rowIn] = tapSource(b, l, i[rank - 2], g.sh,
                                  indexConstant(b, l, kh), g.ph, g.height);
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      auto [col, colIn] = tapSource(b, l, i[rank - 1], g.sw,
                                    indexConstant(b, l, kw), g.pw, g.width);
      Value v = b.create<tensor::ExtractOp>(l, x, at(i, row, col));
      visit(row, col, v, b.create<arith::AndIOp>(l, rowIn, colIn));
    }
  }
}

struct MaxPool2dPattern : public OpConversionPattern<MaxPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto xType = cast<RankedTensorType>(x.getType());
    auto type = cast<RankedTensorType>(op.getResult().getType());
    auto indexType = cast<RankedTensorType>(op.getIndices().getType());
    auto g = PoolGeometry::of(op, xType, type);
    int64_t rank = type.getRank();
    Type element = type.getElementType();
    Value values = buildEmpty(rewriter, loc, type, sameDimsOf(x, rank));
    Value indices = buildEmpty(rewriter, loc, indexType, sameDimsOf(x, rank));
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type, indexType}, ValueRange{},
        ValueRange{values, indices}, ArrayRef<AffineMap>{identity, identity},
        iterators(rank), [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> i = loopIndices(b, l, rank);
          Value best = floatConstant(b, l, element,
                                     -std::numeric_limits<double>::infinity());
          Value where = b.create<arith::ConstantOp>(l, b.getI32IntegerAttr(-1));
          // Row-major over the window; a later tap wins only when larger
          // or NaN (PyTorch's CPU kernel: `val > maxval || isnan(val)`).
          forEachTap(
              b, l, x, i, g, [&](Value row, Value col, Value v, Value inside) {
                Value larger = b.create<arith::OrIOp>(
                    l,
                    b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, v,
                                            best),
                    b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, v,
                                            v));
                Value take = b.create<arith::AndIOp>(l, inside, larger);
                Value flat = b.create<arith::AddIOp>(
                    l,
                    b.create<arith::MulIOp>(l, row,
                                            indexConstant(b, l, g.width)),
                    col);
                best = b.create<arith::SelectOp>(l, take, v, best);
                where = b.create<arith::SelectOp>(
                    l, take,
                    b.create<arith::IndexCastOp>(l, b.getI32Type(), flat),
                    where);
              });
          b.create<linalg::YieldOp>(l, ValueRange{best, where});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// The adjoint of a pooling: for each input element, the sum over the taps
/// (kh, kw) of `contribution` at the window position that reads the element
/// with that tap, where there is one.
Value buildPoolAdjoint(OpBuilder &rewriter, Location loc, Value like,
                       const PoolGeometry &g,
                       function_ref<Value(OpBuilder &, Location,
                                          ArrayRef<Value> window, Value flat)>
                           contribution) {
  auto type = cast<RankedTensorType>(like.getType());
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  return buildGather(
      rewriter, loc, type, sameDimsOf(like, rank), {}, {},
      [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> i = loopIndices(b, l, rank);
        Value flat = b.create<arith::AddIOp>(
            l,
            b.create<arith::MulIOp>(l, i[rank - 2],
                                    indexConstant(b, l, g.width)),
            i[rank - 1]);
        Value zero = floatConstant(b, l, element, 0.0);
        if (g.sh >= g.kh && g.sw >= g.kw && g.ph == 0 && g.pw == 0) {
          // Windows that do not overlap (the usual kernel 2, stride 2): the
          // one window reading (ih, iw) is (ih / sh, iw / sw), when the tap
          // (ih % sh, iw % sw) is inside the kernel and the window exists.
          auto window = [&](Value pos, int64_t stride, int64_t kernel,
                            int64_t positions) -> std::pair<Value, Value> {
            Value s = indexConstant(b, l, stride);
            Value q = b.create<arith::DivUIOp>(l, pos, s);
            Value ok = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, q,
                                               indexConstant(b, l, positions));
            if (stride > kernel)
              ok = b.create<arith::AndIOp>(
                  l, ok,
                  b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult,
                                          b.create<arith::RemUIOp>(l, pos, s),
                                          indexConstant(b, l, kernel)));
            return {b.create<arith::SelectOp>(l, ok, q, indexConstant(b, l, 0)),
                    ok};
          };
          auto [oh, rowOk] = window(i[rank - 2], g.sh, g.kh, g.oh);
          auto [ow, colOk] = window(i[rank - 1], g.sw, g.kw, g.ow);
          Value value = contribution(b, l, at(i, oh, ow), flat);
          Value ok = b.create<arith::AndIOp>(l, rowOk, colOk);
          return b.create<arith::SelectOp>(l, ok, value, zero).getResult();
        }
        Value sum = zero;
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          auto [oh, rowOk] =
              tapReader(b, l, i[rank - 2], kh, g.sh, 1, g.ph, g.oh);
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            auto [ow, colOk] =
                tapReader(b, l, i[rank - 1], kw, g.sw, 1, g.pw, g.ow);
            Value ok = b.create<arith::AndIOp>(l, rowOk, colOk);
            auto [value, hit] = std::pair<Value, Value>{
                contribution(b, l, at(i, oh, ow), flat), ok};
            sum = b.create<arith::AddFOp>(
                l, sum, b.create<arith::SelectOp>(l, hit, value, zero));
          }
        }
        return sum;
      });
}

struct MaxPool2dGradPattern : public OpConversionPattern<MaxPool2dGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPool2dGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto g =
        PoolGeometry::of(op, op.getLike().getType(), op.getGrad().getType());
    Value grad = adaptor.getGrad(), indices = adaptor.getIndices();
    Type element = op.getType().getElementType();
    Value dx = buildPoolAdjoint(
        rewriter, op.getLoc(), adaptor.getLike(), g,
        [&](OpBuilder &b, Location l, ArrayRef<Value> window, Value flat) {
          // The window's gradient, where this element was its maximum.
          Value where = b.create<tensor::ExtractOp>(l, indices, window);
          Value mine = b.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq, where,
              b.create<arith::IndexCastOp>(l, b.getI32Type(), flat));
          Value v = b.create<tensor::ExtractOp>(l, grad, window);
          return b
              .create<arith::SelectOp>(l, mine, v,
                                       floatConstant(b, l, element, 0.0))
              .getResult();
        });
    rewriter.replaceOp(op, dx);
    return success();
  }
};

struct AvgPool2dPattern : public OpConversionPattern<AvgPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = op.getType();
    auto g = PoolGeometry::of(op, cast<RankedTensorType>(x.getType()), type);
    int64_t rank = type.getRank();
    Type element = type.getElementType();
    Value mean = buildGather(
        rewriter, loc, type, sameDimsOf(x, rank), {}, {},
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> i = loopIndices(b, l, rank);
          Value zero = floatConstant(b, l, element, 0.0);
          Value sum = zero;
          forEachTap(b, l, x, i, g, [&](Value, Value, Value v, Value inside) {
            sum = b.create<arith::AddFOp>(
                l, sum, b.create<arith::SelectOp>(l, inside, v, zero));
          });
          // Padding counts: the divisor is always the window's size.
          return b
              .create<arith::DivFOp>(
                  l, sum, floatConstant(b, l, element, double(g.kh * g.kw)))
              .getResult();
        });
    rewriter.replaceOp(op, mean);
    return success();
  }
};

struct AvgPool2dGradPattern : public OpConversionPattern<AvgPool2dGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPool2dGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto g =
        PoolGeometry::of(op, op.getLike().getType(), op.getGrad().getType());
    Value grad = adaptor.getGrad();
    Type element = op.getType().getElementType();
    Value dx = buildPoolAdjoint(
        rewriter, op.getLoc(), adaptor.getLike(), g,
        [&](OpBuilder &b, Location l, ArrayRef<Value> window, Value) {
          Value v = b.create<tensor::ExtractOp>(l, grad, window);
          return b
              .create<arith::DivFOp>(
                  l, v, floatConstant(b, l, element, double(g.kh * g.kw)))
              .getResult();
        });
    rewriter.replaceOp(op, dx);
    return success();
  }
};

} // namespace

void mlir::mbt::populatePoolPatterns(RewritePatternSet &patterns) {
  patterns.add<MaxPool2dPattern, MaxPool2dGradPattern, AvgPool2dPattern,
               AvgPool2dGradPattern>(patterns.getContext());
}
