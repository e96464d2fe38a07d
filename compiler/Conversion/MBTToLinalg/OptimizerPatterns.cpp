//===- OptimizerPatterns.cpp - mbt.fused_update to one loop nest ----------===//
//
// A fused update becomes (1) a linalg.generic over the M models that runs
// the rule's `scalars` region (mbt.optimizer) on each model's f64
// hyperparameters and step, and (2) one linalg.generic over [M, P] that
// runs its `elements` region on every parameter element, updating the
// parameters and state slots in place. A decay mask runs the scalars a
// second time with weight_decay = 0, and each element picks its column's
// set.
//
// A model whose step is 0 (mbt.guard_step's mark of non-finite gradients,
// or the runtime's of a frozen model) keeps its parameters and slots: each
// result is selected against the old value.
//
// With `scalarsPerElement` (CUDA), there is no (1): every element of (2)
// runs the scalars region itself on its model's hyperparameters, so the
// update is one kernel. On a GPU the update is memory-bound and the few
// f64 operations per element are free, where a second launch is not; on
// the CPU the recomputation would cost time, so it keeps the prologue.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// Copies the ops of `block` (mapping its arguments to `args`) at `b`'s
/// insertion point and returns what its terminator yields.
SmallVector<Value> inlineBlock(OpBuilder &b, Block &block, ValueRange args) {
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> results;
  for (Value v : block.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

/// Which of the scalars yielded by `rule` depend on hyperparameter `index`.
SmallVector<bool> scalarsDependingOn(OptimizerOp rule, int index) {
  Block &block = rule.getScalars().front();
  llvm::DenseSet<Value> dependent;
  dependent.insert(block.getArgument(index));
  for (Operation &op : block.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return dependent.contains(v); }))
      for (Value r : op.getResults())
        dependent.insert(r);
  SmallVector<bool> result;
  for (Value v : block.getTerminator()->getOperands())
    result.push_back(dependent.contains(v));
  return result;
}

/// The lowering of one mbt.fused_update: the per-model scalars (1) and
/// the loop nest over [M, P] (2) of the file comment.
class FusedUpdateLowering {
public:
  FusedUpdateLowering(ConversionPatternRewriter &rewriter, FusedUpdateOp op,
                      OptimizerOp rule, bool scalarsPerElement)
      : rewriter(rewriter), op(op), rule(rule), loc(op.getLoc()),
        ctx(rewriter.getContext()), scalarsPerElement(scalarsPerElement),
        models(op.getParams().getType().getDimSize(0)),
        numHyper(rule.getNumHyper()),
        scalarTypes(rule.getScalarsYield()->getOperandTypes()),
        numScalars(scalarTypes.size()), mask(op.getDecayMask()),
        wdIndex(rule.getHyperIndex("weight_decay")) {}

