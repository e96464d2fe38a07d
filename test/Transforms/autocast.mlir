// RUN: sed -e 's/shuffle_seed = 0 : i64}/shuffle_seed = 0 : i64, precision = #mbt.precision<bf16>}/' %S/Inputs/mlp.mlir | mbt-opt --mbt-autocast | FileCheck %s
// RUN: mbt-opt --mbt-autocast %S/Inputs/mlp.mlir | FileCheck %s --check-prefix=F32

// With precision = bf16, each matmul's operands and result are rounded
// to bf16; the bias add, the relu and the loss read the rounded product
// and stay f32. Without a precision, the model is left as it is.

// CHECK-LABEL: func.func @mlp
// CHECK:         %[[X:.*]] = mbt.round_to %arg3 {format = bf16} : tensor<?x4xf32>
// CHECK:         %[[W1:.*]] = mbt.round_to %arg0 {format = bf16} : tensor<4x3xf32>
// CHECK:         %[[H:.*]] = mbt.matmul %[[X]], %[[W1]]
// CHECK:         %[[HR:.*]] = mbt.round_to %[[H]] {format = bf16} : tensor<?x3xf32>
// CHECK:         mbt.add %[[HR]], %{{.*}}
// CHECK:         %[[A:.*]] = mbt.relu
// CHECK:         %[[AR:.*]] = mbt.round_to %[[A]] {format = bf16}
// CHECK:         %[[W2:.*]] = mbt.round_to %arg2 {format = bf16}
// CHECK:         %[[L:.*]] = mbt.matmul %[[AR]], %[[W2]]
// CHECK:         %[[LR:.*]] = mbt.round_to %[[L]] {format = bf16} : tensor<?x2xf32>
// CHECK:         mbt.cross_entropy %[[LR]]
// CHECK:         mbt.accuracy %[[LR]]

// F32-LABEL: func.func @mlp
// F32-NOT:     mbt.round_to
// F32:         return
