//===- AttentionPatterns.cpp - mbt.attention and its adjoint --------------===//
//
// Both work on the heads' layout: query, key and value [L..., T, D] are
// viewed as [L..., T, H, D/H] (tensor.expand_shape, no copy), so that every
// linalg.generic below indexes with plain loop dimensions. The weights p
// [L..., H, T, T] are built in five generics (scores, mask and scale, row
// maximum, exponentials, normalization); masked pairs hold -inf before the
// exponential and exactly 0 after it, so a padded key adds nothing to any
// sum. The adjoint recomputes p (as FlashAttention's backward does) rather
// than keeping it from the forward pass. With a `format` (bf16 or f16), every
// product rounds its operands and its result; the scale, masks and softmax
// stay f32. A [T, T] operand or result is rounded inside the generic that
// writes or reads it (one pass over the weights fewer each), a [T, D] one
// by a generic over [T, D], whose inner loop is long enough to vectorize.
//
// On the CPU (one sequence at a time) a causal attention takes its queries
// a block at a time, and a block reads only the keys up to its last query:
// the weights of block [i0, i0 + rows) are [H, rows, i0 + rows], not
// [H, T, T]. The adjoint's dkey and dvalue are then sums over the blocks,
// accumulated in f32 and rounded once at the end, as a single product's
// result is. Each query's weights are computed as without blocks; only
// the order of dkey's and dvalue's additions changes, and it depends on T
// alone, so a sequence gets the same bits alone and in a batch.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// The shapes and loop dimensions of one attention: `n` leading dimensions
/// L, then (for the weights) heads h, queries i, keys j.
class AttentionBuilder {
public:
  /// The attention of the queries `query` [L..., Tq, D] over the keys `key`
  /// [L..., Tk, D]; with `causal`, query i sits at position
  /// `queryStart` + i (0 without it) and sees the keys up to there.
  AttentionBuilder(OpBuilder &b, Location loc, Value query, Value key,
                   int64_t heads, bool causal, std::optional<Type> format,
                   Value queryStart = {})
      : b(b), loc(loc), query(query), key(key), heads(heads), causal(causal),
        format(format), queryStart(queryStart) {
    auto type = cast<RankedTensorType>(query.getType());
    element = cast<FloatType>(type.getElementType());
    n = type.getRank() - 2;
    features = type.getDimSize(n + 1);
    headSize = features / heads;
    scale = 1.0 / std::sqrt(static_cast<double>(headSize));
  }

  /// `v` rounded to the format of the products (bf16 or f16), or `v`
  /// without one.
  Value round(Value v) { return format ? buildRoundTo(b, loc, v, *format) : v; }
  /// Each of `values` as a product's operand: rounded, unless `rounded`
  /// says its values are the format's already.
  SmallVector<Value> operands(ValueRange values, ArrayRef<bool> rounded) {
    SmallVector<Value> result;
    for (auto [v, isRounded] : llvm::zip(values, rounded))
      result.push_back(isRounded ? v : round(v));
    return result;
  }
  /// The scalar `x` rounded so, inside a generic's body.
  Value round(OpBuilder &nb, Location l, Value x) {
    return format ? buildRoundedScalar(nb, l, x, *format) : x;
  }

