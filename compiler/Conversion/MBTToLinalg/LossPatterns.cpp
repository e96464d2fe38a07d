//===- LossPatterns.cpp - cross-entropy, accuracy, one-hot to linalg -----===//
//
// Logits are [L..., B, C] and labels [L..., B]: the batch is dim r-2 and
// the classes dim r-1 of the r loops. The per-token ops of language models
// have logits [L..., B, T, V] and targets [L..., B, T]: the same row
// statistics over the last dim, then a mean over B and T that counts only
// the real targets (not the pad token 0). Row statistics (max, sum of exp) are
// recomputed in the gradient rather than passed along: they are cheap next
// to the matmuls and keep the ops independent.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// Builders for reductions over the class dim of a logits tensor.
class ClassReductions {
public:
  ClassReductions(PatternRewriter &rewriter, Location loc, Value logits,
                  Value labels)
      : b(rewriter), loc(loc), logits(logits), labels(labels),
        type(cast<RankedTensorType>(logits.getType())), rank(type.getRank()),
        elem(cast<FloatType>(type.getElementType())),
        ctx(rewriter.getContext()) {}

  /// [L..., B] type and the sources of its dynamic sizes.
  RankedTensorType rowType(Type element) const {
    return RankedTensorType::get(type.getShape().drop_back(), element);
  }
  SmallVector<std::pair<Value, int64_t>> rowSources() const {
    SmallVector<std::pair<Value, int64_t>> s;
    for (int64_t d = 0; d + 1 < rank; ++d)
      s.push_back({logits, d});
    return s;
  }
  AffineMap id() const { return b.getMultiDimIdentityMap(rank); }
  AffineMap dropClass() const { return droppingMap(ctx, rank, {rank - 1}); }
  Value classIndexAsI32(OpBuilder &nb, Location l) const {
    Value c = nb.create<linalg::IndexOp>(l, rank - 1);
    return nb.create<arith::IndexCastOp>(l, nb.getI32Type(), c);
  }
  /// A constant of the logits' float type.
  Value constant(OpBuilder &nb, Location l, double v) const {
    return floatConstant(nb, l, elem, v);
  }

