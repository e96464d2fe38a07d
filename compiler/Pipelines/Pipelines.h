//===- Pipelines.h - the stages of mbt, one builder each --------*- C++ -*-===//
//
// The one definition of the pipeline from the mbt dialect (one model, as
// the frontend writes it) to the LLVM dialect (N models, fused updates,
// bufferized loops). mbtc runs these builders to reach its --emit stage
// or the artifact, and mbt-opt registers them as pass pipelines
// (`mbt-to-<stage>` from the mbt stage, `mbt-<from>-to-<to>` for one step),
// so both tools compile a module alike at every stage.
//
//   mbt --autocast, autodiff--> grad --batch--> batched --fuse--> fused
//       --lower, fuse elementwise--> linalg --manifest, bufferize, ...--> llvm
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_PIPELINES_PIPELINES_H
#define MBT_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <optional>
#include <string>

namespace mlir::mbt {

/// The IR stages of the pipeline, in order.
enum class Stage { MBT, Grad, Batched, Fused, Linalg, LLVMDialect };

/// The stage's name: mbt, grad, batched, fused, linalg, llvm-dialect.
StringRef stageName(Stage stage);

/// Whether code for `target` takes the runtime's attention kernels: where
/// it is an x86-64 CPU, on every one of which the runtime's
/// attention kernels (their vectors 4, 8 or 16 lanes wide by the CPU's
/// extensions) beat the compiled generics or match them
/// (docs/benchmarks.md, from SSE2 to AVX-512: the transformer's step
/// 1.09-3.0x, the byte-level LM's 1.0-1.36x). Elsewhere their code is
/// untimed, and the generics stay. The pipelines' default asks it of the
/// host (hostHasAttentionKernelCode: mbt-opt, and mbtc without --mcpu),
/// mbtc --mcpu of the CPU it names.
bool attentionKernelsPayOn(const llvm::Triple &target);
bool hostHasAttentionKernelCode();

/// How the pipeline generates code: the options of the pipelines that
/// reach the fused, linalg and LLVM-dialect stages, and of mbtc.
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
  Option<bool> attentionKernels{
      *this, "attention-kernels",
      llvm::cl::desc("Compute f32 attention and its adjoint with the "
                     "runtime's kernels (CPU with BLAS; otherwise generics "
                     "and batched matmuls per head); default: where the host "
                     "is an x86-64 CPU"),
      llvm::cl::init(hostHasAttentionKernelCode())};
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
  Option<bool> outlineRepeated{
      *this, "outline-repeated",
      llvm::cl::desc("Give each loop nest that repeats (a deep model's "
                     "blocks) one function, compiled once (CPU)"),
      llvm::cl::init(true)};
  Option<bool> remarks{
      *this, "remarks",
      llvm::cl::desc("Report the lowering's decisions as remarks: each "
                     "matmul's BLAS call and each step's workspace plan"),
      llvm::cl::init(false)};
  Option<bool> gradStep{
      *this, "grad-step",
      llvm::cl::desc("Also build @mbt_grad_step, the train step up to the "
                     "gradients, for a run with its data across ranks"),
      llvm::cl::init(false)};
};

/// mbt -> grad: mixed precision (mbt-autocast), then the train step's
/// backward pass (mbt-autodiff).
void buildMBTToGradPipeline(OpPassManager &pm);
/// grad -> batched: every model of the sweep in one module (mbt-batch-models).
void buildGradToBatchedPipeline(OpPassManager &pm);
/// batched -> fused: every model's optimizer update in one op.
void buildBatchedToFusedPipeline(OpPassManager &pm,
                                 const LoweringOptions &opts);
/// fused -> linalg on tensors. For the cuda target, each fused optimizer
/// update becomes a single loop nest (one kernel).
void buildFusedToLinalgPipeline(OpPassManager &pm, const LoweringOptions &opts);
/// linalg on tensors -> the LLVM dialect: the manifest's checks
/// (mbt-export-manifest, writing nowhere), bufferization, loops, LLVM.
/// With `manifest`, the manifest's text goes there.
void buildLinalgToLLVMPipeline(OpPassManager &pm, const LoweringOptions &opts,
                               std::string *manifest = nullptr);

/// The passes that take a module at stage `from` to stage `to` (from <= to),
/// one stage's builder after the other.
void buildPipeline(OpPassManager &pm, Stage from, Stage to,
                   const LoweringOptions &opts,
                   std::string *manifest = nullptr);

/// Registers mbt-opt's pipelines: mbt-to-grad, mbt-to-batched,
/// mbt-to-fused, mbt-to-linalg and mbt-to-llvm (from the mbt stage), and
/// mbt-fused-to-linalg and mbt-linalg-to-llvm (one stage).
void registerMBTPipelines();

} // namespace mlir::mbt

#endif // MBT_COMPILER_PIPELINES_PIPELINES_H
