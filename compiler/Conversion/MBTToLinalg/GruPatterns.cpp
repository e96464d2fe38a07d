//===- GruPatterns.cpp - mbt.gru and its adjoint --------------------------===//
//
// The recurrence is an scf.for over the positions T whose iteration
// arguments are the state h [P..., B, H] and the states written so far
// [P..., B, T, H]. A step reads its slice of the input projections, runs
// one (batch) matmul h W_hh, and one linalg.generic that computes the
// gates and the new state (the old one at padding), which goes into the
// states at t. The adjoint runs the loop from T - 1 down to 0, carrying
// the state's adjoint and accumulating the weight's and bias's gradients
// in iteration arguments: per step one generic for the gates' adjoints,
// a matmul back to h_{t-1}, one for the weight and a reduction for the
// bias. Gates r, z, n sit at columns [0, H), [H, 2H), [2H, 3H) of the 3H
// projections, read by generics with offset indexing maps.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// The shapes of one GRU: `p` model dimensions (0 or 1), then B, T.
class GruBuilder {
public:
  GruBuilder(OpBuilder &b, Location loc, Value inputs, Value weight)
      : b(b), loc(loc), inputs(inputs) {
    auto weightType = cast<RankedTensorType>(weight.getType());
    p = weightType.getRank() - 2;
    hidden = weightType.getDimSize(p);
    element = cast<FloatType>(weightType.getElementType());
  }

  /// [P..., B, width] of the element type.
  RankedTensorType rowsType(int64_t width) {
    auto type = cast<RankedTensorType>(inputs.getType());
    SmallVector<int64_t> shape(type.getShape().take_front(p + 1));
    shape.push_back(width);
    return RankedTensorType::get(shape, element);
  }
  /// The sizes of rowsType(width) for tensor.empty.
  SmallVector<std::pair<Value, int64_t>> rowsSources() {
    SmallVector<std::pair<Value, int64_t>> sources;
    for (int64_t d = 0; d <= p; ++d)
      sources.push_back({inputs, d});
    sources.push_back({inputs, p + 2}); // static
    return sources;
  }
  Value zeros(RankedTensorType type,
              ArrayRef<std::pair<Value, int64_t>> sources) {
    return buildFilled(b, loc, type, sources, b.getFloatAttr(element, 0.0));
  }