  /// max over classes, per row.
  Value rowMax() {
    Value init = buildFilled(
        b, loc, rowType(elem), rowSources(),
        b.getFloatAttr(elem, -std::numeric_limits<double>::infinity()));
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{init.getType()}, ValueRange{logits},
            ValueRange{init}, ArrayRef<AffineMap>{id(), dropClass()},
            iterators(rank, {rank - 1}),
            [](OpBuilder &nb, Location l, ValueRange a) {
              nb.create<linalg::YieldOp>(
                  l, ValueRange{nb.create<arith::MaximumFOp>(l, a[1], a[0])});
            })
        .getResult(0);
  }

  /// sum over classes of exp(x - max), per row.
  Value rowSumExp(Value max) {
    Value init = buildFilled(b, loc, rowType(elem), rowSources(),
                             b.getFloatAttr(elem, 0.0));
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{init.getType()}, ValueRange{logits, max},
            ValueRange{init},
            ArrayRef<AffineMap>{id(), dropClass(), dropClass()},
            iterators(rank, {rank - 1}),
            [](OpBuilder &nb, Location l, ValueRange a) {
              Value e = nb.create<math::ExpOp>(
                  l, nb.create<arith::SubFOp>(l, a[0], a[1]));
              nb.create<linalg::YieldOp>(
                  l, ValueRange{nb.create<arith::AddFOp>(l, a[2], e)});
            })
        .getResult(0);
  }

  /// logits[row, label[row]], per row (a masked sum, so no gather).
  Value rowPicked() {
    Value init = buildFilled(b, loc, rowType(elem), rowSources(),
                             b.getFloatAttr(elem, 0.0));
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{init.getType()}, ValueRange{logits, labels},
            ValueRange{init},
            ArrayRef<AffineMap>{id(), dropClass(), dropClass()},
            iterators(rank, {rank - 1}),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value hit = nb.create<arith::CmpIOp>(
                  l, arith::CmpIPredicate::eq, classIndexAsI32(nb, l), a[1]);
              Value v =
                  nb.create<arith::SelectOp>(l, hit, a[0], constant(nb, l, 0));
              nb.create<linalg::YieldOp>(
                  l, ValueRange{nb.create<arith::AddFOp>(l, a[2], v)});
            })
        .getResult(0);
  }

  /// Index of the first maximal logit, per row (as torch.argmax: the first
  /// NaN where the row has one). Two passes that vectorize, the row's
  /// maximum and then the least index holding it, rather than one whose
  /// index and value chain every element to the one before (a compare and
  /// two selects of latency per class: 4% of the byte-level LM's step, in
  /// its accuracy over 259 classes).
  Value rowArgMax() {
    Value max = rowMax();
    auto indexType = rowType(b.getI32Type());
    int64_t classes = type.getDimSize(rank - 1);
    // Past every class: what a class that is not the maximum offers.
    IntegerAttr none = b.getI32IntegerAttr(
        ShapedType::isDynamic(classes) ? std::numeric_limits<int32_t>::max()
                                       : classes);
    Value init = buildFilled(b, loc, indexType, rowSources(), none);
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{indexType}, ValueRange{logits, max},
            ValueRange{init},
            ArrayRef<AffineMap>{id(), dropClass(), dropClass()},
            iterators(rank, {rank - 1}),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              // The maximum itself, or a NaN (the maximum is then a NaN).
              Value isMax = nb.create<arith::CmpFOp>(
                  l, arith::CmpFPredicate::OEQ, a[0], a[1]);
              Value isNaN = nb.create<arith::CmpFOp>(
                  l, arith::CmpFPredicate::UNO, a[0], a[0]);
              Value hit = nb.create<arith::OrIOp>(l, isMax, isNaN);
              // Not a select of the accumulator, which LLVM would keep as
              // a chain of selects rather than vectorize as a minimum.
              Value j = classIndexAsI32(nb, l);
              Value past = nb.create<arith::ConstantOp>(l, none);
              Value index = nb.create<arith::SelectOp>(l, hit, j, past);
              nb.create<linalg::YieldOp>(
                  l, ValueRange{nb.create<arith::MinSIOp>(l, a[2], index)});
            })
        .getResult(0);
  }

  /// Mean over the batch dim of `perRow(args...)`, a [L...] tensor.
  Value
  batchMean(ValueRange rows,
            function_ref<Value(OpBuilder &, Location, ValueRange)> perRow) {
    int64_t rowRank = rank - 1;
    auto outType = RankedTensorType::get(type.getShape().drop_back(2), elem);
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t d = 0; d + 2 < rank; ++d)
      sources.push_back({logits, d});
    Value init =
        buildFilled(b, loc, outType, sources, b.getFloatAttr(elem, 0.0));
    SmallVector<AffineMap> maps(rows.size(), b.getMultiDimIdentityMap(rowRank));
    maps.push_back(droppingMap(ctx, rowRank, {rowRank - 1}));
    Value sum =
        b.create<linalg::GenericOp>(
             loc, TypeRange{outType}, rows, ValueRange{init}, maps,
             iterators(rowRank, {rowRank - 1}),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value v = perRow(nb, l, a.drop_back());
               nb.create<linalg::YieldOp>(
                   l, ValueRange{nb.create<arith::AddFOp>(l, a.back(), v)});
             })
            .getResult(0);
    Value count = dimAsFloat(b, loc, logits, rank - 2, elem);
    Value empty = buildEmpty(b, loc, outType, sources);
    int64_t outRank = outType.getRank();
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{outType}, ValueRange{sum}, ValueRange{empty},
            ArrayRef<AffineMap>{b.getMultiDimIdentityMap(outRank),
                                b.getMultiDimIdentityMap(outRank)},
            iterators(outRank),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              nb.create<linalg::YieldOp>(
                  l, ValueRange{nb.create<arith::DivFOp>(l, a[0], count)});
            })
        .getResult(0);
  }

  /// [L...]: the logits' leading dims, without B, T and the classes.
  RankedTensorType perStepType() const {
    return RankedTensorType::get(type.getShape().drop_back(3), elem);
  }
  SmallVector<std::pair<Value, int64_t>> perStepSources() const {
    SmallVector<std::pair<Value, int64_t>> s;
    for (int64_t d = 0; d + 3 < rank; ++d)
      s.push_back({logits, d});
    return s;
  }

  /// The number of real targets (labels [L..., B, T] that are not the pad
  /// token 0) of each step, at least 1: [L...], the per-token divisor.
  Value realTargetCount() {
    int64_t rowRank = rank - 1;
    Value init = buildFilled(b, loc, perStepType(), perStepSources(),
                             b.getFloatAttr(elem, 0.0));
    Value count =
        b.create<linalg::GenericOp>(
             loc, TypeRange{init.getType()}, ValueRange{labels},
             ValueRange{init},
             ArrayRef<AffineMap>{
                 b.getMultiDimIdentityMap(rowRank),
                 droppingMap(ctx, rowRank, {rowRank - 2, rowRank - 1})},
             iterators(rowRank, {rowRank - 2, rowRank - 1}),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value real = isRealTarget(nb, l, a[0]);
               Value one = nb.create<arith::SelectOp>(
                   l, real, constant(nb, l, 1), constant(nb, l, 0));
               nb.create<linalg::YieldOp>(
                   l, ValueRange{nb.create<arith::AddFOp>(l, a[1], one)});
             })
            .getResult(0);
    // max(1, n): a step of padding alone gives a loss of 0, not 0/0.
    return mapPerStep(count, [&](OpBuilder &nb, Location l, Value n) {
      return nb.create<arith::MaximumFOp>(l, n, constant(nb, l, 1)).getResult();
    });
  }

  /// Mean of `perRow(args...)` over the real targets of each step: the
  /// rows are [L..., B, T] (labels included as the last of `rows`' peers),
  /// the result [L...]. Padding adds nothing, whatever perRow gives there.
  Value
  tokenMean(ValueRange rows,
            function_ref<Value(OpBuilder &, Location, ValueRange)> perRow) {
    int64_t rowRank = rank - 1;
    Value init = buildFilled(b, loc, perStepType(), perStepSources(),
                             b.getFloatAttr(elem, 0.0));
    SmallVector<Value> inputs(rows.begin(), rows.end());
    inputs.push_back(labels);
    SmallVector<AffineMap> maps(inputs.size(),
                                b.getMultiDimIdentityMap(rowRank));
    maps.push_back(droppingMap(ctx, rowRank, {rowRank - 2, rowRank - 1}));
    Value sum =
        b.create<linalg::GenericOp>(
             loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             iterators(rowRank, {rowRank - 2, rowRank - 1}),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value v = perRow(nb, l, a.take_front(rows.size()));
               Value real = isRealTarget(nb, l, a[rows.size()]);
               v = nb.create<arith::SelectOp>(l, real, v, constant(nb, l, 0));
               nb.create<linalg::YieldOp>(
                   l, ValueRange{nb.create<arith::AddFOp>(l, a.back(), v)});
             })
            .getResult(0);
    Value count = realTargetCount();
    int64_t outRank = perStepType().getRank();
    Value empty = buildEmpty(b, loc, perStepType(), perStepSources());
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{empty.getType()}, ValueRange{sum, count},
            ValueRange{empty},
            SmallVector<AffineMap>(3, b.getMultiDimIdentityMap(outRank)),
            iterators(outRank),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              nb.create<linalg::YieldOp>(
                  l, ValueRange{nb.create<arith::DivFOp>(l, a[0], a[1])});
            })
        .getResult(0);
  }

  /// softmax(logits)[class] - onehot(label)[class] inside a generic over
  /// [L..., rows, C], from the row's max and sum of exp(x - max).
  Value softmaxMinusOneHot(OpBuilder &nb, Location l, Value logit, Value max,
                           Value sumExp, Value label) const {
    Value p = nb.create<arith::DivFOp>(
        l, nb.create<math::ExpOp>(l, nb.create<arith::SubFOp>(l, logit, max)),
        sumExp);
    Value onehot = equalAsOne(nb, l, classIndexAsI32(nb, l), label);
    return nb.create<arith::SubFOp>(l, p, onehot);
  }

  /// 1 where the i32 values `a` and `b` are equal, else 0, as a float.
  Value equalAsOne(OpBuilder &nb, Location l, Value a, Value b) const {
    Value hit = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, a, b);
    return nb.create<arith::SelectOp>(l, hit, constant(nb, l, 1),
                                      constant(nb, l, 0));
  }

  /// A target is real unless it is the pad token 0.
  static Value isRealTarget(OpBuilder &nb, Location l, Value label) {
    Value pad = nb.create<arith::ConstantOp>(l, nb.getI32IntegerAttr(0));
    return nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, label, pad);
  }

  /// fn applied to every element of a [L...] tensor.
  Value mapPerStep(Value input,
                   function_ref<Value(OpBuilder &, Location, Value)> fn) {
    int64_t outRank = perStepType().getRank();
    Value empty = buildEmpty(b, loc, perStepType(), perStepSources());
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{empty.getType()}, ValueRange{input},
            ValueRange{empty},
            SmallVector<AffineMap>(2, b.getMultiDimIdentityMap(outRank)),
            iterators(outRank),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              nb.create<linalg::YieldOp>(l, ValueRange{fn(nb, l, a[0])});
            })
        .getResult(0);
  }

  PatternRewriter &b;
  Location loc;
  Value logits, labels;
  RankedTensorType type;
  int64_t rank;
  /// The model's float type (the logits' element type).
  FloatType elem;
  MLIRContext *ctx;
};

