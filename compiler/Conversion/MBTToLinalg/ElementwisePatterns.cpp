//===- ElementwisePatterns.cpp - mbt elementwise ops to linalg.generic ----===//
//
// Every elementwise op becomes one linalg.generic over the result shape
// whose operands are read through broadcasting maps; upstream elementwise
// fusion then merges chains of them into single loops.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/MBTShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::mbt;

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// One linalg.generic computing `body` of the operands at each element of
/// `op`'s single result.
static Value buildElementwise(PatternRewriter &rewriter, Operation *op,
                              BodyFn body) {
  Location loc = op->getLoc();
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<AffineMap> maps;
  for (Value v : op->getOperands())
    maps.push_back(broadcastingMap(
        ctx, cast<RankedTensorType>(v.getType()).getShape(), type.getShape()));
  maps.push_back(rewriter.getMultiDimIdentityMap(type.getRank()));
  Value init =
      buildEmpty(rewriter, loc, type, sizeSources(type, op->getOperands()));
  auto generic = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{type}, op->getOperands(), ValueRange{init}, maps,
      iterators(type.getRank()),
      [&](OpBuilder &b, Location l, ValueRange args) {
        b.create<linalg::YieldOp>(l, body(b, l, args.drop_back()));
      });
  return generic.getResult(0);
}

namespace {

template <typename OpTy>
struct ElementwisePattern : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildElementwise(rewriter, op, body));
    return success();
  }
  static Value body(OpBuilder &b, Location loc, ValueRange args);
};

} // namespace

template <>
Value ElementwisePattern<AddOp>::body(OpBuilder &b, Location loc,
                                      ValueRange a) {
  return b.create<arith::AddFOp>(loc, a[0], a[1]);
}
template <>
Value ElementwisePattern<SubOp>::body(OpBuilder &b, Location loc,
                                      ValueRange a) {
  return b.create<arith::SubFOp>(loc, a[0], a[1]);
}
template <>
Value ElementwisePattern<MulOp>::body(OpBuilder &b, Location loc,
                                      ValueRange a) {
  return b.create<arith::MulFOp>(loc, a[0], a[1]);
}
template <>
Value ElementwisePattern<DivOp>::body(OpBuilder &b, Location loc,
                                      ValueRange a) {
  return b.create<arith::DivFOp>(loc, a[0], a[1]);
}
template <>
Value ElementwisePattern<NegOp>::body(OpBuilder &b, Location loc,
                                      ValueRange a) {
  return b.create<arith::NegFOp>(loc, a[0]);
}
template <>
Value ElementwisePattern<ReluOp>::body(OpBuilder &b, Location loc,
                                       ValueRange a) {
  Value zero = floatConstant(b, loc, a[0].getType(), 0.0);
  return b.create<arith::MaximumFOp>(loc, a[0], zero);
}
template <>
Value ElementwisePattern<TanhOp>::body(OpBuilder &b, Location loc,
                                       ValueRange a) {
  return b.create<math::TanhOp>(loc, a[0]);
}
template <>
Value ElementwisePattern<ReluGradOp>::body(OpBuilder &b, Location loc,
                                           ValueRange a) {
  // d relu(x)/dx = 1 where x > 0, else 0 (PyTorch's convention at 0).
  Value zero = floatConstant(b, loc, a[0].getType(), 0.0);
  Value positive =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, a[0], zero);
  return b.create<arith::SelectOp>(loc, positive, a[1], zero);
}
template <>
Value ElementwisePattern<TanhGradOp>::body(OpBuilder &b, Location loc,
                                           ValueRange a) {
  Value one = floatConstant(b, loc, a[0].getType(), 1.0);
  Value y2 = b.create<arith::MulFOp>(loc, a[0], a[0]);
  Value d = b.create<arith::SubFOp>(loc, one, y2);
  return b.create<arith::MulFOp>(loc, a[1], d);
}

/// 1 / (1 + exp(-x)).
static Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = floatConstant(b, loc, x.getType(), 1.0);
  Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
  return b.create<arith::DivFOp>(loc, one,
                                 b.create<arith::AddFOp>(loc, one, e));
}

/// The standard normal CDF, 0.5 * (1 + erf(x / sqrt(2))).
static Value normalCdf(OpBuilder &b, Location loc, Value x) {
  Value half = floatConstant(b, loc, x.getType(), 0.5);
  Value one = floatConstant(b, loc, x.getType(), 1.0);
  Value invSqrt2 = floatConstant(b, loc, x.getType(), 0.70710678118654752);
  Value erf =
      b.create<math::ErfOp>(loc, b.create<arith::MulFOp>(loc, x, invSqrt2));
  return b.create<arith::MulFOp>(loc, half,
                                 b.create<arith::AddFOp>(loc, one, erf));
}