  /// [L..., T, D] as [L..., T, H, D/H], rounded as a product's operand
  /// unless `rounded` says its values are the format's already.
  Value splitHeads(Value v, bool rounded) {
    if (!rounded)
      v = round(v);
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d <= n; ++d)
      sizes.push_back(size(v, d));
    sizes.push_back(b.getIndexAttr(heads));
    sizes.push_back(b.getIndexAttr(headSize));
    return b.create<tensor::ExpandShapeOp>(loc, headsType(v), v, headGroups(),
                                           sizes);
  }
  /// [L..., T, H, D/H] as [L..., T, D].
  Value mergeHeads(Value v) {
    return b.create<tensor::CollapseShapeOp>(loc, v, headGroups());
  }
  /// A product's result `v` [L..., T, H, D/H] as [L..., T, D], rounded.
  Value finish(Value v) { return round(mergeHeads(v)); }
  /// Zeros of the heads' layout [L..., T, H, D/H] with the T of `rowsOf`.
  Value zeroHeads(Value rowsOf) {
    return filled(headsType(rowsOf), headsSources(rowsOf));
  }

  /// The attention weights p [L..., H, T, T] of `qh` and `kh` (split), and
  /// p rounded as a product's operand (p itself without a format); one
  /// generic writes both.
  struct Weights {
    Value exact, rounded;
  };
  Weights weights(Value qh, Value kh, Value tokens) {
    Value scores = contract(qh, kh);
    // Scaled, -inf where the pair is masked.
    Value masked = elementwise(
        {scores, tokens}, {all(), keyTokens()},
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value allowed = isReal(nb, l, a[1]);
          if (causal) {
            Value i = nb.create<linalg::IndexOp>(l, n + 1);
            if (queryStart)
              i = nb.create<arith::AddIOp>(l, i, queryStart);
            Value j = nb.create<linalg::IndexOp>(l, n + 2);
            allowed = nb.create<arith::AndIOp>(
                l, allowed,
                nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ule, j, i));
          }
          Value scaled = nb.create<arith::MulFOp>(
              l, round(nb, l, a[0]), floatConstant(nb, l, element, scale));
          return nb.create<arith::SelectOp>(l, allowed, scaled,
                                            minusInfinity(nb, l));
        });
    Value rowMax = rowReduce(
        masked, {}, minusInfinityAttr(),
        [&](OpBuilder &nb, Location l, Value acc, ValueRange a) -> Value {
          return nb.create<arith::MaximumFOp>(l, acc, a[0]);
        });
    Value exps =
        elementwise({masked, rowMax}, {all(), rows()},
                    [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                      Value isMasked =
                          nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ,
                                                   a[0], minusInfinity(nb, l));
                      Value e = nb.create<math::ExpOp>(
                          l, nb.create<arith::SubFOp>(l, a[0], a[1]));
                      return nb.create<arith::SelectOp>(
                          l, isMasked, floatConstant(nb, l, element, 0.0), e);
                    });
    Value sums = rowReduce(
        exps, {}, b.getFloatAttr(element, 0.0),
        [&](OpBuilder &nb, Location l, Value acc, ValueRange a) -> Value {
          return nb.create<arith::AddFOp>(l, acc, a[0]);
        });
    // A query with no allowed key has a sum of 0 and weights 0.
    SmallVector<Value> p = elementwise(
        format ? 2 : 1, {exps, sums}, {all(), rows()},
        [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
          Value zero = floatConstant(nb, l, element, 0.0);
          Value some = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT,
                                                a[1], zero);
          Value w = nb.create<arith::SelectOp>(
              l, some, nb.create<arith::DivFOp>(l, a[0], a[1]), zero);
          if (!format)
            return {w};
          return {w, round(nb, l, w)};
        });
    return {p.front(), p.back()};
  }

  /// s[L, h, i, j] = sum_e a[L, i, h, e] * c[L, j, h, e] (a and c split,
  /// so rounded), not rounded: its readers round it as they read it.
  Value contract(Value a, Value c) {
    int64_t loops = n + 4; // (L, h, i, j, e)
    auto map = [&](int64_t row) { return at(loops, {row, n, n + 3}); };
    Value init = filled(weightsType(), weightsSources());
    Value s =
        b.create<linalg::GenericOp>(
             loc, TypeRange{weightsType()}, ValueRange{a, c}, ValueRange{init},
             SmallVector<AffineMap>{map(n + 1), map(n + 2),
                                    at(loops, {n, n + 1, n + 2})},
             iterators(loops, {n + 3}),
             [&](OpBuilder &nb, Location l, ValueRange v) {
               Value prod = nb.create<arith::MulFOp>(l, v[0], v[1]);
               nb.create<linalg::YieldOp>(
                   l, ValueRange{nb.create<arith::AddFOp>(l, v[2], prod)});
             })
            .getResult(0);
    return s;
  }

  /// out[L, r, h, e] = sum_c w[L, h, r, c] * x[L, c, h, e], or with
  /// `transposed` sum_c w[L, h, c, r] * x[L, c, h, e] (w rounded by its
  /// writer; x split, so rounded), as [L..., T, D], rounded.
  Value apply(Value w, Value x, bool transposed) {
    return finish(product(w, x, transposed));
  }
  /// The same in the heads' layout [L..., T, H, D/H], not rounded, added to
  /// `init` (of that layout) where it is given, else to zeros. T is the
  /// queries' (keys' with `transposed`).
  Value product(Value w, Value x, bool transposed, Value init = {}) {
    int64_t loops = n + 4; // (L, r, h, e, c)
    int64_t r = n, h = n + 1, e = n + 2, c = n + 3;
    AffineMap wMap = transposed ? at(loops, {h, c, r}) : at(loops, {h, r, c});
    if (!init)
      init = zeroHeads(transposed ? key : query);
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{init.getType()}, ValueRange{w, x}, ValueRange{init},
            SmallVector<AffineMap>{wMap, at(loops, {c, h, e}),
                                   at(loops, {r, h, e})},
            iterators(loops, {c}),
            [&](OpBuilder &nb, Location l, ValueRange v) {
              Value prod = nb.create<arith::MulFOp>(l, v[0], v[1]);
              nb.create<linalg::YieldOp>(
                  l, ValueRange{nb.create<arith::AddFOp>(l, v[2], prod)});
            })
        .getResult(0);
  }

  /// A generic over [L, h, i, j] with one result of the weights' type.
  Value
  elementwise(ValueRange inputs, ArrayRef<AffineMap> maps,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    return elementwise(
        1, inputs, maps,
        [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
          return {body(nb, l, a)};
        })[0];
  }
  /// The same with `results` results of the weights' type.
  SmallVector<Value> elementwise(
      int64_t results, ValueRange inputs, ArrayRef<AffineMap> maps,
      function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
          body) {
    RankedTensorType type = weightsType();
    SmallVector<Value> inits;
    for (int64_t r = 0; r < results; ++r)
      inits.push_back(buildEmpty(b, loc, type, weightsSources()));
    SmallVector<AffineMap> allMaps(maps);
    allMaps.append(results, all());
    auto generic = b.create<linalg::GenericOp>(
        loc, SmallVector<Type>(results, type), inputs, inits, allMaps,
        iterators(n + 3), [&](OpBuilder &nb, Location l, ValueRange a) {
          nb.create<linalg::YieldOp>(l,
                                     body(nb, l, a.take_front(inputs.size())));
        });
    return generic.getResults();
  }

  /// A reduction over j of `w` [L, h, i, j] (and `more` of that shape) into
  /// [L, h, i], starting from `init`.
  Value rowReduce(
      Value w, ValueRange more, TypedAttr initValue,
      function_ref<Value(OpBuilder &, Location, Value, ValueRange)> combine) {
    auto rowType = RankedTensorType::get(
        cast<RankedTensorType>(weightsType()).getShape().drop_back(), element);
    SmallVector<std::pair<Value, int64_t>> sources(weightsSources());
    sources.pop_back();
    Value init = buildFilled(b, loc, rowType, sources, initValue);
    SmallVector<Value> inputs{w};
    llvm::append_range(inputs, more);
    SmallVector<AffineMap> maps(inputs.size(), all());
    maps.push_back(rows());
    return b
        .create<linalg::GenericOp>(
            loc, TypeRange{rowType}, inputs, ValueRange{init}, maps,
            iterators(n + 3, {n + 2}),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              nb.create<linalg::YieldOp>(
                  l, ValueRange{combine(nb, l, a.back(), a.drop_back())});
            })
        .getResult(0);
  }

  /// Maps of the [L, h, i, j] loops: the whole index, a row [L, h, i], the
  /// key's token [L, j].
  AffineMap all() { return b.getMultiDimIdentityMap(n + 3); }
  AffineMap rows() { return droppingMap(b.getContext(), n + 3, {n + 2}); }
  AffineMap keyTokens() {
    return droppingMap(b.getContext(), n + 3, {n, n + 1});
  }

  RankedTensorType weightsType() {
    SmallVector<int64_t> shape(leadingShape());
    shape.append({heads, queryType().getDimSize(n),
                  cast<RankedTensorType>(key.getType()).getDimSize(n)});
    return RankedTensorType::get(shape, element);
  }

  double scale;
  FloatType element;

