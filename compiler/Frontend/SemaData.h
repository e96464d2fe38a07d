//===- SemaData.h - the sweep's data set against the model ------*- C++ -*-===//
//
// The arguments of a sequence data set (`fortunes(...)`: batching strategy,
// token budget, window), the settings of the user's own files
// (SemaDataSource.cpp) and the check, once the swept model is expanded,
// that the data set gives what the model's input declares: images for an
// f32 input, token ids for a tokens[V] input.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_SEMADATA_H
#define MBT_COMPILER_FRONTEND_SEMADATA_H

#include "compiler/Frontend/AST.h"
#include "compiler/Frontend/SweepEval.h"

namespace mbt {

/// `given`, a path in the spec at `loc`, made absolute against the spec's
/// folder; warns when no such file exists yet (training reads it later).
/// An empty path is an error ("WHAT must name a file").
std::optional<std::string> resolveSpecPath(mlir::MLIRContext &ctx,
                                           const Location &loc,
                                           llvm::StringRef given,
                                           llvm::StringRef what);

/// Checks `init = checkpoint(FILE or [FILE per model], transpose = [NAME,
/// ...], partial = false)` into config's init settings (SemaCheckpoint.cpp):
/// one file, or one per model of the sweep's `models`.
mlir::LogicalResult checkInitCheckpoint(mlir::MLIRContext &ctx,
                                        const ExprAST &value, int64_t models,
                                        SweepConfig &config);

/// Checks the arguments of `data = NAME(...)` for a sequence data set
/// (`call` is null for a bare name) into `config`: batch, shuffle_seed,
/// batching (dynamic, fixed, group_by_length, fixed_shape), token_budget,
/// window and max_length. Reports every error.
mlir::LogicalResult checkSequenceData(mlir::MLIRContext &ctx,
                                      const CallExprAST *call,
                                      SweepEvaluator &eval,
                                      SweepConfig &config);

/// The settings a data set of the user's files takes before the ones of
/// every data set of samples (batch, shuffle_seed, ...), in positional
/// order; none for a built-in data set.
llvm::SmallVector<llvm::StringRef> dataSourceParams(mlir::mbt::DataSet data);

/// Checks the settings of `data = npz(...)`, `csv(...)`, ... (`args` bound
/// to dataSourceParams() first) into `config.source`, resolving paths
/// against the spec's folder. Reports every error.
mlir::LogicalResult checkDataSource(mlir::MLIRContext &ctx,
                                    const CallExprAST &call,
                                    llvm::ArrayRef<const ExprAST *> args,
                                    SweepEvaluator &eval, SweepConfig &config);

/// Checks that the data set of `config` fits the input of the expanded
/// `model`; reports an error at the data setting otherwise.
mlir::LogicalResult checkDataFitsInput(mlir::MLIRContext &ctx,
                                       const SweepConfig &config,
                                       const ModelAST &model);

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_SEMADATA_H
