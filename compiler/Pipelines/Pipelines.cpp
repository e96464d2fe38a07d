//===- Pipelines.cpp - the stages of mbt, one builder each ----------------===//
#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Conversion/Passes.h"
#include "compiler/Manifest/Manifest.h"
#include "dialects/MBT/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::mbt;

StringRef mlir::mbt::stageName(Stage stage) {
  switch (stage) {
  case Stage::MBT:
    return "mbt";
  case Stage::Grad:
    return "grad";
  case Stage::Batched:
    return "batched";
  case Stage::Fused:
    return "fused";
  case Stage::Linalg:
    return "linalg";
  case Stage::LLVMDialect:
    return "llvm-dialect";
  }
  llvm_unreachable("unknown stage");
}

void mlir::mbt::buildMBTToGradPipeline(OpPassManager &pm) {
  pm.addPass(createMBTAutocast());
  pm.addPass(createMBTAutodiff());
}

void mlir::mbt::buildGradToBatchedPipeline(OpPassManager &pm) {
  pm.addPass(createMBTBatchModels());
}

bool mlir::mbt::attentionKernelsPayOn(const llvm::Triple &target) {
  return target.getArch() == llvm::Triple::x86_64;
}

bool mlir::mbt::hostHasAttentionKernelCode() {
  return attentionKernelsPayOn(llvm::Triple(llvm::sys::getProcessTriple()));
}

