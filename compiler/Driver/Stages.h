//===- Stages.h - the stages of mbtc, in order ------------------*- C++ -*-===//
#ifndef MBT_COMPILER_DRIVER_STAGES_H
#define MBT_COMPILER_DRIVER_STAGES_H

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mbt {

/// What `mbtc --emit=` can print, in pipeline order.
/// (PTX: the kernels of a --target=cuda module, as PTX text.)
enum class Stage { AST, MBT, Grad, Batched, Fused, Linalg, LLVMDialect, LLVMIR, PTX };

std::optional<Stage> parseStage(llvm::StringRef name);

/// How the LLVM stage generates code (mbtc's flags of the same names).
struct CodegenOptions {
  /// Batched matmuls call the runtime's BLAS (otherwise: generated loops).
  bool useBlas = true;
  /// Large loop nests run their model dimension with OpenMP.
  bool parallel = true;
  /// The steps' temporaries live in the caller's workspace (otherwise:
  /// malloc'ed per step; the workspace is then 0 bytes).
  bool planWorkspace = true;
  /// Batched matmuls with an untransposed B become generated vector
  /// kernels for registers of this many bits (0: none).
  int64_t vectorMatmulBits = 0;
  /// Their register panel (rows, vectors per row; 0: by the width) and
  /// contraction block (0: none); see mbt-vector-matmuls.
  int64_t vectorMatmulRows = 6, vectorMatmulVectors = 0, vectorMatmulKBlock = 0;
  /// "cpu" or "cuda" (kernels for `cudaChip`, launched by the host code).
  std::string target = "cpu";
  std::string cudaChip = "sm_90";
  /// How the kernels are embedded: "fatbin" (cubin and PTX), or "isa" (PTX
  /// text, for --emit=ptx).
  std::string cudaFormat = "fatbin";
};

/// Prints the PTX of every kernel of a module lowered with cudaFormat "isa",
/// each after a `// kernel NAME` line.
mlir::LogicalResult printKernelPTX(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Runs the passes that take a module at the "mbt" stage to `target`
/// (Grad..LLVMDialect). At or past Fused, `manifest` receives the
/// artifact's manifest.
mlir::LogicalResult lowerTo(mlir::ModuleOp module, Stage target,
                            const CodegenOptions &codegen,
                            std::string &manifest);

} // namespace mbt

#endif