private:
  RankedTensorType queryType() {
    return cast<RankedTensorType>(query.getType());
  }
  SmallVector<int64_t> leadingShape() {
    return SmallVector<int64_t>(queryType().getShape().take_front(n));
  }
  /// [L..., T, H, D/H] with the T of `rowsOf`.
  RankedTensorType headsType(Value rowsOf) {
    SmallVector<int64_t> shape(leadingShape());
    shape.append({cast<RankedTensorType>(rowsOf.getType()).getDimSize(n), heads,
                  headSize});
    return RankedTensorType::get(shape, element);
  }
  SmallVector<ReassociationIndices> headGroups() {
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d <= n; ++d)
      groups.push_back({d});
    groups.push_back({n + 1, n + 2});
    return groups;
  }
  OpFoldResult size(Value v, int64_t d) {
    auto type = cast<RankedTensorType>(v.getType());
    if (!type.isDynamicDim(d))
      return b.getIndexAttr(type.getDimSize(d));
    return b.create<tensor::DimOp>(loc, v, d).getResult();
  }
  SmallVector<std::pair<Value, int64_t>> weightsSources() {
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t d = 0; d < n; ++d)
      sources.push_back({query, d});
    sources.push_back({query, n + 1}); // static: heads
    sources.push_back({query, n});
    sources.push_back({key, n});
    return sources;
  }
  SmallVector<std::pair<Value, int64_t>> headsSources(Value rowsOf) {
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t d = 0; d <= n; ++d)
      sources.push_back({rowsOf, d});
    sources.push_back({query, n + 1}); // static
    sources.push_back({query, n + 1}); // static
    return sources;
  }
  Value filled(RankedTensorType type,
               ArrayRef<std::pair<Value, int64_t>> sources) {
    return buildFilled(b, loc, type, sources, b.getFloatAttr(element, 0.0));
  }
  /// The map of a `loops`-dimensional iteration to [L..., dims...].
  AffineMap at(int64_t loops, ArrayRef<int64_t> dims) {
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < n; ++d)
      exprs.push_back(b.getAffineDimExpr(d));
    for (int64_t d : dims)
      exprs.push_back(b.getAffineDimExpr(d));
    return AffineMap::get(loops, 0, exprs, b.getContext());
  }
  TypedAttr minusInfinityAttr() {
    return b.getFloatAttr(element,
                          APFloat::getInf(element.getFloatSemantics(), true));
  }
  Value minusInfinity(OpBuilder &nb, Location l) {
    return nb.create<arith::ConstantOp>(l, minusInfinityAttr());
  }
  static Value isReal(OpBuilder &nb, Location l, Value token) {
    Value pad = nb.create<arith::ConstantIntOp>(l, 0, 32);
    return nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, token, pad);
  }

  OpBuilder &b;
  Location loc;
  Value query, key;
  int64_t heads;
  bool causal;
  /// The products' format (bf16 or f16), or none: f32 products.
  std::optional<Type> format;
  /// The position of the first query (an index), or none: 0.
  Value queryStart;
  int64_t n = 0, features = 0, headSize = 0;
};

