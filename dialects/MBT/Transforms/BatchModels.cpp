//===- BatchModels.cpp - add the model dimension to every value -----------===//
//
// Every function of a model module computes one model. This pass rewrites
// each to compute M models at once: arguments and results gain a leading
// dimension M, and each op is rebuilt by its BatchableOpInterface, which
// guarantees that slice i of every value is what model i computes alone.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTBATCHMODELS
#include "dialects/MBT/Transforms/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {
struct BatchModelsPass
    : public mlir::mbt::impl::MBTBatchModelsBase<BatchModelsPass> {
  using MBTBatchModelsBase::MBTBatchModelsBase;
  void runOnOperation() override;
};
} // namespace

static Type withModelDim(Type type, int64_t numModels) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape{numModels};
  llvm::append_range(shape, tensor.getShape());
  return RankedTensorType::get(shape, tensor.getElementType());
}

static LogicalResult batchFunction(func::FuncOp func, int64_t numModels) {
  if (!func.getBody().hasOneBlock())
    return func.emitError("model functions must have a single block");
  Block &oldBlock = func.getBody().front();
  // The new block lives in the function while it is built (builders need
  // its context); on failure it is erased and the function is unchanged.
  auto *newBlock = new Block();
  func.getBody().push_back(newBlock);
  IRMapping mapping;
  for (BlockArgument arg : oldBlock.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType())) {
      newBlock->erase();
      return func.emitError("argument ")
             << arg.getArgNumber() << " is not a ranked tensor";
    }
    mapping.map(arg, newBlock->addArgument(
                         withModelDim(arg.getType(), numModels), arg.getLoc()));
  }
  OpBuilder builder = OpBuilder::atBlockEnd(newBlock);
  for (Operation &op : oldBlock) {
    SmallVector<Value> operands;
    for (Value v : op.getOperands())
      operands.push_back(mapping.lookup(v));
    if (isa<func::ReturnOp>(op)) {
      builder.create<func::ReturnOp>(op.getLoc(), operands);
      continue;
    }
    auto batchable = dyn_cast<BatchableOpInterface>(op);
    if (!batchable) {
      newBlock->erase();
      return op.emitOpError("has no batching rule");
    }
    Operation *batched = batchable.buildBatched(builder, operands, numModels);
    if (!batched) {
      newBlock->erase();
      return failure();
    }
    mapping.map(op.getResults(), batched->getResults());
  }
  oldBlock.dropAllDefinedValueUses();
  oldBlock.erase();

  SmallVector<Type> inputs, results;
  for (Type t : func.getArgumentTypes())
    inputs.push_back(withModelDim(t, numModels));
  for (Type t : func.getResultTypes())
    results.push_back(withModelDim(t, numModels));
  func.setFunctionType(FunctionType::get(func.getContext(), inputs, results));
  func->setAttr(
      MBTDialect::ModelsAttrHelper::getNameStr(),
      IntegerAttr::get(IntegerType::get(func.getContext(), 64), numModels));
  return success();
}

void BatchModelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  int64_t models = numModels;
  if (models == 0) {
    SweepOp sweep = getSweep(module);
    if (!sweep)
      return signalPassFailure();
    models = sweep.getModels();
  }
  if (models < 1) {
    module.emitError("the number of models must be positive");
    return signalPassFailure();
  }
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func->hasAttr(MBTDialect::ModelsAttrHelper::getNameStr()) ||
        func.isExternal())
      continue; // already batched, or a declaration
    if (failed(batchFunction(func, models)))
      return signalPassFailure();
  }
}
