//===- FuseOptimizer.cpp - one update over every parameter of every model ===//
//
// After batching, @train_step takes each parameter as its own [M, ...]
// tensor and updates it with its own mbt.update. This pass builds the
// artifact's entry points over the flat layout of docs/abi.md: every
// parameter of model m is a column range of row m of one [M, P] tensor, so
// the whole optimizer step is one mbt.fused_update (one loop nest, one
// kernel on a GPU) whatever the number of parameters and models. Frozen
// parameters (the sweep's `freeze`) take the last columns of a row, after
// the P_t trainable ones, and the update, the gradients and the state
// cover only the first P_t.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/LossScaleRules.h"
#include "dialects/MBT/Transforms/FlatLayout.h"
#include "dialects/MBT/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/Support/GlobPattern.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTFUSEOPTIMIZER
#include "dialects/MBT/Transforms/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {
struct FuseOptimizerPass
    : public mlir::mbt::impl::MBTFuseOptimizerBase<FuseOptimizerPass> {
  using MBTFuseOptimizerBase::MBTFuseOptimizerBase;
  void runOnOperation() override;
};
} // namespace

/// The rows of `updated` ([M, n]) of the models whose `step` ([M]) is not
/// 0, the rows of `old` for the others: a model that does not step keeps
/// its buffers as it keeps its parameters.
static Value selectSteppedRows(OpBuilder &b, Location loc, Value step,
                               Value updated, Value old) {
  auto type = cast<RankedTensorType>(updated.getType());
  MLIRContext *ctx = b.getContext();
  AffineMap rows = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap perModel = AffineMap::get(2, 0, getAffineDimExpr(0, ctx));
  Value init =
      b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  auto select = b.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{step, updated, old}, ValueRange{init},
      SmallVector<AffineMap>{perModel, rows, rows, rows},
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location l, ValueRange args) {
        Value zero = nb.create<arith::ConstantOp>(
            l, nb.getFloatAttr(args[0].getType(), 0.0));
        Value stepped = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::ONE,
                                                 args[0], zero);
        nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::SelectOp>(
                                          l, stepped, args[1], args[2])});
      });
  return select.getResult(0);
}

/// Each model's `step` ([M]) where its `reportedLoss` ([M]) is not NaN, 0
/// where it is: under a loss scale, the models that trained this step
/// whether or not they stepped (an overflow skips the optimizer step, not
/// the forward pass, whose running statistics count, as in PyTorch).
static Value trainedSteps(OpBuilder &b, Location loc, Value step,
                          Value reportedLoss) {
  auto type = cast<RankedTensorType>(step.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, b.getContext());
  Value init =
      b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  auto select = b.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{step, reportedLoss}, ValueRange{init},
      SmallVector<AffineMap>(3, id),
      SmallVector<utils::IteratorType>(1, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location l, ValueRange args) {
        Value reported = nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::ORD,
                                                  args[1], args[1]);
        Value zero = nb.create<arith::ConstantOp>(
            l, nb.getFloatAttr(args[0].getType(), 0.0));
        nb.create<linalg::YieldOp>(l, ValueRange{nb.create<arith::SelectOp>(
                                          l, reported, args[0], zero)});
      });
  return select.getResult(0);
}

namespace {

/// The new parameters, slots and reported loss of one optimizer step.
struct OptimizerStep {
  Value params;
  SmallVector<Value> state;
  Value loss;
  /// Each model's step where its buffers take their new values (the
  /// models that stepped; under a loss scale, those that trained), else 0.
  Value buffersStep;
  /// The loss scale's new scale, good steps and skipped steps.
  SmallVector<Value> lossScale;
};

/// Builds the artifact's entry points (@mbt_train_step, @mbt_optimizer_step,
/// @mbt_eval_step) from the batched @train_step and model of one sweep, and
/// records the flat layouts on the module for the manifest.
class FusedStepBuilder {
public:
  FusedStepBuilder(ModuleOp module, SweepOp sweep, func::FuncOp model,
                   func::FuncOp trainStep, OptimizerOp rule, int64_t numModels)
      : module(module), sweep(sweep), model(model), trainStep(trainStep),
        rule(rule), b(module.getContext()), loc(trainStep.getLoc()),
        numModels(numModels), element(rule.getElementType()),
        numSlots(rule.getNumSlots()) {}

