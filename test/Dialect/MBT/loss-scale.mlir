// RUN: mbt-opt %s | mbt-opt | FileCheck %s

// The ops of f16's dynamic loss scale print and parse back: the rounding
// to f16, the unscaling of the gradients, the guard that skips an
// overflow, the update of each model's scale.

// CHECK-LABEL: func.func @loss_scale
// CHECK:         mbt.round_to %arg0 {format = f16} : tensor<4x?x8xf32>
// CHECK:         %[[G:.*]] = mbt.unscale_grads %arg1, %arg3 : tensor<4x10xf32>, tensor<4xf32>
// CHECK:         %[[S:.*]], %[[L:.*]] = mbt.guard_step %arg2, %[[G]], %arg4 {skip_overflow} : tensor<4xf64>, tensor<4x10xf32>, tensor<4xf32>
// CHECK:         mbt.update_loss_scale %arg2, %[[S]], %[[L]], %arg3, %arg5, %arg6 {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64} : tensor<4xf64>, tensor<4xf32>
func.func @loss_scale(%x: tensor<4x?x8xf32>, %grads: tensor<4x10xf32>,
                      %step: tensor<4xf64>, %scale: tensor<4xf32>,
                      %loss: tensor<4xf32>, %good: tensor<4xf32>,
                      %skipped: tensor<4xf32>)
    -> (tensor<4x?x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>) {
  %r = mbt.round_to %x {format = f16} : tensor<4x?x8xf32>
  %g = mbt.unscale_grads %grads, %scale : tensor<4x10xf32>, tensor<4xf32>
  %s, %l = mbt.guard_step %step, %g, %loss {skip_overflow} : tensor<4xf64>, tensor<4x10xf32>, tensor<4xf32>
  %scale2, %good2, %skipped2, %opt = mbt.update_loss_scale %step, %s, %l, %scale, %good, %skipped {growth_factor = 2.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 2000 : i64} : tensor<4xf64>, tensor<4xf32>
  return %r, %scale2, %good2, %skipped2, %opt : tensor<4x?x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>
}
