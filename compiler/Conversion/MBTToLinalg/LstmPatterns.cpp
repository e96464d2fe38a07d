//===- LstmPatterns.cpp - mbt.lstm and its adjoint ------------------------===//
//
// As mbt.gru (GruPatterns.cpp), with a cell state beside the hidden one:
// the forward loop carries h and c and writes both into the states and
// cells at t, and the gates after their nonlinearities into the gates at t
// where the adjoint reads them; each step is one (batch) matmul h W_hh and
// one generic that updates h and c in place (both kept at padding). The
// adjoint runs the loop backward carrying the adjoints of h and c, reading
// the gates, c_{t-1} and c_t back: one matmul per step (dgates W_hh^T)
// besides the weight's gradient, none recomputing h_{t-1} W_hh. Gates i,
// f, g, o are views of the 4H columns (RecurrentBuilder.h).
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

/// An LSTM step's gates from its 12 gate operands (gx, gh and bias, each
/// i f g o).
struct LstmGates {
  Value i, f, g, o;
};
LstmGates lstmGates(OpBuilder &nb, Location l, ValueRange a) {
  auto pre = [&](int k) {
    return nb.create<arith::AddFOp>(
        l, a[k], nb.create<arith::AddFOp>(l, a[4 + k], a[8 + k]));
  };
  LstmGates gates;
  gates.i = RecurrentBuilder::sigmoid(nb, l, pre(0));
  gates.f = RecurrentBuilder::sigmoid(nb, l, pre(1));
  gates.g = nb.create<math::TanhOp>(l, pre(2));
  gates.o = RecurrentBuilder::sigmoid(nb, l, pre(3));
  return gates;
}

struct LstmPattern : public OpConversionPattern<LstmOp> {
  LstmPattern(MLIRContext *context, bool perModel)
      : OpConversionPattern(context), perModel(perModel) {}
  LogicalResult
  matchAndRewrite(LstmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RecurrentBuilder g(rewriter, loc, adaptor.getInputs(), adaptor.getWeight(),
                       4);
    auto statesType = cast<RankedTensorType>(op.getStates().getType());
    auto gatesType = cast<RankedTensorType>(op.getGates().getType());
    // The gates are written only for a gradient that reads them (not in
    // an evaluation step).
    bool keepGates = !op.getGates().use_empty();
    SmallVector<Value> outputs{g.emptyPositions(statesType),
                               g.emptyPositions(statesType)};
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

  /// The states and cells of inputs, weight, bias and tokens `in`, written
  /// into `out`, and with a third `out` the gates.
  static SmallVector<Value> scan(ConversionPatternRewriter &rewriter,
                                 Location loc, ValueRange in, ValueRange out) {
    Value inputs = in[0], weight = in[1], bias = in[2], allTokens = in[3];
    RecurrentBuilder g(rewriter, loc, inputs, weight, 4);
    auto rowType = g.rowsType(g.hidden), gateType = g.rowsType(4 * g.hidden);
    bool keepGates = out.size() == 3;
    SmallVector<Value> inits{g.zeros(rowType, g.rowsSources()),
                             g.zeros(rowType, g.rowsSources())};
    llvm::append_range(inits, out);
    ValueRange results = g.loop(
        inits, /*backward=*/false,
        [&](Value t, ValueRange carried) -> SmallVector<Value> {
          Location l = loc;
          Value gx = g.at(inputs, t), tokens = g.at(allTokens, t);
          Value gh =
              g.matmul(carried[0], weight, g.zeros(gateType, g.rowsSources()),
                       /*transposeWeight=*/false);
          // h and c are updated in place (the generic's outputs), and
          // written into the states and cells at t by the same loop: a
          // second store of each value instead of a copy of the rows. The
          // gates go into their columns of the gates at t.
          SmallVector<Value> outs{carried[0], carried[1], g.at(carried[2], t),
                                  g.at(carried[3], t)};
          Value gatesAtT = keepGates ? g.at(carried[4], t) : Value();
          if (keepGates)
            llvm::append_range(outs, g.gatesOf(gatesAtT));
          SmallVector<AffineMap> maps = g.gateMaps();
          maps.push_back(g.token());
          maps.append(outs.size(), g.row());
          SmallVector<Value> operands = g.gateOperands(gx, gh, bias);
          operands.push_back(tokens);
          auto step = rewriter.create<linalg::GenericOp>(
              l, ValueRange(outs).getTypes(), operands, outs, maps,
              iterators(g.p + 2),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                LstmGates s = lstmGates(nb, nl, a);
                Value oldH = a[13], oldC = a[14];
                Value c = nb.create<arith::AddFOp>(
                    nl, nb.create<arith::MulFOp>(nl, s.f, oldC),
                    nb.create<arith::MulFOp>(nl, s.i, s.g));
                Value h = nb.create<arith::MulFOp>(
                    nl, s.o, nb.create<math::TanhOp>(nl, c));
                Value real = RecurrentBuilder::isReal(nb, nl, a[12]);
                Value newH = nb.create<arith::SelectOp>(nl, real, h, oldH);
                Value newC = nb.create<arith::SelectOp>(nl, real, c, oldC);
                SmallVector<Value> yields{newH, newC, newH, newC};
                if (keepGates)
                  yields.append({s.i, s.f, s.g, s.o});
                nb.create<linalg::YieldOp>(nl, yields);
              });
          SmallVector<Value> next{step.getResult(0), step.getResult(1),
                                  g.put(step.getResult(2), carried[2], t),
                                  g.put(step.getResult(3), carried[3], t)};
          if (keepGates)
            next.push_back(g.put(
                g.concat(SmallVector<Value>(step.getResults().drop_front(4)),
                         gatesAtT),
                carried[4], t));
          return next;
        });
    return llvm::to_vector(results.drop_front(2));
  }
  bool perModel;
};

