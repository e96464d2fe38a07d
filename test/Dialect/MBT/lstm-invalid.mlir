// RUN: mbt-opt %s -split-input-file -verify-diagnostics

// The messages of the verifiers of mbt.lstm and mbt.lstm_grad (the checks
// of the operands are mbt.gru's, for 4 gates: gru-invalid.mlir).

func.func @weight(%gx: tensor<?x?x24xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.lstm' op needs a weight [H, 4H] with a static H, got [8, 24]}}
  %0:3 = mbt.lstm %gx, %w, %b, %t : (tensor<?x?x24xf32>, tensor<8x24xf32>, tensor<24xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x24xf32>)
  return
}

// -----

func.func @inputs(%gx: tensor<?x?x24xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.lstm' op needs inputs [P..., B, T, 4H] = [?, ?, 32], got [?, ?, 24]}}
  %0:3 = mbt.lstm %gx, %w, %b, %t : (tensor<?x?x24xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x24xf32>)
  return
}

// -----

func.func @results(%gx: tensor<?x?x32xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.lstm' op needs states and cells [P..., B, T, H] = [?, ?, 8], got [?, ?, 8] and [?, ?, 4]}}
  %0:3 = mbt.lstm %gx, %w, %b, %t : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x32xf32>)
  return
}

// -----

func.func @grad(%gx: tensor<?x?x32xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>, %t: tensor<?x?xi32>, %h: tensor<?x?x8xf32>, %c: tensor<?x?x4xf32>) {
  // expected-error@+1 {{'mbt.lstm_grad' op needs states, cells and a gradient [P..., B, T, H] = [?, ?, 8]}}
  %0:3 = mbt.lstm_grad %gx, %w, %b, %t, %h, %c, %gx, %h : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x32xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>)
  return
}

// -----

func.func @grad_results(%gx: tensor<?x?x32xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>, %t: tensor<?x?xi32>, %h: tensor<?x?x8xf32>) {
  // expected-error@+1 {{'mbt.lstm_grad' op needs results of the types of inputs, weight and bias}}
  %0:3 = mbt.lstm_grad %gx, %w, %b, %t, %h, %h, %gx, %h : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x32xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<8xf32>)
  return
}

// -----

func.func @gates(%gx: tensor<?x?x32xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.lstm' op needs gates of the inputs' type [?, ?, 32], got [?, ?, 8]}}
  %0:3 = mbt.lstm %gx, %w, %b, %t : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return
}

// -----

func.func @grad_gates(%gx: tensor<?x?x32xf32>, %w: tensor<8x32xf32>, %b: tensor<32xf32>, %t: tensor<?x?xi32>, %h: tensor<?x?x8xf32>) {
  // expected-error@+1 {{'mbt.lstm_grad' op needs gates of the inputs' type [?, ?, 32]}}
  %0:3 = mbt.lstm_grad %gx, %w, %b, %t, %h, %h, %h, %h : (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>, tensor<?x?xi32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x32xf32>, tensor<8x32xf32>, tensor<32xf32>)
  return
}
