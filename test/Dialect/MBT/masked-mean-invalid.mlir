// RUN: mbt-opt %s -split-input-file -verify-diagnostics

// Every message of the verifiers of mbt.masked_mean and mbt.masked_mean_grad.

func.func @values_rank(%h: tensor<8xf32>, %t: tensor<?xi32>) {
  // expected-error@+1 {{'mbt.masked_mean' op needs values [L..., T, D], got [8]}}
  %0 = mbt.masked_mean %h, %t : (tensor<8xf32>, tensor<?xi32>) -> tensor<8xf32>
  return
}

// -----

func.func @tokens_shape(%h: tensor<2x5x8xf32>, %t: tensor<2x6xi32>) {
  // expected-error@+1 {{'mbt.masked_mean' op needs tokens of shape [L..., T] = [2, 5], got [2, 6]}}
  %0 = mbt.masked_mean %h, %t : (tensor<2x5x8xf32>, tensor<2x6xi32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @tokens_rank(%h: tensor<2x5x8xf32>, %t: tensor<5xi32>) {
  // expected-error@+1 {{'mbt.masked_mean' op needs tokens of shape [L..., T] = [2, 5], got [5]}}
  %0 = mbt.masked_mean %h, %t : (tensor<2x5x8xf32>, tensor<5xi32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @element(%h: tensor<?x?x8xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.masked_mean' op needs a result of the values' element type 'f32', got 'f64'}}
  %0 = mbt.masked_mean %h, %t : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x8xf64>
  return
}

// -----

func.func @result_shape(%h: tensor<2x?x8xf32>, %t: tensor<2x?xi32>) {
  // expected-error@+1 {{'mbt.masked_mean' op needs a result of shape [L..., D] = [2, 8], got [2, 7]}}
  %0 = mbt.masked_mean %h, %t : (tensor<2x?x8xf32>, tensor<2x?xi32>) -> tensor<2x7xf32>
  return
}

// -----

func.func @grad_like(%h: tensor<2x?x8xf32>, %t: tensor<2x?xi32>, %g: tensor<2x8xf32>) {
  // expected-error@+1 {{'mbt.masked_mean_grad' op needs a result of the values' type 'tensor<2x?x8xf32>', got 'tensor<2x?x8xf64>'}}
  %0 = mbt.masked_mean_grad %t, %g like %h : (tensor<2x?xi32>, tensor<2x8xf32>, tensor<2x?x8xf32>) -> tensor<2x?x8xf64>
  return
}

// -----

func.func @grad_shape(%h: tensor<2x?x8xf32>, %t: tensor<2x?xi32>, %g: tensor<2x4xf32>) {
  // expected-error@+1 {{'mbt.masked_mean_grad' op needs a gradient of shape [L..., D] = [2, 8], got [2, 4]}}
  %0 = mbt.masked_mean_grad %t, %g like %h : (tensor<2x?xi32>, tensor<2x4xf32>, tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  return
}