/// A row's cross-entropy from its statistics (max, sum of exp(x - max),
/// the label's logit): max + log(sum) - x[label].
Value rowLoss(OpBuilder &b, Location l, ValueRange a) {
  Value lse = b.create<arith::AddFOp>(l, a[0], b.create<math::LogOp>(l, a[1]));
  return b.create<arith::SubFOp>(l, lse, a[2]);
}

struct CrossEntropyPattern : public OpConversionPattern<CrossEntropyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ClassReductions r(rewriter, op.getLoc(), adaptor.getLogits(),
                      adaptor.getLabels());
    Value max = r.rowMax();
    Value sumExp = r.rowSumExp(max);
    Value picked = r.rowPicked();
    Value loss = r.batchMean(ValueRange{max, sumExp, picked}, rowLoss);
    rewriter.replaceOp(op, loss);
    return success();
  }
};

/// The adjoint of the logits, one element per logit: a generic over the
/// logits' shape reading the logits, the rows' max and sum of exp (`max`,
/// `sumExp`), the labels and `extra` (through `extraMaps`); `body` gets
/// them in that order.
Value logitsAdjoint(
    ClassReductions &r, RankedTensorType type, Value max, Value sumExp,
    ValueRange extra, ArrayRef<AffineMap> extraMaps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Value init = buildEmptyLike(r.b, r.loc, type, r.logits);
  SmallVector<Value> ins{r.logits, max, sumExp, r.labels};
  ins.append(extra.begin(), extra.end());
  SmallVector<AffineMap> maps{r.id(), r.dropClass(), r.dropClass(),
                              r.dropClass()};
  maps.append(extraMaps.begin(), extraMaps.end());
  maps.push_back(r.id());
  auto generic = r.b.create<linalg::GenericOp>(
      r.loc, TypeRange{type}, ins, ValueRange{init}, maps, iterators(r.rank),
      [&](OpBuilder &b, Location l, ValueRange a) {
        b.create<linalg::YieldOp>(l, ValueRange{body(b, l, a)});
      });
  return generic.getResult(0);
}

