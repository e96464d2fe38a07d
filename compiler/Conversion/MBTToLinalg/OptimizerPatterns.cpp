//===- OptimizerPatterns.cpp - mbt.fused_update to one loop nest ----------===//
//
// A fused update becomes (1) a prologue over the M models that turns each
// model's f64 hyperparameters and step into the f32 scalars the rule uses
// (bias corrections in double, as torch::optim computes them) and (2) one
// linalg.generic over [M, P] that updates parameters and state slots in
// place. The arithmetic follows torch::optim's order of operations.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/OptimizerRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// The per-model scalars of a rule, from its hyperparameters (f64) and step.
using PrologueFn = function_ref<SmallVector<Value>(
    OpBuilder &, Location, ArrayRef<Value> hyper, Value step)>;
/// The update of one element: (grad, scalars..., param, slots...) ->
/// (param', slots'...).
using BodyFn = function_ref<SmallVector<Value>(OpBuilder &, Location,
                                               ValueRange args)>;

struct RuleLowering {
  unsigned numScalars;
  /// Which of the scalars is the weight decay (a decay mask scales it).
  unsigned weightDecayScalar;
  PrologueFn prologue;
  BodyFn body;
};

Value f64(OpBuilder &b, Location l, double v) {
  return b.create<arith::ConstantOp>(l, b.getF64FloatAttr(v));
}
Value toF32(OpBuilder &b, Location l, Value v) {
  return b.create<arith::TruncFOp>(l, b.getF32Type(), v);
}

SmallVector<Value> adamPrologue(OpBuilder &b, Location l, ArrayRef<Value> h,
                                Value step) {
  // h = [lr, beta1, beta2, eps, weight_decay]
  Value one = f64(b, l, 1.0);
  Value bc1 = b.create<arith::SubFOp>(l, one, b.create<math::PowFOp>(l, h[1], step));
  Value bc2 = b.create<arith::SubFOp>(l, one, b.create<math::PowFOp>(l, h[2], step));
  Value stepSize = b.create<arith::DivFOp>(l, h[0], bc1);
  return {toF32(b, l, h[1]),
          toF32(b, l, b.create<arith::SubFOp>(l, one, h[1])),
          toF32(b, l, h[2]),
          toF32(b, l, b.create<arith::SubFOp>(l, one, h[2])),
          toF32(b, l, h[3]),
          toF32(b, l, h[4]),
          toF32(b, l, b.create<math::SqrtOp>(l, bc2)),
          toF32(b, l, b.create<arith::NegFOp>(l, stepSize))};
}

SmallVector<Value> adamBody(OpBuilder &b, Location l, ValueRange a) {
  // a = [grad, beta1, 1-beta1, beta2, 1-beta2, eps, wd, sqrt(bc2),
  //      -step_size, param, exp_avg, exp_avg_sq]
  Value g = a[0], p = a[9], m = a[10], v = a[11];
  g = b.create<arith::AddFOp>(l, g, b.create<arith::MulFOp>(l, a[6], p));
  Value m2 = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, m, a[1]),
                                     b.create<arith::MulFOp>(l, a[2], g));
  Value gg = b.create<arith::MulFOp>(l, g, g);
  Value v2 = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, v, a[3]),
                                     b.create<arith::MulFOp>(l, a[4], gg));
  Value denom = b.create<arith::AddFOp>(
      l, b.create<arith::DivFOp>(l, b.create<math::SqrtOp>(l, v2), a[7]), a[5]);
  Value p2 = b.create<arith::AddFOp>(
      l, p, b.create<arith::MulFOp>(l, a[8], b.create<arith::DivFOp>(l, m2, denom)));
  return {p2, m2, v2};
}

SmallVector<Value> sgdPrologue(OpBuilder &b, Location l, ArrayRef<Value> h,
                               Value) {
  // h = [lr, momentum, weight_decay]
  return {toF32(b, l, b.create<arith::NegFOp>(l, h[0])), toF32(b, l, h[1]),
          toF32(b, l, h[2])};
}

SmallVector<Value> sgdBody(OpBuilder &b, Location l, ValueRange a) {
  // a = [grad, -lr, momentum, wd, param, momentum_buffer]
  Value g = a[0], p = a[4], buf = a[5];
  Value d = b.create<arith::AddFOp>(l, g, b.create<arith::MulFOp>(l, a[3], p));
  // The buffer starts at zero, so its first value is d, as in torch::optim.
  Value buf2 = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, buf, a[2]), d);
  Value zero = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.0f));
  Value useMomentum =
      b.create<arith::CmpFOp>(l, arith::CmpFPredicate::ONE, a[2], zero);
  Value dir = b.create<arith::SelectOp>(l, useMomentum, buf2, d);
  Value p2 = b.create<arith::AddFOp>(l, p, b.create<arith::MulFOp>(l, a[1], dir));
  return {p2, buf2};
}

const RuleLowering *lookupLowering(StringRef rule) {
  static const RuleLowering adam{8, 5, adamPrologue, adamBody};
  static const RuleLowering sgd{3, 2, sgdPrologue, sgdBody};
  if (rule == "adam")
    return &adam;
  if (rule == "sgd")
    return &sgd;
  return nullptr;
}

