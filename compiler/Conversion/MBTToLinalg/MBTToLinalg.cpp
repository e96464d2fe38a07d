//===- MBTToLinalg.cpp - the mbt-lower-to-linalg pass ---------------------===//
//
// A partial dialect conversion: the patterns of the *Patterns.cpp files
// (PopulatePatterns.h) rewrite every mbt op outside the sweep and the
// update rules, and the conversion fails, naming the op, where one has no
// pattern or its pattern does not apply.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/MBTToLinalg.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/Utils/BatchMatmul.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTLOWERTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

/// Marks each product (a matmul, a convolution or one of its adjoints)
/// whose two factors mbt.round_to rounded to one format with it
/// (kOperandsFormatAttr), before the patterns lower the rounding, for the
/// product's pattern to pass on to its GEMM.
static void markRoundedProducts(ModuleOp module) {
  auto mark = [](Operation *op, Value a, Value b) {
    auto ra = a.getDefiningOp<RoundToOp>();
    auto rb = b.getDefiningOp<RoundToOp>();
    if (ra && rb && ra.getFormat() == rb.getFormat())
      op->setAttr(kOperandsFormatAttr, ra.getFormatAttr());
  };
  module.walk([&](Operation *op) {
    if (auto matmul = dyn_cast<MatmulOp>(op))
      mark(op, matmul.getLhs(), matmul.getRhs());
    else if (auto conv = dyn_cast<Conv2dOp>(op))
      mark(op, conv.getInput(), conv.getFilter());
    else if (auto grad = dyn_cast<Conv2dGradFilterOp>(op))
      mark(op, grad.getInput(), grad.getGrad());
    else if (auto grad = dyn_cast<Conv2dGradInputOp>(op))
      mark(op, grad.getGrad(), grad.getFilter());
  });
}

/// Folds the bf16 rounding of both operands of each f32 product that
/// becomes a named batched matmul (rank 3, not both transposed) into the
/// product (kRoundOperandsAttr), which then reads the unrounded values; a
/// rounding left without users goes. The CPU kernel rounds the operands
/// as it packs them, the same values (mbt_rt_batch_matmul_f32_bf16).
static void foldOperandRounding(ModuleOp module) {
  llvm::SetVector<Operation *> roundings;
  module.walk([&](MatmulOp op) {
    auto ra = op.getLhs().getDefiningOp<RoundToOp>();
    auto rb = op.getRhs().getDefiningOp<RoundToOp>();
    if (!ra || !rb || !ra.getFormat().isBF16() || !rb.getFormat().isBF16() ||
        !op.getType().getElementType().isF32() || op.getType().getRank() != 3 ||
        (op.getTransposeLhs() && op.getTransposeRhs()))
      return;
    op->setAttr(kRoundOperandsAttr, ra.getFormatAttr());
    op.getLhsMutable().assign(ra.getInput());
    op.getRhsMutable().assign(rb.getInput());
    roundings.insert(ra);
    roundings.insert(rb);
  });
  for (Operation *rounding : roundings)
    if (rounding->use_empty())
      rounding->erase();
}

void mlir::mbt::populateMBTToLinalgConversionPatterns(
    RewritePatternSet &patterns, bool scalarsPerElement,
    bool attentionPerSequence) {
  populateElementwisePatterns(patterns);
  populateMatmulPatterns(patterns);
  populateReductionPatterns(patterns);
  populateLossPatterns(patterns);
  populateSlicePatterns(patterns);
  populateClipPatterns(patterns);
  populateGuardStepPatterns(patterns, scalarsPerElement);
  populatePrecisionPatterns(patterns);
  populateDropoutPatterns(patterns);
  populateConvPatterns(patterns);
  populatePoolPatterns(patterns);
  populateNormPatterns(patterns);
  populateEmbeddingPatterns(patterns);
  populateMaskedMeanPatterns(patterns);
  populateRowsPatterns(patterns);
  populateAttentionPatterns(patterns, attentionPerSequence);
  populateGruPatterns(patterns);
  populateLstmPatterns(patterns);
  populateSchedulePatterns(patterns);
  populateOptimizerPatterns(patterns, scalarsPerElement);
}

void mlir::mbt::configureMBTToLinalgConversionTarget(ConversionTarget &target) {
  target.addIllegalDialect<MBTDialect>();
  target.addLegalOp<SweepOp, OptimizerOp>();
  target.markOpRecursivelyLegal<SweepOp, OptimizerOp>();
  target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                         arith::ArithDialect, math::MathDialect,
                         scf::SCFDialect>();
}

namespace {
struct LowerToLinalgPass
    : public mlir::mbt::impl::MBTLowerToLinalgBase<LowerToLinalgPass> {
  using MBTLowerToLinalgBase::MBTLowerToLinalgBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    markRoundedProducts(module);
    if (foldOperandRounding)
      ::foldOperandRounding(module);
    ConversionTarget target(getContext());
    configureMBTToLinalgConversionTarget(target);
    RewritePatternSet patterns(&getContext());
    populateMBTToLinalgConversionPatterns(patterns, scalarsPerElement,
                                          attentionPerSequence);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
