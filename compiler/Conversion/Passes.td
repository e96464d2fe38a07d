//===- Passes.td - mbt conversions to upstream dialects ---*- tablegen -*-===//
#ifndef MBT_CONVERSION_PASSES_TD
#define MBT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MBTLowerToLinalg : Pass<"mbt-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower mbt ops to linalg, tensor, arith and math";
  let description = [{
    Every mbt op but `mbt.sweep` becomes linalg structured ops on tensors
    (named matmuls where one fits, `linalg.generic` elsewhere), so that
    upstream elementwise fusion and one-shot bufferization apply.
    `mbt.fused_update` becomes a per-model prologue over `[M]` (bias
    corrections in f64) and one `linalg.generic` over `[M, P]`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def MBTLinalgToBlas : Pass<"mbt-linalg-to-blas", "::mlir::ModuleOp"> {
  let summary = "Call the runtime's BLAS kernel for batched matmuls on memrefs";
  let description = [{
    After bufferization, replaces `linalg.batch_matmul` and its
    `_transpose_a` / `_transpose_b` forms on f32 (f64) memrefs with a call
    to `mbt_rt_batch_matmul_f32` (`_f64`; docs/abi.md), which the runtime
    implements with one sgemm (dgemm) per batch index. A zero fill of the
    output just before the matmul (or a copy of a zero-filled buffer into
    it) is dropped and the kernel overwrites the output instead of
    accumulating.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def MBTElideCopies : Pass<"mbt-elide-copies", "::mlir::ModuleOp"> {
  let summary = "Compute buffers in place of the views they are copied into";
  let description = [{
    After bufferization, an allocation that is written, read and finally
    copied whole (directly or through a collapse_shape) into a view of
    another buffer becomes that view (through an expand_shape), and the
    copy goes away: the gradients of the train step are computed directly
    in their columns of the flat `[M, P]` gradient buffer. Applies only
    when nothing else touches the destination in between (disjoint static
    subviews of the same buffer excepted) and every user of the allocation
    accepts the view's strided type.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MBTOuterParallelLoops : Pass<"mbt-outer-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Keep one parallel dimension per loop nest, for OpenMP";
  let description = [{
    After convert-linalg-to-parallel-loops: the outermost dimension of an
    outermost `scf.parallel` (the model dimension of a batched step) stays
    parallel when the nest has at least `min-iterations` iterations (a
    dynamic trip count counts as 128) and that dimension at least two;
    every other `scf.parallel`
    dimension, and every dimension of a smaller nest, becomes an
    `scf.for`. convert-scf-to-openmp then gives each thread whole models
    whose loops are the serial ones, still vectorizable, and opens no
    nested parallel regions.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Smallest estimated iteration count of a nest run in parallel">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def MBTDropMetadata : Pass<"mbt-drop-metadata", "::mlir::ModuleOp"> {
  let summary = "Erase mbt.sweep, mbt.optimizer and the mbt.* module attributes";
  let description = [{
    The sweep and the parameter layout are compile-time facts that the
    driver writes into the artifact's manifest, and the update rules
    (mbt.optimizer) have been copied into the fused update's loops by
    mbt-lower-to-linalg; nothing after the linalg stage reads them, and
    LLVM translation has no meaning for them.
  }];
}

#endif // MBT_CONVERSION_PASSES_TD
