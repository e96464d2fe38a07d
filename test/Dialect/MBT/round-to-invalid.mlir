// RUN: mbt-opt %s -split-input-file -verify-diagnostics

// Every message of mbt.round_to's verifier, and of the sweep's precision.

func.func @f64_values(%x: tensor<4xf64>) {
  // expected-error@+1 {{'mbt.round_to' op rounds f32 values, got 'f64'}}
  %0 = mbt.round_to %x {format = bf16} : tensor<4xf64>
  return
}

// -----

func.func @f8_format(%x: tensor<4xf32>) {
  // expected-error@+1 {{'mbt.round_to' op rounds to bf16 or f16, got 'f8E4M3FN'}}
  %0 = mbt.round_to %x {format = f8E4M3FN} : tensor<4xf32>
  return
}

// -----

// expected-error@+6 {{expected one of: bf16, f16}}
// expected-error@+5 {{failed to parse MBT_PrecisionAttr parameter 'value'}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0>, array<f64: 0.0>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, precision = #mbt.precision<fp8>}

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

// -----

func.func @forward(%w: tensor<4x2xf64> {mbt.param = "w"}, %x: tensor<?x4xf64> {mbt.input = "x"}, %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f64> {
  %0 = mbt.matmul %x, %w : (tensor<?x4xf64>, tensor<4x2xf64>) -> tensor<?x2xf64>
  %1 = mbt.cross_entropy %0, %y : (tensor<?x2xf64>, tensor<?xi32>) -> tensor<f64>
  return %1 : tensor<f64>
}

// expected-error@+1 {{'mbt.sweep' op precision bf16 needs an f32 model, got 'f64'}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0>, array<f64: 0.0>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, precision = #mbt.precision<bf16>}

mbt.optimizer @sgd attributes {hyper = ["lr", "momentum", "weight_decay"], slots = ["momentum_buffer"]} scalars {
^bb0(%lr: f64, %momentum: f64, %wd: f64, %step: f64):
  mbt.yield %lr, %momentum, %wd : f64, f64, f64
} elements {
^bb0(%g: f64, %p: f64, %buf: f64, %lr: f64, %momentum: f64, %wd: f64):
  %decay = arith.mulf %wd, %p : f64
  %d = arith.addf %g, %decay : f64
  %kept = arith.mulf %momentum, %buf : f64
  %buf1 = arith.addf %kept, %d : f64
  %delta = arith.mulf %lr, %buf1 : f64
  %p1 = arith.subf %p, %delta : f64
  mbt.yield %p1, %buf1 : f64, f64
}
