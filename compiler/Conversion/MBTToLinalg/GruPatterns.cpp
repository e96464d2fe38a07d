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
// projections, which the generics read through views (RecurrentBuilder.h).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "compiler/Conversion/MBTToLinalg/RecurrentBuilder.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// A GRU step's gates from its 9 gate operands (gx r z n, gh r z n, bias
/// r z n): r, z, n and gh_n + bias_n.
struct GruGates {
  Value r, z, n, recurrentN;
};
GruGates gruGates(OpBuilder &nb, Location l, ValueRange a) {
  auto pre = [&](int k) {
    return nb.create<arith::AddFOp>(
        l, a[k], nb.create<arith::AddFOp>(l, a[3 + k], a[6 + k]));
  };
  GruGates g;
  g.r = RecurrentBuilder::sigmoid(nb, l, pre(0));
  g.z = RecurrentBuilder::sigmoid(nb, l, pre(1));
  g.recurrentN = nb.create<arith::AddFOp>(l, a[5], a[8]);
  g.n = nb.create<math::TanhOp>(
      l, nb.create<arith::AddFOp>(
             l, a[2], nb.create<arith::MulFOp>(l, g.r, g.recurrentN)));
  return g;
}

struct GruPattern : public OpConversionPattern<GruOp> {
  GruPattern(MLIRContext *context, bool perModel)
      : OpConversionPattern(context), perModel(perModel) {}
  LogicalResult
  matchAndRewrite(GruOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RecurrentBuilder g(rewriter, loc, adaptor.getInputs(), adaptor.getWeight(),
                       3);
    SmallVector<Value> results =
        g.perModel({adaptor.getInputs(), adaptor.getWeight(), adaptor.getBias(),
                    adaptor.getTokens()},
                   {g.emptyPositions(cast<RankedTensorType>(op.getType()))},
                   perModel, [&](ValueRange in, ValueRange out) {
                     return scan(rewriter, loc, in, out);
                   });
    rewriter.replaceOp(op, results);
    return success();
  }

  /// The states of inputs, weight, bias and tokens `in`, written into
  /// `out`.
  static SmallVector<Value> scan(ConversionPatternRewriter &rewriter,
                                 Location loc, ValueRange in, ValueRange out) {
    Value inputs = in[0], weight = in[1], bias = in[2], allTokens = in[3];
    RecurrentBuilder g(rewriter, loc, inputs, weight, 3);
    auto rowType = g.rowsType(g.hidden), gateType = g.rowsType(3 * g.hidden);
    Value h0 = g.zeros(rowType, g.rowsSources());
    ValueRange results = g.loop(
        ValueRange{h0, out[0]}, /*backward=*/false,
        [&](Value t, ValueRange carried) -> SmallVector<Value> {
          Location l = loc;
          Value h = carried[0];
          Value gx = g.at(inputs, t), tokens = g.at(allTokens, t);
          Value gh = g.matmul(h, weight, g.zeros(gateType, g.rowsSources()),
                              /*transposeWeight=*/false);
          // The new state overwrites h (the generic's first output): each
          // element reads only its own old value, and the loop's state is
          // updated in place (bufferization needs the yielded state to be
          // h's). The same loop writes it into the states at t, a second
          // store instead of a copy of the row.
          SmallVector<AffineMap> maps = g.gateMaps();
          maps.append({g.token(), g.row(), g.row()});
          SmallVector<Value> operands = g.gateOperands(gx, gh, bias);
          operands.push_back(tokens);
          auto step = rewriter.create<linalg::GenericOp>(
              l, TypeRange{rowType, rowType}, operands,
              ValueRange{h, g.at(carried[1], t)}, maps, iterators(g.p + 2),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                GruGates s = gruGates(nb, nl, a);
                Value one = g.constant(nb, nl, 1.0);
                Value old = a[10];
                Value keep = nb.create<arith::MulFOp>(nl, s.z, old);
                Value fresh = nb.create<arith::MulFOp>(
                    nl, nb.create<arith::SubFOp>(nl, one, s.z), s.n);
                Value updated = nb.create<arith::AddFOp>(nl, fresh, keep);
                Value next = nb.create<arith::SelectOp>(
                    nl, RecurrentBuilder::isReal(nb, nl, a[9]), updated, old);
                nb.create<linalg::YieldOp>(nl, ValueRange{next, next});
              });
          return {step.getResult(0), g.put(step.getResult(1), carried[1], t)};
        });
    return {results[1]};
  }
  bool perModel;
};