template <>
Value ElementwisePattern<SigmoidOp>::body(OpBuilder &b, Location loc,
                                          ValueRange a) {
  return sigmoid(b, loc, a[0]);
}
template <>
Value ElementwisePattern<SiluOp>::body(OpBuilder &b, Location loc,
                                       ValueRange a) {
  return b.create<arith::MulFOp>(loc, a[0], sigmoid(b, loc, a[0]));
}
template <>
Value ElementwisePattern<GeluOp>::body(OpBuilder &b, Location loc,
                                       ValueRange a) {
  return b.create<arith::MulFOp>(loc, a[0], normalCdf(b, loc, a[0]));
}
template <>
Value ElementwisePattern<SigmoidGradOp>::body(OpBuilder &b, Location loc,
                                              ValueRange a) {
  // g * y * (1 - y)
  Value one = floatConstant(b, loc, a[0].getType(), 1.0);
  Value d = b.create<arith::MulFOp>(loc, a[0],
                                    b.create<arith::SubFOp>(loc, one, a[0]));
  return b.create<arith::MulFOp>(loc, a[1], d);
}
template <>
Value ElementwisePattern<SiluGradOp>::body(OpBuilder &b, Location loc,
                                           ValueRange a) {
  // g * (s + x * s * (1 - s))
  Value one = floatConstant(b, loc, a[0].getType(), 1.0);
  Value s = sigmoid(b, loc, a[0]);
  Value xs1 =
      b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, a[0], s),
                              b.create<arith::SubFOp>(loc, one, s));
  return b.create<arith::MulFOp>(loc, a[1],
                                 b.create<arith::AddFOp>(loc, s, xs1));
}
template <>
Value ElementwisePattern<GeluGradOp>::body(OpBuilder &b, Location loc,
                                           ValueRange a) {
  // g * (Phi(x) + x * exp(-x^2 / 2) / sqrt(2 pi))
  Value x = a[0];
  Value minusHalf = floatConstant(b, loc, a[0].getType(), -0.5);
  Value invSqrt2Pi = floatConstant(b, loc, a[0].getType(), 0.39894228040143268);
  Value density = b.create<arith::MulFOp>(
      loc, invSqrt2Pi,
      b.create<math::ExpOp>(
          loc, b.create<arith::MulFOp>(loc, minusHalf,
                                       b.create<arith::MulFOp>(loc, x, x))));
  Value d = b.create<arith::AddFOp>(loc, normalCdf(b, loc, x),
                                    b.create<arith::MulFOp>(loc, x, density));
  return b.create<arith::MulFOp>(loc, a[1], d);
}

template <>
Value ElementwisePattern<ExpOp>::body(OpBuilder &b, Location loc,
                                      ValueRange a) {
  return b.create<math::ExpOp>(loc, a[0]);
}
template <>
Value ElementwisePattern<LogOp>::body(OpBuilder &b, Location loc,
                                      ValueRange a) {
  return b.create<math::LogOp>(loc, a[0]);
}
template <>
Value ElementwisePattern<SqrtOp>::body(OpBuilder &b, Location loc,
                                       ValueRange a) {
  return b.create<math::SqrtOp>(loc, a[0]);
}
template <>
Value ElementwisePattern<SoftplusOp>::body(OpBuilder &b, Location loc,
                                           ValueRange a) {
  // max(x, 0) + log1p(exp(-|x|)): no overflow for large x, exact tails.
  Value zero = floatConstant(b, loc, a[0].getType(), 0.0);
  Value negAbs =
      b.create<arith::NegFOp>(loc, b.create<math::AbsFOp>(loc, a[0]));
  Value tail = b.create<math::Log1pOp>(loc, b.create<math::ExpOp>(loc, negAbs));
  return b.create<arith::AddFOp>(
      loc, b.create<arith::MaximumFOp>(loc, a[0], zero), tail);
}

namespace {

/// A generic that reads the input through the inverse permutation, so
/// elementwise fusion can merge it with its producer or consumer.
struct TransposePattern : public OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    ArrayRef<int64_t> perm = op.getPermutation();
    SmallVector<unsigned> inverse(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = static_cast<unsigned>(i);
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t p : perm)
      sources.push_back({adaptor.getInput(), p});
    Value init = buildEmpty(rewriter, loc, type, sources);
    SmallVector<AffineMap> maps{
        AffineMap::getPermutationMap(inverse, rewriter.getContext()),
        rewriter.getMultiDimIdentityMap(type.getRank())};
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{adaptor.getInput()}, ValueRange{init},
        maps, iterators(type.getRank()),
        [](OpBuilder &b, Location l, ValueRange a) {
          b.create<linalg::YieldOp>(l, ValueRange{a[0]});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct ConstantPattern : public OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(adaptor.getValue()));
    return success();
  }
};