struct FusedUpdatePattern : public OpRewritePattern<FusedUpdateOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusedUpdateOp op,
                                PatternRewriter &rewriter) const override {
    const RuleLowering *rule = lookupLowering(op.getRule());
    const OptimizerRule *info = lookupOptimizerRule(op.getRule());
    if (!rule || !info)
      return rewriter.notifyMatchFailure(op, "no lowering for this rule");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto flatType = op.getParams().getType();
    int64_t models = flatType.getDimSize(0), count = flatType.getDimSize(1);
    int64_t numSlots = op.getState().getType().getDimSize(0);
    auto idx = [&](int64_t v) -> OpFoldResult { return rewriter.getIndexAttr(v); };

    // (1) Per-model scalars.
    auto scalarType = RankedTensorType::get({models}, rewriter.getF32Type());
    SmallVector<Value> inits;
    for (unsigned i = 0; i < rule->numScalars; ++i)
      inits.push_back(rewriter.create<tensor::EmptyOp>(
          loc, scalarType.getShape(), rewriter.getF32Type()));
    int64_t numHyper = static_cast<int64_t>(info->hyper.size());
    SmallVector<Value> prologueIns;
    SmallVector<AffineMap> prologueMaps;
    for (int64_t j = 0; j < numHyper; ++j) {
      prologueIns.push_back(op.getHyper());
      prologueMaps.push_back(AffineMap::get(
          1, 0, {getAffineDimExpr(0, ctx), getAffineConstantExpr(j, ctx)}, ctx));
    }
    prologueIns.push_back(op.getStep());
    prologueMaps.push_back(rewriter.getMultiDimIdentityMap(1));
    for (unsigned i = 0; i < rule->numScalars; ++i)
      prologueMaps.push_back(rewriter.getMultiDimIdentityMap(1));
    auto prologue = rewriter.create<linalg::GenericOp>(
        loc, TypeRange(SmallVector<Type>(rule->numScalars, scalarType)),
        prologueIns, inits, prologueMaps, iterators(1),
        [&](OpBuilder &b, Location l, ValueRange a) {
          SmallVector<Value> hyper(a.begin(), a.begin() + numHyper);
          b.create<linalg::YieldOp>(l, rule->prologue(b, l, hyper, a[numHyper]));
        });

    // (2) One loop nest over [M, P], in place on params and slots.
    SmallVector<Value> slots;
    auto slotType = RankedTensorType::get({models, count}, rewriter.getF32Type());
    for (int64_t s = 0; s < numSlots; ++s)
      slots.push_back(rewriter.create<tensor::ExtractSliceOp>(
          loc, slotType, op.getState(),
          SmallVector<OpFoldResult>{idx(s), idx(0), idx(0)},
          SmallVector<OpFoldResult>{idx(1), idx(models), idx(count)},
          SmallVector<OpFoldResult>{idx(1), idx(1), idx(1)}));
    SmallVector<Value> ins{op.getGrads()};
    llvm::append_range(ins, prologue.getResults());
    Value mask = op.getDecayMask();
    if (mask)
      ins.push_back(mask);
    SmallVector<Value> outs{op.getParams()};
    llvm::append_range(outs, slots);
    AffineMap id = rewriter.getMultiDimIdentityMap(2);
    AffineMap perModel = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    AffineMap perColumn = AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx);
    SmallVector<AffineMap> maps{id};
    maps.append(rule->numScalars, perModel);
    if (mask)
      maps.push_back(perColumn);
    maps.append(outs.size(), id);
    SmallVector<Type> types(outs.size(), flatType);
    unsigned numScalars = rule->numScalars;
    unsigned wd = 1 + rule->weightDecayScalar;
    auto update = rewriter.create<linalg::GenericOp>(
        loc, types, ins, outs, maps, iterators(2),
        [&](OpBuilder &b, Location l, ValueRange a) {
          // The rule sees (grad, scalars..., outs...); a masked column's
          // weight decay is wd * mask.
          SmallVector<Value> args(a.begin(), a.begin() + 1 + numScalars);
          if (mask)
            args[wd] = b.create<arith::MulFOp>(l, args[wd], a[1 + numScalars]);
          args.append(a.begin() + 1 + numScalars + (mask ? 1 : 0), a.end());
          b.create<linalg::YieldOp>(l, rule->body(b, l, args));
        });

    Value state = op.getState();
    for (int64_t s = 0; s < numSlots; ++s)
      state = rewriter.create<tensor::InsertSliceOp>(
          loc, update.getResult(1 + s), state,
          SmallVector<OpFoldResult>{idx(s), idx(0), idx(0)},
          SmallVector<OpFoldResult>{idx(1), idx(models), idx(count)},
          SmallVector<OpFoldResult>{idx(1), idx(1), idx(1)});
    rewriter.replaceOp(op, {update.getResult(0), state});
    return success();
  }
};

} // namespace

void mlir::mbt::populateOptimizerPatterns(RewritePatternSet &patterns) {
  patterns.add<FusedUpdatePattern>(patterns.getContext());
}
