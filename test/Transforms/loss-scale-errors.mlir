// RUN: mbt-opt --mbt-autodiff --mbt-batch-models --mbt-fuse-optimizer -split-input-file -verify-diagnostics %s

// The checks of a loss scale's buffers (mbt-autocast adds them under
// precision = f16; hand-written IR may get them wrong).

// The scale seeds the reverse sweep: it has the loss's type.
func.func @m(%w: tensor<2x2xf32> {mbt.param = "w"}, %s: tensor<1xf32> {mbt.buffer = "amp.loss_scale", mbt.loss_scale = "scale"}, %x: tensor<?x2xf32> {mbt.input = "x"}, %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f32> attributes {mbt.outputs = ["loss"]} {
  %h = mbt.matmul %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  // expected-error@+1 {{the loss scale is 'tensor<1xf32>' but the loss 'tensor<f32>'}}
  %loss = mbt.cross_entropy %h, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
mbt.optimizer @sgd attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  %lr32 = arith.truncf %lr : f64 to f32
  mbt.yield %lr32 : f32
} elements {
^bb0(%g: f32, %p: f32, %lr: f32):
  %delta = arith.mulf %lr, %g : f32
  %new = arith.subf %p, %delta : f32
  mbt.yield %new : f32
}
mbt.sweep @sweep {batch_size = 8 : i64, data = #mbt.data_set<fashion_mnist>, epochs = 1 : i64, hyper = [array<f64: 1.000000e-01>], hyper_names = ["lr"], model = @m, models = 1 : i64, optimizer = @sgd, seeds = array<i64: 0>, shuffle_seed = 0 : i64, precision = #mbt.precision<f16>}

// -----

// The scale without the rest of its state.
// expected-error@+1 {{a loss scale needs one buffer of each role (scale, good_steps, skipped_steps), got 0 marked mbt.loss_scale = "good_steps"}}
func.func @m(%w: tensor<2x2xf32> {mbt.param = "w"}, %s: tensor<f32> {mbt.buffer = "amp.loss_scale", mbt.loss_scale = "scale"}, %x: tensor<?x2xf32> {mbt.input = "x"}, %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f32> attributes {mbt.outputs = ["loss"]} {
  %h = mbt.matmul %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %loss = mbt.cross_entropy %h, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
mbt.optimizer @sgd attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  %lr32 = arith.truncf %lr : f64 to f32
  mbt.yield %lr32 : f32
} elements {
^bb0(%g: f32, %p: f32, %lr: f32):
  %delta = arith.mulf %lr, %g : f32
  %new = arith.subf %p, %delta : f32
  mbt.yield %new : f32
}
mbt.sweep @sweep {batch_size = 8 : i64, data = #mbt.data_set<fashion_mnist>, epochs = 1 : i64, hyper = [array<f64: 1.000000e-01>], hyper_names = ["lr"], model = @m, models = 1 : i64, optimizer = @sgd, seeds = array<i64: 0>, shuffle_seed = 0 : i64, precision = #mbt.precision<f16>}