  /// Reads the parameter and buffer layouts off the model's arguments;
  /// emits an error and fails on a model the entry points cannot take.
  LogicalResult collectLayouts();
  void buildTrainStep();
  /// @mbt_grad_step; emits an error and fails where the model has a loss
  /// scale, whose skipped steps the ranks would have to agree on.
  LogicalResult buildGradStep();
  void buildOptimizerStepFunction();
  void buildEvalStep();
  /// The facts the manifest needs (layouts, input, target, classes) as
  /// mbt.* attributes of the module.
  void recordModuleFacts();

private:
  LogicalResult checkLossScaleBuffers();
  void placeParams();
  Value clipGradients(Value grads);
  Value scheduleHyper(Value hyper, Value step);
  Value decayMask();
  Value trainableColumns(Value params);
  OptimizerStep buildOptimizerStep(Value params, Value grads, ValueRange state,
                                   Value hyper, Value step, Value loss,
                                   ValueRange scale);
  SmallVector<Value> slotTensors(Value state, SmallVectorImpl<Value> &views);
  void writeSlots(ValueRange values, ArrayRef<Value> views);
  Value zeroLoss();
  void mapBuffers(IRMapping &mapping, func::FuncOp source, Value flat);
  void mapTrainArguments(IRMapping &mapping, Block *entry);
  SmallVector<ResultInto> finishTrainStep(IRMapping &mapping, Block *entry,
                                          func::ReturnOp ret);
  void mapGradArguments(IRMapping &mapping, Block *entry);
  SmallVector<ResultInto> finishGradStep(IRMapping &mapping, Block *entry,
                                         func::ReturnOp ret);
  Value trainLoss(IRMapping &mapping, func::ReturnOp ret,
                  std::optional<unsigned> &lossIndex);
  Value gatherGradients(IRMapping &mapping, func::ReturnOp ret,
                        SmallVectorImpl<Operation *> &updates);
  Value updatedBuffers(IRMapping &mapping, func::ReturnOp ret, Value old,
                       ArrayRef<Value> lossScale);
  ArrayAttr layoutAttr(ArrayRef<ParamSlot> layout, ArrayRef<bool> excluded,
                       ArrayRef<bool> frozenFlags);

  ModuleOp module;
  SweepOp sweep;
  func::FuncOp model, trainStep;
  OptimizerOp rule;
  OpBuilder b;
  Location loc;
  int64_t numModels;
  /// Every buffer of the model's float type (params, state, x, out) has
  /// the type the rule updates; the verifier of mbt.update checked it.
  Type element;
  int64_t numSlots;
  /// The layouts: parameters in argument order, each row-major (the
  /// trainable ones in columns [0, P_t), the frozen ones after them), and
  /// the buffers (running statistics) likewise in a [M, Q] buffer of their
  /// own.
  SmallVector<ParamSlot> slots, bufferSlots;
  int64_t numParams = 0, numBuffers = 0, paramCount = 0, bufferCount = 0;
  /// P_t: the columns of the trainable parameters.
  int64_t trainableCount = 0;
  /// The indices into `slots` of the trainable parameters.
  SmallVector<int64_t> trainable;
  /// Per parameter: whether the sweep's freeze patterns match it, and
  /// whether its no_decay patterns exclude it from decay.
  SmallVector<bool> frozen, noDecay;
  MemRefType stateType;
  RankedTensorType hyperType, stepType, buffersType;
  /// The train step's slot views and the tensors that alias them.
  SmallVector<Value> trainViews, trainSlots;
  /// The grad step's stand-ins for the slots and hyperparameters, which
  /// only the erased per-parameter updates read.
  SmallVector<Value> gradPlaceholders;
};

} // namespace

LogicalResult FusedStepBuilder::collectLayouts() {
  int64_t bufferOffset = 0;
  for (unsigned i = 0; i < model.getNumArguments(); ++i) {
    auto name = model.getArgAttrOfType<StringAttr>(
        i, MBTDialect::ParamAttrHelper::getNameStr());
    bool isBuffer = false;
    if (!name) {
      name = model.getArgAttrOfType<StringAttr>(
          i, MBTDialect::BufferAttrHelper::getNameStr());
      isBuffer = true;
    }
    if (!name)
      continue;
    auto type = cast<RankedTensorType>(model.getArgumentTypes()[i]);
    if (!type.hasStaticShape())
      return model.emitError(isBuffer ? "buffer '" : "parameter '")
             << name.getValue() << "' must have a static shape";
    int64_t size = type.getNumElements() / numModels;
    auto init = model.getArgAttrOfType<InitAttr>(
        i, MBTDialect::InitAttrHelper::getNameStr());
    if (isBuffer) {
      StringRef role;
      if (auto attr = model.getArgAttrOfType<StringAttr>(
              i, MBTDialect::LossScaleAttrHelper::getNameStr()))
        role = attr.getValue();
      bufferSlots.push_back({name, type, bufferOffset, size, init, role});
      bufferOffset += size;
      continue;
    }
    if (!bufferSlots.empty())
      return model.emitError("parameter '")
             << name.getValue() << "' follows a buffer: the model's arguments "
             << "are its parameters, then its buffers, then the data";
    slots.push_back({name, type, /*offset=*/0, size, init});
  }
  numParams = static_cast<int64_t>(slots.size());
  numBuffers = static_cast<int64_t>(bufferSlots.size());
  bufferCount = bufferOffset;
  if (failed(checkLossScaleBuffers()))
    return failure();
  placeParams();
  if (model.getNumArguments() != numParams + numBuffers + 2)
    return model.emitError("the model must take exactly one input and one "
                           "target after its parameters and buffers");
  // The state is a memref: each slot is written in place through its own
  // subview (see slotTensors).
  stateType = MemRefType::get({numSlots, numModels, trainableCount}, element);
  hyperType = RankedTensorType::get(
      {numModels, static_cast<int64_t>(rule.getNumHyper())}, b.getF64Type());
  stepType = RankedTensorType::get({numModels}, b.getF64Type());
  buffersType = RankedTensorType::get({numModels, bufferCount}, element);
  return success();
}

