//===- ReductionPatterns.cpp - reductions and broadcasts to linalg
//---------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace mlir::mbt;

/// combine(accumulator, element, elements of the reduced operands).
using CombineFn =
    function_ref<Value(OpBuilder &, Location, Value, Value, ValueRange)>;

/// The kept dims of `input` (those not in `axes`), as the (value, dim)
/// sources of a reduced tensor's sizes.
static SmallVector<std::pair<Value, int64_t>>
keptSources(Value input, ArrayRef<int64_t> axes) {
  SmallVector<std::pair<Value, int64_t>> sources;
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      sources.push_back({input, d});
  return sources;
}

static RankedTensorType reducedType(Value input, ArrayRef<int64_t> axes) {
  auto inType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < inType.getRank(); ++d)
    if (!llvm::is_contained(axes, d))
      shape.push_back(inType.getDimSize(d));
  return RankedTensorType::get(shape, inType.getElementType());
}

/// Folds `input` over `axes` with `combine`, starting from `init`, into a
/// tensor of the remaining dims. `reduced` are tensors of that reduced
/// shape (such as a row maximum) whose elements `combine` also sees.
static Value buildReduction(OpBuilder &b, Location loc, Value input,
                            ValueRange reduced, ArrayRef<int64_t> axes,
                            double init, CombineFn combine) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  RankedTensorType outType = reducedType(input, axes);
  Value acc = buildFilled(b, loc, outType, keptSources(input, axes),
                          b.getFloatAttr(outType.getElementType(), init));
  AffineMap drop = droppingMap(b.getContext(), rank, axes);
  SmallVector<Value> ins{input};
  llvm::append_range(ins, reduced);
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  maps.append(reduced.size() + 1, drop);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{outType}, ins, ValueRange{acc}, maps,
      iterators(rank, axes), [&](OpBuilder &nb, Location l, ValueRange args) {
        Value result =
            combine(nb, l, args.back(), args[0], args.drop_front().drop_back());
        nb.create<linalg::YieldOp>(l, ValueRange{result});
      });
  return generic.getResult(0);
}

static Value buildSum(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> axes) {
  return buildReduction(
      b, loc, input, {}, axes, 0.0,
      [](OpBuilder &nb, Location l, Value acc, Value x, ValueRange) {
        return nb.create<arith::AddFOp>(l, acc, x).getResult();
      });
}

/// The maximum, NaN-propagating like torch.amax.
static Value buildMax(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> axes) {
  return buildReduction(
      b, loc, input, {}, axes, -std::numeric_limits<double>::infinity(),
      [](OpBuilder &nb, Location l, Value acc, Value x, ValueRange) {
        return nb.create<arith::MaximumFOp>(l, acc, x).getResult();
      });
}

/// One generic over the full shape of `input` whose other operands are
/// reduced tensors (read through the dropping map of `axes`); `body` gets
/// the input element, then one element of each reduced operand.
static Value buildFullShapeGeneric(
    OpBuilder &b, Location loc, Value input, ValueRange reduced,
    ArrayRef<int64_t> axes,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Value init = buildEmptyLike(b, loc, type, input);
  SmallVector<Value> operands{input};
  llvm::append_range(operands, reduced);
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  maps.append(reduced.size(), droppingMap(b.getContext(), rank, axes));
  maps.push_back(b.getMultiDimIdentityMap(rank));
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{type}, operands, ValueRange{init}, maps,
          iterators(rank),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(l, body(nb, l, args.drop_back()));
          })
      .getResult(0);
}

/// One elementwise generic over tensors of the same (reduced) shape.
static Value buildSameShapeGeneric(
    OpBuilder &b, Location loc, ValueRange operands,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(operands.front().getType());
  int64_t rank = type.getRank();
  Value init = buildEmptyLike(b, loc, type, operands.front());
  SmallVector<AffineMap> maps(operands.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{type}, operands, ValueRange{init}, maps,
          iterators(rank),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(l, body(nb, l, args.drop_back()));
          })
      .getResult(0);
}