struct CrossEntropyGradPattern
    : public OpConversionPattern<CrossEntropyGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CrossEntropyGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ClassReductions r(rewriter, loc, adaptor.getLogits(), adaptor.getLabels());
    Value max = r.rowMax();
    Value sumExp = r.rowSumExp(max);
    int64_t rank = r.rank;
    Value count =
        dimAsFloat(rewriter, loc, adaptor.getLogits(), rank - 2, r.elem);
    AffineMap dropRowAndClass =
        droppingMap(rewriter.getContext(), rank, {rank - 2, rank - 1});
    Value grad = logitsAdjoint(
        r, op.getType(), max, sumExp, adaptor.getGrad(), dropRowAndClass,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          // (softmax - onehot) * g / B
          Value d = r.softmaxMinusOneHot(b, l, a[0], a[1], a[2], a[3]);
          Value scale = b.create<arith::DivFOp>(l, a[4], count);
          return b.create<arith::MulFOp>(l, d, scale);
        });
    rewriter.replaceOp(op, grad);
    return success();
  }
};

/// Top-k accuracy: the label's rank (classes with a larger logit, or an
/// equal one at a lower index) below k. For k = 1 the arg-max path below
/// gives the same answer and matches torch.argmax on NaNs too.
static Value topKAccuracy(ClassReductions &r, int64_t k) {
  Value picked = r.rowPicked();
  OpBuilder &b = r.b;
  Value zeros = buildFilled(b, r.loc, r.rowType(b.getI32Type()), r.rowSources(),
                            b.getI32IntegerAttr(0));
  Value rank =
      b.create<linalg::GenericOp>(
           r.loc, TypeRange{zeros.getType()},
           ValueRange{r.logits, picked, r.labels}, ValueRange{zeros},
           ArrayRef<AffineMap>{r.id(), r.dropClass(), r.dropClass(),
                               r.dropClass()},
           iterators(r.rank, {r.rank - 1}),
           [&](OpBuilder &nb, Location l, ValueRange a) {
             Value c = r.classIndexAsI32(nb, l);
             Value above = nb.create<arith::CmpFOp>(
                 l, arith::CmpFPredicate::OGT, a[0], a[1]);
             Value tie = nb.create<arith::AndIOp>(
                 l,
                 nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, a[0],
                                          a[1]),
                 nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, c,
                                          a[2]));
             Value before = nb.create<arith::OrIOp>(l, above, tie);
             Value one = nb.create<arith::ExtUIOp>(l, nb.getI32Type(), before);
             nb.create<linalg::YieldOp>(
                 l, ValueRange{nb.create<arith::AddIOp>(l, a[3], one)});
           })
          .getResult(0);
  return r.batchMean(ValueRange{rank}, [&](OpBuilder &nb, Location l,
                                           ValueRange a) {
    Value kValue = nb.create<arith::ConstantOp>(l, nb.getI32IntegerAttr(k));
    Value hit =
        nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, a[0], kValue);
    return nb
        .create<arith::SelectOp>(l, hit, r.constant(nb, l, 1),
                                 r.constant(nb, l, 0))
        .getResult();
  });
}

