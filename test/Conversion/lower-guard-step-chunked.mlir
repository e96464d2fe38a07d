// RUN: mbt-opt --mbt-lower-to-linalg=scalars-per-element=true %s | FileCheck %s
// RUN: mbt-opt --mbt-lower-to-linalg=scalars-per-element=true %s | \
// RUN:   mlir-opt --one-shot-bufferize=bufferize-function-boundaries \
// RUN:     --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
// RUN:     --finalize-memref-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm \
// RUN:     --convert-func-to-llvm --reconcile-unrealized-casts | \
// RUN:   mlir-cpu-runner -e main --entry-point-result=void \
// RUN:     --shared-libs=%mlir_runner_libs | FileCheck %s --check-prefix=EXEC

// For a GPU (scalars-per-element, the CUDA target's lowering) a model's
// gradient row is not ORed in one loop, which is one thread there: the
// row of 1100 is padded with zeros (finite) to 33 chunks of 34 (~sqrt),
// the chunks are reduced in parallel, then their 33 flags.
// CHECK-LABEL: func.func @main
// CHECK:         tensor.pad %{{.*}} low[0, 0] high[0, 22]
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [3, 33, 34] : tensor<3x1122xf32> into tensor<3x33x34xf32>
// CHECK:         %[[CHUNKS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<3x33x34xf32>) outs(%{{.*}} : tensor<3x33xi32>)
// CHECK:           arith.bitcast %{{.*}} : f32 to i32
// CHECK:         %[[ROWS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[CHUNKS]] : tensor<3x33xi32>) outs(%{{.*}} : tensor<3xi32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[ROWS]], %{{.*}} : tensor<3xf64>, tensor<3xi32>, tensor<3xf32>)

// Run: a NaN in model 0's last element (in the chunk the padding fills)
// and an infinity in the middle of model 2's row stop those two models'
// steps; model 1 keeps its step.
// EXEC: [0,  1,  0]
func.func private @printMemrefF64(tensor<*xf64>)
func.func @main() {
  %t = arith.constant dense<1.0> : tensor<3xf64>
  %l = arith.constant dense<0.5> : tensor<3xf32>
  %z = arith.constant dense<0.25> : tensor<3x1100xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %last = arith.constant 1099 : index
  %mid = arith.constant 577 : index
  %nan = arith.constant 0x7FC00000 : f32
  %inf = arith.constant 0x7F800000 : f32
  %g1 = tensor.insert %nan into %z[%c0, %last] : tensor<3x1100xf32>
  %g = tensor.insert %inf into %g1[%c2, %mid] : tensor<3x1100xf32>
  %s, %r = mbt.guard_step %t, %g, %l : tensor<3xf64>, tensor<3x1100xf32>, tensor<3xf32>
  %u = tensor.cast %s : tensor<3xf64> to tensor<*xf64>
  call @printMemrefF64(%u) : (tensor<*xf64>) -> ()
  return
}
