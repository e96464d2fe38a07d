//===- Passes.h - mbt conversions and pipelines -----------------*- C++ -*-===//
#ifndef MBT_COMPILER_CONVERSION_PASSES_H
#define MBT_COMPILER_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::mbt {

#define GEN_PASS_DECL
#include "compiler/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Conversion/Passes.h.inc"

/// Options of the pipeline from the mbt dialect to the LLVM dialect.
struct LoweringOptions : public PassPipelineOptions<LoweringOptions> {
  Option<bool> useBlas{*this, "blas",
                       llvm::cl::desc("Call the runtime's BLAS for matmuls "
                                      "(otherwise: generated loops)"),
                       llvm::cl::init(true)};
  Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run the outermost loop of each large loop nest on all "
                     "cores with OpenMP (otherwise: one thread)"),
      llvm::cl::init(true)};
  Option<int64_t> vectorMatmulBits{
      *this, "vector-matmul-bits",
      llvm::cl::desc("Generate vector kernels for the batched matmuls they "
                     "handle, for vector registers of this many bits (0: "
                     "none; the others go to BLAS or loops)"),
      llvm::cl::init(0)};
  Option<int64_t> vectorMatmulRows{
      *this, "vector-matmul-rows",
      llvm::cl::desc("Rows of C per register panel of the vector kernels"),
      llvm::cl::init(6)};
  Option<int64_t> vectorMatmulVectors{
      *this, "vector-matmul-vectors",
      llvm::cl::desc("Vectors of C per panel row (0: by the vector width)"),
      llvm::cl::init(0)};
  Option<int64_t> vectorMatmulKBlock{
      *this, "vector-matmul-k-block",
      llvm::cl::desc("Contraction steps per pass over C (0: all)"),
      llvm::cl::init(0)};
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("cpu (LLVM for the host, OpenMP, BLAS) or cuda (NVVM "
                     "kernels in a fatbin, cuBLAS, launched by the host)"),
      llvm::cl::init("cpu")};
  Option<std::string> cudaChip{
      *this, "cuda-chip",
      llvm::cl::desc("The NVIDIA architecture the kernels are compiled for"),
      llvm::cl::init("sm_90")};
  Option<std::string> cudaFormat{
      *this, "cuda-format",
      llvm::cl::desc("How the kernels are embedded: fatbin (cubin and PTX) "
                     "or isa (PTX text)"),
      llvm::cl::init("fatbin")};
  Option<bool> planWorkspace{
      *this, "plan-workspace",
      llvm::cl::desc("Place the steps' temporaries in the caller's workspace "
                     "(otherwise: malloc them; the workspace is 0 bytes)"),
      llvm::cl::init(true)};
};

/// mbt (one model) -> autodiff -> batch -> fuse: the "fused" stage.
void buildMBTToFusedPipeline(OpPassManager &pm);
/// Fused mbt -> linalg on tensors: the "linalg" stage. For `target` cuda,
/// each fused optimizer update becomes a single loop nest (one kernel).
void buildFusedToLinalgPipeline(OpPassManager &pm, StringRef target = "cpu");
/// linalg on tensors -> bufferized loops -> LLVM dialect: the "llvm" stage.
void buildLinalgToLLVMPipeline(OpPassManager &pm, const LoweringOptions &opts);

/// Registers `mbt-to-fused`, `mbt-fused-to-linalg`, `mbt-linalg-to-llvm`
/// and `mbt-to-llvm` with mbt-opt's --pass-pipeline syntax.
void registerMBTPipelines();

} // namespace mlir::mbt

#endif
