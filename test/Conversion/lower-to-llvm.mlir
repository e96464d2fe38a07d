// RUN: mbt-opt --pass-pipeline='builtin.module(mbt-to-fused,mbt-fused-to-linalg)' %S/../Transforms/Inputs/mlp.mlir | FileCheck %s --check-prefix=LINALG
// RUN: mbt-opt --pass-pipeline='builtin.module(mbt-to-llvm)' %S/../Transforms/Inputs/mlp.mlir | FileCheck %s --check-prefix=LLVM
// RUN: mbt-opt --pass-pipeline='builtin.module(mbt-to-llvm)' %S/../Transforms/Inputs/mlp.mlir | FileCheck %s --check-prefix=BLAS
// RUN: mbt-opt --pass-pipeline='builtin.module(mbt-to-llvm{blas=false})' %S/../Transforms/Inputs/mlp.mlir | FileCheck %s --check-prefix=LOOPS

// No mbt op survives lowering to linalg but the sweep; the model's
// matmuls become batched linalg matmuls.
// LINALG-NOT: mbt.matmul
// LINALG-NOT: mbt.fused_update
// LINALG: linalg.batch_matmul

// The entry points take only descriptors and return nothing: every output
// was bufferized in place into the caller's buffers (docs/abi.md).
// LLVM-DAG: llvm.func @_mlir_ciface_mbt_train_step(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// LLVM-DAG: llvm.func @_mlir_ciface_mbt_eval_step(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// LLVM-DAG: llvm.call @_mlir_ciface_mbt_rt_batch_matmul_f32
// LLVM-NOT: mbt.

// Every matmul goes to BLAS, those that read the strided input x too: five
// in the train step (two forward, three backward), two in the eval step.
// BLAS-COUNT-7: llvm.call @mbt_rt_batch_matmul_f32(
// BLAS-NOT: llvm.call @mbt_rt_batch_matmul_f32(

// Without BLAS the matmuls are loops and nothing is imported.
// LOOPS-NOT: mbt_rt_batch_matmul_f32
