//===- Stages.h - mbtc's way through the pipeline ---------------*- C++ -*-===//
#ifndef MBT_COMPILER_DRIVER_STAGES_H
#define MBT_COMPILER_DRIVER_STAGES_H

#include "compiler/Pipelines/Pipelines.h"
#include "mbt/common/ModelSlices.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mbt {

/// Runs the pipeline (compiler/Pipelines) on a module at the mbt stage up
/// to stage `to`, in one pass manager that takes MLIR's pass-manager
/// command-line options (--mlir-print-ir-after-all, --mlir-timing, crash
/// reproducers) where the tool registered them (`commandLineOptions`; a
/// library caller has none). Up to llvm-dialect, it
/// finds the CUDA toolkit first (--target=cuda), writes the manifest's text
/// into `manifest` when given, and checks the entry points against the ABI.
mlir::LogicalResult lowerTo(mlir::ModuleOp module, mlir::mbt::Stage to,
                            const mlir::mbt::LoweringOptions &codegen,
                            std::string *manifest = nullptr,
                            bool commandLineOptions = true);

/// Keeps the models of `slice` in `module` (at the mbt stage) and drops
/// the others: mbt-select-models.
mlir::LogicalResult selectModels(mlir::ModuleOp module, ModelSlice slice);

/// Prints the PTX of every kernel of a module lowered with cudaFormat "isa",
/// each after a `// kernel NAME` line.
mlir::LogicalResult printKernelPTX(mlir::ModuleOp module,
                                   llvm::raw_ostream &os);

} // namespace mbt

#endif // MBT_COMPILER_DRIVER_STAGES_H
