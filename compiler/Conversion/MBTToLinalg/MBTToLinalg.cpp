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
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTLOWERTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

/// The two factors of a product (a matmul, a convolution or one of its
/// adjoints), or none for any other op.
static std::optional<std::pair<OpOperand *, OpOperand *>>
factorsOf(Operation *op) {
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return std::make_pair(&matmul.getLhsMutable(), &matmul.getRhsMutable());
  if (auto conv = dyn_cast<Conv2dOp>(op))
    return std::make_pair(&conv.getInputMutable(), &conv.getFilterMutable());
  if (auto grad = dyn_cast<Conv2dGradFilterOp>(op))
    return std::make_pair(&grad.getInputMutable(), &grad.getGradMutable());
  if (auto grad = dyn_cast<Conv2dGradInputOp>(op))
    return std::make_pair(&grad.getGradMutable(), &grad.getFilterMutable());
  return std::nullopt;
}

/// Marks each product whose two factors mbt.round_to rounded to one format
/// with it (kOperandsFormatAttr), before the patterns lower the rounding,
/// for the product's pattern to pass on to its GEMM.
static void markRoundedProducts(ModuleOp module) {
  module.walk([&](Operation *op) {
    auto factors = factorsOf(op);
    if (!factors)
      return;
    auto ra = factors->first->get().getDefiningOp<RoundToOp>();
    auto rb = factors->second->get().getDefiningOp<RoundToOp>();
    if (ra && rb && ra.getFormat() == rb.getFormat())
      op->setAttr(kOperandsFormatAttr, ra.getFormatAttr());
  });
}

/// Whether `op` becomes a named batched matmul: a matmul of rank 3, not
/// both transposed, or a convolution or one of its adjoints, whose GEMMs
/// read their operands moved.
static bool becomesNamedBatchMatmul(Operation *op) {
  auto matmul = dyn_cast<MatmulOp>(op);
  return !matmul || (matmul.getType().getRank() == 3 &&
                     !(matmul.getTransposeLhs() && matmul.getTransposeRhs()));
}

/// Folds the bf16 rounding of both factors of each f32 product that
/// becomes a named batched matmul into the product (kRoundOperandsAttr):
/// it reads the unrounded values, and the GEMM it lowers to rounds them.
/// A rounding left without users goes. The CPU kernel rounds the operands
/// as it packs them, the same values (mbt_rt_batch_matmul_f32_bf16).
static void foldOperandRounding(ModuleOp module) {
  llvm::SetVector<Operation *> roundings;
  module.walk([&](Operation *op) {
    auto factors = factorsOf(op);
    if (!factors || !becomesNamedBatchMatmul(op))
      return;
    auto [a, b] = *factors;
    auto ra = a->get().getDefiningOp<RoundToOp>();
    auto rb = b->get().getDefiningOp<RoundToOp>();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (!ra || !rb || !ra.getFormat().isBF16() || !rb.getFormat().isBF16() ||
        !type.getElementType().isF32())
      return;
    op->setAttr(kRoundOperandsAttr, ra.getFormatAttr());
    a->set(ra.getInput());
    b->set(rb.getInput());
    roundings.insert(ra);
    roundings.insert(rb);
  });
  for (Operation *rounding : roundings)
    if (rounding->use_empty())
      rounding->erase();
}

/// Whether every reader of `v` rounds it to bf16 as it reads it: the
/// attention kernels' operands (isRoundedByAttentionKernel), seen through
/// the ops that only move values (onlyMovesValues).
static bool onlyAttentionKernelsRead(Value v) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    bool moves = onlyMovesValues(user) && use.getOperandNumber() == 0;
    if (moves ? !onlyAttentionKernelsRead(user->getResult(0))
              : !isRoundedByAttentionKernel(use))
      return false;
  }
  return true;
}

/// Drops each bf16 rounding whose values only the attention kernels read
/// (autocast's rounded query, key and value projections): the kernel
/// rounds its operands itself, to the same bits, so the rounding was a
/// pass over the tensor that changed nothing.
static void foldAttentionKernelRounding(ModuleOp module) {
  SmallVector<RoundToOp> redundant;
  module.walk([&](RoundToOp rounding) {
    if (rounding.getFormat().isBF16() && !rounding->use_empty() &&
        onlyAttentionKernelsRead(rounding.getResult()))
      redundant.push_back(rounding);
  });
  for (RoundToOp rounding : redundant) {
    rounding.getResult().replaceAllUsesWith(rounding.getInput());
    rounding.erase();
  }
}

void mlir::mbt::populateMBTToLinalgConversionPatterns(
    RewritePatternSet &patterns, const MBTLowerToLinalgOptions &options) {
  bool scalarsPerElement = options.scalarsPerElement;
  bool recurrencePerModel = options.recurrencePerModel;
  populateElementwisePatterns(patterns);
  populateMatmulPatterns(patterns);
  populateReductionPatterns(patterns);
  populateLossPatterns(patterns);
  populateSlicePatterns(patterns);
  populateClipPatterns(patterns);
  populateGuardStepPatterns(patterns, scalarsPerElement);
  populatePrecisionPatterns(patterns);
  populateDropoutPatterns(patterns);
  populateConvPatterns(patterns, options.convolutionKernels);
  populatePoolPatterns(patterns);
  populateNormPatterns(patterns);
  populateEmbeddingPatterns(patterns);
  populateMaskedMeanPatterns(patterns);
  populateRowsPatterns(patterns);
  populateAttentionPatterns(patterns, options.attentionPerSequence);
  if (options.attentionKernels)
    populateAttentionKernelPatterns(patterns);
  populateGruPatterns(patterns, recurrencePerModel);
  populateLstmPatterns(patterns, recurrencePerModel);
  populateSchedulePatterns(patterns);
  populateOptimizerPatterns(patterns, scalarsPerElement);
}

void mlir::mbt::configureMBTToLinalgConversionTarget(ConversionTarget &target) {
  target.addIllegalDialect<MBTDialect>();
  target.addLegalOp<SweepOp, OptimizerOp>();
  target.markOpRecursivelyLegal<SweepOp, OptimizerOp>();
  target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                         arith::ArithDialect, math::MathDialect,
                         scf::SCFDialect, bufferization::BufferizationDialect,
                         memref::MemRefDialect, func::FuncDialect>();
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
    if (attentionKernels)
      foldAttentionKernelRounding(module);
    ConversionTarget target(getContext());
    configureMBTToLinalgConversionTarget(target);
    RewritePatternSet patterns(&getContext());
    MBTLowerToLinalgOptions options{scalarsPerElement,  attentionPerSequence,
                                    recurrencePerModel, foldOperandRounding,
                                    convolutionKernels, attentionKernels};
    populateMBTToLinalgConversionPatterns(patterns, options);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
