//===- Pipelines.cpp - the stages of mbtc, as pass pipelines --------------===//
#include "compiler/Conversion/Passes.h"
#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTDROPMETADATA
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {
struct DropMetadataPass
    : public mlir::mbt::impl::MBTDropMetadataBase<DropMetadataPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (SweepOp sweep : llvm::make_early_inc_range(module.getOps<SweepOp>()))
      sweep.erase();
    // Fused updates have been lowered with copies of their rules.
    for (OptimizerOp rule :
         llvm::make_early_inc_range(module.getOps<OptimizerOp>()))
      rule.erase();
    SmallVector<StringAttr> names;
    for (NamedAttribute attr : module->getAttrs())
      if (attr.getName().getValue().starts_with("mbt."))
        names.push_back(attr.getName());
    for (StringAttr name : names)
      module->removeAttr(name);
  }
};
} // namespace

void mlir::mbt::buildMBTToFusedPipeline(OpPassManager &pm) {
  pm.addPass(createMBTAutodiff());
  pm.addPass(createMBTBatchModels());
  pm.addPass(createMBTFuseOptimizer());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::mbt::buildFusedToLinalgPipeline(OpPassManager &pm,
                                           StringRef target) {
  pm.addPass(createMBTLowerToLinalg(
      MBTLowerToLinalgOptions{/*scalarsPerElement=*/target == "cuda"}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createMBTFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Bufferization and the buffer-level clean-ups both targets share: every
/// temporary a view of the workspace, the matmuls calls to the runtime.
static void addBufferizationPasses(OpPassManager &pm,
                                   const LoweringOptions &opts) {
  pm.addPass(createMBTDropMetadata());
  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
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
    pm.addPass(createMBTLinalgToBlas(
        MBTLinalgToBlasOptions{/*device=*/opts.target}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createMBTElideCopies());
  // Before deallocation: planned temporaries live in the caller's
  // workspace, so no step mallocs them (PlanWorkspace.cpp).
  pm.addPass(createMBTPlanWorkspace(
      MBTPlanWorkspaceOptions{/*plan=*/opts.planWorkspace}));
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
                                      const LoweringOptions &opts) {
  addBufferizationPasses(pm, opts);
  pm.addPass(createMBTCopiesToLinalg());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createMBTMapLoopsToGpu());
  pm.addPass(createParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = opts.cudaChip;
  nvvm.cubinFeatures = "+ptx80";
  nvvm.cubinFormat = opts.cudaFormat;
  nvvm.optLevel = 3;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void mlir::mbt::buildLinalgToLLVMPipeline(OpPassManager &pm,
                                          const LoweringOptions &opts) {
  if (opts.target == "cuda")
    return buildLinalgToCudaPipeline(pm, opts);
  addBufferizationPasses(pm, opts);
  if (opts.parallel) {
    // The model dimension of each large loop nest runs on all cores; the
    // loops inside stay serial (OuterParallelLoops.cpp).
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
    pm.addPass(createMBTOuterParallelLoops());
    pm.addPass(createConvertSCFToOpenMPPass());
  } else {
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  }
  pm.addPass(createLowerAffinePass());
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

void mlir::mbt::registerMBTPipelines() {
  PassPipelineRegistration<>("mbt-to-fused",
                             "autodiff, batch the models, fuse the optimizer",
                             buildMBTToFusedPipeline);
  PassPipelineRegistration<>("mbt-fused-to-linalg",
                             "lower fused mbt to linalg on tensors and fuse",
                             [](OpPassManager &pm) {
                               buildFusedToLinalgPipeline(pm);
                             });
  PassPipelineRegistration<LoweringOptions>(
      "mbt-linalg-to-llvm", "bufferize and lower linalg to the LLVM dialect",
      buildLinalgToLLVMPipeline);
  PassPipelineRegistration<LoweringOptions>(
      "mbt-to-llvm", "the whole pipeline from mbt to the LLVM dialect",
      [](OpPassManager &pm, const LoweringOptions &opts) {
        buildMBTToFusedPipeline(pm);
        buildFusedToLinalgPipeline(pm, opts.target);
        buildLinalgToLLVMPipeline(pm, opts);
      });
}
