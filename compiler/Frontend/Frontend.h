//===- Frontend.h - the mbt language frontend -------------------*- C++ -*-===//
//
// The public interface of the frontend: parse and check a spec, dump its
// AST, and generate the mbt-dialect module. Errors are reported through the
// MLIRContext's diagnostic engine at FileLineColLoc locations.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_FRONTEND_H
#define MBT_COMPILER_FRONTEND_FRONTEND_H

#include "compiler/Frontend/AST.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace mbt {

/// How the frontend finds what a spec imports, and what it changes in it.
struct FrontendOptions {
  /// The directory of the standard library: `import "nn"` loads nn.mbt from
  /// it. Empty: findStdlibDir("").
  std::string stdlibDir;
  /// Sweep settings that replace the spec's (or add to them), each the
  /// text of one `KEY = VALUE` as the sweep would hold it: `models = 16`,
  /// `model = mlp(hidden = 64)`. Checked as if the spec held them; their
  /// diagnostics name the buffer "--set" ("--set #k" among several).
  std::vector<std::string> sweepSettings;
};

/// The standard library's directory: `explicitDir` when given, else
/// $MBT_STDLIB_PATH when set, else `installedDir` when it exists (the
/// driver passes <bin>/../share/mbt/stdlib), else the source tree's stdlib/.
std::string findStdlibDir(llvm::StringRef explicitDir,
                          llvm::StringRef installedDir = "");

/// Parses and checks a spec from `sourceMgr`'s main buffer and the files it
/// imports (which it adds to `sourceMgr`, so that their diagnostics show
/// their lines); reports errors through the context's diagnostic handler;
/// returns null on error.
std::unique_ptr<ModuleAST> parseAndCheck(llvm::SourceMgr &sourceMgr,
                                         mlir::MLIRContext &ctx,
                                         const FrontendOptions &options = {});

/// Prints the AST (with the types and values Sema computed) to `os`, for
/// `mbtc --emit=ast`.
void dumpAST(const ModuleAST &module, llvm::raw_ostream &os);

/// Generates the mbt-dialect module of a checked spec: one func.func per
/// model and one mbt.sweep. Loads the dialects it needs into `ctx`. Returns
/// the verified module, or null (with diagnostics) on error.
mlir::OwningOpRef<mlir::ModuleOp> mlirGen(mlir::MLIRContext &ctx,
                                          const ModuleAST &module);

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_FRONTEND_H
