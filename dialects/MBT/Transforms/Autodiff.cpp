//===- Autodiff.cpp - reverse-mode AD of the model into a train step ------===//
//
// Builds @train_step from the model function: a copy of the forward pass, a
// reverse sweep over it, and one mbt.update per trainable parameter (the
// sweep's `freeze` leaves some out). The sweep asks each op's
// GradientOpInterface for its operands' adjoints, so adding an op to the
// language never touches this file.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

#include "llvm/Support/GlobPattern.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTAUTODIFF
#include "dialects/MBT/Transforms/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

SweepOp mlir::mbt::getSweep(ModuleOp module) {
  auto sweeps = module.getOps<SweepOp>();
  if (sweeps.empty()) {
    module.emitError("module has no mbt.sweep");
    return nullptr;
  }
  if (std::next(sweeps.begin()) != sweeps.end()) {
    module.emitError("module has more than one mbt.sweep");
    return nullptr;
  }
  return *sweeps.begin();
}

namespace {

/// Adjoints of the values of one function, accumulated by addition.
class AdjointMap {
public:
  explicit AdjointMap(OpBuilder &builder) : builder(builder) {}

  Value lookup(Value v) const { return adjoints.lookup(v); }

  void accumulate(Location loc, Value v, Value grad) {
    if (!grad)
      return;
    Value &slot = adjoints[v];
    slot = slot ? builder.create<AddOp>(loc, slot, grad).getResult() : grad;
  }

private:
  OpBuilder &builder;
  DenseMap<Value, Value> adjoints;
};

struct AutodiffPass : public mlir::mbt::impl::MBTAutodiffBase<AutodiffPass> {
  void runOnOperation() override;
};

} // namespace

/// The values of `block` that depend on the `params` (activity analysis):
/// only they need adjoints. Data-only work, such as the one-hot encoding of
/// the labels, gets none and need not be differentiable.
static DenseSet<Value> activeValues(Block &block, ValueRange params) {
  DenseSet<Value> active(params.begin(), params.end());
  for (Operation &op : block.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op.getResults().begin(), op.getResults().end());
  return active;
}

/// Appends to `block` the reverse sweep of the ops before its terminator,
/// seeded at `loss` with `lossScale` (a loss scale: the gradients of the
/// loss times it), or with 1 without one, through the values that depend
/// on `params`. Fails (after an error) on an op that a gradient reaches but
/// that cannot be differentiated.
static LogicalResult buildReverseSweep(Block &block, Value loss,
                                       Value lossScale, ValueRange params,
                                       OpBuilder &builder,
                                       AdjointMap &adjoints) {
  DenseSet<Value> active = activeValues(block, params);
  Operation *terminator = block.getTerminator();
  builder.setInsertionPoint(terminator);
  auto lossType = cast<RankedTensorType>(loss.getType());
  Value seed = lossScale;
  if (!seed)
    seed = builder.create<ConstantOp>(
        loss.getLoc(), lossType,
        DenseElementsAttr::get(
            lossType, builder.getFloatAttr(lossType.getElementType(), 1.0)));
  else if (seed.getType() != lossType)
    return emitError(loss.getLoc(), "the loss scale is ")
           << seed.getType() << " but the loss " << lossType;
  adjoints.accumulate(loss.getLoc(), loss, seed);

  SmallVector<Operation *> forward;
  for (Operation &op : block.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    if (op == seed.getDefiningOp()) // the constant seed made above
      continue;
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      resultGrads.push_back(adjoints.lookup(r));
      any |= static_cast<bool>(resultGrads.back());
    }
    // Ops whose operands do not depend on the parameters (constants, data)
    // pass the gradient to nothing.
    if (!any || llvm::none_of(op->getOperands(),
                              [&](Value v) { return active.contains(v); }))
      continue;
    auto grad = dyn_cast<GradientOpInterface>(op);
    if (!grad)
      return op->emitOpError("is not differentiable, but the loss depends on "
                             "it");
    for (OpOperand &operand : op->getOpOperands())
      if (active.contains(operand.get()) &&
          !grad.isDifferentiableOperand(operand.getOperandNumber()))
        return op->emitOpError("cannot carry a gradient to operand #")
               << operand.getOperandNumber()
               << ", but it depends on the parameters";
    SmallVector<Value> operandGrads = grad.buildGradients(builder, resultGrads);
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads))
      if (active.contains(operand))
        adjoints.accumulate(op->getLoc(), operand, g);
  }
  return success();
}

