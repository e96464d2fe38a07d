// RUN: mbt-opt --mbt-autodiff -split-input-file -verify-diagnostics %s

// mbt-autodiff's checks of batch_norm: the running statistics it updates in
// the train step must be distinct buffers, each updated by one batch_norm.

// The running statistics must be buffers: the train step writes them.
func.func @m(%w: tensor<2x2xf32> {mbt.param = "w"}, %mean: tensor<2xf32> {mbt.buffer = "mean"}, %var: tensor<2xf32> {mbt.buffer = "var"}, %x: tensor<?x2xf32> {mbt.input = "x"}, %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f32> attributes {mbt.outputs = ["loss"]} {
  %h = mbt.matmul %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %s = mbt.reduce_sum %h {axes = array<i64: 0>} : (tensor<?x2xf32>) -> tensor<2xf32>
  // expected-error@+1 {{'mbt.batch_norm' op needs a buffer of the model (an argument marked mbt.buffer) as its running mean, which the train step updates}}
  %n = mbt.batch_norm %h, %s, %var {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<?x2xf32>, tensor<2xf32>
  %loss = mbt.cross_entropy %n, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
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
mbt.sweep @sweep {batch_size = 8 : i64, data = #mbt.data_set<fashion_mnist>, epochs = 1 : i64, hyper = [array<f64: 1.000000e-01>], hyper_names = ["lr"], model = @m, models = 1 : i64, optimizer = @sgd, seeds = array<i64: 0>, shuffle_seed = 0 : i64}

// -----

// A parameter is not a buffer either.
func.func @m(%w: tensor<2x2xf32> {mbt.param = "w"}, %mean: tensor<2xf32> {mbt.buffer = "mean"}, %var: tensor<2xf32> {mbt.buffer = "var"}, %x: tensor<?x2xf32> {mbt.input = "x"}, %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f32> attributes {mbt.outputs = ["loss"]} {
  %h = mbt.matmul %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %s = mbt.reduce_sum %w {axes = array<i64: 0>} : (tensor<2x2xf32>) -> tensor<2xf32>
  // expected-error@+1 {{'mbt.batch_norm' op needs a buffer of the model (an argument marked mbt.buffer) as its running variance, which the train step updates}}
  %n = mbt.batch_norm %h, %mean, %s {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<?x2xf32>, tensor<2xf32>
  %loss = mbt.cross_entropy %n, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
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
mbt.sweep @sweep {batch_size = 8 : i64, data = #mbt.data_set<fashion_mnist>, epochs = 1 : i64, hyper = [array<f64: 1.000000e-01>], hyper_names = ["lr"], model = @m, models = 1 : i64, optimizer = @sgd, seeds = array<i64: 0>, shuffle_seed = 0 : i64}

// -----

// One buffer cannot hold both statistics.
func.func @m(%w: tensor<2x2xf32> {mbt.param = "w"}, %mean: tensor<2xf32> {mbt.buffer = "mean"}, %var: tensor<2xf32> {mbt.buffer = "var"}, %x: tensor<?x2xf32> {mbt.input = "x"}, %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f32> attributes {mbt.outputs = ["loss"]} {
  %h = mbt.matmul %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  // expected-error@+1 {{'mbt.batch_norm' op takes buffer #0 as both its running mean and its running variance}}
  %n = mbt.batch_norm %h, %mean, %mean {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<?x2xf32>, tensor<2xf32>
  %loss = mbt.cross_entropy %n, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
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
mbt.sweep @sweep {batch_size = 8 : i64, data = #mbt.data_set<fashion_mnist>, epochs = 1 : i64, hyper = [array<f64: 1.000000e-01>], hyper_names = ["lr"], model = @m, models = 1 : i64, optimizer = @sgd, seeds = array<i64: 0>, shuffle_seed = 0 : i64}

// -----

// Each buffer has one writer.
func.func @m(%w: tensor<2x2xf32> {mbt.param = "w"}, %mean: tensor<2xf32> {mbt.buffer = "mean"}, %var: tensor<2xf32> {mbt.buffer = "var"}, %x: tensor<?x2xf32> {mbt.input = "x"}, %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f32> attributes {mbt.outputs = ["loss"]} {
  %h = mbt.matmul %x, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  // expected-note@+1 {{the other batch_norm}}
  %a = mbt.batch_norm %h, %mean, %var {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<?x2xf32>, tensor<2xf32>
  // expected-error@+1 {{'mbt.batch_norm' op updates the running mean buffer #0, which another batch_norm updates too}}
  %n = mbt.batch_norm %a, %mean, %var {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<?x2xf32>, tensor<2xf32>
  %loss = mbt.cross_entropy %n, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
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
mbt.sweep @sweep {batch_size = 8 : i64, data = #mbt.data_set<fashion_mnist>, epochs = 1 : i64, hyper = [array<f64: 1.000000e-01>], hyper_names = ["lr"], model = @m, models = 1 : i64, optimizer = @sgd, seeds = array<i64: 0>, shuffle_seed = 0 : i64}
