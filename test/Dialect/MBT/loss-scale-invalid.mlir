// RUN: mbt-opt %s -split-input-file -verify-diagnostics

// Every message of the loss scale's verifiers: mbt.unscale_grads,
// mbt.update_loss_scale, the sweep's loss-scale settings and the
// arguments that hold a loss scale's state.

func.func @unscale_shapes(%g: tensor<4x10xf32>, %s: tensor<3xf32>) {
  // expected-error@+1 {{'mbt.unscale_grads' op needs grads [M, P] and scale [M], got [4, 10] and [3]}}
  %0 = mbt.unscale_grads %g, %s : tensor<4x10xf32>, tensor<3xf32>
  return
}

// -----

func.func @unscale_types(%g: tensor<4x10xf32>, %s: tensor<4xf64>) {
  // expected-error@+1 {{'mbt.unscale_grads' op needs a scale of the gradients' type, got 'f64'}}
  %0 = mbt.unscale_grads %g, %s : tensor<4x10xf32>, tensor<4xf64>
  return
}

// -----

func.func @update_shapes(%step: tensor<4xf64>, %s: tensor<4x1xf32>) {
  // expected-error@+1 {{'mbt.update_loss_scale' op needs step and scale [M], got [4] and [4, 1]}}
  %0:4 = mbt.update_loss_scale %step, %step, %s, %s, %s, %s {growth_factor = 2.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 2000 : i64} : tensor<4xf64>, tensor<4x1xf32>
  return
}

// -----

func.func @update_growth(%step: tensor<4xf64>, %s: tensor<4xf32>) {
  // expected-error@+1 {{'mbt.update_loss_scale' op growth_factor must exceed 1, got 1}}
  %0:4 = mbt.update_loss_scale %step, %step, %s, %s, %s, %s {growth_factor = 1.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 2000 : i64} : tensor<4xf64>, tensor<4xf32>
  return
}

// -----

func.func @update_backoff(%step: tensor<4xf64>, %s: tensor<4xf32>) {
  // expected-error@+1 {{'mbt.update_loss_scale' op backoff_factor must be in (0, 1), got 0}}
  %0:4 = mbt.update_loss_scale %step, %step, %s, %s, %s, %s {growth_factor = 2.0 : f64, backoff_factor = 0.0 : f64, growth_interval = 2000 : i64} : tensor<4xf64>, tensor<4xf32>
  return
}

// -----

func.func @update_interval(%step: tensor<4xf64>, %s: tensor<4xf32>) {
  // expected-error@+1 {{'mbt.update_loss_scale' op growth_interval must be positive, got 0}}
  %0:4 = mbt.update_loss_scale %step, %step, %s, %s, %s, %s {growth_factor = 2.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 0 : i64} : tensor<4xf64>, tensor<4xf32>
  return
}

// -----

// expected-error@+1 {{'func.func' op mbt.loss_scale must be "scale", "good_steps" or "skipped_steps"}}
func.func @bad_role(%s: tensor<f32> {mbt.buffer = "amp.s", mbt.loss_scale = "count"}) {
  return
}

// -----

// expected-error@+1 {{initializer 'constant' needs 'value'}}
func.func @constant_without_value(%s: tensor<f32> {mbt.buffer = "s", mbt.init = #mbt.init<constant>}) {
  return
}

// -----

// expected-error@+1 {{'mbt.sweep' op init_scale applies to precision = "f16" (a loss scale) only}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr"], hyper = [array<f64: 0.1>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, precision = #mbt.precision<bf16>,
    init_scale = 1024.0 : f64}

// -----

// expected-error@+1 {{'mbt.sweep' op growth_interval applies to precision = "f16" (a loss scale) only}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr"], hyper = [array<f64: 0.1>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, growth_interval = 10 : i64}

// -----

// expected-error@+1 {{'mbt.sweep' op init_scale must be positive and an f32 (at most 3.4e38), got -1}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr"], hyper = [array<f64: 0.1>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, precision = #mbt.precision<f16>,
    init_scale = -1.0 : f64}

// -----

// expected-error@+1 {{'mbt.sweep' op backoff_factor must be in (0, 1), got 2}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr"], hyper = [array<f64: 0.1>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, precision = #mbt.precision<f16>,
    backoff_factor = 2.0 : f64}
