// RUN: mbt-opt --mbt-batch-models -verify-diagnostics %s

// A per-model constant needs exactly one value per model of the sweep.
func.func @m(%w: tensor<3xf32> {mbt.param = "w", mbt.init = #mbt.init<zeros>},
             %x: tensor<?x3xf32> {mbt.input = "x"},
             %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f32> {
  // expected-error@+1 {{'mbt.model_constant' op has 2 values for 3 models}}
  %g = mbt.model_constant {values = array<f64: 0.5, 2.0>} : tensor<f32>
  %s = mbt.reduce_sum %w {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  %l = mbt.mul %g, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}
mbt.sweep @sweep {model = @m, models = 3 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1, 0.2, 0.3>, array<f64: 0.0, 0.0, 0.0>, array<f64: 0.0, 0.0, 0.0>],
    seeds = array<i64: 0, 1, 2>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64}

mbt.optimizer @sgd attributes {hyper = ["lr", "momentum", "weight_decay"], slots = ["momentum_buffer"]} scalars {
^bb0(%lr: f64, %momentum: f64, %wd: f64, %step: f64):
  %lr32 = arith.truncf %lr : f64 to f32
  %momentum32 = arith.truncf %momentum : f64 to f32
  %wd32 = arith.truncf %wd : f64 to f32
  mbt.yield %lr32, %momentum32, %wd32 : f32, f32, f32
} elements {
^bb0(%g: f32, %p: f32, %buf: f32, %lr: f32, %momentum: f32, %wd: f32):
  %decay = arith.mulf %wd, %p : f32
  %d = arith.addf %g, %decay : f32
  %kept = arith.mulf %momentum, %buf : f32
  %buf1 = arith.addf %kept, %d : f32
  %delta = arith.mulf %lr, %buf1 : f32
  %p1 = arith.subf %p, %delta : f32
  mbt.yield %p1, %buf1 : f32, f32
}