/// A loss scale has all its buffers (mbt-autocast adds them), each once.
LogicalResult FusedStepBuilder::checkLossScaleBuffers() {
  bool scaled = llvm::any_of(bufferSlots, [](const ParamSlot &slot) {
    return !slot.lossScaleRole.empty();
  });
  for (const LossScaleBuffer &buffer : kLossScaleBuffers) {
    size_t count = llvm::count_if(bufferSlots, [&](const ParamSlot &slot) {
      return slot.lossScaleRole == buffer.role;
    });
    if (scaled && count != 1)
      return model.emitError("a loss scale needs one buffer of each role "
                             "(scale, good_steps, skipped_steps), got ")
             << count << " marked mbt.loss_scale = \"" << buffer.role << "\"";
  }
  return success();
}

/// Gives each parameter its columns: the trainable ones first, in argument
/// order, then the frozen ones; and marks which decay.
void FusedStepBuilder::placeParams() {
  int64_t offset = 0;
  for (ParamSlot &slot : slots) {
    frozen.push_back(sweep.isFrozen(slot.name.getValue()));
    noDecay.push_back(sweep.isExcludedFromDecay(slot.name.getValue()));
  }
  for (auto [p, slot] : llvm::enumerate(slots))
    if (!frozen[p]) {
      trainable.push_back(static_cast<int64_t>(p));
      slot.offset = offset;
      offset += slot.size;
    }
  trainableCount = offset;
  for (auto [p, slot] : llvm::enumerate(slots))
    if (frozen[p]) {
      slot.offset = offset;
      offset += slot.size;
    }
  paramCount = offset;
}

/// Per-model clipping of the gradient's global norm, if the sweep clips.
Value FusedStepBuilder::clipGradients(Value grads) {
  auto clip = sweep.getClipNorm();
  if (!clip)
    return grads;
  auto normType = RankedTensorType::get({numModels}, b.getF64Type());
  Value maxNorm = b.create<ConstantOp>(loc, normType,
                                       DenseElementsAttr::get(normType, *clip));
  return b.create<ClipGradNormOp>(loc, grads, maxNorm);
}

/// The scheduled learning rate, if the sweep has a schedule.
Value FusedStepBuilder::scheduleHyper(Value hyper, Value step) {
  auto schedule = sweep.getSchedule();
  if (!schedule)
    return hyper;
  ArrayAttr scheduleParams = *sweep.getScheduleParams();
  int64_t k = static_cast<int64_t>(scheduleParams.size());
  SmallVector<double> table; // [M, K], row-major
  for (int64_t m = 0; m < numModels; ++m)
    for (Attribute values : scheduleParams)
      table.push_back(cast<DenseF64ArrayAttr>(values)[m]);
  auto tableType = RankedTensorType::get({numModels, k}, b.getF64Type());
  Value tableValue = b.create<ConstantOp>(
      loc, tableType, DenseElementsAttr::get(tableType, ArrayRef(table)));
  return b.create<LRScheduleOp>(loc, hyper.getType(), *schedule, hyper, step,
                                tableValue, rule.getHyperIndex("lr"));
}

/// Parameters excluded from weight decay get a 0 in the mask; no mask
/// without no_decay.
Value FusedStepBuilder::decayMask() {
  if (!sweep.getNoDecay())
    return Value();
  SmallVector<float> mask(trainableCount, 1.0f);
  for (int64_t p : trainable)
    if (noDecay[p])
      std::fill(mask.begin() + slots[p].offset,
                mask.begin() + slots[p].offset + slots[p].size, 0.0f);
  // The mask is 1 or 0 whatever the model's float type.
  auto maskType = RankedTensorType::get({trainableCount}, b.getF32Type());
  return b.create<ConstantOp>(loc, maskType,
                              DenseElementsAttr::get(maskType, ArrayRef(mask)));
}