namespace {

/// The sum of an f32 tensor accumulated in f64, then rounded once: what
/// PyTorch's CPU kernels do for statistics (batch norm's mean and variance
/// and their gradients accumulate in double). A float accumulator over the
/// 25k values of a batch-norm channel (batch 32 of 28x28) is off by ~1e-5
/// relative, which 100 SGD steps grew to 3e-2 in
/// test/unit/reference/BatchNormReferenceTest.cpp; in double it is exact
/// to float rounding. f64 tensors sum in f64 as they are.
static Value buildWideSum(OpBuilder &b, Location loc, Value input,
                          ArrayRef<int64_t> axes) {
  auto inType = cast<RankedTensorType>(input.getType());
  if (!inType.getElementType().isF32())
    return buildSum(b, loc, input, axes);
  int64_t rank = inType.getRank();
  RankedTensorType outType = reducedType(input, axes);
  auto wideType = RankedTensorType::get(outType.getShape(), b.getF64Type());
  SmallVector<std::pair<Value, int64_t>> sources = keptSources(input, axes);
  Value acc = buildFilled(b, loc, wideType, sources, b.getF64FloatAttr(0.0));
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                              droppingMap(b.getContext(), rank, axes)};
  Value wide =
      b.create<linalg::GenericOp>(
           loc, TypeRange{wideType}, ValueRange{input}, ValueRange{acc}, maps,
           iterators(rank, axes),
           [&](OpBuilder &nb, Location l, ValueRange args) {
             Value x = nb.create<arith::ExtFOp>(l, nb.getF64Type(), args[0]);
             nb.create<linalg::YieldOp>(
                 l, ValueRange{nb.create<arith::AddFOp>(l, args[1], x)});
           })
          .getResult(0);
  int64_t outRank = outType.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(outRank);
  Value init = buildEmpty(b, loc, outType, sources);
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{outType}, ValueRange{wide}, ValueRange{init},
          SmallVector<AffineMap>{identity, identity}, iterators(outRank),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::TruncFOp>(
                                              l, nb.getF32Type(), args[0])});
          })
      .getResult(0);
}

/// reduce_sum (an f32 sum accumulated in f64: buildWideSum) and reduce_max:
/// one reduction over the op's axes, built by `build`.
template <typename OpTy,
          Value (*build)(OpBuilder &, Location, Value, ArrayRef<int64_t>)>
struct ReductionPattern : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, build(rewriter, op.getLoc(), adaptor.getInput(), op.getAxes()));
    return success();
  }
};
using ReduceSumPattern = ReductionPattern<ReduceSumOp, buildWideSum>;
using ReduceMaxPattern = ReductionPattern<ReduceMaxOp, buildMax>;

/// Sum over the broadcast dims, then put their unit dims back.
struct UnbroadcastPattern : public OpConversionPattern<UnbroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UnbroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto in = op.getInput().getType();
    auto out = op.getType();
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < in.getRank(); ++d)
      if (out.getDimSize(d) == 1 && in.getDimSize(d) != 1)
        axes.push_back(d);
    Value sum = buildSum(rewriter, op.getLoc(), adaptor.getInput(), axes);
    rewriter.replaceOp(op,
                       expandUnitDims(rewriter, op.getLoc(), sum, out, axes));
    return success();
  }
};