  LogicalResult lower() {
    if (mask && wdIndex < 0)
      return rewriter.notifyMatchFailure(op, "the rule has no weight_decay");
    if (mask)
      decays = scalarsDependingOn(rule, wdIndex);
    else
      decays.assign(numScalars, false);
    SmallVector<Value> scalars, undecayed;
    if (!scalarsPerElement) {
      scalars = perModelScalars(/*zeroDecay=*/false);
      if (mask) {
        SmallVector<Value> all = perModelScalars(/*zeroDecay=*/true);
        for (unsigned j = 0; j < numScalars; ++j)
          if (decays[j])
            undecayed.push_back(all[j]);
      }
    }
    rewriter.replaceOp(op, buildUpdate(scalars, undecayed).getResults());
    return success();
  }

private:
  /// (1): a generic over the models running the scalars region on each
  /// model's hyperparameters and step (weight_decay 0 when `zeroDecay`).
  SmallVector<Value> perModelScalars(bool zeroDecay) {
    SmallVector<Value> inits;
    SmallVector<Type> types;
    for (Type t : scalarTypes) {
      types.push_back(RankedTensorType::get({models}, t));
      inits.push_back(
          rewriter.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{models}, t));
    }
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    for (int64_t j = 0; j < numHyper; ++j) {
      ins.push_back(op.getHyper());
      maps.push_back(AffineMap::get(
          1, 0, {getAffineDimExpr(0, ctx), getAffineConstantExpr(j, ctx)},
          ctx));
    }
    ins.push_back(op.getStep());
    maps.append(1 + numScalars, rewriter.getMultiDimIdentityMap(1));
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, types, ins, inits, maps, iterators(1),
        [&](OpBuilder &b, Location l, ValueRange a) {
          SmallVector<Value> args(a.take_front(numHyper + 1));
          if (zeroDecay)
            args[wdIndex] =
                b.create<arith::ConstantOp>(l, b.getF64FloatAttr(0.0));
          b.create<linalg::YieldOp>(
              l, inlineBlock(b, rule.getScalars().front(), args));
        });
    return SmallVector<Value>(generic.getResults());
  }

  /// (2): one loop nest over [M, P], in place on params and slots. Its
  /// inputs: the gradients; the per-model scalars (or, computing them per
  /// element, each hyperparameter column and the step); the mask.
  linalg::GenericOp buildUpdate(ArrayRef<Value> scalars,
                                ArrayRef<Value> undecayed) {
    AffineMap id = rewriter.getMultiDimIdentityMap(2);
    AffineMap perModel = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    AffineMap perColumn = AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx);
    SmallVector<Value> ins{op.getGrads()};
    SmallVector<AffineMap> maps{id};
    if (scalarsPerElement) {
      for (int64_t j = 0; j < numHyper; ++j) {
        ins.push_back(op.getHyper());
        maps.push_back(AffineMap::get(
            2, 0, {getAffineDimExpr(0, ctx), getAffineConstantExpr(j, ctx)},
            ctx));
      }
    } else {
      llvm::append_range(ins, scalars);
      llvm::append_range(ins, undecayed);
      maps.append(numScalars + undecayed.size(), perModel);
    }
    // The step is the last input before the mask.
    ins.push_back(op.getStep());
    maps.push_back(perModel);
    stepIndex = ins.size() - 1;
    if (mask) {
      ins.push_back(mask);
      maps.push_back(perColumn);
    }
    SmallVector<Value> outs{op.getParams()};
    llvm::append_range(outs, op.getState());
    maps.append(outs.size(), id);
    SmallVector<Type> types(outs.size(), op.getParams().getType());
    numIns = ins.size();
    return rewriter.create<linalg::GenericOp>(
        loc, types, ins, outs, maps, iterators(2),
        [&](OpBuilder &b, Location l, ValueRange a) {
          b.create<linalg::YieldOp>(l, updateElement(b, l, a));
        });
  }

  /// The body of (2): this element's scalars, the elements region on them,
  /// and every result selected against the old value where the step is 0.
  SmallVector<Value> updateElement(OpBuilder &b, Location l, ValueRange a) {
    // This element's scalars, and those with weight_decay = 0.
    SmallVector<Value> own, zeroDecay;
    if (scalarsPerElement) {
      SmallVector<Value> hyper(a.slice(1, numHyper + 1));
      own = inlineBlock(b, rule.getScalars().front(), hyper);
      if (mask) {
        hyper[wdIndex] = b.create<arith::ConstantOp>(l, b.getF64FloatAttr(0.0));
        zeroDecay = inlineBlock(b, rule.getScalars().front(), hyper);
      }
    } else {
      own.assign(a.begin() + 1, a.begin() + 1 + numScalars);
      unsigned next = 1 + numScalars;
      zeroDecay.assign(numScalars, Value());
      for (unsigned j = 0; j < numScalars; ++j)
        if (decays[j])
          zeroDecay[j] = a[next++];
    }
    // The rule's arguments: grad, param, slots, scalars. A column the mask
    // leaves undecayed takes the weight_decay = 0 scalars.
    SmallVector<Value> args{a[0]};
    args.append(a.begin() + numIns, a.end());
    Value decayed;
    if (mask) {
      Value zero = b.create<arith::ConstantOp>(l, b.getF32FloatAttr(0.0f));
      decayed = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::ONE,
                                        a[numIns - 1], zero);
    }
    for (unsigned j = 0; j < numScalars; ++j) {
      Value v = own[j];
      if (decays[j])
        v = b.create<arith::SelectOp>(l, decayed, v, zeroDecay[j]);
      args.push_back(v);
    }
    // A model whose step is 0 keeps its parameters and slots.
    SmallVector<Value> updated =
        inlineBlock(b, rule.getElements().front(), args);
    Value none = b.create<arith::ConstantOp>(l, b.getF64FloatAttr(0.0));
    Value steps = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::ONE,
                                          a[stepIndex], none);
    for (auto [value, old] : llvm::zip(updated, a.drop_front(numIns)))
      value = b.create<arith::SelectOp>(l, steps, value, old);
    return updated;
  }

  ConversionPatternRewriter &rewriter;
  FusedUpdateOp op;
  OptimizerOp rule;
  Location loc;
  MLIRContext *ctx;
  bool scalarsPerElement;
  int64_t models, numHyper;
  TypeRange scalarTypes;
  unsigned numScalars;
  Value mask;
  int wdIndex;
  /// Which scalars depend on the weight decay (with a mask).
  SmallVector<bool> decays;
  /// Where (2)'s body finds the step, and its number of inputs.
  unsigned stepIndex = 0, numIns = 0;
};

struct FusedUpdatePattern : public OpConversionPattern<FusedUpdateOp> {
  FusedUpdatePattern(MLIRContext *ctx, bool scalarsPerElement)
      : OpConversionPattern(ctx), scalarsPerElement(scalarsPerElement) {}

  LogicalResult
  matchAndRewrite(FusedUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto rule = SymbolTable::lookupNearestSymbolFrom<OptimizerOp>(
        op, op.getRuleAttr().getAttr());
    if (!rule)
      return rewriter.notifyMatchFailure(op, "the rule is not in the module");
    return FusedUpdateLowering(rewriter, op, rule, scalarsPerElement).lower();
  }

private:
  bool scalarsPerElement;
};

} // namespace

void mlir::mbt::populateOptimizerPatterns(RewritePatternSet &patterns,
                                          bool scalarsPerElement) {
  patterns.add<FusedUpdatePattern>(patterns.getContext(), scalarsPerElement);
}