  /// The slice of `v` ([P..., B, T, ...]) at position t, without the
  /// position dimension.
  Value at(Value v, Value t) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    sliceAt(v, t, offsets, sizes, strides);
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != p + 1)
        shape.push_back(type.getDimSize(d));
    auto sliceType = RankedTensorType::get(shape, type.getElementType());
    return b.create<tensor::ExtractSliceOp>(loc, sliceType, v, offsets, sizes,
                                            strides);
  }
  /// `dest` with `slice` put at position t.
  Value put(Value slice, Value dest, Value t) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    sliceAt(dest, t, offsets, sizes, strides);
    return b.create<tensor::InsertSliceOp>(loc, slice, dest, offsets, sizes,
                                           strides);
  }

  /// h [P..., B, H] @ weight [P..., H, 3H] (or, transposed, g [P..., B, 3H]
  /// @ weight^T), added to `init`.
  Value matmul(Value lhs, Value weight, Value init, bool transposeWeight) {
    SmallVector<Value, 2> ins{lhs, weight};
    Type type = init.getType();
    if (p == 0)
      return transposeWeight
                 ? b.create<linalg::MatmulTransposeBOp>(loc, type, ins, init)
                       .getResult(0)
                 : b.create<linalg::MatmulOp>(loc, type, ins, init).getResult(0);
    return transposeWeight
               ? b.create<linalg::BatchMatmulTransposeBOp>(loc, type, ins, init)
                     .getResult(0)
               : b.create<linalg::BatchMatmulOp>(loc, type, ins, init)
                     .getResult(0);
  }
  /// init + h^T g: h [P..., B, H], g [P..., B, 3H] -> [P..., H, 3H].
  Value weightGradient(Value h, Value g, Value init) {
    SmallVector<Value, 2> ins{h, g};
    Type type = init.getType();
    if (p == 0)
      return b.create<linalg::MatmulTransposeAOp>(loc, type, ins, init)
          .getResult(0);
    return b.create<linalg::BatchMatmulTransposeAOp>(loc, type, ins, init)
        .getResult(0);
  }

  /// The three gates of a [..., 3H] value: views of columns [0, H),
  /// [H, 2H), [2H, 3H). (Views rather than offset indexing maps: linalg
  /// takes a loop's range from the first operand indexed by it alone, which
  /// would be the whole 3H.)
  SmallVector<Value> gatesOf(Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> shape(type.getShape());
    shape.back() = hidden;
    auto gateType = RankedTensorType::get(shape, type.getElementType());
    SmallVector<Value> gates;
    for (int64_t k = 0; k < 3; ++k) {
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
          strides(rank, b.getIndexAttr(1));
      offsets.back() = b.getIndexAttr(k * hidden);
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(d + 1 == rank ? b.getIndexAttr(hidden)
                        : type.isDynamicDim(d)
                            ? OpFoldResult(
                                  b.create<tensor::DimOp>(loc, v, d).getResult())
                            : b.getIndexAttr(type.getDimSize(d)));
      gates.push_back(b.create<tensor::ExtractSliceOp>(loc, gateType, v,
                                                       offsets, sizes, strides));
    }
    return gates;
  }

  /// Maps of the (P..., B, j) loops (j < H): a [P..., B, H] row, a
  /// [P..., H] bias gate, the tokens' [P..., B].
  AffineMap row() { return b.getMultiDimIdentityMap(p + 2); }
  AffineMap biasRow() {
    SmallVector<AffineExpr> exprs = leading(p);
    exprs.push_back(b.getAffineDimExpr(p + 1));
    return AffineMap::get(p + 2, 0, exprs, b.getContext());
  }
  AffineMap token() {
    return AffineMap::get(p + 2, 0, leading(p + 1), b.getContext());
  }

  /// The gates of a step from its 9 gate operands (gx r z n, gh r z n,
  /// bias r z n): r, z, n and gh_n + bias_n.
  struct Gates {
    Value r, z, n, recurrentN;
  };
  Gates gates(OpBuilder &nb, Location l, ValueRange a) {
    auto pre = [&](int k) {
      return nb.create<arith::AddFOp>(
          l, a[k], nb.create<arith::AddFOp>(l, a[3 + k], a[6 + k]));
    };
    Gates g;
    g.r = sigmoid(nb, l, pre(0));
    g.z = sigmoid(nb, l, pre(1));
    g.recurrentN = nb.create<arith::AddFOp>(l, a[5], a[8]);
    g.n = nb.create<math::TanhOp>(
        l, nb.create<arith::AddFOp>(
               l, a[2], nb.create<arith::MulFOp>(l, g.r, g.recurrentN)));
    return g;
  }
  /// The 9 gate operands (gx r z n, gh r z n, bias r z n) and their maps.
  SmallVector<Value> gateOperands(Value gx, Value gh, Value bias) {
    SmallVector<Value> operands = gatesOf(gx);
    llvm::append_range(operands, gatesOf(gh));
    llvm::append_range(operands, gatesOf(bias));
    return operands;
  }
  SmallVector<AffineMap> gateMaps() {
    return {row(), row(), row(), row(), row(), row(),
            biasRow(), biasRow(), biasRow()};
  }

  static Value isReal(OpBuilder &nb, Location l, Value token) {
    Value pad = nb.create<arith::ConstantIntOp>(l, 0, 32);
    return nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ne, token, pad);
  }
  Value constant(OpBuilder &nb, Location l, double v) {
    return floatConstant(nb, l, element, v);
  }

  OpBuilder &b;
  Location loc;
  Value inputs;
  int64_t p = 0, hidden = 0;
  FloatType element;