/// The train step draws dropout masks: each copied dropout (the model's
/// evaluation form) gets the key of its model's seed and the step.
static void keyDropouts(Block &block, SweepOp sweep, Value step,
                        OpBuilder &builder) {
  Value seed;
  for (Operation &op : block.without_terminator()) {
    auto dropout = dyn_cast<DropoutOp>(op);
    if (!dropout || dropout.isTraining())
      continue;
    if (!seed) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&block);
      seed = builder.create<ModelSeedOp>(
          sweep.getLoc(), RankedTensorType::get({}, builder.getI64Type()),
          sweep.getSeedsAttr());
    }
    dropout.getKeyMutable().assign(ValueRange{seed, step});
  }
}

/// The train step normalizes with the batch's statistics: each copied
/// batch_norm (the evaluation form) becomes its training form, and the
/// running statistics it reads, which must be buffers (the block arguments
/// from `firstBuffer` on), get their new values in `newBuffers`.
static LogicalResult trainBatchNorms(Block &block, size_t firstBuffer,
                                     MutableArrayRef<Value> newBuffers,
                                     OpBuilder &builder) {
  SmallVector<BatchNormOp> norms(block.getOps<BatchNormOp>());
  // Where the batch_norm that updates each buffer is (ops are erased as
  // they are replaced, so their locations are kept instead).
  SmallVector<std::optional<Location>> updatedBy(newBuffers.size());
  for (BatchNormOp norm : norms) {
    // The buffer index of a statistic, or failure after an error.
    auto bufferIndex = [&](Value stat, StringRef which) -> FailureOr<size_t> {
      auto arg = dyn_cast<BlockArgument>(stat);
      if (!arg || arg.getOwner() != &block ||
          arg.getArgNumber() < firstBuffer ||
          arg.getArgNumber() >= firstBuffer + newBuffers.size())
        return norm.emitOpError("needs a buffer of the model (an argument "
                                "marked mbt.buffer) as its running ")
               << which << ", which the train step updates";
      size_t k = arg.getArgNumber() - firstBuffer;
      if (updatedBy[k]) {
        InFlightDiagnostic diag = norm.emitOpError("updates the running ")
                                  << which << " buffer #" << k
                                  << ", which another batch_norm "
                                  << "updates too";
        diag.attachNote(*updatedBy[k]) << "the other batch_norm";
        return diag;
      }
      return k;
    };
    FailureOr<size_t> mean = bufferIndex(norm.getMean(), "mean");
    if (failed(mean))
      return failure();
    if (norm.getVariance() == norm.getMean())
      return norm.emitOpError("takes buffer #")
             << *mean << " as both its running mean and its running variance";
    FailureOr<size_t> variance = bufferIndex(norm.getVariance(), "variance");
    if (failed(variance))
      return failure();
    updatedBy[*mean] = updatedBy[*variance] = norm.getLoc();
    builder.setInsertionPoint(norm);
    BatchNormOp::TrainingForm form = norm.buildTrainingForm(builder);
    newBuffers[*mean] = form.newMean;
    newBuffers[*variance] = form.newVariance;
    norm.getResult().replaceAllUsesWith(form.result);
    norm.erase();
  }
  return success();
}

namespace {
/// Where each group of @train_step's arguments starts: parameters,
/// buffers, state slots (slot-major, of the trainable parameters), the
/// hyperparameters, the step, the data; and which of the model's arguments
/// each group takes. A frozen parameter (the sweep's `freeze`) is an
/// argument like the others, but has no slots, no update and no result.
struct TrainStepLayout {
  SmallVector<unsigned> paramArgs, bufferArgs, dataArgs;
  /// The positions in paramArgs of the parameters that train.
  SmallVector<unsigned> trainable;
  size_t numSlots = 0;

  size_t numParams() const { return paramArgs.size(); }
  size_t numTrainable() const { return trainable.size(); }
  size_t numBuffers() const { return bufferArgs.size(); }
  /// Slot `slot` of the `j`th trainable parameter.
  size_t slotIndex(size_t slot, size_t j) const {
    return numParams() + numBuffers() + numTrainable() * slot + j;
  }
  size_t hyperIndex() const { return slotIndex(numSlots, 0); }
  size_t stepIndex() const { return hyperIndex() + 1; }
  size_t dataIndex(size_t k) const { return hyperIndex() + 2 + k; }
};
} // namespace

/// The name of the model's parameter argument `i`.
static StringRef paramName(func::FuncOp model, unsigned i) {
  return model
      .getArgAttrOfType<StringAttr>(i,
                                    MBTDialect::ParamAttrHelper::getNameStr())
      .getValue();
}

