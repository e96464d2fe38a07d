// RUN: mbt-opt %s -split-input-file -verify-diagnostics

// Every message of the verifiers of mbt.gru and mbt.gru_grad.

func.func @weight_rank(%gx: tensor<?x?x24xf32>, %w: tensor<24xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.gru' op needs a weight [H, 3H] or, with the model dimension, [M, H, 3H], got [24]}}
  %0:2 = mbt.gru %gx, %w, %w, %t : (tensor<?x?x24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x32xf32>)
  return
}

// -----

func.func @weight_shape(%gx: tensor<?x?x24xf32>, %w: tensor<8x20xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.gru' op needs a weight [H, 3H] with a static H, got [8, 20]}}
  %0:2 = mbt.gru %gx, %w, %b, %t : (tensor<?x?x24xf32>, tensor<8x20xf32>, tensor<24xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x32xf32>)
  return
}

// -----

func.func @element(%gx: tensor<?x?x24xf64>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.gru' op needs inputs, weight and bias of one element type}}
  %0:2 = mbt.gru %gx, %w, %b, %t : (tensor<?x?x24xf64>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x32xf32>)
  return
}

// -----

func.func @inputs(%gx: tensor<?x?x12xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.gru' op needs inputs [P..., B, T, 3H] = [?, ?, 24], got [?, ?, 12]}}
  %0:2 = mbt.gru %gx, %w, %b, %t : (tensor<?x?x12xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x32xf32>)
  return
}

// -----

func.func @bias(%gx: tensor<?x?x24xf32>, %w: tensor<8x24xf32>, %b: tensor<8xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.gru' op needs a bias [P..., 3H] = [24], got [8]}}
  %0:2 = mbt.gru %gx, %w, %b, %t : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x32xf32>)
  return
}

// -----

func.func @tokens(%gx: tensor<2x5x24xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<2x6xi32>) {
  // expected-error@+1 {{'mbt.gru' op needs tokens [P..., B, T] = [2, 5], got [2, 6]}}
  %0:2 = mbt.gru %gx, %w, %b, %t : (tensor<2x5x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<2x6xi32>) -> (tensor<2x5x8xf32>, tensor<2x5x32xf32>)
  return
}

// -----

func.func @result(%gx: tensor<?x?x24xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.gru' op needs states [P..., B, T, H] = [?, ?, 8], got [?, ?, 24]}}
  %0:2 = mbt.gru %gx, %w, %b, %t : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>) -> (tensor<?x?x24xf32>, tensor<?x?x32xf32>)
  return
}

// -----

func.func @grad_states(%gx: tensor<?x?x24xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>, %h: tensor<?x?x4xf32>, %g: tensor<?x?x32xf32>) {
  // expected-error@+1 {{'mbt.gru_grad' op needs states and a gradient [P..., B, T, H] = [?, ?, 8]}}
  %0:3 = mbt.gru_grad %gx, %w, %b, %t, %h, %g, %h : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>, tensor<?x?x4xf32>, tensor<?x?x32xf32>, tensor<?x?x4xf32>) -> (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>)
  return
}

// -----

func.func @grad_results(%gx: tensor<?x?x24xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>, %h: tensor<?x?x8xf32>, %g: tensor<?x?x32xf32>) {
  // expected-error@+1 {{'mbt.gru_grad' op needs results of the types of inputs, weight and bias}}
  %0:3 = mbt.gru_grad %gx, %w, %b, %t, %h, %g, %h : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<8xf32>)
  return
}

// -----

func.func @gates(%gx: tensor<?x?x24xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.gru' op needs gates [P..., B, T, 4H] = [?, ?, 32], got [?, ?, 24]}}
  %0:2 = mbt.gru %gx, %w, %b, %t : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x24xf32>)
  return
}

// -----

func.func @grad_gates(%gx: tensor<?x?x24xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>, %h: tensor<?x?x8xf32>) {
  // expected-error@+1 {{'mbt.gru_grad' op needs gates [P..., B, T, 4H] = [?, ?, 32]}}
  %0:3 = mbt.gru_grad %gx, %w, %b, %t, %h, %gx, %h : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x24xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>)
  return
}