private:
  SmallVector<AffineExpr> leading(int64_t count) {
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < count; ++d)
      exprs.push_back(b.getAffineDimExpr(d));
    return exprs;
  }
  void sliceAt(Value v, Value t, SmallVectorImpl<OpFoldResult> &offsets,
               SmallVectorImpl<OpFoldResult> &sizes,
               SmallVectorImpl<OpFoldResult> &strides) {
    auto type = cast<RankedTensorType>(v.getType());
    for (int64_t d = 0; d < type.getRank(); ++d) {
      offsets.push_back(d == p + 1 ? OpFoldResult(t) : b.getIndexAttr(0));
      if (d == p + 1)
        sizes.push_back(b.getIndexAttr(1));
      else if (type.isDynamicDim(d))
        sizes.push_back(b.create<tensor::DimOp>(loc, v, d).getResult());
      else
        sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
      strides.push_back(b.getIndexAttr(1));
    }
  }
  static Value sigmoid(OpBuilder &nb, Location l, Value x) {
    Value one = floatConstant(nb, l, x.getType(), 1.0);
    Value e = nb.create<math::ExpOp>(l, nb.create<arith::NegFOp>(l, x));
    return nb.create<arith::DivFOp>(l, one, nb.create<arith::AddFOp>(l, one, e));
  }
};

struct GruPattern : public OpRewritePattern<GruOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GruOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    GruBuilder g(rewriter, loc, op.getInputs(), op.getWeight());
    auto statesType = cast<RankedTensorType>(op.getType());
    SmallVector<std::pair<Value, int64_t>> statesSources;
    for (int64_t d = 0; d < statesType.getRank(); ++d)
      statesSources.push_back({op.getInputs(), d});
    Value states = buildEmpty(rewriter, loc, statesType, statesSources);
    auto rowType = g.rowsType(g.hidden), gateType = g.rowsType(3 * g.hidden);
    Value h0 = g.zeros(rowType, g.rowsSources());
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    Value steps = rewriter.create<tensor::DimOp>(loc, op.getInputs(), g.p + 1);
    auto loop = rewriter.create<scf::ForOp>(
        loc, zero, steps, one, ValueRange{h0, states},
        [&](OpBuilder &lb, Location l, Value t, ValueRange carried) {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPointToStart(lb.getInsertionBlock());
          Value h = carried[0];
          Value gx = g.at(op.getInputs(), t), tokens = g.at(op.getTokens(), t);
          Value gh = g.matmul(h, op.getWeight(),
                              g.zeros(gateType, g.rowsSources()),
                              /*transposeWeight=*/false);
          // The new state overwrites h (the generic's output): each element
          // reads only its own old value, and the loop's state is updated
          // in place (bufferization needs the yielded state to be h's).
          SmallVector<AffineMap> maps = g.gateMaps();
          maps.append({g.token(), g.row()});
          SmallVector<Value> operands = g.gateOperands(gx, gh, op.getBias());
          operands.push_back(tokens);
          Value next =
              rewriter
                  .create<linalg::GenericOp>(
                      l, TypeRange{rowType}, operands, ValueRange{h}, maps,
                      iterators(g.p + 2),
                      [&](OpBuilder &nb, Location nl, ValueRange a) {
                        GruBuilder::Gates s = g.gates(nb, nl, a);
                        Value one = g.constant(nb, nl, 1.0);
                        Value old = a[10];
                        Value keep = nb.create<arith::MulFOp>(nl, s.z, old);
                        Value fresh = nb.create<arith::MulFOp>(
                            nl, nb.create<arith::SubFOp>(nl, one, s.z), s.n);
                        Value updated =
                            nb.create<arith::AddFOp>(nl, fresh, keep);
                        nb.create<linalg::YieldOp>(
                            nl, ValueRange{nb.create<arith::SelectOp>(
                                    nl, GruBuilder::isReal(nb, nl, a[9]),
                                    updated, old)});
                      })
                  .getResult(0);
          Value written = g.put(next, carried[1], t);
          rewriter.create<scf::YieldOp>(l, ValueRange{next, written});
        });
    rewriter.replaceOp(op, loop.getResult(1));
    return success();
  }
};