/// Columns [0, P_t) of the [M, P] `params`: the trainable parameters (all
/// of them without freeze).
Value FusedStepBuilder::trainableColumns(Value params) {
  if (trainableCount == paramCount)
    return params;
  auto type = RankedTensorType::get({numModels, trainableCount}, element);
  return b.create<tensor::ExtractSliceOp>(
      loc, type, params,
      SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
      SmallVector<OpFoldResult>{b.getIndexAttr(numModels),
                                b.getIndexAttr(trainableCount)},
      SmallVector<OpFoldResult>(2, b.getIndexAttr(1)));
}

/// The optimizer step on flat buffers: the models whose loss or gradients
/// are not finite set aside (their step becomes 0 and their reported loss
/// NaN), the gradients [M, P_t] clipped (if the sweep clips), the
/// hyperparameters scheduled (if it has a schedule), then one fused update,
/// with a decay mask under no_decay, over the trainable columns of
/// `params` (the gradients are theirs alone). Under a loss scale (`scale`: the
/// [M] scale, good steps and skipped steps), the gradients are unscaled first,
/// an overflow skips the model's step without freezing it, and the scale is
/// updated; the optimizer counts only the steps it takes.
OptimizerStep FusedStepBuilder::buildOptimizerStep(Value params, Value grads,
                                                   ValueRange state,
                                                   Value hyper, Value step,
                                                   Value loss,
                                                   ValueRange scale) {
  if (!scale.empty())
    grads = b.create<UnscaleGradsOp>(loc, grads, scale[0]);
  auto guard = b.create<GuardStepOp>(loc, step, grads, loss,
                                     /*skip_overflow=*/!scale.empty());
  Value guardedStep = guard.getResult();
  Value optimizerStep = guardedStep, buffersStep = guardedStep;
  SmallVector<Value> newScale;
  if (!scale.empty()) {
    LossScaleSettings settings = sweep.getLossScaleSettings();
    auto update = b.create<UpdateLossScaleOp>(
        loc, step, guardedStep, guard.getReportedLoss(), scale[0], scale[1],
        scale[2], b.getF64FloatAttr(settings.growthFactor),
        b.getF64FloatAttr(settings.backoffFactor),
        b.getI64IntegerAttr(settings.growthInterval));
    newScale = {update.getNewScale(), update.getNewGoodSteps(),
                update.getNewSkippedSteps()};
    optimizerStep = update.getOptimizerStep();
    buffersStep = trainedSteps(b, loc, step, guard.getReportedLoss());
  }
  grads = clipGradients(grads);
  hyper = scheduleHyper(hyper, step);
  Value mask = decayMask();
  auto fused =
      b.create<FusedUpdateOp>(loc, rule.getSymName(), trainableColumns(params),
                              grads, state, hyper, optimizerStep, mask);
  Value newParams = fused.getNewParams();
  if (trainableCount != paramCount)
    newParams = FlatLayout(b, numModels, element)
                    .insertColumns(loc, newParams, params, 0, trainableCount);
  return OptimizerStep{newParams, SmallVector<Value>(fused.getNewState()),
                       guard.getReportedLoss(), buffersStep, newScale};
}

/// Slot s of the state buffer as a [M, P] subview, and as a tensor that is
/// the only alias of it (`restrict`), so that bufferization updates every
/// slot in place; writeSlots stores the new values back into the views.
/// (As one [S, M, P] tensor cut by extract_slice and put back by
/// insert_slice, the second slot was updated in a copy: the analysis
/// cannot prove that the slices are disjoint.)
SmallVector<Value>
FusedStepBuilder::slotTensors(Value state, SmallVectorImpl<Value> &views) {
  SmallVector<Value> tensors;
  auto type = cast<MemRefType>(state.getType());
  for (int64_t s = 0; s < numSlots; ++s) {
    SmallVector<OpFoldResult> offsets{b.getIndexAttr(s), b.getIndexAttr(0),
                                      b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1),
                                    b.getIndexAttr(numModels),
                                    b.getIndexAttr(trainableCount)};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    auto viewType =
        cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
            {numModels, trainableCount}, type, offsets, sizes, strides));
    Value view = b.create<memref::SubViewOp>(loc, viewType, state, offsets,
                                             sizes, strides);
    views.push_back(view);
    tensors.push_back(b.create<bufferization::ToTensorOp>(
        loc, view, /*restrict=*/true, /*writable=*/true));
  }
  return tensors;
}

