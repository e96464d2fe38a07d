//===- MBTToLinalg.h - lowering mbt to linalg on tensors --------*- C++ -*-===//
#ifndef MBT_COMPILER_CONVERSION_MBTTOLINALG_MBTTOLINALG_H
#define MBT_COMPILER_CONVERSION_MBTTOLINALG_MBTTOLINALG_H

#include "compiler/Conversion/Passes.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::mbt {

/// Adds the patterns that lower each mbt op of a fused module to linalg,
/// tensor, arith, math and scf on tensors, with the lowering's choices
/// (`mbt-lower-to-linalg`'s options, Passes.td): the per-model scalars of
/// the fused update, the attention's and the recurrences' loops, and the
/// ops left to the runtime's kernels.
void populateMBTToLinalgConversionPatterns(
    RewritePatternSet &patterns, const MBTLowerToLinalgOptions &options);

/// Marks what the lowering leaves: every mbt op is illegal but the sweep
/// and the update rules (metadata whose copies the fused update's loops
/// hold), and the ops nested in them.
void configureMBTToLinalgConversionTarget(ConversionTarget &target);

} // namespace mlir::mbt

#endif // MBT_COMPILER_CONVERSION_MBTTOLINALG_MBTTOLINALG_H
