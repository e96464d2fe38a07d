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

/// Folds the bf16 rounding of both operands of `product` (`a` and `b`, its
/// operands `ia` and `ib`) into it (kRoundOperandsAttr): it reads the
/// unrounded values, and the GEMM it lowers to rounds them.
static void foldRounding(Operation *product, unsigned ia, unsigned ib,
                         llvm::SetVector<Operation *> &roundings) {
  auto ra = product->getOperand(ia).getDefiningOp<RoundToOp>();
  auto rb = product->getOperand(ib).getDefiningOp<RoundToOp>();
  auto type = cast<RankedTensorType>(product->getResult(0).getType());
  if (!ra || !rb || !ra.getFormat().isBF16() || !rb.getFormat().isBF16() ||
      !type.getElementType().isF32())
    return;
  product->setAttr(kRoundOperandsAttr, ra.getFormatAttr());
  product->setOperand(ia, ra.getInput());
  product->setOperand(ib, rb.getInput());
  roundings.insert(ra);
  roundings.insert(rb);
}

/// Folds the bf16 rounding of both operands of each f32 product that
/// becomes a named batched matmul (a matmul of rank 3, not both
/// transposed; a convolution and its adjoints, whose GEMMs read their
/// operands moved) into the product; a rounding left without users goes.
/// The CPU kernel rounds the operands as it packs them, the same values
/// (mbt_rt_batch_matmul_f32_bf16).
static void foldOperandRounding(ModuleOp module) {
  llvm::SetVector<Operation *> roundings;
  module.walk([&](Operation *op) {
    if (auto matmul = dyn_cast<MatmulOp>(op)) {
      if (matmul.getType().getRank() == 3 &&
          !(matmul.getTransposeLhs() && matmul.getTransposeRhs()))
        foldRounding(op, 0, 1, roundings);
    } else if (auto conv = dyn_cast<Conv2dOp>(op)) {
      foldRounding(op, conv.getInputMutable().getOperandNumber(),
                   conv.getFilterMutable().getOperandNumber(), roundings);
    } else if (auto grad = dyn_cast<Conv2dGradFilterOp>(op)) {
      foldRounding(op, grad.getInputMutable().getOperandNumber(),
                   grad.getGradMutable().getOperandNumber(), roundings);
    } else if (auto grad = dyn_cast<Conv2dGradInputOp>(op)) {
      foldRounding(op, grad.getGradMutable().getOperandNumber(),
                   grad.getFilterMutable().getOperandNumber(), roundings);
    }
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