/// Splits the model's arguments into parameters, buffers and data, and the
/// parameters into trainable and frozen ones. Fails (after an error) on a
/// freeze pattern that matches no parameter, or one that leaves none to
/// train.
static FailureOr<TrainStepLayout>
layoutTrainStep(func::FuncOp model, OptimizerOp rule, SweepOp sweep) {
  TrainStepLayout layout;
  layout.numSlots = rule.getNumSlots();
  for (unsigned i = 0; i < model.getNumArguments(); ++i)
    (model.getArgAttr(i, MBTDialect::ParamAttrHelper::getNameStr())
         ? layout.paramArgs
     : model.getArgAttr(i, MBTDialect::BufferAttrHelper::getNameStr())
         ? layout.bufferArgs
         : layout.dataArgs)
        .push_back(i);
  for (auto [k, i] : llvm::enumerate(layout.paramArgs))
    if (!sweep.isFrozen(paramName(model, i)))
      layout.trainable.push_back(k);
  if (auto patterns = sweep.getFreeze()) {
    for (Attribute pattern : *patterns) {
      StringRef text = cast<StringAttr>(pattern).getValue();
      auto glob = llvm::GlobPattern::create(text);
      if (!glob) // the sweep's verifier reports it
        return sweep.emitOpError("freeze pattern '")
               << text << "' is invalid: " << llvm::toString(glob.takeError());
      if (llvm::none_of(layout.paramArgs, [&](unsigned i) {
            return glob->match(paramName(model, i));
          }))
        return sweep.emitOpError("freeze pattern '")
               << text << "' matches no parameter of @" << model.getSymName();
    }
    if (layout.trainable.empty())
      return sweep.emitOpError("freezes every parameter of @")
             << model.getSymName() << ": nothing would train";
  }
  return layout;
}

/// An empty @train_step after `model`: its arguments (with their roles as
/// attributes) are `layout`'s, its results the updated trainable
/// parameters, state and buffers followed by the model's results.
static func::FuncOp createTrainStep(OpBuilder &builder, func::FuncOp model,
                                    OptimizerOp rule,
                                    const TrainStepLayout &layout) {
  FunctionType modelType = model.getFunctionType();
  auto scalar = RankedTensorType::get({}, builder.getF64Type());
  auto hyperType = RankedTensorType::get(
      {static_cast<int64_t>(rule.getNumHyper())}, builder.getF64Type());
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  auto named = [&](StringRef key, StringRef value) {
    return builder.getDictionaryAttr(
        builder.getNamedAttr(key, builder.getStringAttr(value)));
  };
  for (unsigned i :
       llvm::concat<const unsigned>(layout.paramArgs, layout.bufferArgs)) {
    argTypes.push_back(modelType.getInput(i));
    argAttrs.push_back(model.getArgAttrDict(i));
  }
  for (Attribute slotAttr : rule.getSlots())
    for (unsigned k : layout.trainable) {
      unsigned i = layout.paramArgs[k];
      StringRef slot = cast<StringAttr>(slotAttr).getValue();
      argTypes.push_back(modelType.getInput(i));
      auto name = model.getArgAttrOfType<StringAttr>(
          i, MBTDialect::ParamAttrHelper::getNameStr());
      argAttrs.push_back(named(MBTDialect::StateAttrHelper::getNameStr(),
                               (name.getValue() + "." + slot).str()));
    }
  argTypes.push_back(hyperType);
  argAttrs.push_back(
      named(MBTDialect::HyperAttrHelper::getNameStr(), rule.getSymName()));
  argTypes.push_back(scalar);
  argAttrs.push_back(named(MBTDialect::StepAttrHelper::getNameStr(), "step"));
  for (unsigned i : layout.dataArgs) {
    argTypes.push_back(modelType.getInput(i));
    argAttrs.push_back(model.getArgAttrDict(i));
  }

  // The new trainable parameters, then their state slot by slot.
  SmallVector<Type> resultTypes;
  for (size_t s = 0; s < 1 + layout.numSlots; ++s)
    for (unsigned k : layout.trainable)
      resultTypes.push_back(modelType.getInput(layout.paramArgs[k]));
  for (unsigned i : layout.bufferArgs)
    resultTypes.push_back(modelType.getInput(i));
  llvm::append_range(resultTypes, modelType.getResults());

  builder.setInsertionPointAfter(model);
  auto step = builder.create<func::FuncOp>(
      model.getLoc(), "train_step",
      builder.getFunctionType(argTypes, resultTypes));
  step.setAllArgAttrs(argAttrs);
  if (auto outputs =
          model->getAttr(MBTDialect::OutputsAttrHelper::getNameStr()))
    step->setAttr(MBTDialect::OutputsAttrHelper::getNameStr(), outputs);
  return step;
}

/// Copies the model's body (the forward pass) into `entry`, the entry
/// block of its train step.
static void cloneForward(func::FuncOp model, Block *entry,
                         const TrainStepLayout &layout, OpBuilder &builder) {
  IRMapping mapping;
  for (auto [k, i] : llvm::enumerate(layout.paramArgs))
    mapping.map(model.getArgument(i), entry->getArgument(k));
  for (auto [k, i] : llvm::enumerate(layout.bufferArgs))
    mapping.map(model.getArgument(i),
                entry->getArgument(layout.numParams() + k));
  for (auto [k, i] : llvm::enumerate(layout.dataArgs))
    mapping.map(model.getArgument(i), entry->getArgument(layout.dataIndex(k)));
  builder.setInsertionPointToEnd(entry);
  for (Operation &op : model.getBody().front())
    builder.clone(op, mapping);
}

