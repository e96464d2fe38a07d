//===- FuseOptimizer.cpp - one update over every parameter of every model ===//
//
// After batching, @train_step takes each parameter as its own [M, ...]
// tensor and updates it with its own mbt.update. This pass builds the
// artifact's entry points over the flat layout of docs/abi.md: every
// parameter of model m is a column range of row m of one [M, P] tensor, so
// the whole optimizer step is one mbt.fused_update (one loop nest, one
// kernel on a GPU) whatever the number of parameters and models.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/LossScaleRules.h"
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

/// Where parameter k of every model lives in the flat [M, P] buffer.
struct ParamSlot {
  StringAttr name;
  RankedTensorType type; // [M, shape...]
  int64_t offset;
  int64_t size;
  DictionaryAttr init;
  /// A loss scale's buffer: its role (mbt.loss_scale), else empty.
  StringRef lossScaleRole;
};

struct FuseOptimizerPass
    : public mlir::mbt::impl::MBTFuseOptimizerBase<FuseOptimizerPass> {
  void runOnOperation() override;
};

/// Builds the flat views: slicing parameters out of [M, P] rows and putting
/// per-parameter tensors back into them.
class FlatLayout {
public:
  FlatLayout(OpBuilder &b, int64_t numModels, Type element)
      : b(b), numModels(numModels), element(element) {}

  /// Reassociation between [M, d1..dn] and [M, d1*...*dn] (or [M] and [M, 1]).
  static SmallVector<ReassociationIndices> rowGroups(int64_t rank) {
    if (rank == 1)
      return {{0, 1}};
    ReassociationIndices rest;
    for (int64_t d = 1; d < rank; ++d)
      rest.push_back(d);
    return {{0}, rest};
  }

  /// [M, size] -> the parameter's [M, shape...] type.
  Value unflatten(Location loc, Value row, RankedTensorType type) {
    if (type.getRank() == 2)
      return row;
    if (type.getRank() == 1)
      return b.create<tensor::CollapseShapeOp>(loc, type, row, rowGroups(1));
    return b.create<tensor::ExpandShapeOp>(loc, type, row,
                                           rowGroups(type.getRank()));
  }

  /// [M, shape...] -> [M, size].
  Value flatten(Location loc, Value v, int64_t size) {
    auto type = cast<RankedTensorType>(v.getType());
    auto rowType = RankedTensorType::get({numModels, size}, element);
    if (type.getRank() == 2)
      return v;
    if (type.getRank() == 1)
      return b.create<tensor::ExpandShapeOp>(loc, rowType, v, rowGroups(1));
    return b.create<tensor::CollapseShapeOp>(loc, rowType, v,
                                             rowGroups(type.getRank()));
  }

  /// Parameter `slot` of `flat` ([M, P], or [S, M, P] at `leading` = s).
  Value extract(Location loc, Value flat, const ParamSlot &slot,
                std::optional<int64_t> leading = std::nullopt) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    if (leading) {
      offsets.push_back(b.getIndexAttr(*leading));
      sizes.push_back(b.getIndexAttr(1));
      strides.push_back(b.getIndexAttr(1));
    }
    offsets.append({b.getIndexAttr(0), b.getIndexAttr(slot.offset)});
    sizes.append({b.getIndexAttr(numModels), b.getIndexAttr(slot.size)});
    strides.append({b.getIndexAttr(1), b.getIndexAttr(1)});
    auto rowType = RankedTensorType::get({numModels, slot.size}, element);
    Value row = b.create<tensor::ExtractSliceOp>(loc, rowType, flat, offsets,
                                                 sizes, strides);
    return unflatten(loc, row, slot.type);
  }

  /// Writes the [M, n] tensor `v` into columns [offset, offset + n) of `dest`.
  Value insertColumns(Location loc, Value v, Value dest, int64_t offset,
                      int64_t n) {
    SmallVector<OpFoldResult> offsets{b.getIndexAttr(0), b.getIndexAttr(offset)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(numModels),
                                    b.getIndexAttr(n)};
    SmallVector<OpFoldResult> strides{b.getIndexAttr(1), b.getIndexAttr(1)};
    return b.create<tensor::InsertSliceOp>(loc, v, dest, offsets, sizes,
                                           strides);
  }

