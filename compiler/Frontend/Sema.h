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

/// Checks `module`, annotating it in place (expression types, parameter
/// initializers, the sweep's SweepConfig). Fails if any error was reported.
mlir::LogicalResult checkModule(mlir::MLIRContext &ctx, ModuleAST &module);

/// Checks the settings of `sweep` against the spec's models and stores the
/// evaluated settings in `sweep.config`.
mlir::LogicalResult
checkSweep(mlir::MLIRContext &ctx, SweepAST &sweep,
           llvm::ArrayRef<std::unique_ptr<ModelAST>> models);

/// Resolves the initializer of `decl` (known kind, arguments bound and in
/// range, a matrix for the fan-based ones); reports and returns std::nullopt
/// on error.
std::optional<InitSpec> resolveInitializer(mlir::MLIRContext &ctx,
                                           const ParamDeclAST &decl);

/// Formats a type for dumps: `f32[B, 128]` (batched), `f32[784, 128]`,
/// `class[10]`, or `<invalid>`.
std::string formatValueType(const ValueType &type);

/// Describes a type's shape in diagnostics: "per-sample shape [128]" for
/// batched values, "shape [784, 128]" for the others.
std::string describeShape(const ValueType &type);

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_SEMA_H
