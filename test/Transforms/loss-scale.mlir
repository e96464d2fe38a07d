// RUN: sed -e 's/shuffle_seed = 0 : i64}/shuffle_seed = 0 : i64, precision = #mbt.precision<f16>, init_scale = 1024.0 : f64, growth_interval = 50 : i64}/' %S/Inputs/mlp.mlir > %t.mlir
// RUN: mbt-opt --mbt-autocast %t.mlir | FileCheck %s --check-prefix=CAST
// RUN: mbt-opt --mbt-autocast --mbt-autodiff %t.mlir | FileCheck %s --check-prefix=GRAD
// RUN: mbt-opt --mbt-autocast --mbt-autodiff --mbt-batch-models --mbt-fuse-optimizer %t.mlir | FileCheck %s --check-prefix=FUSED

// precision = f16: the products round to f16, and each model gets a
// dynamic loss scale.

// mbt-autocast: three scalar buffers after the parameters, the scale
// starting at the sweep's init_scale.
// CAST-LABEL: func.func @mlp
// CAST-SAME:    %arg2: tensor<3x2xf32> {mbt.init = #mbt.init<kaiming_uniform>, mbt.param = "w2"},
// CAST-SAME:    %arg3: tensor<f32> {mbt.buffer = "amp.loss_scale", mbt.init = #mbt.init<constant, value = 1.024000e+03>, mbt.loss_scale = "scale"},
// CAST-SAME:    %arg4: tensor<f32> {mbt.buffer = "amp.good_steps", mbt.init = #mbt.init<zeros>, mbt.loss_scale = "good_steps"},
// CAST-SAME:    %arg5: tensor<f32> {mbt.buffer = "amp.skipped_steps", mbt.init = #mbt.init<zeros>, mbt.loss_scale = "skipped_steps"},
// CAST-SAME:    %arg6: tensor<?x4xf32> {mbt.input = "x"}
// CAST:         mbt.round_to %arg6 {format = f16} : tensor<?x4xf32>

// mbt-autodiff: the reverse sweep starts from the scale, not from 1.
// GRAD-LABEL: func.func @train_step
// GRAD:         %[[LOSS:.*]] = mbt.cross_entropy %[[LOGITS:.*]], %arg{{.*}}
// GRAD:         mbt.cross_entropy_grad %[[LOGITS]], %arg{{.*}}, %arg3 :

// mbt-fuse-optimizer: unscale, guard (an overflow skips, it does not
// freeze), update the scale, and step the optimizer by its own count.
// FUSED: module attributes {mbt.buffer_layout = [{init = #mbt.init<constant, value = 1.024000e+03>, name = "amp.loss_scale", offset = 0 : i64, shape = array<i64>, size = 1 : i64}, {init = #mbt.init<zeros>, name = "amp.good_steps", offset = 1 : i64, shape = array<i64>, size = 1 : i64}, {init = #mbt.init<zeros>, name = "amp.skipped_steps", offset = 2 : i64, shape = array<i64>, size = 1 : i64}]
// FUSED-LABEL: func.func @mbt_train_step
// FUSED:         %[[G:.*]] = mbt.unscale_grads %{{.*}}, %[[SCALE:.*]] : tensor<4x21xf32>, tensor<4xf32>
// FUSED:         %[[STEP:.*]], %[[REPORTED:.*]] = mbt.guard_step %arg4, %[[G]], %{{.*}} {skip_overflow}
// FUSED:         %[[NEW:.*]], %[[GOOD:.*]], %[[SKIPPED:.*]], %[[OPT:.*]] = mbt.update_loss_scale %arg4, %[[STEP]], %[[REPORTED]], %[[SCALE]], %{{.*}}, %{{.*}} {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 50 : i64}
// The buffers' rows are kept for the models that trained (a reported loss).
// FUSED:         %[[TRAINED:.*]] = linalg.generic {{.*}} ins(%arg4, %[[REPORTED]] : tensor<4xf64>, tensor<4xf32>)
// FUSED:         mbt.fused_update @adam %arg0, %[[G]] {{.*}} step(%[[OPT]])
// FUSED:         linalg.generic {{.*}} ins(%[[TRAINED]], %{{.*}}, %arg1 : tensor<4xf64>, tensor<4x3xf32>, tensor<4x3xf32>)
// The optimizer step alone (on the caller's gradients) has no loss scale.
// FUSED-LABEL: func.func @mbt_optimizer_step
// FUSED-NOT:     mbt.unscale_grads
// FUSED:         mbt.guard_step
// FUSED-NOT:     skip_overflow
// FUSED:         return
