//===- MLIRGenOptim.h - an optimizer's body as an mbt.optimizer -*- C++ -*-===//
#ifndef MBT_COMPILER_FRONTEND_MLIRGENOPTIM_H
#define MBT_COMPILER_FRONTEND_MLIRGENOPTIM_H

#include "compiler/Frontend/AST.h"

#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/IR/Builders.h"

namespace mbt {

/// Generates the update rule of `optimizer` (checked), for the flags and
/// hyperparameters the sweep bound (`config`), at `builder`'s insertion
/// point, updating elements of `elementType` (the model's float type).
mlir::mbt::OptimizerOp genOptimizer(mlir::OpBuilder &builder,
                                    const OptimizerAST &optimizer,
                                    const SweepConfig &config,
                                    mlir::FloatType elementType);

} // namespace mbt

#endif
