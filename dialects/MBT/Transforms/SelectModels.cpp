//===- SelectModels.cpp - keep a slice of the sweep's models --------------===//
//
// A run over several processes splits the sweep's models into contiguous
// slices, one per rank; each rank's artifact is the whole sweep's program
// with only its slice's per-model values. Nothing a model computes depends
// on its position in the batch (its weights, dropout masks and data are
// keyed by its seed), so model i of a slice is model first + i of the
// sweep, bit for bit.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTSELECTMODELS
#include "dialects/MBT/Transforms/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {
struct SelectModelsPass
    : public mlir::mbt::impl::MBTSelectModelsBase<SelectModelsPass> {
  using MBTSelectModelsBase::MBTSelectModelsBase;
  void runOnOperation() override;
};

/// Which models of the current sweep stay: [first, first + count).
struct Slice {
  int64_t first, count, models;

  template <typename T> SmallVector<T> of(ArrayRef<T> values) const {
    return SmallVector<T>(values.slice(first, count));
  }
};

DenseF64ArrayAttr sliceF64(Builder &b, DenseF64ArrayAttr values,
                           const Slice &slice) {
  return b.getDenseF64ArrayAttr(slice.of(values.asArrayRef()));
}

/// An array of per-model arrays (the hyperparameters, model arguments,
/// schedule parameters), each cut to the slice.
ArrayAttr slicePerModelRows(Builder &b, ArrayAttr rows, const Slice &slice) {
  SmallVector<Attribute> cut;
  for (Attribute row : rows)
    cut.push_back(sliceF64(b, cast<DenseF64ArrayAttr>(row), slice));
  return b.getArrayAttr(cut);
}

/// The warm start's files, when there is one per model.
DictionaryAttr sliceInitCheckpoint(Builder &b, DictionaryAttr init,
                                   const Slice &slice) {
  auto files = init.getAs<ArrayAttr>("files");
  if (!files || static_cast<int64_t>(files.size()) != slice.models)
    return init;
  NamedAttrList entries(init);
  entries.set("files",
              b.getArrayAttr(slice.of(ArrayRef<Attribute>(files.getValue()))));
  return entries.getDictionary(b.getContext());
}

void sliceSweep(SweepOp sweep, const Slice &slice) {
  Builder b(sweep.getContext());
  sweep.setHyperAttr(slicePerModelRows(b, sweep.getHyper(), slice));
  sweep.setSeedsAttr(b.getDenseI64ArrayAttr(slice.of(sweep.getSeeds())));
  if (auto fold = sweep.getFoldAttr())
    sweep.setFoldAttr(b.getDenseI64ArrayAttr(slice.of(fold.asArrayRef())));
  if (auto args = sweep.getModelArgsAttr())
    sweep.setModelArgsAttr(slicePerModelRows(b, args, slice));
  if (auto clip = sweep.getClipNormAttr())
    sweep.setClipNormAttr(sliceF64(b, clip, slice));
  if (auto params = sweep.getScheduleParamsAttr())
    sweep.setScheduleParamsAttr(slicePerModelRows(b, params, slice));
  if (auto init = sweep.getInitCheckpointAttr())
    sweep.setInitCheckpointAttr(sliceInitCheckpoint(b, init, slice));
  if (!sweep.getSweepModels())
    sweep.setSweepModelsAttr(b.getI64IntegerAttr(slice.models));
  sweep.setFirstModelAttr(b.getI64IntegerAttr(
      static_cast<int64_t>(sweep.getFirstModel()) + slice.first));
  sweep.setModelsAttr(b.getI64IntegerAttr(slice.count));
}
} // namespace

void SelectModelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SweepOp sweep = getSweep(module);
  if (!sweep)
    return signalPassFailure();
  int64_t models = static_cast<int64_t>(sweep.getModels());
  int64_t begin = first.getValue();
  int64_t keep = count < 0 ? models - begin : count.getValue();
  if (begin < 0 || keep < 1 || begin + keep > models) {
    emitError(sweep.getLoc())
        << "cannot keep models [" << begin << ", " << begin + keep
        << ") of a sweep of " << models << " models";
    return signalPassFailure();
  }
  Slice slice{begin, keep, models};
  sliceSweep(sweep, slice);
  Builder b(module.getContext());
  WalkResult walk = module.walk([&](Operation *op) {
    if (auto constant = dyn_cast<ModelConstantOp>(op)) {
      if (static_cast<int64_t>(constant.getValues().size()) != models) {
        constant.emitOpError("has ") << constant.getValues().size()
                                     << " values for " << models << " models";
        return WalkResult::interrupt();
      }
      constant.setValuesAttr(sliceF64(b, constant.getValuesAttr(), slice));
    } else if (auto seed = dyn_cast<ModelSeedOp>(op)) {
      seed.setSeedsAttr(b.getDenseI64ArrayAttr(slice.of(seed.getSeeds())));
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    signalPassFailure();
}
