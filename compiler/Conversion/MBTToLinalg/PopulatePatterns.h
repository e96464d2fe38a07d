//===- PopulatePatterns.h - the pattern groups of MBTToLinalg ---*- C++ -*-===//
//
// One group of conversion patterns per file, as in torch-mlir's
// TorchToLinalg; MBTToLinalg.cpp adds them all
// (populateMBTToLinalgConversionPatterns).
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_CONVERSION_MBTTOLINALG_POPULATEPATTERNS_H
#define MBT_COMPILER_CONVERSION_MBTTOLINALG_POPULATEPATTERNS_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::mbt {

void populateElementwisePatterns(RewritePatternSet &patterns);
void populateMatmulPatterns(RewritePatternSet &patterns);
void populateReductionPatterns(RewritePatternSet &patterns);
void populateLossPatterns(RewritePatternSet &patterns);
void populateSlicePatterns(RewritePatternSet &patterns);
void populateClipPatterns(RewritePatternSet &patterns);
/// `chunkRows`: reduce each gradient row in parallel chunks (a GPU's).
void populateGuardStepPatterns(RewritePatternSet &patterns, bool chunkRows);
void populatePrecisionPatterns(RewritePatternSet &patterns);
void populateDropoutPatterns(RewritePatternSet &patterns);
/// `kernelCalls`: f32 convolutions become calls to the runtime's kernels.
void populateConvPatterns(RewritePatternSet &patterns, bool kernelCalls);
void populatePoolPatterns(RewritePatternSet &patterns);
void populateNormPatterns(RewritePatternSet &patterns);
void populateEmbeddingPatterns(RewritePatternSet &patterns);
void populateMaskedMeanPatterns(RewritePatternSet &patterns);
void populateRowsPatterns(RewritePatternSet &patterns);
/// `perSequence`: each sequence's attention inside an scf.forall over the
/// leading dims (the CPU), rather than on the whole batch (the GPU).
void populateAttentionPatterns(RewritePatternSet &patterns, bool perSequence);
/// f32 attention (f32 or bf16 products) and its adjoint as calls to the
/// runtime's attention kernels (the CPU), ahead of the generics.
void populateAttentionKernelPatterns(RewritePatternSet &patterns);
/// Whether `op` only moves its first operand's values into another shape
/// (mbt.split_rows, merge_rows, reshape): what attention's operands pass
/// through from the products and roundings that make them.
bool onlyMovesValues(Operation *op);
/// Whether `operand` is an operand (not the tokens) of an attention op, or
/// its adjoint, that the kernels of populateAttentionKernelPatterns compute
/// with bf16 products: the kernel rounds it to bf16 as it reads it, as
/// mbt.round_to does.
bool isRoundedByAttentionKernel(OpOperand &operand);
/// `perModel`: each model's recurrence (and its adjoint) inside an
/// scf.forall over the models (the CPU), rather than over all of them at
/// every position (the GPU).
void populateGruPatterns(RewritePatternSet &patterns, bool perModel);
void populateLstmPatterns(RewritePatternSet &patterns, bool perModel);
void populateSchedulePatterns(RewritePatternSet &patterns);
/// `scalarsPerElement`: the update's per-model scalars are computed by each
/// element of its one loop nest instead of a prologue over the models.
void populateOptimizerPatterns(RewritePatternSet &patterns,
                               bool scalarsPerElement);

} // namespace mlir::mbt

#endif // MBT_COMPILER_CONVERSION_MBTTOLINALG_POPULATEPATTERNS_H