struct GruGradPattern : public OpRewritePattern<GruGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GruGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    GruBuilder g(rewriter, loc, op.getInputs(), op.getWeight());
    auto rowType = g.rowsType(g.hidden), gateType = g.rowsType(3 * g.hidden);
    auto inputsType = cast<RankedTensorType>(op.getInputs().getType());
    auto weightType = cast<RankedTensorType>(op.getWeight().getType());
    auto biasType = cast<RankedTensorType>(op.getBias().getType());
    SmallVector<std::pair<Value, int64_t>> inputsSources, weightSources,
        biasSources;
    for (int64_t d = 0; d < inputsType.getRank(); ++d)
      inputsSources.push_back({op.getInputs(), d});
    for (int64_t d = 0; d < weightType.getRank(); ++d)
      weightSources.push_back({op.getWeight(), d});
    for (int64_t d = 0; d < biasType.getRank(); ++d)
      biasSources.push_back({op.getBias(), d});
    Value dInputs = buildEmpty(rewriter, loc, inputsType, inputsSources);
    Value dWeight = g.zeros(weightType, weightSources);
    Value dBias = g.zeros(biasType, biasSources);
    Value dh = g.zeros(rowType, g.rowsSources());
    Value noState = g.zeros(rowType, g.rowsSources());
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    Value steps = rewriter.create<tensor::DimOp>(loc, op.getInputs(), g.p + 1);
    Value last = rewriter.create<arith::SubIOp>(loc, steps, one);
    auto loop = rewriter.create<scf::ForOp>(
        loc, zero, steps, one, ValueRange{dh, dInputs, dWeight, dBias},
        [&](OpBuilder &lb, Location l, Value s, ValueRange carried) {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPointToStart(lb.getInsertionBlock());
          // t = T - 1 - s; h_{t-1}, 0 before the first position.
          Value t = rewriter.create<arith::SubIOp>(l, last, s);
          Value hasPrevious = rewriter.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::sgt, t, zero);
          Value previousIndex = rewriter.create<arith::SelectOp>(
              l, hasPrevious, rewriter.create<arith::SubIOp>(l, t, one), zero);
          Value hPrevious = rewriter.create<arith::SelectOp>(
              l, hasPrevious, g.at(op.getStates(), previousIndex), noState);
          Value gx = g.at(op.getInputs(), t), tokens = g.at(op.getTokens(), t);
          Value dState = g.at(op.getGrad(), t);
          Value gh = g.matmul(hPrevious, op.getWeight(),
                              g.zeros(gateType, g.rowsSources()),
                              /*transposeWeight=*/false);
          // The gates' adjoints: dr, dz, dn (before their nonlinearities),
          // the adjoint of gh_n, and of h_{t-1} through the z path. The
          // last overwrites the carried adjoint dh (its own output), so
          // that the loop updates it in place.
          SmallVector<AffineMap> maps = g.gateMaps();
          maps.append({g.row(), g.token(), g.row()});
          maps.append(5, g.row());
          SmallVector<Type> types(5, rowType);
          SmallVector<Value> inits;
          for (int i = 0; i < 4; ++i)
            inits.push_back(buildEmpty(rewriter, l, rowType, g.rowsSources()));
          inits.push_back(carried[0]);
          SmallVector<Value> operands = g.gateOperands(gx, gh, op.getBias());
          operands.append({hPrevious, tokens, dState});
          auto adjoints = rewriter.create<linalg::GenericOp>(
              l, types, operands, inits, maps, iterators(g.p + 2),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                GruBuilder::Gates gate = g.gates(nb, nl, a);
                Value oneF = g.constant(nb, nl, 1.0), zeroF = g.constant(nb, nl, 0.0);
                // a[16]: the carried dh, the last output's old value.
                Value total = nb.create<arith::AddFOp>(nl, a[16], a[11]);
                auto mul = [&](Value x, Value y) {
                  return nb.create<arith::MulFOp>(nl, x, y).getResult();
                };
                auto sub = [&](Value x, Value y) {
                  return nb.create<arith::SubFOp>(nl, x, y).getResult();
                };
                Value dn = mul(total, sub(oneF, gate.z));
                Value dz = mul(total, sub(a[9], gate.n));
                Value dnPre = mul(dn, sub(oneF, mul(gate.n, gate.n)));
                Value drPre = mul(mul(dnPre, gate.recurrentN),
                                  mul(gate.r, sub(oneF, gate.r)));
                Value dzPre = mul(dz, mul(gate.z, sub(oneF, gate.z)));
                Value dRecurrentN = mul(dnPre, gate.r);
                Value dDirect = mul(total, gate.z);
                Value real = GruBuilder::isReal(nb, nl, a[10]);
                auto masked = [&](Value v, Value otherwise) {
                  return nb.create<arith::SelectOp>(nl, real, v, otherwise)
                      .getResult();
                };
                nb.create<linalg::YieldOp>(
                    nl, ValueRange{masked(drPre, zeroF), masked(dzPre, zeroF),
                                   masked(dnPre, zeroF),
                                   masked(dRecurrentN, zeroF),
                                   masked(dDirect, total)});
              });
          Value drPre = adjoints.getResult(0), dzPre = adjoints.getResult(1),
                dnPre = adjoints.getResult(2), dghN = adjoints.getResult(3),
                dDirect = adjoints.getResult(4);
          // [P..., B, 3H] from three [P..., B, H] gates.
          auto concat = [&](Value r, Value z, Value n) {
            Value joined =
                buildEmpty(rewriter, l, gateType, g.rowsSources());
            auto type = cast<RankedTensorType>(rowType);
            int64_t rank = type.getRank();
            SmallVector<Value, 3> parts{r, z, n};
            for (auto [k, part] : llvm::enumerate(parts)) {
              SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
              offsets.back() = rewriter.getIndexAttr(k * g.hidden);
              SmallVector<OpFoldResult> sizes;
              for (int64_t d = 0; d < rank; ++d)
                sizes.push_back(
                    type.isDynamicDim(d)
                        ? OpFoldResult(rewriter.create<tensor::DimOp>(l, part, d)
                                           .getResult())
                        : OpFoldResult(rewriter.getIndexAttr(type.getDimSize(d))));
              SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
              joined = rewriter.create<tensor::InsertSliceOp>(
                  l, part, joined, offsets, sizes, strides);
            }
            return joined;
          };
          Value dgx = concat(drPre, dzPre, dnPre);
          Value dgh = concat(drPre, dzPre, dghN);
          // h_{t-1}'s adjoint: the z path plus dgh W_hh^T.
          Value dPrevious =
              g.matmul(dgh, op.getWeight(), dDirect, /*transposeWeight=*/true);
          Value dW = g.weightGradient(hPrevious, dgh, carried[2]);
          // The bias's: dgh summed over the batch.
          int64_t loops = g.p + 2; // (P..., B, c)
          SmallVector<AffineExpr> biasExprs;
          for (int64_t d = 0; d < g.p; ++d)
            biasExprs.push_back(rewriter.getAffineDimExpr(d));
          biasExprs.push_back(rewriter.getAffineDimExpr(g.p + 1));
          Value dB =
              rewriter
                  .create<linalg::GenericOp>(
                      l, TypeRange{carried[3].getType()}, ValueRange{dgh},
                      ValueRange{carried[3]},
                      SmallVector<AffineMap>{
                          rewriter.getMultiDimIdentityMap(loops),
                          AffineMap::get(loops, 0, biasExprs,
                                         rewriter.getContext())},
                      iterators(loops, {g.p}),
                      [&](OpBuilder &nb, Location nl, ValueRange a) {
                        nb.create<linalg::YieldOp>(
                            nl, ValueRange{
                                    nb.create<arith::AddFOp>(nl, a[1], a[0])});
                      })
                  .getResult(0);
          Value written = g.put(dgx, carried[1], t);
          rewriter.create<scf::YieldOp>(
              l, ValueRange{dPrevious, written, dW, dB});
        });
    rewriter.replaceOp(op, ValueRange{loop.getResult(1), loop.getResult(2),
                                      loop.getResult(3)});
    return success();
  }
};

} // namespace

void mlir::mbt::populateGruPatterns(RewritePatternSet &patterns) {
  patterns.add<GruPattern, GruGradPattern>(patterns.getContext());
}