/// The loss scale among the model's buffers, if it has one.
static Value lossScaleOf(func::FuncOp model, Block *entry,
                         const TrainStepLayout &layout) {
  for (auto [k, i] : llvm::enumerate(layout.bufferArgs))
    if (auto role = model.getArgAttrOfType<StringAttr>(
            i, MBTDialect::LossScaleAttrHelper::getNameStr());
        role && role.getValue() == "scale")
      return entry->getArgument(layout.numParams() + k);
  return {};
}

/// One mbt.update per trainable parameter, before `ret`: the updated
/// parameters, then the updated state (slot-major).
static SmallVector<Value> buildUpdates(Block *entry, func::ReturnOp ret,
                                       OptimizerOp rule,
                                       const TrainStepLayout &layout,
                                       AdjointMap &adjoints,
                                       OpBuilder &builder) {
  builder.setInsertionPoint(ret);
  size_t numTrainable = layout.numTrainable();
  Value hyper = entry->getArgument(layout.hyperIndex());
  Value step = entry->getArgument(layout.stepIndex());
  SmallVector<Value> newParams, newState(numTrainable * layout.numSlots);
  for (auto [j, k] : llvm::enumerate(layout.trainable)) {
    Value param = entry->getArgument(k);
    Value grad = adjoints.lookup(param);
    auto type = cast<RankedTensorType>(param.getType());
    if (!grad) // the loss does not depend on it: its gradient is zero
      grad = builder.create<ConstantOp>(
          param.getLoc(), type,
          DenseElementsAttr::get(
              type, builder.getFloatAttr(type.getElementType(), 0.0)));
    SmallVector<Value> slots;
    for (size_t s = 0; s < layout.numSlots; ++s)
      slots.push_back(entry->getArgument(layout.slotIndex(s, j)));
    auto update = builder.create<UpdateOp>(param.getLoc(), rule.getSymName(),
                                           param, grad, slots, hyper, step);
    newParams.push_back(update.getNewParam());
    for (size_t s = 0; s < layout.numSlots; ++s)
      newState[s * numTrainable + j] = update.getNewState()[s];
  }
  llvm::append_range(newParams, newState);
  return newParams;
}

void AutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  SweepOp sweep = getSweep(module);
  if (!sweep)
    return signalPassFailure();
  auto model = module.lookupSymbol<func::FuncOp>(sweep.getModelAttr());
  auto rule = module.lookupSymbol<OptimizerOp>(sweep.getOptimizerAttr());
  if (!model || !rule)
    return signalPassFailure(); // the sweep's verifier has reported it
  if (module.lookupSymbol("train_step")) {
    module.emitError("module already has a @train_step");
    return signalPassFailure();
  }
  if (model.getFunctionType().getNumResults() < 1) {
    model.emitError("model function must return the loss first");
    return signalPassFailure();
  }

  FailureOr<TrainStepLayout> laidOut = layoutTrainStep(model, rule, sweep);
  if (failed(laidOut))
    return signalPassFailure();
  const TrainStepLayout &layout = *laidOut;
  OpBuilder builder(module.getContext());
  func::FuncOp step = createTrainStep(builder, model, rule, layout);
  Block *entry = step.addEntryBlock();
  cloneForward(model, entry, layout, builder);
  auto ret = cast<func::ReturnOp>(entry->getTerminator());
  keyDropouts(*entry, sweep, entry->getArgument(layout.stepIndex()), builder);
  SmallVector<Value> newBuffers(
      entry->getArguments().slice(layout.numParams(), layout.numBuffers()));
  if (failed(trainBatchNorms(*entry, layout.numParams(), newBuffers, builder)))
    return signalPassFailure();

  // Reverse sweep from the trainable parameters only: no adjoint reaches a
  // frozen parameter, nor the ops that depend on nothing but frozen ones
  // and data (a frozen prefix of the model is not differentiated at all).
  // Then one update per trainable parameter.
  SmallVector<Value> trainable;
  for (unsigned k : layout.trainable)
    trainable.push_back(entry->getArgument(k));
  AdjointMap adjoints(builder);
  if (failed(buildReverseSweep(*entry, ret.getOperand(0),
                               lossScaleOf(model, entry, layout), trainable,
                               builder, adjoints)))
    return signalPassFailure();
  SmallVector<Value> results =
      buildUpdates(entry, ret, rule, layout, adjoints, builder);
  llvm::append_range(results, newBuffers);
  llvm::append_range(results, ret.getOperands());
  builder.setInsertionPoint(ret);
  builder.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
}