struct GruGradPattern : public OpConversionPattern<GruGradOp> {
  GruGradPattern(MLIRContext *context, bool perModel)
      : OpConversionPattern(context), perModel(perModel) {}
  LogicalResult
  matchAndRewrite(GruGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RecurrentBuilder g(rewriter, loc, adaptor.getInputs(), adaptor.getWeight(),
                       3);
    SmallVector<Value> results = g.perModel(
        {adaptor.getInputs(), adaptor.getWeight(), adaptor.getBias(),
         adaptor.getTokens(), adaptor.getStates(), adaptor.getGrad()},
        g.adjointInits(adaptor.getWeight(), adaptor.getBias()), perModel,
        [&](ValueRange in, ValueRange out) {
          return scanAdjoint(rewriter, loc, in, out);
        });
    rewriter.replaceOp(op, results);
    return success();
  }

  /// The adjoints of the inputs, weight and bias of inputs, weight, bias,
  /// tokens, states and the states' adjoint `in`, accumulated into `out`
  /// (empty, zeros, zeros).
  static SmallVector<Value> scanAdjoint(ConversionPatternRewriter &rewriter,
                                        Location loc, ValueRange in,
                                        ValueRange out) {
    Value inputs = in[0], weight = in[1], bias = in[2], allTokens = in[3],
          states = in[4], grad = in[5];
    RecurrentBuilder g(rewriter, loc, inputs, weight, 3);
    auto rowType = g.rowsType(g.hidden), gateType = g.rowsType(3 * g.hidden);
    Value dh = g.zeros(rowType, g.rowsSources());
    Value noState = g.zeros(rowType, g.rowsSources());
    ValueRange results = g.loop(
        ValueRange{dh, out[0], out[1], out[2]}, /*backward=*/true,
        [&](Value t, ValueRange carried) -> SmallVector<Value> {
          Location l = loc;
          // h_{t-1}, 0 before the first position.
          Value hPrevious = g.previous(states, t, noState);
          Value gx = g.at(inputs, t), tokens = g.at(allTokens, t);
          Value dState = g.at(grad, t);
          Value gh =
              g.matmul(hPrevious, weight, g.zeros(gateType, g.rowsSources()),
                       /*transposeWeight=*/false);
          // The gates' adjoints: dr, dz, dn (before their nonlinearities),
          // the adjoint of gh_n, and of h_{t-1} through the z path. The
          // last overwrites the carried adjoint dh (its own output), so
          // that the loop updates it in place.
          SmallVector<AffineMap> maps = g.gateMaps();
          maps.append({g.row(), g.token(), g.row()});
          maps.append(5, g.row());
          SmallVector<Type> types(5, rowType);
          // dr, dz and dn go straight into the inputs' adjoint at t.
          Value dgxAtT = g.at(carried[1], t);
          SmallVector<Value> inits = g.gatesOf(dgxAtT);
          inits.push_back(buildEmpty(rewriter, l, rowType, g.rowsSources()));
          inits.push_back(carried[0]);
          SmallVector<Value> operands = g.gateOperands(gx, gh, bias);
          operands.append({hPrevious, tokens, dState});
          auto adjoints = rewriter.create<linalg::GenericOp>(
              l, types, operands, inits, maps, iterators(g.p + 2),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                GruGates gate = gruGates(nb, nl, a);
                Value oneF = g.constant(nb, nl, 1.0),
                      zeroF = g.constant(nb, nl, 0.0);
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
                Value real = RecurrentBuilder::isReal(nb, nl, a[10]);
                auto masked = [&](Value v, Value otherwise) {
                  return nb.create<arith::SelectOp>(nl, real, v, otherwise)
                      .getResult();
                };
                nb.create<linalg::YieldOp>(
                    nl,
                    ValueRange{masked(drPre, zeroF), masked(dzPre, zeroF),
                               masked(dnPre, zeroF), masked(dRecurrentN, zeroF),
                               masked(dDirect, total)});
              });
          Value drPre = adjoints.getResult(0), dzPre = adjoints.getResult(1),
                dnPre = adjoints.getResult(2), dghN = adjoints.getResult(3),
                dDirect = adjoints.getResult(4);
          Value dgx = g.concat({drPre, dzPre, dnPre}, dgxAtT);
          Value dgh = g.concat({drPre, dzPre, dghN});
          // h_{t-1}'s adjoint: the z path plus dgh W_hh^T.
          Value dPrevious = g.matmul(dgh, weight, dDirect,
                                     /*transposeWeight=*/true);
          Value dW = g.weightGradient(hPrevious, dgh, carried[2]);
          Value dB = g.biasGradient(dgh, carried[3]);
          return {dPrevious, g.put(dgx, carried[1], t), dW, dB};
        });
    return llvm::to_vector(results.drop_front());
  }
  bool perModel;
};

} // namespace

void mlir::mbt::populateGruPatterns(RewritePatternSet &patterns,
                                    bool perModel) {
  patterns.add<GruPattern, GruGradPattern>(patterns.getContext(), perModel);
}