/// Whether `v` (an operand of the original op) holds values of `format`
/// already: an mbt.round_to to it, seen through the ops that only move
/// values. Rounding such values again changes none of them.
bool isRoundedTo(Value v, std::optional<Type> format) {
  if (!format)
    return false;
  while (Operation *def = v.getDefiningOp()) {
    if (auto rounding = dyn_cast<RoundToOp>(def))
      return rounding.getFormat() == *format;
    if (!onlyMovesValues(def))
      return false;
    v = def->getOperand(0);
  }
  return false;
}

/// Builds `body` on slices of the [L..., T, ...] tensors `inputs` that
/// share query's leading dims L (query, key, value, grad [L..., T, D];
/// tokens [L..., T]), and gives its `results` [T, D] as [L..., T, D]
/// tensors. With `perSequence`, inside an scf.forall over L: each
/// sequence's weights [H, T, T] are built, used and dropped before the next
/// one's, so they stay in the cache where the whole batch's
/// [L..., H, T, T] would be read and written from memory a dozen times a
/// step; the forall becomes the model loop's OpenMP threads. Without it
/// (the GPU, whose kernels want the whole batch), on the whole tensors.
/// Either way a sequence's numbers do not depend on the others.
SmallVector<Value>
buildPerSequence(ConversionPatternRewriter &rewriter, Location loc,
                 ValueRange inputs, int64_t results, bool perSequence,
                 function_ref<SmallVector<Value>(ValueRange)> body) {
  auto queryType = cast<RankedTensorType>(inputs[0].getType());
  int64_t leading = queryType.getRank() - 2;
  if (!perSequence || leading == 0)
    return body(inputs);
  SmallVector<OpFoldResult> bounds;
  for (int64_t d = 0; d < leading; ++d)
    bounds.push_back(tensor::getMixedSize(rewriter, loc, inputs[0], d));
  SmallVector<Value> outs;
  for (int64_t r = 0; r < results; ++r)
    outs.push_back(buildEmptyLike(rewriter, loc, queryType, inputs[0]));
  // The slice [l..., :, ...] of a tensor with the leading dims L, without
  // them.
  auto sequence = [&](Value v, ValueRange ivs) {
    SmallVector<Value> at(ivs);
    at.resize(cast<RankedTensorType>(v.getType()).getRank());
    return sliceAt(rewriter, loc, v, at);
  };
  return buildForallOverSlices(
      rewriter, loc, bounds, inputs, outs, sequence,
      [&](ValueRange slices, ValueRange) { return body(slices); });
}