private:
  OpBuilder &b;
  int64_t numModels;
  /// The model's float type (f32 or f64).
  Type element;
};

} // namespace

static DictionaryAttr readOnly(OpBuilder &b, bool writable) {
  return b.getDictionaryAttr(
      b.getNamedAttr("bufferization.writable", b.getBoolAttr(writable)));
}

/// The rows of `updated` ([M, n]) of the models whose `step` ([M]) is not
/// 0, the rows of `old` for the others: a model that does not step keeps
/// its buffers as it keeps its parameters.
static Value selectSteppedRows(OpBuilder &b, Location loc, Value step,
                               Value updated, Value old) {
  auto type = cast<RankedTensorType>(updated.getType());
  MLIRContext *ctx = b.getContext();
  AffineMap rows = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap perModel = AffineMap::get(2, 0, getAffineDimExpr(0, ctx));
  Value init = b.create<tensor::EmptyOp>(loc, type.getShape(),
                                         type.getElementType());
  auto select = b.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{step, updated, old}, ValueRange{init},
      SmallVector<AffineMap>{perModel, rows, rows, rows},
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location l, ValueRange args) {
        Value zero = nb.create<arith::ConstantOp>(
            l, nb.getFloatAttr(args[0].getType(), 0.0));
        Value stepped = nb.create<arith::CmpFOp>(
            l, arith::CmpFPredicate::ONE, args[0], zero);
        nb.create<linalg::YieldOp>(
            l, ValueRange{nb.create<arith::SelectOp>(l, stepped, args[1],
                                                     args[2])});
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
  Value init = b.create<tensor::EmptyOp>(loc, type.getShape(),
                                         type.getElementType());
  auto select = b.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{step, reportedLoss}, ValueRange{init},
      SmallVector<AffineMap>(3, id),
      SmallVector<utils::IteratorType>(1, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location l, ValueRange args) {
        Value reported = nb.create<arith::CmpFOp>(
            l, arith::CmpFPredicate::ORD, args[1], args[1]);
        Value zero = nb.create<arith::ConstantOp>(
            l, nb.getFloatAttr(args[0].getType(), 0.0));
        nb.create<linalg::YieldOp>(
            l, ValueRange{nb.create<arith::SelectOp>(l, reported, args[0],
                                                     zero)});
      });
  return select.getResult(0);
}

