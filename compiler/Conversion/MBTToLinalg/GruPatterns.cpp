//===- GruPatterns.cpp - mbt.gru and its adjoint --------------------------===//
//
// The recurrence is an scf.for over the positions T whose iteration
// arguments are the state h [P..., B, H], the states written so far
// [P..., B, T, H] and, where the gradient reads them, the gates [P..., B,
// T, 4H]. A step reads its slice of the input projections, runs one
// (batch) matmul h W_hh, and one linalg.generic that computes the gates
// and the new state (the old one at padding), which goes into the states
// at t, and r, z, n and g_n (h W_hh + b at n's columns) into the gates at
// t. The adjoint runs the loop from T - 1 down to 0, carrying the state's
// adjoint and accumulating the weight's and bias's gradients in iteration
// arguments: per step one generic that reads the gates at t and writes
// the gates' adjoints, a matmul back to h_{t-1}, one for the weight and a
// reduction for the bias. Gates r, z, n sit at columns [0, H), [H, 2H),
// [2H, 3H) of the 3H projections, which the generics read through views
// (RecurrentBuilder.h).
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
    auto gatesType = cast<RankedTensorType>(op.getGates().getType());
    // The gates are written only for a gradient that reads them (not in
    // an evaluation step).
    bool keepGates = !op.getGates().use_empty();
    SmallVector<Value> outputs{
        g.emptyPositions(cast<RankedTensorType>(op.getStates().getType()))};
    if (keepGates)
      outputs.push_back(g.emptyPositions(gatesType));
    SmallVector<Value> results =
        g.perModel({adaptor.getInputs(), adaptor.getWeight(), adaptor.getBias(),
                    adaptor.getTokens()},
                   outputs, perModel, [&](ValueRange in, ValueRange out) {
                     return scan(rewriter, loc, in, out);
                   });
    if (!keepGates)
      results.push_back(g.emptyPositions(gatesType));
    rewriter.replaceOp(op, results);
    return success();
  }

  /// The states of inputs, weight, bias and tokens `in`, written into
  /// `out`, and with a second `out` the gates.
  static SmallVector<Value> scan(ConversionPatternRewriter &rewriter,
                                 Location loc, ValueRange in, ValueRange out) {
    Value inputs = in[0], weight = in[1], bias = in[2], allTokens = in[3];
    RecurrentBuilder g(rewriter, loc, inputs, weight, 3);
    auto rowType = g.rowsType(g.hidden), gateType = g.rowsType(3 * g.hidden);
    bool keepGates = out.size() == 2;
    SmallVector<Value> inits{g.zeros(rowType, g.rowsSources())};
    llvm::append_range(inits, out);
    ValueRange results = g.loop(
        inits, /*backward=*/false,
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
          // store instead of a copy of the row, and the gates into their
          // columns of the gates at t.
          SmallVector<Value> operands = g.gateOperands(gx, gh, bias);
          operands.push_back(tokens);
          SmallVector<Value> outs{h, g.at(carried[1], t)};
          Value gatesAtT = keepGates ? g.at(carried[2], t) : Value();
          if (keepGates)
            llvm::append_range(outs, g.gatesOf(gatesAtT));
          SmallVector<AffineMap> maps = g.gateMaps();
          maps.push_back(g.token());
          maps.append(outs.size(), g.row());
          auto step = rewriter.create<linalg::GenericOp>(
              l, ValueRange(outs).getTypes(), operands, outs, maps,
              iterators(g.p + 2),
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
                SmallVector<Value> yields{next, next};
                if (keepGates)
                  yields.append({s.r, s.z, s.n, s.recurrentN});
                nb.create<linalg::YieldOp>(nl, yields);
              });
          SmallVector<Value> next{step.getResult(0),
                                  g.put(step.getResult(1), carried[1], t)};
          if (keepGates)
            next.push_back(g.put(
                g.concat(SmallVector<Value>(step.getResults().drop_front(2)),
                         gatesAtT),
                carried[2], t));
          return next;
        });
    return llvm::to_vector(results.drop_front());
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
        {adaptor.getInputs(), adaptor.getWeight(), adaptor.getTokens(),
         adaptor.getStates(), adaptor.getGates(), adaptor.getGrad()},
        g.adjointInits(adaptor.getWeight(), adaptor.getBias()), perModel,
        [&](ValueRange in, ValueRange out) {
          return scanAdjoint(rewriter, loc, in, out);
        });
    rewriter.replaceOp(op, results);
    return success();
  }

  /// The adjoints of the inputs, weight and bias from inputs, weight,
  /// tokens, states, gates and the states' adjoint `in` (the bias is not
  /// read: the gates hold what it added), accumulated into `out` (empty,
  /// zeros, zeros).
  static SmallVector<Value> scanAdjoint(ConversionPatternRewriter &rewriter,
                                        Location loc, ValueRange in,
                                        ValueRange out) {
    Value inputs = in[0], weight = in[1], allTokens = in[2], states = in[3],
          allGates = in[4], grad = in[5];
    RecurrentBuilder g(rewriter, loc, inputs, weight, 3);
    auto rowType = g.rowsType(g.hidden), gateType = g.rowsType(3 * g.hidden);
    Value dh = g.zeros(rowType, g.rowsSources());
    Value noState = g.zeros(rowType, g.rowsSources());
    // dgh's buffer, carried so that each step writes it in place (a new
    // tensor per step would fold its gates' slices into equal empty
    // tensors, which bufferize apart from it).
    Value dghBuffer = buildEmpty(rewriter, loc, gateType, g.rowsSources());
    ValueRange results = g.loop(
        ValueRange{dh, out[0], out[1], out[2], dghBuffer}, /*backward=*/true,
        [&](Value t, ValueRange carried) -> SmallVector<Value> {
          Location l = loc;
          // h_{t-1}, 0 before the first position.
          Value hPrevious = g.previous(states, t, noState);
          Value tokens = g.at(allTokens, t), dState = g.at(grad, t);
          // From the forward pass's gates at t, the gates' adjoints (before
          // their nonlinearities) into the inputs' adjoint at t and, with
          // n's through r, into the adjoint of h W_hh + b (dgh); and
          // h_{t-1}'s adjoint through the z path, which overwrites the
          // carried adjoint dh (its own output), so that the loop updates
          // it in place.
          SmallVector<Value> operands = g.gatesOf(g.at(allGates, t));
          operands.append({hPrevious, tokens, dState});
          SmallVector<AffineMap> maps(4, g.row());
          maps.append({g.row(), g.token(), g.row()});
          maps.append(7, g.row());
          Value dgxAtT = g.at(carried[1], t);
          Value dghInit = carried[4];
          SmallVector<Value> inits = g.gatesOf(dgxAtT);
          llvm::append_range(inits, g.gatesOf(dghInit));
          inits.push_back(carried[0]);
          auto adjoints = rewriter.create<linalg::GenericOp>(
              l, SmallVector<Type>(7, rowType), operands, inits, maps,
              iterators(g.p + 2),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                GruGates gate{a[0], a[1], a[2], a[3]};
                Value hOld = a[4], token = a[5], dStateAtT = a[6];
                Value oneF = g.constant(nb, nl, 1.0),
                      zeroF = g.constant(nb, nl, 0.0);
                // a[13]: the carried dh, the last output's old value.
                Value total = nb.create<arith::AddFOp>(nl, a[13], dStateAtT);
                auto mul = [&](Value x, Value y) {
                  return nb.create<arith::MulFOp>(nl, x, y).getResult();
                };
                auto sub = [&](Value x, Value y) {
                  return nb.create<arith::SubFOp>(nl, x, y).getResult();
                };
                Value dn = mul(total, sub(oneF, gate.z));
                Value dz = mul(total, sub(hOld, gate.n));
                Value dnPre = mul(dn, sub(oneF, mul(gate.n, gate.n)));
                Value drPre = mul(mul(dnPre, gate.recurrentN),
                                  mul(gate.r, sub(oneF, gate.r)));
                Value dzPre = mul(dz, mul(gate.z, sub(oneF, gate.z)));
                Value dRecurrentN = mul(dnPre, gate.r);
                Value dDirect = mul(total, gate.z);
                Value real = RecurrentBuilder::isReal(nb, nl, token);
                auto masked = [&](Value v, Value otherwise) {
                  return nb.create<arith::SelectOp>(nl, real, v, otherwise)
                      .getResult();
                };
                Value dr = masked(drPre, zeroF), dz0 = masked(dzPre, zeroF);
                // dr and dz go to both adjoints: a second store each
                // instead of a copy.
                nb.create<linalg::YieldOp>(
                    nl, ValueRange{dr, dz0, masked(dnPre, zeroF), dr, dz0,
                                   masked(dRecurrentN, zeroF),
                                   masked(dDirect, total)});
              });
          ValueRange r = adjoints.getResults();
          Value dgx = g.concat({r[0], r[1], r[2]}, dgxAtT);
          Value dgh = g.concat({r[3], r[4], r[5]}, dghInit);
          // h_{t-1}'s adjoint: the z path plus dgh W_hh^T.
          Value dPrevious = g.matmul(dgh, weight, r[6],
                                     /*transposeWeight=*/true);
          Value dW = g.weightGradient(hPrevious, dgh, carried[2]);
          Value dB = g.biasGradient(dgh, carried[3]);
          return {dPrevious, g.put(dgx, carried[1], t), dW, dB, dgh};
        });
    return llvm::to_vector(results.slice(1, 3));
  }
  bool perModel;
};

} // namespace

void mlir::mbt::populateGruPatterns(RewritePatternSet &patterns,
                                    bool perModel) {
  patterns.add<GruPattern, GruGradPattern>(patterns.getContext(), perModel);
}
