// RUN: mbt-opt --mbt-autodiff --mbt-batch-models %S/Inputs/mlp.mlir | FileCheck %s --check-prefix=BEFORE
// RUN: mbt-opt --mbt-autodiff --mbt-batch-models --mbt-fuse-optimizer %S/Inputs/mlp.mlir | FileCheck %s

// Before: one update per parameter.
// BEFORE-COUNT-3: mbt.update @adam
// BEFORE-NOT: mbt.fused_update

// After: every parameter of every model in one [4, 21] buffer (12 + 3 + 6
// per model), one fused update, no per-parameter update left.
// CHECK: module attributes
// CHECK-SAME: mbt.layout = [{{.*}}name = "w1", offset = 0 : i64, shape = array<i64: 4, 3>, size = 12 : i64}, {{.*}}name = "b1", offset = 12 : i64{{.*}}name = "w2", offset = 15 : i64
// CHECK-LABEL: func.func @mbt_train_step
// The state is a memref whose slots are written in place through subviews
// (tensors that are their only alias), so bufferization copies nothing.
// The model has no buffers (running statistics): their [M, Q] is [4, 0].
// CHECK-SAME: %[[P:.*]]: tensor<4x21xf32> {bufferization.writable = true}, %{{.*}}: tensor<4x0xf32> {bufferization.writable = true}, %[[S:[^:]*]]: memref<2x4x21xf32>, %[[H:.*]]: tensor<4x5xf64> {bufferization.writable = false}, %[[T:.*]]: tensor<4xf64>
// CHECK-SAME: llvm.emit_c_interface
// CHECK: tensor.extract_slice %[[P]][0, 0] [4, 12] [1, 1]
// CHECK: %[[V0:.*]] = memref.subview %[[S]][0, 0, 0] [1, 4, 21] [1, 1, 1]
// CHECK: %[[S0:.*]] = bufferization.to_tensor %[[V0]] restrict writable
// CHECK: %[[V1:.*]] = memref.subview %[[S]][1, 0, 0] [1, 4, 21] [1, 1, 1]
// CHECK: %[[S1:.*]] = bufferization.to_tensor %[[V1]] restrict writable
// CHECK-NOT: mbt.update
// CHECK: %[[G:.*]] = tensor.insert_slice {{.*}}[0, 15] [4, 6] [1, 1] : tensor<4x6xf32> into tensor<4x21xf32>
// A model whose loss or gradients are not finite gets step 0 (the update
// leaves it as it is) and reports a NaN loss in column 0 of out.
// CHECK: %[[GUARDED:.*]], %[[LOSS:.*]] = mbt.guard_step %[[T]], %[[G]], %{{.*}} : tensor<4xf64>, tensor<4x21xf32>, tensor<4xf32>
// CHECK: %{{.*}}, %[[NEW:.*]]:2 = mbt.fused_update @adam %[[P]], %[[G]] state(%[[S0]], %[[S1]] : {{.*}}) hyper(%[[H]]) step(%[[GUARDED]])
// CHECK: bufferization.materialize_in_destination %[[NEW]]#0 in restrict writable %[[V0]]
// CHECK: bufferization.materialize_in_destination %[[NEW]]#1 in restrict writable %[[V1]]
// CHECK: %[[COLUMN:.*]] = tensor.expand_shape %[[LOSS]] {{\[\[}}0, 1]] output_shape [4, 1]
// CHECK: tensor.insert_slice %[[COLUMN]] into %{{.*}}[0, 0] [4, 1] [1, 1]
// CHECK-NOT: mbt.fused_update
// CHECK-NOT: mbt.update
// The optimizer step alone, on gradients given as its last argument.
// CHECK-LABEL: func.func @mbt_optimizer_step
// CHECK-SAME: %[[P2:.*]]: tensor<4x21xf32> {bufferization.writable = true}, %[[S2:.*]]: memref<2x4x21xf32>, %[[H2:.*]]: tensor<4x5xf64> {bufferization.writable = false}, %[[T2:.*]]: tensor<4xf64> {bufferization.writable = false}, %[[G2:.*]]: tensor<4x21xf32> {bufferization.writable = false}
// CHECK: %[[GUARDED2:.*]], %{{.*}} = mbt.guard_step %[[T2]], %[[G2]], %{{.*}}
// CHECK: mbt.fused_update @adam %[[P2]], %[[G2]] state(%{{.*}}, %{{.*}} : {{.*}}) hyper(%[[H2]]) step(%[[GUARDED2]])
// CHECK-NOT: mbt.fused_update
// CHECK-LABEL: func.func @mbt_eval_step
// CHECK-SAME: tensor<4x21xf32> {bufferization.writable = false}
// CHECK-NOT: mbt.update
// CHECK-NOT: mbt.fused_update
