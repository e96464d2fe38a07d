//===- Autocast.cpp - the sweep's precision on the model's products -------===//
//
// Mixed precision as autocast does it: the products (matmuls and
// convolutions) take their operands in bf16 or f16 and give a result in it,
// accumulating in f32; the rest of the model, its parameters and the
// optimizer stay f32. The values keep their f32 type: mbt.round_to rounds
// them, so one lowering serves the CPU (whose BLAS has no bf16 products)
// and the GPU alike.
//
// f16's range is narrow (its smallest normal is 2^-14), so small
// gradients would flush to zero: under f16 every model gets a dynamic loss
// scale, three scalar buffers (its scale, its steps since the scale last
// changed, its skipped steps) that mbt-autodiff seeds the reverse sweep
// with and mbt-fuse-optimizer updates (mbt.update_loss_scale).
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/LossScaleRules.h"
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
  auto rounded =
      builder.create<RoundToOp>(op->getLoc(), result, TypeAttr::get(format));
  result.replaceAllUsesExcept(rounded, rounded);
}

/// Gives `model` the buffers of a dynamic loss scale starting at
/// `initScale`: scalars of its float type after its parameters and buffers.
void addLossScaleBuffers(func::FuncOp model, double initScale) {
  Builder b(model.getContext());
  unsigned index = 0;
  for (unsigned i = 0; i < model.getNumArguments(); ++i)
    if (model.getArgAttr(i, MBTDialect::ParamAttrHelper::getNameStr()) ||
        model.getArgAttr(i, MBTDialect::BufferAttrHelper::getNameStr()))
      index = i + 1;
  auto type = RankedTensorType::get({}, b.getF32Type());
  auto init = [&](bool scale) {
    return scale ? InitAttr::get(b.getContext(), InitKind::constant,
                                 ArrayRef<double>{initScale})
                 : InitAttr::get(b.getContext(), InitKind::zeros,
                                 ArrayRef<double>{});
  };
  for (const LossScaleBuffer &buffer : kLossScaleBuffers) {
    DictionaryAttr attrs = b.getDictionaryAttr(
        {b.getNamedAttr(MBTDialect::BufferAttrHelper::getNameStr(),
                        b.getStringAttr(buffer.name)),
         b.getNamedAttr(MBTDialect::InitAttrHelper::getNameStr(),
                        init(buffer.role == "scale")),
         b.getNamedAttr(MBTDialect::LossScaleAttrHelper::getNameStr(),
                        b.getStringAttr(buffer.role))});
    model.insertArgument(index++, type, attrs, model.getLoc());
  }
}

} // namespace

void AutocastPass::runOnOperation() {
  ModuleOp module = getOperation();
  SweepOp sweep = getSweep(module);
  if (!sweep)
    return signalPassFailure();
  std::optional<Precision> precision = sweep.getPrecision();
  if (!precision)
    return;
  auto model = module.lookupSymbol<func::FuncOp>(sweep.getModelAttr());
  if (!model)
    return signalPassFailure(); // the sweep's verifier has reported it
  Builder builder(module.getContext());
  bool f16 = *precision == Precision::f16;
  Type format = f16 ? Type(builder.getF16Type()) : builder.getBF16Type();
  if (f16)
    addLossScaleBuffers(model, sweep.getLossScaleSettings().initScale);
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
