//===- Diagnostics.h - frontend errors as MLIR diagnostics ---*- C++ -*-===//
//
// The frontend reports every error through the MLIRContext's diagnostic
// engine at a FileLineColLoc, so `mbtc` prints `file:line:col: error:` with
// a caret (SourceMgrDiagnosticHandler) and `-verify-diagnostics` checks
// `expected-error` annotations in .mbt files.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_DIAGNOSTICS_H
#define MBT_COMPILER_FRONTEND_DIAGNOSTICS_H

#include "compiler/Frontend/Lexer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

namespace mbt {

/// The MLIR location of a source position.
inline mlir::Location toMLIRLoc(mlir::MLIRContext &ctx, const Location &loc) {
  return mlir::FileLineColLoc::get(&ctx, loc.file ? *loc.file : "<unknown>",
                                   loc.line, loc.col);
}

/// Starts an error diagnostic at `loc`.
inline mlir::InFlightDiagnostic emitError(mlir::MLIRContext &ctx,
                                          const Location &loc) {
  return mlir::emitError(toMLIRLoc(ctx, loc));
}

/// Attaches a note at `loc` to `diag`.
inline void attachNote(mlir::InFlightDiagnostic &diag, mlir::MLIRContext &ctx,
                       const Location &loc, llvm::StringRef message) {
  diag.attachNote(toMLIRLoc(ctx, loc)) << message;
}

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_DIAGNOSTICS_H
