//===- MBTToLinalg.h - lowering mbt to linalg on tensors --------*- C++ -*-===//
#ifndef MBT_COMPILER_CONVERSION_MBTTOLINALG_MBTTOLINALG_H
#define MBT_COMPILER_CONVERSION_MBTTOLINALG_MBTTOLINALG_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::mbt {

/// Adds the patterns that lower each mbt op of a fused module to linalg,
/// tensor, arith, math and scf on tensors. `scalarsPerElement`: the fused
/// update's per-model scalars are computed by each element of its loop
/// nest instead of a prologue over the models (one kernel on a GPU).
/// `attentionPerSequence`: each sequence's attention in an scf.forall over
/// the batch (its weights stay in the cache on a CPU).
/// `recurrencePerModel`: each model's GRU or LSTM scan in an scf.forall over
/// the models (each CPU thread runs whole scans).
/// `convolutionKernels`: f32 convolutions and their adjoints are calls to
/// the runtime's convolution kernels (the CPU) instead of im2col + GEMM.
void populateMBTToLinalgConversionPatterns(RewritePatternSet &patterns,
                                           bool scalarsPerElement,
                                           bool attentionPerSequence,
                                           bool recurrencePerModel,
                                           bool convolutionKernels);

/// Marks what the lowering leaves: every mbt op is illegal but the sweep
/// and the update rules (metadata whose copies the fused update's loops
/// hold), and the ops nested in them.
void configureMBTToLinalgConversionTarget(ConversionTarget &target);

} // namespace mlir::mbt

#endif // MBT_COMPILER_CONVERSION_MBTTOLINALG_MBTTOLINALG_H
