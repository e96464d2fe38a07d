//===- SemaPrecision.h - the sweep's precision and loss scale ---*- C++ -*-===//
#ifndef MBT_COMPILER_FRONTEND_SEMAPRECISION_H
#define MBT_COMPILER_FRONTEND_SEMAPRECISION_H

#include "compiler/Frontend/AST.h"
#include "compiler/Frontend/SweepEval.h"

namespace mbt {

/// Checks the sweep's `precision` (bf16, f16 or f32) and `loss_scale`
/// (`dynamic(...)`, only with f16) settings, either of which may be null
/// (absent), and fills `config.precision`, `config.precisionLoc` and
/// `config.lossScale`. Reports what is wrong; returns whether all is well.
bool checkPrecisionSettings(mlir::MLIRContext &ctx, const ExprAST *precision,
                            const ExprAST *lossScale, SweepEvaluator &eval,
                            SweepConfig &config);

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_SEMAPRECISION_H