/// The queries a causal attention takes at a time on the CPU. A block
/// reads only the keys up to its last query, so at T = 128 the products
/// and softmax passes cover 10/16 of [T, T]; smaller blocks cover less but
/// make each product too small to run near the core's peak.
constexpr int64_t kQueryBlock = 32;

/// Rows [start, start + size) of `v` [T, ...], the other dims whole.
Value rowsOf(OpBuilder &b, Location loc, Value v, OpFoldResult start,
             OpFoldResult size) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = start;
  sizes[0] = size;
  return b.create<tensor::ExtractSliceOp>(loc, v, offsets, sizes, strides);
}

/// `rows` written into `into` from row `start` on.
Value insertRows(OpBuilder &b, Location loc, Value rows, Value into,
                 OpFoldResult start) {
  auto type = cast<RankedTensorType>(rows.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = start;
  return b.create<tensor::InsertSliceOp>(
      loc, rows, into, offsets, tensor::getMixedSizes(b, loc, rows), strides);
}

/// One block of queries of a causal attention: rows [start, end) of the
/// queries, which see keys [0, end).
struct QueryBlock {
  Value start, rows, end;
};

/// An scf.for over the blocks of kQueryBlock queries of the T = dim 0 of
/// `query`, carrying `inits`; returns the loop's results.
ValueRange buildOverQueryBlocks(
    OpBuilder &b, Location loc, Value query, ValueRange inits,
    function_ref<SmallVector<Value>(QueryBlock, ValueRange)> body) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value step = b.create<arith::ConstantIndexOp>(loc, kQueryBlock);
  Value total = b.create<tensor::DimOp>(loc, query, 0);
  auto loop = b.create<scf::ForOp>(
      loc, zero, total, step, inits,
      [&](OpBuilder &, Location l, Value start, ValueRange carried) {
        // `b` is the pattern's rewriter, now inside the body.
        Value left = b.create<arith::SubIOp>(l, total, start);
        Value rows = b.create<arith::MinSIOp>(l, left, step);
        Value end = b.create<arith::AddIOp>(l, start, rows);
        b.create<scf::YieldOp>(l, body({start, rows, end}, carried));
      });
  return loop.getResults();
}

/// Causal attention of one sequence (query, key, value [T, D], tokens [T]
/// in `in`, the first three `rounded` to the products' format already or
/// not), block by block of queries.
Value buildCausalAttention(OpBuilder &b, Location loc, AttentionOp op,
                           ValueRange in, ArrayRef<bool> rounded) {
  AttentionBuilder whole(b, loc, in[0], in[1], op.getHeads(), true,
                         op.getFormat());
  SmallVector<Value> qkv = whole.operands(in.take_front(3), rounded);
  Value out =
      buildEmptyLike(b, loc, cast<RankedTensorType>(in[0].getType()), in[0]);
  OpFoldResult zero = b.getIndexAttr(0);
  return buildOverQueryBlocks(
      b, loc, in[0], {out},
      [&](QueryBlock block, ValueRange carried) -> SmallVector<Value> {
        Value query = rowsOf(b, loc, qkv[0], block.start, block.rows);
        Value key = rowsOf(b, loc, qkv[1], zero, block.end);
        Value value = rowsOf(b, loc, qkv[2], zero, block.end);
        Value tokens = rowsOf(b, loc, in[3], zero, block.end);
        AttentionBuilder a(b, loc, query, key, op.getHeads(), true,
                           op.getFormat(), block.start);
        Value qh = a.splitHeads(query, true), kh = a.splitHeads(key, true);
        Value p = a.weights(qh, kh, tokens).rounded;
        Value result = a.apply(p, a.splitHeads(value, true), false);
        return {insertRows(b, loc, result, carried[0], block.start)};
      })[0];
}

