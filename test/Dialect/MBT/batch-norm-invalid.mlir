// RUN: mbt-opt %s -split-input-file -verify-diagnostics

// Every message of mbt.batch_norm's verifier.

func.func @batch_norm_stats_type(%x: tensor<?x4xf32>, %s: tensor<4xf64>) {
  // expected-error@+1 {{'mbt.batch_norm' op failed to verify that all of {input, result} have same type}}
  %0 = "mbt.batch_norm"(%x, %s, %s) {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : (tensor<?x4xf32>, tensor<4xf64>, tensor<4xf64>) -> tensor<?x4xf64>
  return
}

// -----

func.func @batch_norm_stats_element(%x: tensor<?x4xf32>, %s: tensor<4xf64>) {
  // expected-error@+1 {{'mbt.batch_norm' op needs statistics of the input's element type 'f32', got 'tensor<4xf64>'}}
  %0 = mbt.batch_norm %x, %s, %s {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<?x4xf32>, tensor<4xf64>
  return
}

// -----

func.func @batch_norm_stats_rank(%x: tensor<?x4xf32>, %s: tensor<f32>) {
  // expected-error@+1 {{'mbt.batch_norm' op needs statistics with a channel dimension, got 'tensor<f32>'}}
  %0 = mbt.batch_norm %x, %s, %s {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<?x4xf32>, tensor<f32>
  return
}

// -----

func.func @batch_norm_input_rank(%x: tensor<4xf32>, %s: tensor<4xf32>) {
  // expected-error@+1 {{'mbt.batch_norm' op needs an input [L..., B, C, S...] for statistics [4], got [4]}}
  %0 = mbt.batch_norm %x, %s, %s {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_leading(%x: tensor<2x?x4xf32>, %s: tensor<3x4xf32>) {
  // expected-error@+1 {{'mbt.batch_norm' op has statistics [3, 4] whose leading dims differ from the input's [2, ?, 4]}}
  %0 = mbt.batch_norm %x, %s, %s {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<2x?x4xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<?x8x5x5xf32>, %s: tensor<4xf32>) {
  // expected-error@+1 {{'mbt.batch_norm' op has 4 channels of statistics for an input with 8 channels (dim 1 of [?, 8, 5, 5])}}
  %0 = mbt.batch_norm %x, %s, %s {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<?x8x5x5xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_epsilon(%x: tensor<?x4xf32>, %s: tensor<4xf32>) {
  // expected-error@+1 {{'mbt.batch_norm' op needs a positive epsilon, got 0}}
  %0 = mbt.batch_norm %x, %s, %s {epsilon = 0.0 : f64, momentum = 1.0e-01 : f64} : tensor<?x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_momentum(%x: tensor<?x4xf32>, %s: tensor<4xf32>) {
  // expected-error@+1 {{'mbt.batch_norm' op needs a momentum in [0, 1], got 1.5}}
  %0 = mbt.batch_norm %x, %s, %s {epsilon = 1.0e-05 : f64, momentum = 1.5 : f64} : tensor<?x4xf32>, tensor<4xf32>
  return
}