void FusedStepBuilder::writeSlots(ValueRange values, ArrayRef<Value> views) {
  for (auto [value, view] : llvm::zip(values, views))
    b.create<bufferization::MaterializeInDestinationOp>(
        loc, Type(), value, view, /*restrict=*/true, /*writable=*/true);
}

/// A finite [M] loss, for guarding where there is none.
Value FusedStepBuilder::zeroLoss() {
  auto type = RankedTensorType::get({numModels}, element);
  return b.create<ConstantOp>(
      loc, type, DenseElementsAttr::get(type, b.getFloatAttr(element, 0.0)));
}

/// Buffer k of `source` (whose buffers follow its parameters) read from
/// the flat [M, Q] argument.
void FusedStepBuilder::mapBuffers(IRMapping &mapping, func::FuncOp source,
                                  Value flat) {
  FlatLayout layout(b, numModels, element);
  for (int64_t k = 0; k < numBuffers; ++k)
    mapping.map(source.getArgument(numParams + k),
                layout.extract(source.getLoc(), flat, bufferSlots[k]));
}

/// @mbt_train_step(params, buffers, state, hyper, step, x, y, out); the
/// arguments of @train_step: params, buffers, slots, hyper, step, x, y.
void FusedStepBuilder::buildTrainStep() {
  buildEntryPoint(
      b, module, "mbt_train_step", trainStep, slots, numModels, element,
      /*paramsWritable=*/true,
      {{buffersType, true},
       {stateType, true},
       {hyperType, false},
       {stepType, false}},
      [&](IRMapping &mapping, Block *entry) {
        mapTrainArguments(mapping, entry);
      },
      [&](IRMapping &mapping, Block *entry, func::ReturnOp ret) {
        return finishTrainStep(mapping, entry, ret);
      });
}

void FusedStepBuilder::mapTrainArguments(IRMapping &mapping, Block *entry) {
  int64_t slotBase = numParams + numBuffers;
  FlatLayout layout(b, numModels, element);
  mapBuffers(mapping, trainStep, entry->getArgument(1));
  trainSlots = slotTensors(entry->getArgument(2), trainViews);
  int64_t numTrainable = static_cast<int64_t>(trainable.size());
  for (int64_t s = 0; s < numSlots; ++s)
    for (auto [j, p] : llvm::enumerate(trainable))
      mapping.map(trainStep.getArgument(slotBase + numTrainable * s + j),
                  layout.extract(trainStep.getLoc(), trainSlots[s], slots[p]));
  int64_t hyperIndex = slotBase + numTrainable * numSlots;
  mapping.map(trainStep.getArgument(hyperIndex), entry->getArgument(3));
  mapping.map(trainStep.getArgument(hyperIndex + 1), entry->getArgument(4));
}

/// Every trainable parameter's gradient gathered into one [M, P_t] tensor;
/// `updates` gets the per-parameter mbt.update ops they came from.
Value FusedStepBuilder::gatherGradients(IRMapping &mapping, func::ReturnOp ret,
                                        SmallVectorImpl<Operation *> &updates) {
  FlatLayout layout(b, numModels, element);
  SmallVector<FlatLayout::Columns> columns;
  for (auto [j, p] : llvm::enumerate(trainable)) {
    auto update =
        cast<UpdateOp>(mapping.lookup(ret.getOperand(j)).getDefiningOp());
    columns.push_back({layout.flatten(loc, update.getGrad(), slots[p].size),
                       slots[p].offset, slots[p].size});
    updates.push_back(update);
  }
  Value grads = b.create<tensor::EmptyOp>(
      loc, ArrayRef<int64_t>{numModels, trainableCount}, element);
  return layout.insertAllColumns(loc, columns, grads);
}

/// The loss, the first output, and its index among the source's results;
/// a model without outputs reports none and is guarded on its gradients
/// alone (a zero loss, no index).
Value FusedStepBuilder::trainLoss(IRMapping &mapping, func::ReturnOp ret,
                                  std::optional<unsigned> &lossIndex) {
  auto outputs = trainStep->getAttrOfType<ArrayAttr>(
      MBTDialect::OutputsAttrHelper::getNameStr());
  if (!outputs || outputs.empty())
    return zeroLoss();
  lossIndex = ret.getNumOperands() - outputs.size();
  return mapping.lookup(ret.getOperand(*lossIndex));
}

