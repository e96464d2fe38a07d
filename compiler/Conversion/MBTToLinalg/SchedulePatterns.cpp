//===- SchedulePatterns.cpp - learning-rate schedules to linalg -----------===//
//
// mbt.lr_schedule becomes two small loops over the models: one evaluates
// the schedule's factor from the step and the model's parameters, in
// double (PyTorch's schedulers compute in Python floats); the other scales
// the learning-rate column of the hyperparameters by it. s is the number
// of scheduler steps taken before this optimizer step (a scheduler stepped
// after every optimizer step, as in PyTorch's training loops):
//   step        gamma^floor(s / step_size)                   (StepLR)
//   exponential gamma^s                                      (ExponentialLR)
//   cosine      s / warmup while s < warmup, then min_factor + (1 -
//               min_factor) * (1 + cos(pi * p)) / 2 with p = (s - warmup) /
//               (total - warmup) capped at 1 (transformers' cosine)
//   linear      the same warmup, then end_factor + (1 - end_factor) * (1 - p)
//   one_cycle   OneCycleLR's cosine annealing from max_lr / div_factor up to
//               max_lr over pct_start * total steps, then down to
//               max_lr / div_factor / final_div_factor (momentum not cycled)
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// Emits arithmetic on f64 scalars.
struct F64 {
  OpBuilder &b;
  Location l;
  Value c(double v) {
    return b.create<arith::ConstantOp>(l, b.getF64FloatAttr(v));
  }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(l, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(l, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(l, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(l, x, y); }
  Value max(Value x, Value y) { return b.create<arith::MaximumFOp>(l, x, y); }
  Value min(Value x, Value y) { return b.create<arith::MinimumFOp>(l, x, y); }
  Value pow(Value x, Value y) { return b.create<math::PowFOp>(l, x, y); }
  Value cos(Value x) { return b.create<math::CosOp>(l, x); }
  Value floor(Value x) { return b.create<math::FloorOp>(l, x); }
  Value lt(Value x, Value y) {
    return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, x, y);
  }
  Value le(Value x, Value y) {
    return b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return b.create<arith::SelectOp>(l, cond, x, y);
  }
};

/// The factor of schedule `rule` at 0-based step `s` with parameters `p`.
Value emitFactor(F64 f, Schedule rule, Value s, ArrayRef<Value> p) {
  const double pi = 3.14159265358979323846;
  switch (rule) {
  case Schedule::constant:
    return f.c(1.0);
  case Schedule::step:
    return f.pow(p[1], f.floor(f.div(s, p[0])));
  case Schedule::exponential:
    return f.pow(p[0], s);
  case Schedule::cosine:
  case Schedule::linear: {
    Value warmup = p[1], floor = p[2];
    Value warm = f.div(s, f.max(f.c(1.0), warmup));
    Value progress =
        f.min(f.div(f.sub(s, warmup), f.max(f.c(1.0), f.sub(p[0], warmup))),
              f.c(1.0));
    Value shape =
        rule == Schedule::cosine
            ? f.mul(f.c(0.5), f.add(f.c(1.0), f.cos(f.mul(f.c(pi), progress))))
            : f.sub(f.c(1.0), progress);
    Value decay = f.add(floor, f.mul(f.sub(f.c(1.0), floor), shape));
    return f.select(f.lt(s, warmup), warm, decay);
  }
  case Schedule::one_cycle: {
    Value initial = f.div(f.c(1.0), p[2]);
    Value minimum = f.div(initial, p[3]);
    Value phase1End = f.sub(f.mul(p[1], p[0]), f.c(1.0));
    Value phase2End = f.sub(p[0], f.c(1.0));
    auto anneal = [&](Value from, Value to, Value pct) {
      Value wave = f.add(f.cos(f.mul(f.c(pi), pct)), f.c(1.0));
      return f.add(to, f.mul(f.div(f.sub(from, to), f.c(2.0)), wave));
    };
    Value up = anneal(initial, f.c(1.0), f.div(s, phase1End));
    Value pct = f.min(f.div(f.sub(s, phase1End), f.sub(phase2End, phase1End)),
                      f.c(1.0));
    Value down = anneal(f.c(1.0), minimum, pct);
    return f.select(f.le(s, phase1End), up, down);
  }
  }
  llvm_unreachable("a Schedule enumerator without a formula");
}

struct LRSchedulePattern : public OpConversionPattern<LRScheduleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LRScheduleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto hyperType = op.getType();
    int64_t models = hyperType.getDimSize(0);
    int64_t k = op.getParams().getType().getDimSize(1);
    auto factorType = RankedTensorType::get({models}, rewriter.getF64Type());

    // factor[m] from step[m] and params[m, 0..k).
    SmallVector<Value> inputs{adaptor.getStep()};
    SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(1)};
    for (int64_t j = 0; j < k; ++j) {
      inputs.push_back(adaptor.getParams());
      maps.push_back(AffineMap::get(
          1, 0, {getAffineDimExpr(0, ctx), getAffineConstantExpr(j, ctx)},
          ctx));
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(1));
    Value empty = rewriter.create<tensor::EmptyOp>(loc, factorType.getShape(),
                                                   rewriter.getF64Type());
    Schedule rule = op.getRule();
    Value factor =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{factorType}, inputs, ValueRange{empty}, maps,
                iterators(1),
                [&](OpBuilder &b, Location l, ValueRange a) {
                  F64 f{b, l};
                  Value s = f.sub(a[0], f.c(1.0)); // scheduler steps so far
                  SmallVector<Value> params(a.begin() + 1, a.begin() + 1 + k);
                  b.create<linalg::YieldOp>(
                      l, ValueRange{emitFactor(f, rule, s, params)});
                })
            .getResult(0);

    // hyper with the learning-rate column scaled by the factor.
    int64_t lrColumn = op.getColumn();
    AffineMap id2 = rewriter.getMultiDimIdentityMap(2);
    Value out = rewriter.create<tensor::EmptyOp>(loc, hyperType.getShape(),
                                                 rewriter.getF64Type());
    rewriter.replaceOp(
        op, rewriter
                .create<linalg::GenericOp>(
                    loc, TypeRange{hyperType},
                    ValueRange{adaptor.getHyper(), factor}, ValueRange{out},
                    ArrayRef<AffineMap>{id2, droppingMap(ctx, 2, {1}), id2},
                    iterators(2),
                    [&](OpBuilder &b, Location l, ValueRange a) {
                      Value column = b.create<linalg::IndexOp>(l, 1);
                      Value lr = b.create<arith::ConstantIndexOp>(l, lrColumn);
                      Value isLr = b.create<arith::CmpIOp>(
                          l, arith::CmpIPredicate::eq, column, lr);
                      Value scaled = b.create<arith::MulFOp>(l, a[0], a[1]);
                      b.create<linalg::YieldOp>(
                          l, ValueRange{b.create<arith::SelectOp>(
                                 l, isLr, scaled, a[0])});
                    })
                .getResult(0));
    return success();
  }
};

} // namespace

void mlir::mbt::populateSchedulePatterns(RewritePatternSet &patterns) {
  patterns.add<LRSchedulePattern>(patterns.getContext());
}
