//===- Stages.h - the stages of mbtc, in order ------------------*- C++ -*-===//
#ifndef MBT_COMPILER_DRIVER_STAGES_H
#define MBT_COMPILER_DRIVER_STAGES_H

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mlir::mbt {
struct LoweringOptions;
} // namespace mlir::mbt

namespace mbt {

/// What `mbtc --emit=` can print, in pipeline order.
/// (PTX: the kernels of a --target=cuda module, as PTX text.)
enum class Stage { AST, MBT, Grad, Batched, Fused, Linalg, LLVMDialect, LLVMIR, PTX };

std::optional<Stage> parseStage(llvm::StringRef name);

/// Prints the PTX of every kernel of a module lowered with cudaFormat "isa",
/// each after a `// kernel NAME` line.
mlir::LogicalResult printKernelPTX(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Runs the passes that take a module at the "mbt" stage to `target`
/// (Grad..LLVMDialect), generating code as `codegen` says (the options of
/// the mbt-linalg-to-llvm pipeline, compiler/Conversion/Passes.h). At or
/// past Fused, `manifest` receives the artifact's manifest.
mlir::LogicalResult lowerTo(mlir::ModuleOp module, Stage target,
                            const mlir::mbt::LoweringOptions &codegen,
                            std::string &manifest);

} // namespace mbt

#endif