SmallVector<ResultInto> FusedStepBuilder::finishTrainStep(IRMapping &mapping,
                                                          Block *entry,
                                                          func::ReturnOp ret) {
  SmallVector<Operation *> updates;
  Value grads = gatherGradients(mapping, ret, updates);
  std::optional<unsigned> lossIndex;
  Value loss = trainLoss(mapping, ret, lossIndex);
  // The loss scale's buffers (precision = f16), by role.
  SmallVector<Value> scale;
  for (const LossScaleBuffer &buffer : kLossScaleBuffers)
    for (auto [k, slot] : llvm::enumerate(bufferSlots))
      if (slot.lossScaleRole == buffer.role)
        scale.push_back(mapping.lookup(trainStep.getArgument(numParams + k)));
  OptimizerStep next = buildOptimizerStep(entry->getArgument(0), grads,
                                          trainSlots, entry->getArgument(3),
                                          entry->getArgument(4), loss, scale);
  // A model that did not step reports a NaN loss (docs/abi.md).
  if (lossIndex)
    mapping.map(ret.getOperand(*lossIndex), next.loss);
  writeSlots(next.state, trainViews);
  // The per-parameter updates are now dead (their results were only
  // returned by the source's terminator, which was not copied).
  for (Operation *op : updates)
    op->erase();
  SmallVector<ResultInto> results{{next.params, 0}};
  if (numBuffers == 0)
    return results;
  Value old = entry->getArgument(1);
  Value updated = updatedBuffers(mapping, ret, old, next.lossScale);
  results.push_back(
      {selectSteppedRows(b, loc, next.buffersStep, updated, old), 1});
  return results;
}

/// @mbt_grad_step(params, buffers, step, grads, x, y, out): the arguments
/// of @train_step but the slots and hyperparameters, which only the
/// optimizer reads (docs/abi.md).
LogicalResult FusedStepBuilder::buildGradStep() {
  for (const ParamSlot &slot : bufferSlots)
    if (!slot.lossScaleRole.empty())
      return mlir::emitError(
          sweep.getLoc(),
          "@mbt_grad_step does not take a loss scale (precision = f16): "
          "the ranks would have to agree on each model's skipped steps; "
          "use precision = bf16, or spread the models across the ranks");
  auto gradsType = RankedTensorType::get({numModels, trainableCount}, element);
  buildEntryPoint(
      b, module, "mbt_grad_step", trainStep, slots, numModels, element,
      /*paramsWritable=*/false,
      {{buffersType, true}, {stepType, false}, {gradsType, true}},
      [&](IRMapping &mapping, Block *entry) {
        mapGradArguments(mapping, entry);
      },
      [&](IRMapping &mapping, Block *entry, func::ReturnOp ret) {
        return finishGradStep(mapping, entry, ret);
      });
  for (Value placeholder : gradPlaceholders)
    if (!placeholder.use_empty())
      return trainStep.emitError("internal error: @mbt_grad_step reads an "
                                 "optimizer slot or hyperparameter outside "
                                 "the parameters' updates");
  for (Value placeholder : gradPlaceholders)
    placeholder.getDefiningOp()->erase();
  return success();
}

void FusedStepBuilder::mapGradArguments(IRMapping &mapping, Block *entry) {
  mapBuffers(mapping, trainStep, entry->getArgument(1));
  int64_t slotBase = numParams + numBuffers;
  int64_t numTrainable = static_cast<int64_t>(trainable.size());
  int64_t hyperIndex = slotBase + numTrainable * numSlots;
  gradPlaceholders.clear();
  for (int64_t arg = slotBase; arg <= hyperIndex; ++arg) {
    auto type = cast<RankedTensorType>(trainStep.getArgumentTypes()[arg]);
    Value placeholder =
        b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
    mapping.map(trainStep.getArgument(arg), placeholder);
    gradPlaceholders.push_back(placeholder);
  }
  mapping.map(trainStep.getArgument(hyperIndex + 1), entry->getArgument(2));
}

/// The gradients instead of the update; the loss reported NaN where this
/// call's loss or gradients are not finite, as the train step reports a
/// model it set aside; the buffers' new rows where the step is not 0 and
/// the gradients are finite.
SmallVector<ResultInto> FusedStepBuilder::finishGradStep(IRMapping &mapping,
                                                         Block *entry,
                                                         func::ReturnOp ret) {
  SmallVector<Operation *> updates;
  Value grads = gatherGradients(mapping, ret, updates);
  std::optional<unsigned> lossIndex;
  Value loss = trainLoss(mapping, ret, lossIndex);
  Value step = entry->getArgument(2);
  auto guard = b.create<GuardStepOp>(loc, step, grads, loss,
                                     /*skip_overflow=*/false);
  if (lossIndex)
    mapping.map(ret.getOperand(*lossIndex), guard.getReportedLoss());
  for (Operation *op : updates)
    op->erase();
  SmallVector<ResultInto> results{{grads, 3}};
  if (numBuffers == 0)
    return results;
  Value old = entry->getArgument(1);
  Value updated = updatedBuffers(mapping, ret, old, /*lossScale=*/{});
  results.push_back(
      {selectSteppedRows(b, loc, guard.getResult(), updated, old), 1});
  return results;
}

