//===- MLIRGenBuiltins.h - mbt ops for calls of builtins --------*- C++ -*-===//
#ifndef MBT_COMPILER_FRONTEND_MLIRGENBUILTINS_H
#define MBT_COMPILER_FRONTEND_MLIRGENBUILTINS_H

#include "compiler/Frontend/AST.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringMap.h"

namespace mbt {

/// lhs @ rhs: a per-sample vector [K] or sequence [T, K] (batched), or a
/// vector or matrix that is not, times a matrix [K, N].
mlir::Value genMatmul(mlir::OpBuilder &builder, mlir::Location loc,
                      mlir::Value lhs, mlir::Value rhs);

/// Generates a checked call of a builtin: `args` are the
/// values of its tensor arguments (CallExprAST::builtinArgs, in order),
/// `tensorOptions` those of its options given as tensors.
/// Values that depend on the input carry the batch dimension in front, so
/// per-sample axes are shifted by one for them. Constants and one_hot have
/// the model's float type `elementType`. `randomSites` counts the model's
/// calls that draw random numbers (dropout): each takes the next number as
/// its site, which keys its draws apart from the others'.
mlir::Value genBuiltinCall(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::FloatType elementType, const CallExprAST &call,
                           llvm::ArrayRef<mlir::Value> args,
                           const llvm::StringMap<mlir::Value> &tensorOptions,
                           int64_t &randomSites);

/// The results a checked `metric NAME = rmse(prediction, expected)` or
/// `r2(...)` gives the model, from which the runtime makes the metric over
/// a whole split: for rmse the mean squared error of each of the K columns
/// of the per-sample values, for r2 those, then the K means of `expected`,
/// then its K variances (each about that step's mean).
llvm::SmallVector<mlir::Value>
genSplitMetricColumns(mlir::OpBuilder &builder, mlir::Location loc,
                      mlir::FloatType elementType, const CallExprAST &call,
                      mlir::Value prediction, mlir::Value expected);

} // namespace mbt

#endif
