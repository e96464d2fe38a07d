//===- Sema.h - semantic checks of the mbt language -------------*- C++ -*-===//
//
// Checks a parsed spec: names (defined once, before use), types and
// per-sample shapes of model expressions (with NumPy broadcasting and the
// batch dimension kept implicit), initializers, and the sweep settings.
// Annotates the AST for MLIRGen and reports every error it finds as an MLIR
// diagnostic, going on after each error where that is sound.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_SEMA_H
#define MBT_COMPILER_FRONTEND_SEMA_H

#include "compiler/Frontend/AST.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"

#include <optional>
#include <string>

namespace mbt {

class SweepEvaluator;

/// Checks `module`, annotating it in place (expression types, parameter
/// initializers, the sweep's SweepConfig). Fails if any error was reported.
/// Expands the sweep's model with the sweep's `modelArgs`, and every other
/// model whose arguments all have defaults, with the defaults.
mlir::LogicalResult checkModule(mlir::MLIRContext &ctx, ModuleAST &module);

/// A model expanded for one set of argument values: its checked body and
/// its trained parameters (named by path, in the order of the func's
/// arguments).
struct ModelExpansion {
  std::unique_ptr<BodyInstance> instance;
  std::vector<FlatParam> params;
  std::vector<FlatParam> buffers;
  /// The float type the model computes in: "f32" or "f64".
  std::string floatType;
};

/// Expands `model` (of a spec that checkModule is checking) with the values
/// `args` for its arguments, the others taking their defaults, and checks
/// the result: the sweep side's hook for `model = NAME(args)`. Reports
/// unknown, repeated, missing and ill-typed arguments at the arguments'
/// locations or at `useLoc`, and errors in the body as usual. Does not
/// store the expansion in the model.
mlir::FailureOr<ModelExpansion> expandModel(mlir::MLIRContext &ctx,
                                            const ModelAST &model,
                                            llvm::ArrayRef<ModelArgValue> args,
                                            const Location &useLoc);

/// Binds the arguments of the sweep's `model = NAME(args)` (`call`) to the
/// arguments `model` declares, by position or keyword, and evaluates each
/// with `eval` to one value (a number, or `true`/`false`), appending them to
/// `args` (SweepConfig::modelArgs, with which checkModule expands the
/// model). Reports what is wrong.
mlir::LogicalResult evaluateModelArgs(mlir::MLIRContext &ctx,
                                      const ModelAST &model,
                                      const CallExprAST &call,
                                      SweepEvaluator &eval,
                                      std::vector<ModelArgValue> &args);

/// Checks the settings of `sweep` against the spec's models and optimizers
/// and stores the
/// evaluated settings in `sweep.config`.
mlir::LogicalResult
checkSweep(mlir::MLIRContext &ctx, SweepAST &sweep,
           llvm::ArrayRef<std::unique_ptr<ModelAST>> models,
           llvm::ArrayRef<std::unique_ptr<OptimizerAST>> optimizers);

/// Resolves the initializer of `decl` (known kind, arguments bound and in
/// range, a matrix for the fan-based ones); reports and returns std::nullopt
/// on error.
std::optional<ResolvedInit> resolveInitializer(mlir::MLIRContext &ctx,
                                               const ParamDeclAST &decl);

/// Formats a type for dumps: `f32[B, 128]` (batched), `f32[784, 128]`,
/// `class[10]`, or `<invalid>`.
std::string formatValueType(const ValueType &type);

/// Describes a type's shape in diagnostics: "per-sample shape [128]" for
/// batched values, "shape [784, 128]" for the others.
std::string describeShape(const ValueType &type);

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_SEMA_H
