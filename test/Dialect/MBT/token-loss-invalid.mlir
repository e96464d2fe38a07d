// RUN: mbt-opt %s -split-input-file -verify-diagnostics

// Every message of the verifiers of mbt.token_cross_entropy, its adjoint
// and mbt.token_accuracy.

func.func @logits_rank(%l: tensor<?x7xf32>, %y: tensor<?xi32>) {
  // expected-error@+1 {{'mbt.token_cross_entropy' op needs logits [L..., B, T, V], got [?, 7]}}
  %0 = mbt.token_cross_entropy %l, %y : (tensor<?x7xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// -----

func.func @targets_shape(%l: tensor<2x5x7xf32>, %y: tensor<2x6xi32>) {
  // expected-error@+1 {{'mbt.token_accuracy' op needs targets of shape [L..., B, T] = [2, 5], got [2, 6]}}
  %0 = mbt.token_accuracy %l, %y : (tensor<2x5x7xf32>, tensor<2x6xi32>) -> tensor<f32>
  return
}

// -----

func.func @element(%l: tensor<?x?x7xf32>, %y: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.token_cross_entropy' op needs a result of the logits' element type 'f32', got 'f64'}}
  %0 = mbt.token_cross_entropy %l, %y : (tensor<?x?x7xf32>, tensor<?x?xi32>) -> tensor<f64>
  return
}

// -----

func.func @result_shape(%l: tensor<3x?x?x7xf32>, %y: tensor<3x?x?xi32>) {
  // expected-error@+1 {{'mbt.token_cross_entropy' op needs a result of shape [L...] = [3], got [?, ?]}}
  %0 = mbt.token_cross_entropy %l, %y : (tensor<3x?x?x7xf32>, tensor<3x?x?xi32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @grad_type(%l: tensor<?x?x7xf32>, %y: tensor<?x?xi32>, %g: tensor<f32>) {
  // expected-error@+1 {{'mbt.token_cross_entropy_grad' op needs a result of the logits' type 'tensor<?x?x7xf32>', got 'tensor<?x?x8xf32>'}}
  %0 = mbt.token_cross_entropy_grad %l, %y, %g : (tensor<?x?x7xf32>, tensor<?x?xi32>, tensor<f32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @grad_shape(%l: tensor<3x?x?x7xf32>, %y: tensor<3x?x?xi32>, %g: tensor<f32>) {
  // expected-error@+1 {{'mbt.token_cross_entropy_grad' op needs a gradient of shape [L...] = [3], got []}}
  %0 = mbt.token_cross_entropy_grad %l, %y, %g : (tensor<3x?x?x7xf32>, tensor<3x?x?xi32>, tensor<f32>) -> tensor<3x?x?x7xf32>
  return
}