struct BroadcastPattern : public OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    int64_t rank = type.getRank();
    Value init = buildEmptyLike(rewriter, loc, type, adaptor.getLike());
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps{droppingMap(ctx, rank, op.getDims()),
                                rewriter.getMultiDimIdentityMap(rank)};
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{adaptor.getInput()}, ValueRange{init},
        maps, iterators(rank), [](OpBuilder &b, Location l, ValueRange args) {
          b.create<linalg::YieldOp>(l, ValueRange{args[0]});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// n = the number of maxima per group; then grad / n at each maximum.
struct ReduceMaxGradPattern : public OpConversionPattern<ReduceMaxGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceMaxGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput(), max = op.getMax();
    ArrayRef<int64_t> axes = op.getAxes();
    auto isMax = [](OpBuilder &b, Location l, Value v, Value m) {
      return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, v, m)
          .getResult();
    };
    // Ties counted with a reduction whose body compares against the max.
    Value ties = buildReduction(
        rewriter, loc, x, ValueRange{max}, axes, 0.0,
        [&](OpBuilder &b, Location l, Value acc, Value v, ValueRange m) {
          Type t = v.getType();
          Value one = b.create<arith::SelectOp>(l, isMax(b, l, v, m[0]),
                                                floatConstant(b, l, t, 1.0),
                                                floatConstant(b, l, t, 0.0));
          return b.create<arith::AddFOp>(l, acc, one).getResult();
        });
    Value result = buildFullShapeGeneric(
        rewriter, loc, x, ValueRange{max, adaptor.getGrad(), ties}, axes,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value share = b.create<arith::DivFOp>(l, a[2], a[3]);
          return b
              .create<arith::SelectOp>(l, isMax(b, l, a[0], a[1]), share,
                                       floatConstant(b, l, a[0].getType(), 0.0))
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// m + log(sum(exp(x - m))), m the maximum; an infinite m is replaced by 0
/// in the shift (as torch.logsumexp), so all -inf gives -inf, not NaN.
struct LogSumExpPattern : public OpConversionPattern<LogSumExpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LogSumExpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    ArrayRef<int64_t> axes = op.getAxes();
    Value max = buildMax(rewriter, loc, x, axes);
    Value shift = buildSameShapeGeneric(
        rewriter, loc, ValueRange{max},
        [](OpBuilder &b, Location l, ValueRange a) {
          Type t = a[0].getType();
          Value inf =
              floatConstant(b, l, t, std::numeric_limits<double>::infinity());
          Value infinite =
              b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ,
                                      b.create<math::AbsFOp>(l, a[0]), inf);
          return b
              .create<arith::SelectOp>(l, infinite, floatConstant(b, l, t, 0.0),
                                       a[0])
              .getResult();
        });
    Value sumExp = buildReduction(
        rewriter, loc, x, ValueRange{shift}, axes, 0.0,
        [](OpBuilder &b, Location l, Value acc, Value v, ValueRange s) {
          Value e =
              b.create<math::ExpOp>(l, b.create<arith::SubFOp>(l, v, s[0]));
          return b.create<arith::AddFOp>(l, acc, e).getResult();
        });
    Value result = buildSameShapeGeneric(
        rewriter, loc, ValueRange{shift, sumExp},
        [](OpBuilder &b, Location l, ValueRange a) {
          return b
              .create<arith::AddFOp>(l, a[0], b.create<math::LogOp>(l, a[1]))
              .getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The product of the reduced sizes, filled into the reduced shape.
struct CountPattern : public OpConversionPattern<CountOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CountOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    Value count = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    for (int64_t axis : op.getAxes())
      count = rewriter.create<arith::MulIOp>(
          loc, count, rewriter.create<tensor::DimOp>(loc, x, axis));
    Value asFloat = rewriter.create<arith::SIToFPOp>(
        loc, op.getType().getElementType(),
        rewriter.create<arith::IndexCastOp>(loc, rewriter.getI64Type(), count));
    Value empty =
        buildEmpty(rewriter, loc, op.getType(), keptSources(x, op.getAxes()));
    rewriter.replaceOp(
        op, rewriter.create<linalg::FillOp>(loc, asFloat, empty).getResult(0));
    return success();
  }
};

} // namespace

void mlir::mbt::populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceSumPattern, UnbroadcastPattern, BroadcastPattern,
               ReduceMaxPattern, ReduceMaxGradPattern, LogSumExpPattern,
               CountPattern>(patterns.getContext());
}
