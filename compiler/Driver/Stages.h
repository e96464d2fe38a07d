//===- Stages.h - the stages of mbtc, in order ------------------*- C++ -*-===//
#ifndef MBT_COMPILER_DRIVER_STAGES_H
#define MBT_COMPILER_DRIVER_STAGES_H

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mbt {

/// What `mbtc --emit=` can print, in pipeline order.
enum class Stage { AST, MBT, Grad, Batched, Fused, Linalg, LLVMDialect, LLVMIR };

std::optional<Stage> parseStage(llvm::StringRef name);

/// Runs the passes that take a module at the "mbt" stage to `target`
/// (Grad..LLVMDialect). At or past Fused, `manifest` receives the
/// artifact's manifest. `useBlas`: batched matmuls call the runtime's BLAS;
/// `parallel`: large loop nests run their model dimension with OpenMP.
mlir::LogicalResult lowerTo(mlir::ModuleOp module, Stage target, bool useBlas,
                            bool parallel, std::string &manifest);

} // namespace mbt

#endif