/// The buffers' new values (they follow the new state in the source's
/// results; a loss scale's come from the optimizer step) in the flat
/// [M, Q] layout.
Value FusedStepBuilder::updatedBuffers(IRMapping &mapping, func::ReturnOp ret,
                                       Value old, ArrayRef<Value> lossScale) {
  FlatLayout layout(b, numModels, element);
  SmallVector<FlatLayout::Columns> columns;
  int64_t firstBuffer = static_cast<int64_t>(trainable.size()) * (1 + numSlots);
  for (int64_t k = 0; k < numBuffers; ++k) {
    Value value = mapping.lookup(ret.getOperand(firstBuffer + k));
    for (auto [buffer, newValue] : llvm::zip(kLossScaleBuffers, lossScale))
      if (bufferSlots[k].lossScaleRole == buffer.role)
        value = newValue;
    columns.push_back({layout.flatten(loc, value, bufferSlots[k].size),
                       bufferSlots[k].offset, bufferSlots[k].size});
  }
  return layout.insertAllColumns(loc, columns, old);
}

/// @mbt_optimizer_step(params, state, hyper, step, grads): the optimizer
/// step alone, on the trainable parameters' gradients ([M, P_t]) the
/// caller computed (docs/abi.md).
void FusedStepBuilder::buildOptimizerStepFunction() {
  auto flatType = RankedTensorType::get({numModels, paramCount}, element);
  auto gradsType = RankedTensorType::get({numModels, trainableCount}, element);
  SmallVector<Type> argTypes{flatType, stateType, hyperType, stepType,
                             gradsType};
  b.setInsertionPointToEnd(module.getBody());
  auto func = b.create<func::FuncOp>(loc, "mbt_optimizer_step",
                                     b.getFunctionType(argTypes, {}));
  func.setAllArgAttrs(SmallVector<DictionaryAttr>{
      writableArgAttrs(b, true), b.getDictionaryAttr({}),
      writableArgAttrs(b, false), writableArgAttrs(b, false),
      writableArgAttrs(b, false)});
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  SmallVector<Value> views;
  SmallVector<Value> state = slotTensors(entry->getArgument(1), views);
  // No loss: the models are guarded on their gradients alone.
  OptimizerStep next = buildOptimizerStep(
      entry->getArgument(0), entry->getArgument(4), state,
      entry->getArgument(2), entry->getArgument(3), zeroLoss(), /*scale=*/{});
  writeSlots(next.state, views);
  SmallVector<Value> results{
      b.create<bufferization::MaterializeInDestinationOp>(loc, next.params,
                                                          entry->getArgument(0))
          .getResult()};
  b.create<func::ReturnOp>(loc, results);
  func.setFunctionType(
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
}

/// @mbt_eval_step(params, buffers, x, y, out).
void FusedStepBuilder::buildEvalStep() {
  buildEntryPoint(
      b, module, "mbt_eval_step", model, slots, numModels, element,
      /*paramsWritable=*/false, {{buffersType, false}},
      [&](IRMapping &mapping, Block *entry) {
        mapBuffers(mapping, model, entry->getArgument(1));
      },
      [](IRMapping &, Block *, func::ReturnOp) {
        return SmallVector<ResultInto>();
      });
}

/// Each tensor's name, shape, columns and initializer (and, for parameters
/// under no_decay, whether it decays; under freeze, whether it trains).
ArrayAttr FusedStepBuilder::layoutAttr(ArrayRef<ParamSlot> layout,
                                       ArrayRef<bool> excluded,
                                       ArrayRef<bool> frozenFlags) {
  SmallVector<Attribute> entries;
  for (auto [k, slot] : llvm::enumerate(layout)) {
    SmallVector<NamedAttribute> fields{
        b.getNamedAttr("name", slot.name),
        b.getNamedAttr(
            "shape", b.getDenseI64ArrayAttr(slot.type.getShape().drop_front())),
        b.getNamedAttr("offset", b.getI64IntegerAttr(slot.offset)),
        b.getNamedAttr("size", b.getI64IntegerAttr(slot.size))};
    if (slot.init)
      fields.push_back(b.getNamedAttr("init", slot.init));
    if (!excluded.empty())
      fields.push_back(b.getNamedAttr("decay", b.getBoolAttr(!excluded[k])));
    if (!frozenFlags.empty())
      fields.push_back(
          b.getNamedAttr("trainable", b.getBoolAttr(!frozenFlags[k])));
    entries.push_back(b.getDictionaryAttr(fields));
  }
  return b.getArrayAttr(entries);
}

void FusedStepBuilder::recordModuleFacts() {
  module->setAttr(MBTDialect::LayoutAttrHelper::getNameStr(),
                  layoutAttr(slots,
                             sweep.getNoDecay() ? ArrayRef<bool>(noDecay)
                                                : ArrayRef<bool>(),
                             sweep.getFreeze() ? ArrayRef<bool>(frozen)
                                               : ArrayRef<bool>()));
  module->setAttr(MBTDialect::BufferLayoutAttrHelper::getNameStr(),
                  layoutAttr(bufferSlots, {}, {}));
  if (auto outputs =
          model->getAttr(MBTDialect::OutputsAttrHelper::getNameStr()))
    module->setAttr(MBTDialect::OutputsAttrHelper::getNameStr(), outputs);
  if (auto split =
          model->getAttr(MBTDialect::SplitMetricsAttrHelper::getNameStr()))
    module->setAttr(MBTDialect::SplitMetricsAttrHelper::getNameStr(), split);
  int64_t inputIndex = numParams + numBuffers;
  if (auto input = model.getArgAttr(inputIndex,
                                    MBTDialect::InputAttrHelper::getNameStr()))
    module->setAttr(MBTDialect::InputAttrHelper::getNameStr(), input);
  // The input's per-sample shape, for the manifest.
  auto modelX = cast<RankedTensorType>(model.getArgumentTypes()[inputIndex]);
  module->setAttr(MBTDialect::InputShapeAttrHelper::getNameStr(),
                  b.getDenseI64ArrayAttr(modelX.getShape().drop_front(2)));
  // A tokens[V] input's vocabulary, for the runtime's token checks.
  if (auto vocab = model.getArgAttr(inputIndex,
                                    MBTDialect::VocabAttrHelper::getNameStr()))
    module->setAttr(MBTDialect::VocabAttrHelper::getNameStr(), vocab);
  if (auto target = model.getArgAttr(
          inputIndex + 1, MBTDialect::TargetAttrHelper::getNameStr()))
    module->setAttr(MBTDialect::TargetAttrHelper::getNameStr(), target);
  module->setAttr(MBTDialect::ModelAttrHelper::getNameStr(),
                  model.getSymNameAttr());
  // The class count, for the runtime's label checks: the frontend records
  // it on the target; hand-written modules give it by their cross-entropy.
  if (auto classes = model.getArgAttrOfType<IntegerAttr>(
          inputIndex + 1, MBTDialect::ClassesAttrHelper::getNameStr()))
    module->setAttr(MBTDialect::ClassesAttrHelper::getNameStr(), classes);
  else
    model.walk([&](CrossEntropyOp op) {
      auto logits = op.getLogits().getType();
      module->setAttr(
          MBTDialect::ClassesAttrHelper::getNameStr(),
          b.getI64IntegerAttr(logits.getDimSize(logits.getRank() - 1)));
    });
}

void FuseOptimizerPass::runOnOperation() {
  ModuleOp module = getOperation();
  SweepOp sweep = getSweep(module);
  if (!sweep)
    return signalPassFailure();
  auto model = module.lookupSymbol<func::FuncOp>(sweep.getModelAttr());
  auto trainStep = module.lookupSymbol<func::FuncOp>("train_step");
  auto rule = module.lookupSymbol<OptimizerOp>(sweep.getOptimizerAttr());
  if (!model || !rule)
    return signalPassFailure();
  if (!trainStep) {
    module.emitError("no @train_step: run mbt-autodiff first");
    return signalPassFailure();
  }
  auto modelsAttr = trainStep->getAttrOfType<IntegerAttr>(
      MBTDialect::ModelsAttrHelper::getNameStr());
  if (!modelsAttr) {
    trainStep.emitError("is not batched: run mbt-batch-models first");
    return signalPassFailure();
  }
  FusedStepBuilder builder(module, sweep, model, trainStep, rule,
                           modelsAttr.getInt());
  if (failed(builder.collectLayouts()))
    return signalPassFailure();
  builder.buildTrainStep();
  if (gradStep && failed(builder.buildGradStep()))
    return signalPassFailure();
  builder.buildOptimizerStepFunction();
  builder.buildEvalStep();
  builder.recordModuleFacts();
  // The per-model functions are now inlined into the entry points; the
  // sweep's model becomes the batched forward pass.
  trainStep.erase();
  model.erase();
  sweep.setModel("mbt_eval_step");
}