/// The dims of `type` that are static 1s.
static SmallVector<int64_t> unitDims(RankedTensorType type) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) == 1)
      dims.push_back(d);
  return dims;
}

/// [prefix..., static suffix] -> [prefix..., other static suffix], the
/// prefix ending at the last dynamic dim (the verifier's second rule):
/// collapse the input's suffix to one dim, expand it to the result's.
static Value regroupStaticSuffix(PatternRewriter &rewriter, Location loc,
                                 Value input, RankedTensorType out) {
  auto in = cast<RankedTensorType>(input.getType());
  int64_t p = 0;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (in.isDynamicDim(d))
      p = d + 1;
  auto groups = [&](int64_t rank) {
    SmallVector<ReassociationIndices> g;
    for (int64_t d = 0; d < p; ++d)
      g.push_back({d});
    ReassociationIndices tail;
    for (int64_t d = p; d < rank; ++d)
      tail.push_back(d);
    g.push_back(tail);
    return g;
  };
  int64_t size = 1;
  for (int64_t d = p; d < in.getRank(); ++d)
    size *= in.getDimSize(d);
  SmallVector<int64_t> flatShape(in.getShape().take_front(p));
  flatShape.push_back(size);
  auto flatType = RankedTensorType::get(flatShape, in.getElementType());
  Value v = input;
  if (in.getRank() - p != 1)
    v = rewriter.create<tensor::CollapseShapeOp>(loc, flatType, v,
                                                 groups(in.getRank()));
  if (out.getRank() - p != 1)
    v = rewriter.create<tensor::ExpandShapeOp>(loc, out, v,
                                               groups(out.getRank()));
  return v;
}

/// Static reshapes go through the flat vector: collapse to 1-D, expand to
/// the result (either step is skipped when the shape is already 1-D).
/// Dynamic ones only move unit dims: collapse them away, then expand the
/// result's in.
struct ReshapePattern : public OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto in = op.getInput().getType();
    auto out = op.getType();
    bool dynamic = !in.hasStaticShape() || !out.hasStaticShape();
    if (dynamic && nonUnitDims(in.getShape()) != nonUnitDims(out.getShape())) {
      rewriter.replaceOp(
          op, regroupStaticSuffix(rewriter, loc, adaptor.getInput(), out));
      return success();
    }
    if (dynamic) {
      auto core = RankedTensorType::get(nonUnitDims(in.getShape()),
                                        in.getElementType());
      Value v = adaptor.getInput();
      if (core != in)
        v = rewriter.create<tensor::CollapseShapeOp>(
            loc, core, v, unitDimGroups(in, unitDims(in)));
      rewriter.replaceOp(op,
                         expandUnitDims(rewriter, loc, v, out, unitDims(out)));
      return success();
    }
    auto all = [](int64_t rank) {
      ReassociationIndices group;
      for (int64_t d = 0; d < rank; ++d)
        group.push_back(d);
      return SmallVector<ReassociationIndices>{group};
    };
    auto flatType =
        RankedTensorType::get({in.getNumElements()}, in.getElementType());
    Value flat = adaptor.getInput();
    if (in.getRank() != 1)
      flat = rewriter.create<tensor::CollapseShapeOp>(
          loc, flatType, flat,
          in.getRank() == 0 ? SmallVector<ReassociationIndices>{}
                            : all(in.getRank()));
    Value result = flat;
    if (out.getRank() != 1)
      result = rewriter.create<tensor::ExpandShapeOp>(
          loc, out, flat,
          out.getRank() == 0 ? SmallVector<ReassociationIndices>{}
                             : all(out.getRank()));
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::mbt::populateElementwisePatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwisePattern<AddOp>, ElementwisePattern<SubOp>,
               ElementwisePattern<MulOp>, ElementwisePattern<DivOp>,
               ElementwisePattern<NegOp>, ElementwisePattern<ReluOp>,
               ElementwisePattern<TanhOp>, ElementwisePattern<ReluGradOp>,
               ElementwisePattern<TanhGradOp>, ElementwisePattern<SigmoidOp>,
               ElementwisePattern<SiluOp>, ElementwisePattern<GeluOp>,
               ElementwisePattern<SigmoidGradOp>,
               ElementwisePattern<SiluGradOp>, ElementwisePattern<GeluGradOp>,
               ElementwisePattern<ExpOp>, ElementwisePattern<LogOp>,
               ElementwisePattern<SoftplusOp>, ElementwisePattern<SqrtOp>,
               ConstantPattern, ReshapePattern, TransposePattern>(
      patterns.getContext());
}
