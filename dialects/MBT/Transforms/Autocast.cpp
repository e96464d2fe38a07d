//===- Autocast.cpp - the sweep's precision on the model's products -------===//
//
// Mixed precision as autocast does it: the products (matmuls and
// convolutions) take their operands in bf16 and give a bf16 result,
// accumulating in f32; the rest of the model, its parameters and the
// optimizer stay f32. The values keep their f32 type: mbt.round_to rounds
// them, so one lowering serves the CPU (whose BLAS has no bf16 products)
// and the GPU alike.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/Transforms/Passes.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTAUTOCAST
#include "dialects/MBT/Transforms/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {

struct AutocastPass : public mlir::mbt::impl::MBTAutocastBase<AutocastPass> {
  void runOnOperation() override;
};

/// Rounds `op`'s operands and its result to `format`.
void roundAround(Operation *op, Type format) {
  OpBuilder builder(op);
  for (OpOperand &operand : op->getOpOperands())
    operand.set(builder.create<RoundToOp>(op->getLoc(), operand.get(),
                                          TypeAttr::get(format)));
  builder.setInsertionPointAfter(op);
  Value result = op->getResult(0);
  auto rounded = builder.create<RoundToOp>(op->getLoc(), result,
                                           TypeAttr::get(format));
  result.replaceAllUsesExcept(rounded, rounded);
}

} // namespace

void AutocastPass::runOnOperation() {
  ModuleOp module = getOperation();
  SweepOp sweep = getSweep(module);
  if (!sweep)
    return signalPassFailure();
  std::optional<StringRef> precision = sweep.getPrecision();
  if (!precision)
    return;
  auto model = module.lookupSymbol<func::FuncOp>(sweep.getModelAttr());
  if (!model)
    return signalPassFailure(); // the sweep's verifier has reported it
  Type format = Builder(module.getContext()).getBF16Type();
  SmallVector<Operation *> products;
  model.walk([&](Operation *op) {
    if (isa<MatmulOp, Conv2dOp>(op))
      products.push_back(op);
    // Attention's products are inside it: its lowering rounds them.
    if (auto attention = dyn_cast<AttentionOp>(op))
      attention.setFormat(format);
  });
  for (Operation *op : products)
    roundAround(op, format);
}