struct AccuracyPattern : public OpConversionPattern<AccuracyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AccuracyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ClassReductions r(rewriter, op.getLoc(), adaptor.getLogits(),
                      adaptor.getLabels());
    if (op.getTopK() > 1) {
      rewriter.replaceOp(op, topKAccuracy(r, op.getTopK()));
      return success();
    }
    Value argmax = r.rowArgMax();
    Value acc = r.batchMean(ValueRange{argmax, adaptor.getLabels()},
                            [&](OpBuilder &b, Location l, ValueRange a) {
                              return r.equalAsOne(b, l, a[0], a[1]);
                            });
    rewriter.replaceOp(op, acc);
    return success();
  }
};

/// A generic over [L..., C] comparing the class index with each label.
struct OneHotPattern : public OpConversionPattern<OneHotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    int64_t rank = type.getRank();
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t d = 0; d + 1 < rank; ++d)
      sources.push_back({adaptor.getLabels(), d});
    sources.push_back({Value(), 0}); // the class dim is static
    Value init = buildEmpty(rewriter, loc, type, sources);
    SmallVector<AffineMap> maps{
        droppingMap(rewriter.getContext(), rank, {rank - 1}),
        rewriter.getMultiDimIdentityMap(rank)};
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{adaptor.getLabels()}, ValueRange{init},
        maps, iterators(rank), [&](OpBuilder &b, Location l, ValueRange a) {
          Value c = b.create<arith::IndexCastOp>(
              l, b.getI32Type(), b.create<linalg::IndexOp>(l, rank - 1));
          Value hit =
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, c, a[0]);
          Type t = type.getElementType();
          Value one = floatConstant(b, l, t, 1.0);
          Value zero = floatConstant(b, l, t, 0.0);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, hit, one, zero)});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// Per-token cross-entropy: the per-row loss of cross_entropy, averaged