void mlir::mbt::buildBatchedToFusedPipeline(OpPassManager &pm,
                                            const LoweringOptions &opts) {
  pm.addPass(createMBTFuseOptimizer(
      MBTFuseOptimizerOptions{/*gradStep=*/opts.gradStep}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::mbt::buildFusedToLinalgPipeline(OpPassManager &pm,
                                           const LoweringOptions &opts) {
  bool cuda = opts.target == "cuda";
  pm.addPass(createMBTLowerToLinalg(MBTLowerToLinalgOptions{
      /*scalarsPerElement=*/cuda, /*attentionPerSequence=*/!cuda,
      /*recurrencePerModel=*/!cuda,
      /*foldOperandRounding=*/!cuda && opts.useBlas,
      /*convolutionKernels=*/!cuda && opts.useBlas,
      /*attentionKernels=*/!cuda && opts.useBlas && opts.attentionKernels}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createMBTFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Bufferization and the buffer-level clean-ups both targets share: every
/// temporary a view of the workspace, the matmuls calls to the runtime.
static void addBufferizationPasses(OpPassManager &pm,
                                   const LoweringOptions &opts,
                                   std::string *manifest) {
  if (manifest)
    pm.addPass(createMBTExportManifest(*manifest, opts.target));
  else
    pm.addPass(createMBTExportManifest(
        MBTExportManifestOptions{/*path=*/"", /*device=*/opts.target}));
  pm.addPass(createMBTDropMetadata());
  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(createMBTGlobalizeConstants(MBTGlobalizeConstantsOptions{
      /*alignment=*/bufferization.bufferAlignment}));
  pm.addPass(createMBTSplitSharedFills());
  pm.addPass(createMBTSplitSharedToMemref());
  // A tensor.empty whose value is then inserted into a bigger tensor (a
  // recurrence's state at t, a gate's adjoint in the joined gates) becomes
  // a slice of that tensor: the op writes there and no copy follows.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  // Loops the lowering built as scf.forall (embedding's scatter-add) join
  // the parallel loops that become OpenMP or GPU threads.
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  if (opts.vectorMatmulBits > 0 && opts.target != "cuda")
    pm.addPass(createMBTVectorMatmuls(MBTVectorMatmulsOptions{
        /*vectorBits=*/opts.vectorMatmulBits, /*rows=*/opts.vectorMatmulRows,
        /*vectors=*/opts.vectorMatmulVectors,
        /*kBlock=*/opts.vectorMatmulKBlock}));
  if (opts.useBlas)
    pm.addPass(createMBTLinalgToBlas(MBTLinalgToBlasOptions{
        /*device=*/opts.target, /*remarks=*/opts.remarks}));
  // CSE first: a forall's parallel_insert_slice into the buffer its body
  // wrote in place bufferizes to a copy between two equal subviews, which
  // the canonicalizer erases only once they are one value.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createMBTElideCopies());
  // Before deallocation: planned temporaries live in the caller's
  // workspace, so no step mallocs them (PlanWorkspace.cpp).
  pm.addPass(createMBTPlanWorkspace(
      MBTPlanWorkspaceOptions{/*plan=*/opts.planWorkspace,
                              /*remarks=*/opts.remarks}));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createBufferizationToMemRefPass());
}

/// CUDA: every loop nest a kernel. linalg becomes scf.parallel, tiled so
/// that the inner tile maps to a block's threads, innermost dimension on x
/// (MapLoopsToGpu.cpp), then gpu.launch; upstream's
/// NVVM pipeline outlines the kernels, compiles them for the chip (cubin and
/// PTX in a fatbin, through ptxas) and lowers the host side, whose launches
/// call the mgpu* functions the runtime provides.
static void buildLinalgToCudaPipeline(OpPassManager &pm,
                                      const LoweringOptions &opts,
                                      std::string *manifest) {
  addBufferizationPasses(pm, opts, manifest);
  pm.addPass(createMBTCopiesToLinalg());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createMBTMapLoopsToGpu());
  pm.addPass(createParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  // Before the NVVM pipeline's expand-strided-metadata.
  pm.addPass(createMBTResolveDynamicExpandShapes());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = opts.cudaChip;
  nvvm.cubinFeatures = "+ptx80";
  nvvm.cubinFormat = opts.cudaFormat;
  nvvm.optLevel = 3;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void mlir::mbt::buildLinalgToLLVMPipeline(OpPassManager &pm,
                                          const LoweringOptions &opts,
                                          std::string *manifest) {
  if (opts.target == "cuda")
    return buildLinalgToCudaPipeline(pm, opts, manifest);
  addBufferizationPasses(pm, opts, manifest);
  // Before the loops are generated: each repeated nest goes through the
  // rest of the pipeline, and LLVM, once.
  if (opts.outlineRepeated)
    pm.addPass(createMBTOutlineRepeated());
  if (opts.parallel) {
    // The model dimension of each large loop nest runs on all cores; the
    // loops inside stay serial (OuterParallelLoops.cpp).
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
    pm.addPass(createMBTOuterParallelLoops());
    pm.addPass(createConvertSCFToOpenMPPass());
  } else {
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  }
  pm.addPass(createMBTReductionLanes());
  pm.addPass(createMBTExpandMath());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createMBTResolveDynamicExpandShapes());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToLLVMPass());
  // Before scf-to-cf: the alloca_scope that scf-to-openmp puts around a
  // parallel loop's body must be lowered while that body is one block.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  if (opts.parallel)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::mbt::buildPipeline(OpPassManager &pm, Stage from, Stage to,
                              const LoweringOptions &opts,
                              std::string *manifest) {
  assert(from <= to && "the pipeline only goes forward");
  // Stage s's builder takes a module from s to s + 1.
  for (int s = static_cast<int>(from); s < static_cast<int>(to); ++s) {
    switch (static_cast<Stage>(s)) {
    case Stage::MBT:
      buildMBTToGradPipeline(pm);
      break;
    case Stage::Grad:
      buildGradToBatchedPipeline(pm);
      break;
    case Stage::Batched:
      buildBatchedToFusedPipeline(pm, opts);
      break;
    case Stage::Fused:
      buildFusedToLinalgPipeline(pm, opts);
      break;
    case Stage::Linalg:
      buildLinalgToLLVMPipeline(pm, opts, manifest);
      break;
    case Stage::LLVMDialect:
      llvm_unreachable("no stage after llvm-dialect");
    }
  }
}

void mlir::mbt::registerMBTPipelines() {
  // From the mbt stage (what `mbtc --emit=mbt` prints) to each later one.
  for (Stage to : {Stage::Grad, Stage::Batched, Stage::Fused, Stage::Linalg,
                   Stage::LLVMDialect}) {
    std::string name = to == Stage::LLVMDialect
                           ? std::string("mbt-to-llvm")
                           : ("mbt-to-" + stageName(to)).str();
    std::string description =
        ("the pipeline from the mbt stage to the " + stageName(to) +
         " stage (what mbtc --emit=" + stageName(to) + " prints)")
            .str();
    PassPipelineRegistration<LoweringOptions>(
        name, description,
        [to](OpPassManager &pm, const LoweringOptions &opts) {
          buildPipeline(pm, Stage::MBT, to, opts);
        });
  }
  PassPipelineRegistration<LoweringOptions>(
      "mbt-fused-to-linalg", "lower fused mbt to linalg on tensors and fuse",
      [](OpPassManager &pm, const LoweringOptions &opts) {
        buildFusedToLinalgPipeline(pm, opts);
      });
  PassPipelineRegistration<LoweringOptions>(
      "mbt-linalg-to-llvm",
      "check the manifest, bufferize and lower linalg to the LLVM dialect",
      [](OpPassManager &pm, const LoweringOptions &opts) {
        buildLinalgToLLVMPipeline(pm, opts);
      });
}