/// Whether mbt.attention (or its adjoint) runs block by block of queries:
/// a causal one, one sequence at a time.
template <typename Op> bool byQueryBlocks(Op op, bool perSequence) {
  return perSequence && op.getCausal();
}

struct AttentionPattern : public OpConversionPattern<AttentionOp> {
  AttentionPattern(MLIRContext *context, bool perSequence)
      : OpConversionPattern(context), perSequence(perSequence) {}
  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<bool> rounded;
    for (Value v : {op.getQuery(), op.getKey(), op.getValue()})
      rounded.push_back(isRoundedTo(v, op.getFormat()));
    SmallVector<Value> result = buildPerSequence(
        rewriter, op.getLoc(),
        {adaptor.getQuery(), adaptor.getKey(), adaptor.getValue(),
         adaptor.getTokens()},
        1, perSequence, [&](ValueRange in) -> SmallVector<Value> {
          if (byQueryBlocks(op, perSequence))
            return {
                buildCausalAttention(rewriter, op.getLoc(), op, in, rounded)};
          AttentionBuilder a(rewriter, op.getLoc(), in[0], in[1], op.getHeads(),
                             op.getCausal(), op.getFormat());
          Value qh = a.splitHeads(in[0], rounded[0]),
                kh = a.splitHeads(in[1], rounded[1]),
                vh = a.splitHeads(in[2], rounded[2]);
          Value p = a.weights(qh, kh, in[3]).rounded;
          return {a.apply(p, vh, /*transposed=*/false)};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
  bool perSequence;
};

/// The adjoint's results: dquery [T, D], rounded; dkey and dvalue the
/// same, or, where they are partial sums (a block of queries' part), in the
/// heads' layout and not rounded.
struct AdjointParts {
  Value dQuery, dKey, dValue;
};

/// The adjoint of the attention `a` of the split query, key, value and
/// grad, with the keys' `tokens`; dkey and dvalue added to `dKeyInit` and
/// `dValueInit` (partial sums in the heads' layout) where given.
AdjointParts buildAdjoint(OpBuilder &b, AttentionBuilder &a, Value qh, Value kh,
                          Value vh, Value gh, Value tokens, Value dKeyInit = {},
                          Value dValueInit = {}) {
  auto [p, pRounded] = a.weights(qh, kh, tokens);
  // dvalue[j] = sum_i p[i, j] grad[i]; dp[i, j] = grad[i] . value[j]
  // (rounded where it is read).
  auto keysProduct = [&](Value w, Value x, Value init) {
    return init ? a.product(w, x, /*transposed=*/true, init)
                : a.apply(w, x, /*transposed=*/true);
  };
  Value dValue = keysProduct(pRounded, gh, dValueInit);
  Value dp = a.contract(gh, vh);
  Value rowDot = a.rowReduce(
      p, ValueRange{dp}, b.getFloatAttr(a.element, 0.0),
      [&](OpBuilder &nb, Location l, Value acc, ValueRange v) -> Value {
        return nb.create<arith::AddFOp>(
            l, acc, nb.create<arith::MulFOp>(l, v[0], a.round(nb, l, v[1])));
      });
  // ds = p (dp - rowDot), times the scale of the scores, rounded as the
  // two products' operand.
  FloatType element = a.element;
  double scale = a.scale;
  Value ds = a.elementwise(
      {p, dp, rowDot}, {a.all(), a.all(), a.rows()},
      [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
        Value diff = nb.create<arith::SubFOp>(l, a.round(nb, l, v[1]), v[2]);
        Value prod = nb.create<arith::MulFOp>(l, v[0], diff);
        return a.round(nb, l,
                       nb.create<arith::MulFOp>(
                           l, prod, floatConstant(nb, l, element, scale)));
      });
  Value dQuery = a.apply(ds, kh, /*transposed=*/false);
  Value dKey = keysProduct(ds, qh, dKeyInit);
  return {dQuery, dKey, dValue};
}

/// The causal adjoint of one sequence (query, key, value, grad [T, D],
/// tokens [T] in `in`, the first four `rounded` already or not), block by
/// block of queries: each block's dquery rows are its own; its parts of
/// dkey and dvalue (keys [0, end)) add to the sums of the blocks before.
SmallVector<Value> buildCausalAdjoint(OpBuilder &b, Location loc,
                                      AttentionGradOp op, ValueRange in,
                                      ArrayRef<bool> rounded) {
  AttentionBuilder whole(b, loc, in[0], in[1], op.getHeads(), true,
                         op.getFormat());
  SmallVector<Value> qkvg = whole.operands(in.take_front(4), rounded);
  Value dQuery =
      buildEmptyLike(b, loc, cast<RankedTensorType>(in[0].getType()), in[0]);
  OpFoldResult zero = b.getIndexAttr(0);
  ValueRange sums = buildOverQueryBlocks(
      b, loc, in[0], {dQuery, whole.zeroHeads(in[1]), whole.zeroHeads(in[1])},
      [&](QueryBlock block, ValueRange carried) -> SmallVector<Value> {
        auto queries = [&](Value v) {
          return rowsOf(b, loc, v, block.start, block.rows);
        };
        auto keys = [&](Value v) { return rowsOf(b, loc, v, zero, block.end); };
        Value query = queries(qkvg[0]), key = keys(qkvg[1]);
        AttentionBuilder a(b, loc, query, key, op.getHeads(), true,
                           op.getFormat(), block.start);
        // One declaration, so the ops are built in this order.
        Value qh = a.splitHeads(query, true), kh = a.splitHeads(key, true),
              vh = a.splitHeads(keys(qkvg[2]), true),
              gh = a.splitHeads(queries(qkvg[3]), true), tokens = keys(in[4]),
              dKey = keys(carried[1]), dValue = keys(carried[2]);
        AdjointParts parts =
            buildAdjoint(b, a, qh, kh, vh, gh, tokens, dKey, dValue);
        return {insertRows(b, loc, parts.dQuery, carried[0], block.start),
                insertRows(b, loc, parts.dKey, carried[1], zero),
                insertRows(b, loc, parts.dValue, carried[2], zero)};
      });
  Value dKey = whole.finish(sums[1]);
  return {sums[0], dKey, whole.finish(sums[2])};
}

struct AttentionGradPattern : public OpConversionPattern<AttentionGradOp> {
  AttentionGradPattern(MLIRContext *context, bool perSequence)
      : OpConversionPattern(context), perSequence(perSequence) {}
  LogicalResult
  matchAndRewrite(AttentionGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<bool> rounded;
    for (Value v : {op.getQuery(), op.getKey(), op.getValue(), op.getGrad()})
      rounded.push_back(isRoundedTo(v, op.getFormat()));
    SmallVector<Value> results = buildPerSequence(
        rewriter, op.getLoc(),
        {adaptor.getQuery(), adaptor.getKey(), adaptor.getValue(),
         adaptor.getGrad(), adaptor.getTokens()},
        3, perSequence, [&](ValueRange in) -> SmallVector<Value> {
          if (byQueryBlocks(op, perSequence))
            return buildCausalAdjoint(rewriter, op.getLoc(), op, in, rounded);
          AttentionBuilder a(rewriter, op.getLoc(), in[0], in[1], op.getHeads(),
                             op.getCausal(), op.getFormat());
          Value qh = a.splitHeads(in[0], rounded[0]),
                kh = a.splitHeads(in[1], rounded[1]),
                vh = a.splitHeads(in[2], rounded[2]),
                gh = a.splitHeads(in[3], rounded[3]);
          AdjointParts parts = buildAdjoint(rewriter, a, qh, kh, vh, gh, in[4]);
          return {parts.dQuery, parts.dKey, parts.dValue};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
  bool perSequence;
};

} // namespace

void mlir::mbt::populateAttentionPatterns(RewritePatternSet &patterns,
                                          bool perSequence) {
  patterns.add<AttentionPattern, AttentionGradPattern>(patterns.getContext(),
                                                       perSequence);
}

bool mlir::mbt::onlyMovesValues(Operation *op) {
  return isa<SplitRowsOp, MergeRowsOp, ReshapeOp>(op);
}