/// over the real targets of the step (B and T together).
struct TokenCrossEntropyPattern
    : public OpConversionPattern<TokenCrossEntropyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TokenCrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ClassReductions r(rewriter, op.getLoc(), adaptor.getLogits(),
                      adaptor.getTargets());
    Value max = r.rowMax();
    Value sumExp = r.rowSumExp(max);
    Value picked = r.rowPicked();
    Value loss = r.tokenMean(ValueRange{max, sumExp, picked}, rowLoss);
    rewriter.replaceOp(op, loss);
    return success();
  }
};

struct TokenCrossEntropyGradPattern
    : public OpConversionPattern<TokenCrossEntropyGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TokenCrossEntropyGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ClassReductions r(rewriter, op.getLoc(), adaptor.getLogits(),
                      adaptor.getTargets());
    Value max = r.rowMax();
    Value sumExp = r.rowSumExp(max);
    Value count = r.realTargetCount();
    int64_t rank = r.rank;
    AffineMap perStep = droppingMap(rewriter.getContext(), rank,
                                    {rank - 3, rank - 2, rank - 1});
    Value grad = logitsAdjoint(
        r, op.getType(), max, sumExp, ValueRange{adaptor.getGrad(), count},
        {perStep, perStep}, [&](OpBuilder &b, Location l, ValueRange a) {
          // (softmax - onehot) * g / n at a real target, 0 at padding.
          Value scale = b.create<arith::DivFOp>(l, a[4], a[5]);
          Value d = b.create<arith::MulFOp>(
              l, r.softmaxMinusOneHot(b, l, a[0], a[1], a[2], a[3]), scale);
          Value real = ClassReductions::isRealTarget(b, l, a[3]);
          return b.create<arith::SelectOp>(l, real, d, r.constant(b, l, 0))
              .getResult();
        });
    rewriter.replaceOp(op, grad);
    return success();
  }
};

struct TokenAccuracyPattern : public OpConversionPattern<TokenAccuracyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TokenAccuracyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ClassReductions r(rewriter, op.getLoc(), adaptor.getLogits(),
                      adaptor.getTargets());
    Value argmax = r.rowArgMax();
    Value acc = r.tokenMean(ValueRange{argmax, adaptor.getTargets()},
                            [&](OpBuilder &b, Location l, ValueRange a) {
                              return r.equalAsOne(b, l, a[0], a[1]);
                            });
    rewriter.replaceOp(op, acc);
    return success();
  }
};

} // namespace

void mlir::mbt::populateLossPatterns(RewritePatternSet &patterns) {
  patterns.add<CrossEntropyPattern, CrossEntropyGradPattern, AccuracyPattern,
               OneHotPattern, TokenCrossEntropyPattern,
               TokenCrossEntropyGradPattern, TokenAccuracyPattern>(
      patterns.getContext());
}