/// Builds `name(params [M,P], <extra>, x, y, out [M,K])`: slices the
/// parameters out of the flat buffer, copies the body of `source` (whose
/// first arguments are the parameters, then `extraSourceArgs` more mapped to
/// the new function's `extraArgs`, then x and y), writes its trailing
/// `numOutputs` results into `out` and returns what `finish` returns before
/// `out`.
static func::FuncOp buildEntryPoint(
    OpBuilder &b, ModuleOp module, StringRef name, func::FuncOp source,
    ArrayRef<ParamSlot> slots, int64_t numModels, Type element,
    bool paramsWritable, ArrayRef<std::pair<Type, bool>> extraArgs,
    function_ref<void(IRMapping &, Block *)> mapExtra,
    function_ref<SmallVector<Value>(IRMapping &, Block *, func::ReturnOp)>
        finish) {
  Location loc = source.getLoc();
  int64_t numParams = static_cast<int64_t>(slots.size());
  int64_t paramCount = slots.empty() ? 0 : slots.back().offset + slots.back().size;
  unsigned numSourceArgs = source.getNumArguments();
  // The ABI passes x as [M, B, F] (docs/abi.md); a model whose input has
  // a per-sample shape of higher rank reshapes it to [M, B, d0, d1, ...].
  auto modelXType = cast<RankedTensorType>(source.getArgumentTypes()[numSourceArgs - 2]);
  RankedTensorType xType = modelXType;
  if (modelXType.getRank() > 3) {
    int64_t features = 1;
    for (int64_t d : modelXType.getShape().drop_front(2))
      features *= d;
    xType = RankedTensorType::get({modelXType.getDimSize(0),
                                   modelXType.getDimSize(1), features},
                                  modelXType.getElementType());
  }
  Type yType = source.getArgumentTypes()[numSourceArgs - 1];
  auto ret = cast<func::ReturnOp>(source.getBody().front().getTerminator());
  unsigned numOutputs = ret.getNumOperands();
  unsigned firstOutput = numOutputs;
  if (auto outputs = source->getAttrOfType<ArrayAttr>(
          MBTDialect::OutputsAttrHelper::getNameStr()))
    firstOutput = numOutputs - outputs.size();
  int64_t k = numOutputs - firstOutput;
  auto outType = RankedTensorType::get({numModels, k}, element);
  auto flatType = RankedTensorType::get({numModels, paramCount}, element);

  SmallVector<Type> argTypes{flatType};
  SmallVector<DictionaryAttr> argAttrs{readOnly(b, paramsWritable)};
  for (auto [type, writable] : extraArgs) {
    argTypes.push_back(type);
    // Bufferization's writability applies to tensor arguments only.
    argAttrs.push_back(isa<MemRefType>(type) ? b.getDictionaryAttr({})
                                             : readOnly(b, writable));
  }
  // x is a strided memref: every model may read one shared batch, which the
  // runtime passes with stride 0 along the model dimension (docs/abi.md).
  // The features stay contiguous (stride 1), so that the matmuls on x
  // still go to BLAS.
  int64_t dyn = ShapedType::kDynamic;
  auto xMemRefType = MemRefType::get(
      xType.getShape(), xType.getElementType(),
      StridedLayoutAttr::get(b.getContext(), dyn, {dyn, dyn, 1}));
  argTypes.append({xMemRefType, yType, outType});
  argAttrs.append(
      {b.getDictionaryAttr({}), readOnly(b, false), readOnly(b, true)});

  b.setInsertionPointToEnd(module.getBody());
  auto func = b.create<func::FuncOp>(loc, name,
                                     b.getFunctionType(argTypes, {}));
  func.setAllArgAttrs(argAttrs);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);

  FlatLayout layout(b, numModels, element);
  IRMapping mapping;
  for (int64_t p = 0; p < numParams; ++p)
    mapping.map(source.getArgument(p),
                layout.extract(loc, entry->getArgument(0), slots[p]));
  mapExtra(mapping, entry);
  unsigned nargs = entry->getNumArguments();
  Value x = b.create<bufferization::ToTensorOp>(
      loc, xType, entry->getArgument(nargs - 3), /*restrict=*/true,
      /*writable=*/false);
  if (xType != modelXType)
    x = b.create<ReshapeOp>(loc, modelXType, x);
  mapping.map(source.getArgument(numSourceArgs - 2), x);
  mapping.map(source.getArgument(numSourceArgs - 1), entry->getArgument(nargs - 2));
  for (Operation &op : source.getBody().front().without_terminator())
    b.clone(op, mapping);

  SmallVector<Value> results = finish(mapping, entry, ret);
  Value out = entry->getArgument(nargs - 1);
  for (unsigned j = firstOutput; j < numOutputs; ++j) {
    Value metric = mapping.lookup(ret.getOperand(j)); // [M]
    Value column = layout.flatten(loc, metric, 1);
    out = layout.insertColumns(loc, column, out, j - firstOutput, 1);
  }
  results.push_back(out);
  // Each result is written into the argument the ABI says holds it (the
  // first results into the first arguments, `out` into the last). Going
  // through materialize_in_destination makes every result equivalent to its
  // argument, so bufferization drops the results and the entry point
  // updates the caller's buffers in place, copying only where it must.
  for (size_t i = 0; i < results.size(); ++i) {
    Value dest = i + 1 == results.size() ? entry->getArgument(nargs - 1)
                                         : entry->getArgument(i);
    results[i] = b.create<bufferization::MaterializeInDestinationOp>(
                      loc, results[i], dest)
                     .getResult();
  }
  b.create<func::ReturnOp>(loc, results);
  func.setFunctionType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return func;
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
  int64_t numModels = modelsAttr.getInt();
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  // Every buffer of the model's float type (params, state, x, out) has the
  // type the rule updates; the verifier of mbt.update checked it.
  Type element = rule.getElementType();

  // The layouts: parameters in argument order, each row-major, and the
  // buffers (running statistics) likewise in a [M, Q] buffer of their own.
  SmallVector<ParamSlot> slots, bufferSlots;
  int64_t offset = 0, bufferOffset = 0;
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
    if (!type.hasStaticShape()) {
      model.emitError(isBuffer ? "buffer '" : "parameter '")
          << name.getValue() << "' must have a static shape";
      return signalPassFailure();
    }
    int64_t size = type.getNumElements() / numModels;
    auto init = model.getArgAttrOfType<DictionaryAttr>(
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
    if (!bufferSlots.empty()) {
      model.emitError("parameter '")
          << name.getValue() << "' follows a buffer: the model's arguments "
          << "are its parameters, then its buffers, then the data";
      return signalPassFailure();
    }
    slots.push_back({name, type, offset, size, init});
    offset += size;
  }
  int64_t numParams = static_cast<int64_t>(slots.size());
  int64_t paramCount = offset;
  // A loss scale has all its buffers (mbt-autocast adds them), each once.
  bool scaled = llvm::any_of(bufferSlots, [](const ParamSlot &slot) {
    return !slot.lossScaleRole.empty();
  });
  for (const LossScaleBuffer &buffer : kLossScaleBuffers) {
    size_t count = llvm::count_if(bufferSlots, [&](const ParamSlot &slot) {
      return slot.lossScaleRole == buffer.role;
    });
    if (scaled && count != 1) {
      model.emitError("a loss scale needs one buffer of each role (scale, "
                      "good_steps, skipped_steps), got ")
          << count << " marked mbt.loss_scale = \"" << buffer.role << "\"";
      return signalPassFailure();
    }
  }
  int64_t numBuffers = static_cast<int64_t>(bufferSlots.size());
  int64_t bufferCount = bufferOffset;
  // Which parameters the sweep's no_decay patterns exclude from weight decay.
  SmallVector<bool> noDecay(slots.size(), false);
  if (auto patterns = sweep.getNoDecay())
    for (auto [slot, excluded] : llvm::zip(slots, noDecay))
      for (Attribute p : *patterns) {
        auto glob = llvm::GlobPattern::create(cast<StringAttr>(p).getValue());
        if (!glob)
          llvm::consumeError(glob.takeError()); // Sema reported it
        else if (glob->match(slot.name.getValue()))
          excluded = true;
      }
  int64_t numSlots = rule.getNumSlots();
  if (model.getNumArguments() != numParams + numBuffers + 2) {
    model.emitError("the model must take exactly one input and one target "
                    "after its parameters and buffers");
    return signalPassFailure();
  }

  // The state is a memref: each slot is written in place through its own
  // subview (see slotTensors below).
  auto stateType = MemRefType::get({numSlots, numModels, paramCount},
                                   element);
  auto hyperType = RankedTensorType::get(
      {numModels, static_cast<int64_t>(rule.getNumHyper())}, b.getF64Type());
  auto stepType = RankedTensorType::get({numModels}, b.getF64Type());
  auto buffersType = RankedTensorType::get({numModels, bufferCount}, element);
  // Buffer k of `source` (whose buffers follow its parameters) read from
  // the flat [M, Q] argument.
  auto mapBuffers = [&](IRMapping &mapping, func::FuncOp source,
                        Value flat) {
    FlatLayout layout(b, numModels, element);
    for (int64_t k = 0; k < numBuffers; ++k)
      mapping.map(source.getArgument(numParams + k),
                  layout.extract(source.getLoc(), flat, bufferSlots[k]));
  };

  // The optimizer step on flat buffers: the models whose loss or
  // gradients are not finite set aside (their step becomes 0 and their
  // reported loss NaN), the gradients [M, P] clipped (if the sweep clips),
  // the hyperparameters scheduled (if it has a schedule), then one fused
  // update, with a decay mask under no_decay. Returns the new parameters,
  // the new slots and the loss to report. Under a loss scale (`scale`: the
  // [M] scale, good steps and skipped steps), the gradients are unscaled
  // first, an overflow skips the model's step without freezing it, and the
  // scale is updated; the optimizer counts only the steps it takes.
  Location loc = trainStep.getLoc();
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
  auto buildOptimizerStep = [&](Value params, Value grads, ValueRange state,
                                Value hyper, Value step, Value loss,
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
    // Per-model clipping of the gradient's global norm, if asked for.
    if (auto clip = sweep.getClipNorm()) {
      auto normType = RankedTensorType::get({numModels}, b.getF64Type());
      Value maxNorm = b.create<ConstantOp>(
          loc, normType, DenseElementsAttr::get(normType, *clip));
      grads = b.create<ClipGradNormOp>(loc, grads, maxNorm);
    }
    // The scheduled learning rate, if the sweep has a schedule.
    if (auto schedule = sweep.getSchedule()) {
      ArrayAttr scheduleParams = *sweep.getScheduleParams();
      int64_t k = static_cast<int64_t>(scheduleParams.size());
      SmallVector<double> table; // [M, K], row-major
      for (int64_t m = 0; m < numModels; ++m)
        for (Attribute values : scheduleParams)
          table.push_back(cast<DenseF64ArrayAttr>(values)[m]);
      auto tableType =
          RankedTensorType::get({numModels, k}, b.getF64Type());
      Value table_ = b.create<ConstantOp>(
          loc, tableType, DenseElementsAttr::get(tableType, ArrayRef(table)));
      hyper = b.create<LRScheduleOp>(loc, hyper.getType(), *schedule,
                                     hyper, step, table_,
                                     rule.getHyperIndex("lr"));
    }
    // Parameters excluded from weight decay get a 0 in the mask.
    Value decayMask;
    if (sweep.getNoDecay()) {
      SmallVector<float> mask(paramCount, 1.0f);
      for (auto [slot, excluded] : llvm::zip(slots, noDecay))
        if (excluded)
          std::fill(mask.begin() + slot.offset,
                    mask.begin() + slot.offset + slot.size, 0.0f);
      // The mask is 1 or 0 whatever the model's float type.
      auto maskType = RankedTensorType::get({paramCount}, b.getF32Type());
      decayMask = b.create<ConstantOp>(
          loc, maskType, DenseElementsAttr::get(maskType, ArrayRef(mask)));
    }
    auto fused = b.create<FusedUpdateOp>(loc, rule.getSymName(), params, grads,
                                         state, hyper, optimizerStep,
                                         decayMask);
    return OptimizerStep{fused.getNewParams(),
                         SmallVector<Value>(fused.getNewState()),
                         guard.getReportedLoss(), buffersStep, newScale};
  };

  // Slot s of the state buffer as a [M, P] subview, and as a tensor that is
  // the only alias of it (`restrict`), so that bufferization updates every
  // slot in place; writeSlots stores the new values back into the views.
  // (As one [S, M, P] tensor cut by extract_slice and put back by
  // insert_slice, the second slot was updated in a copy: the analysis
  // cannot prove that the slices are disjoint.)
  auto slotTensors = [&](Value state, SmallVectorImpl<Value> &views) {
    SmallVector<Value> tensors;
    auto type = cast<MemRefType>(state.getType());
    for (int64_t s = 0; s < numSlots; ++s) {
      SmallVector<OpFoldResult> offsets{b.getIndexAttr(s), b.getIndexAttr(0),
                                        b.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes{b.getIndexAttr(1),
                                      b.getIndexAttr(numModels),
                                      b.getIndexAttr(paramCount)};
      SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
      auto viewType = cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
          {numModels, paramCount}, type, offsets, sizes, strides));
      Value view = b.create<memref::SubViewOp>(loc, viewType, state, offsets,
                                               sizes, strides);
      views.push_back(view);
      tensors.push_back(b.create<bufferization::ToTensorOp>(
          loc, view, /*restrict=*/true, /*writable=*/true));
    }
    return tensors;
  };
  auto writeSlots = [&](ValueRange values, ArrayRef<Value> views) {
    for (auto [value, view] : llvm::zip(values, views))
      b.create<bufferization::MaterializeInDestinationOp>(
          loc, Type(), value, view, /*restrict=*/true, /*writable=*/true);
  };
  SmallVector<Value> trainViews, trainSlots;
  // A finite [M] loss, for guarding where there is none.
  auto zeroLoss = [&]() -> Value {
    auto type = RankedTensorType::get({numModels}, element);
    return b.create<ConstantOp>(loc, type,
                                DenseElementsAttr::get(
                                    type, b.getFloatAttr(element, 0.0)));
  };

  // @mbt_train_step(params, buffers, state, hyper, step, x, y, out); the
  // arguments of @train_step: params, buffers, slots, hyper, step, x, y.
  int64_t slotBase = numParams + numBuffers;
  buildEntryPoint(
      b, module, "mbt_train_step", trainStep, slots, numModels, element,
      /*paramsWritable=*/true,
      {{buffersType, true}, {stateType, true}, {hyperType, false},
       {stepType, false}},
      [&](IRMapping &mapping, Block *entry) {
        FlatLayout layout(b, numModels, element);
        mapBuffers(mapping, trainStep, entry->getArgument(1));
        trainSlots = slotTensors(entry->getArgument(2), trainViews);
        for (int64_t s = 0; s < numSlots; ++s)
          for (int64_t p = 0; p < numParams; ++p)
            mapping.map(trainStep.getArgument(slotBase + numParams * s + p),
                        layout.extract(trainStep.getLoc(), trainSlots[s],
                                       slots[p]));
        int64_t hyperIndex = slotBase + numParams * numSlots;
        mapping.map(trainStep.getArgument(hyperIndex), entry->getArgument(3));
        mapping.map(trainStep.getArgument(hyperIndex + 1), entry->getArgument(4));
      },
      [&](IRMapping &mapping, Block *entry, func::ReturnOp ret) {
        // Gather every parameter's gradient into one [M, P] tensor.
        Location loc = trainStep.getLoc();
        FlatLayout layout(b, numModels, element);
        auto flatType =
            RankedTensorType::get({numModels, paramCount}, element);
        Value grads = b.create<tensor::EmptyOp>(loc, flatType.getShape(),
                                                element);
        SmallVector<Operation *> updates;
        for (int64_t p = 0; p < numParams; ++p) {
          auto update = cast<UpdateOp>(
              mapping.lookup(ret.getOperand(p)).getDefiningOp());
          Value row = layout.flatten(loc, update.getGrad(), slots[p].size);
          grads = layout.insertColumns(loc, row, grads, slots[p].offset,
                                       slots[p].size);
          updates.push_back(update);
        }
        // The loss is the first output (a model without outputs reports
        // none, and is guarded on its gradients alone).
        auto outputs = trainStep->getAttrOfType<ArrayAttr>(
            MBTDialect::OutputsAttrHelper::getNameStr());
        Value loss;
        unsigned lossIndex = 0;
        if (outputs && !outputs.empty()) {
          lossIndex = ret.getNumOperands() - outputs.size();
          loss = mapping.lookup(ret.getOperand(lossIndex));
        } else {
          loss = zeroLoss();
        }
        // The loss scale's buffers (precision = f16), by role.
        SmallVector<Value> scale;
        for (const LossScaleBuffer &buffer : kLossScaleBuffers)
          for (auto [k, slot] : llvm::enumerate(bufferSlots))
            if (slot.lossScaleRole == buffer.role)
              scale.push_back(
                  mapping.lookup(trainStep.getArgument(numParams + k)));
        OptimizerStep next =
            buildOptimizerStep(entry->getArgument(0), grads, trainSlots,
                               entry->getArgument(3), entry->getArgument(4),
                               loss, scale);
        // A model that did not step reports a NaN loss (docs/abi.md).
        if (outputs && !outputs.empty())
          mapping.map(ret.getOperand(lossIndex), next.loss);
        writeSlots(next.state, trainViews);
        // The per-parameter updates are now dead (their results were only
        // returned by the source's terminator, which was not copied).
        for (Operation *op : updates)
          op->erase();
        SmallVector<Value> results{next.params};
        if (numBuffers == 0)
          return results;
        // The buffers' new values (after the new state in the results),
        // kept only for the models that stepped.
        Value old = entry->getArgument(1), updated = old;
        int64_t firstBuffer = numParams * (1 + numSlots);
        for (int64_t k = 0; k < numBuffers; ++k) {
          Value value = mapping.lookup(ret.getOperand(firstBuffer + k));
          for (auto [buffer, newValue] :
               llvm::zip(kLossScaleBuffers, next.lossScale))
            if (bufferSlots[k].lossScaleRole == buffer.role)
              value = newValue;
          Value row = layout.flatten(loc, value, bufferSlots[k].size);
          updated = layout.insertColumns(loc, row, updated,
                                         bufferSlots[k].offset,
                                         bufferSlots[k].size);
        }
        results.push_back(
            selectSteppedRows(b, loc, next.buffersStep, updated, old));
        return results;
      });

  // @mbt_optimizer_step(params, state, hyper, step, grads): the optimizer
  // step alone, on gradients the caller computed (docs/abi.md).
  {
    auto flatType =
        RankedTensorType::get({numModels, paramCount}, element);
    SmallVector<Type> argTypes{flatType, stateType, hyperType, stepType,
                               flatType};
    b.setInsertionPointToEnd(module.getBody());
    auto func = b.create<func::FuncOp>(loc, "mbt_optimizer_step",
                                       b.getFunctionType(argTypes, {}));
    func.setAllArgAttrs(SmallVector<DictionaryAttr>{
        readOnly(b, true), b.getDictionaryAttr({}), readOnly(b, false),
        readOnly(b, false), readOnly(b, false)});
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToEnd(entry);
    SmallVector<Value> views;
    SmallVector<Value> state = slotTensors(entry->getArgument(1), views);
    // No loss: the models are guarded on their gradients alone.
    OptimizerStep next =
        buildOptimizerStep(entry->getArgument(0), entry->getArgument(4), state,
                           entry->getArgument(2), entry->getArgument(3),
                           zeroLoss(), /*scale=*/{});
    writeSlots(next.state, views);
    SmallVector<Value> results{
        b.create<bufferization::MaterializeInDestinationOp>(
             loc, next.params, entry->getArgument(0))
            .getResult()};
    b.create<func::ReturnOp>(loc, results);
    func.setFunctionType(
        b.getFunctionType(argTypes, ValueRange(results).getTypes()));
    func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  }

  // @mbt_eval_step(params, buffers, x, y, out).
  buildEntryPoint(
      b, module, "mbt_eval_step", model, slots, numModels, element,
      /*paramsWritable=*/false, {{buffersType, false}},
      [&](IRMapping &mapping, Block *entry) {
        mapBuffers(mapping, model, entry->getArgument(1));
      },
      [](IRMapping &, Block *, func::ReturnOp) { return SmallVector<Value>(); });

  // Record the layouts for the manifest: each tensor's name, shape, columns
  // and initializer (and, for parameters under no_decay, whether it decays).
  auto layoutAttr = [&](ArrayRef<ParamSlot> layout, ArrayRef<bool> excluded) {
    SmallVector<Attribute> entries;
    for (auto [k, slot] : llvm::enumerate(layout)) {
      SmallVector<NamedAttribute> fields{
          b.getNamedAttr("name", slot.name),
          b.getNamedAttr("shape", b.getDenseI64ArrayAttr(
                                      slot.type.getShape().drop_front())),
          b.getNamedAttr("offset", b.getI64IntegerAttr(slot.offset)),
          b.getNamedAttr("size", b.getI64IntegerAttr(slot.size))};
      if (slot.init)
        fields.push_back(b.getNamedAttr("init", slot.init));
      if (!excluded.empty())
        fields.push_back(b.getNamedAttr("decay", b.getBoolAttr(!excluded[k])));
      entries.push_back(b.getDictionaryAttr(fields));
    }
    return b.getArrayAttr(entries);
  };
  module->setAttr(MBTDialect::LayoutAttrHelper::getNameStr(),
                  layoutAttr(slots, sweep.getNoDecay() ? ArrayRef<bool>(noDecay)
                                                       : ArrayRef<bool>()));
  module->setAttr(MBTDialect::BufferLayoutAttrHelper::getNameStr(),
                  layoutAttr(bufferSlots, {}));
  if (auto outputs =
          model->getAttr(MBTDialect::OutputsAttrHelper::getNameStr()))
    module->setAttr(MBTDialect::OutputsAttrHelper::getNameStr(), outputs);
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
  // The per-model functions are now inlined into the entry points; the
  // sweep's model becomes the batched forward pass.
  trainStep.erase();
  model.erase();
  sweep.setModel("mbt_eval_step");
}