struct LstmGradPattern : public OpConversionPattern<LstmGradOp> {
  LstmGradPattern(MLIRContext *context, bool perModel)
      : OpConversionPattern(context), perModel(perModel) {}
  LogicalResult
  matchAndRewrite(LstmGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RecurrentBuilder g(rewriter, loc, adaptor.getInputs(), adaptor.getWeight(),
                       4);
    SmallVector<Value> results =
        g.perModel({adaptor.getInputs(), adaptor.getWeight(),
                    adaptor.getTokens(), adaptor.getStates(),
                    adaptor.getCells(), adaptor.getGates(), adaptor.getGrad()},
                   g.adjointInits(adaptor.getWeight(), adaptor.getBias()),
                   perModel, [&](ValueRange in, ValueRange out) {
                     return scanAdjoint(rewriter, loc, in, out);
                   });
    rewriter.replaceOp(op, results);
    return success();
  }

  /// The adjoints of the inputs, weight and bias of inputs, weight,
  /// tokens, states, cells, gates and the states' adjoint `in` (the bias
  /// is not read: the gates hold what it added), accumulated into `out`
  /// (empty, zeros, zeros).
  static SmallVector<Value> scanAdjoint(ConversionPatternRewriter &rewriter,
                                        Location loc, ValueRange in,
                                        ValueRange out) {
    Value inputs = in[0], weight = in[1], allTokens = in[2], states = in[3],
          cells = in[4], allGates = in[5], grad = in[6];
    RecurrentBuilder g(rewriter, loc, inputs, weight, 4);
    auto rowType = g.rowsType(g.hidden);
    Value dh = g.zeros(rowType, g.rowsSources());
    Value dc = g.zeros(rowType, g.rowsSources());
    Value noState = g.zeros(rowType, g.rowsSources());
    ValueRange results = g.loop(
        ValueRange{dh, dc, out[0], out[1], out[2]}, /*backward=*/true,
        [&](Value t, ValueRange carried) -> SmallVector<Value> {
          Location l = loc;
          // h_{t-1} and c_{t-1}, 0 before the first position.
          Value hPrevious = g.previous(states, t, noState);
          Value cPrevious = g.previous(cells, t, noState);
          Value cell = g.at(cells, t), tokens = g.at(allTokens, t);
          Value dState = g.at(grad, t);
          // From the forward pass's gates at t, the gates' adjoints (before
          // their nonlinearities), then h's adjoint apart from dgates
          // W_hh^T (nothing at a real token, all of it at padding) and
          // c_{t-1}'s, both over the carried ones.
          SmallVector<AffineMap> maps(4, g.row());
          maps.append({g.row(), g.row(), g.token(), g.row()});
          maps.append(6, g.row());
          SmallVector<Value> operands = g.gatesOf(g.at(allGates, t));
          operands.append({cPrevious, cell, tokens, dState});
          // The gates' adjoints go straight into the inputs' adjoint at t.
          Value dGatesAtT = g.at(carried[2], t);
          SmallVector<Value> inits = g.gatesOf(dGatesAtT);
          inits.append({carried[0], carried[1]});
          auto adjoints = rewriter.create<linalg::GenericOp>(
              l, SmallVector<Type>(6, rowType), operands, inits, maps,
              iterators(g.p + 2),
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                LstmGates gate{a[0], a[1], a[2], a[3]};
                Value oneF = g.constant(nb, nl, 1.0);
                Value zeroF = g.constant(nb, nl, 0.0);
                auto mul = [&](Value x, Value y) {
                  return nb.create<arith::MulFOp>(nl, x, y).getResult();
                };
                auto sub = [&](Value x, Value y) {
                  return nb.create<arith::SubFOp>(nl, x, y).getResult();
                };
                auto sigmoidGrad = [&](Value d, Value y) {
                  return mul(d, mul(y, sub(oneF, y)));
                };
                // a[4] c_{t-1}, a[5] c_t, a[6] token, a[7] dState,
                // a[12] the carried dh, a[13] the carried dc.
                Value dhTotal = nb.create<arith::AddFOp>(nl, a[12], a[7]);
                Value tanhC = nb.create<math::TanhOp>(nl, a[5]);
                Value dO = mul(dhTotal, tanhC);
                Value dcTotal = nb.create<arith::AddFOp>(
                    nl, a[13],
                    mul(mul(dhTotal, gate.o), sub(oneF, mul(tanhC, tanhC))));
                Value dI = sigmoidGrad(mul(dcTotal, gate.g), gate.i);
                Value dF = sigmoidGrad(mul(dcTotal, a[4]), gate.f);
                Value dG =
                    mul(mul(dcTotal, gate.i), sub(oneF, mul(gate.g, gate.g)));
                Value dOPre = sigmoidGrad(dO, gate.o);
                Value dcPrevious = mul(dcTotal, gate.f);
                Value real = RecurrentBuilder::isReal(nb, nl, a[6]);
                auto pick = [&](Value atReal, Value atPad) {
                  return nb.create<arith::SelectOp>(nl, real, atReal, atPad)
                      .getResult();
                };
                nb.create<linalg::YieldOp>(
                    nl,
                    ValueRange{pick(dI, zeroF), pick(dF, zeroF),
                               pick(dG, zeroF), pick(dOPre, zeroF),
                               pick(zeroF, dhTotal), pick(dcPrevious, a[13])});
              });
          Value dGates =
              g.concat({adjoints.getResult(0), adjoints.getResult(1),
                        adjoints.getResult(2), adjoints.getResult(3)},
                       dGatesAtT);
          Value dhPrevious = g.matmul(dGates, weight, adjoints.getResult(4),
                                      /*transposeWeight=*/true);
          Value dW = g.weightGradient(hPrevious, dGates, carried[3]);
          Value dB = g.biasGradient(dGates, carried[4]);
          return {dhPrevious, adjoints.getResult(5),
                  g.put(dGates, carried[2], t), dW, dB};
        });
    return llvm::to_vector(results.drop_front(2));
  }
  bool perModel;
};

} // namespace

void mlir::mbt::populateLstmPatterns(RewritePatternSet &patterns,
                                     bool perModel) {
  patterns.add<LstmPattern, LstmGradPattern>(patterns.getContext(), perModel);
}
