// RUN: mbt-opt %s -split-input-file -verify-diagnostics

// Every message of the verifiers of mbt.attention, mbt.attention_grad,
// mbt.merge_rows, mbt.split_rows and mbt.positions.

func.func @query_rank(%q: tensor<8xf32>, %t: tensor<?xi32>) {
  // expected-error@+1 {{'mbt.attention' op needs query [L..., T, D], got [8]}}
  %0 = mbt.attention %q, %q, %q, %t {heads = 1 : i64, causal = false} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?xi32>) -> tensor<8xf32>
  return
}

// -----

func.func @one_type(%q: tensor<?x?x8xf32>, %v: tensor<?x?x4xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.attention' op needs query, key and value of one type, got 'tensor<?x?x8xf32>', 'tensor<?x?x8xf32>' and 'tensor<?x?x4xf32>'}}
  %0 = mbt.attention %q, %q, %v, %t {heads = 1 : i64, causal = false} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @heads(%q: tensor<?x?x8xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.attention' op needs a static feature size D that the 3 heads divide, got [?, ?, 8]}}
  %0 = mbt.attention %q, %q, %q, %t {heads = 3 : i64, causal = false} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @tokens(%q: tensor<2x5x8xf32>, %t: tensor<2x6xi32>) {
  // expected-error@+1 {{'mbt.attention' op needs tokens of shape [L..., T] = [2, 5], got [2, 6]}}
  %0 = mbt.attention %q, %q, %q, %t {heads = 1 : i64, causal = false} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x6xi32>) -> tensor<2x5x8xf32>
  return
}

// -----

func.func @result(%q: tensor<?x?x8xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.attention' op needs a result of the query's type 'tensor<?x?x8xf32>', got 'tensor<?x?x8xf64>'}}
  %0 = mbt.attention %q, %q, %q, %t {heads = 1 : i64, causal = false} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf64>
  return
}

// -----

func.func @grad(%q: tensor<?x?x8xf32>, %t: tensor<?x?xi32>, %g: tensor<?x?x4xf32>) {
  // expected-error@+1 {{'mbt.attention_grad' op needs a gradient and results of the query's type 'tensor<?x?x8xf32>'}}
  %0:3 = mbt.attention_grad %q, %q, %q, %t, %g {heads = 1 : i64, causal = false} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>, tensor<?x?x4xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return
}

// -----

func.func @merge_rank(%h: tensor<?x8xf32>) {
  // expected-error@+1 {{'mbt.merge_rows' op needs the input [L..., B, T, K], got [?, 8]}}
  %0 = mbt.merge_rows %h : (tensor<?x8xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @merge_shape(%h: tensor<2x3x4x8xf32>) {
  // expected-error@+1 {{'mbt.merge_rows' op needs rows of shape [L..., B * T, K] = [2, 12, 8], got [2, 10, 8]}}
  %0 = mbt.merge_rows %h : (tensor<2x3x4x8xf32>) -> tensor<2x10x8xf32>
  return
}

// -----

func.func @merge_element(%h: tensor<?x?x8xf32>) {
  // expected-error@+1 {{'mbt.merge_rows' op needs the element type 'f32' of the input, got 'f64'}}
  %0 = mbt.merge_rows %h : (tensor<?x?x8xf32>) -> tensor<?x8xf64>
  return
}

// -----

func.func @split_like(%r: tensor<?x8xf32>, %h: tensor<?x?x?x4xf32>) {
  // expected-error@+1 {{'mbt.split_rows' op needs `like` of the result's rank 3, got [?, ?, ?, 4]}}
  %0 = mbt.split_rows %r like %h : (tensor<?x8xf32>, tensor<?x?x?x4xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @split_sizes(%r: tensor<12x8xf32>, %h: tensor<3x4x2xf32>) {
  // expected-error@+1 {{'mbt.split_rows' op needs a result [L..., B, T, K] with the leading, batch and position sizes of `like` [3, 4, 2], got [4, 3, 8]}}
  %0 = mbt.split_rows %r like %h : (tensor<12x8xf32>, tensor<3x4x2xf32>) -> tensor<4x3x8xf32>
  return
}

// -----

func.func @split_rows(%r: tensor<10x8xf32>, %h: tensor<3x4x2xf32>) {
  // expected-error@+1 {{'mbt.split_rows' op needs rows of shape [L..., B * T, K] = [12, 8], got [10, 8]}}
  %0 = mbt.split_rows %r like %h : (tensor<10x8xf32>, tensor<3x4x2xf32>) -> tensor<3x4x8xf32>
  return
}

// -----

func.func @positions_type(%t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.positions' op needs a result of the tokens' type 'tensor<?x?xi32>', got 'tensor<?x5xi32>'}}
  %0 = mbt.positions %t : (tensor<?x?xi32>) -> tensor<?x5xi32>
  return
}

// -----

func.func @format_f8(%q: tensor<?x?x8xf32>, %t: tensor<?x?xi32>) {
  // expected-error@+1 {{'mbt.attention' op rounds the products of f32 values to bf16 or f16, got 'f32' values and format 'f8E4M3FN'}}
  %0 = mbt.attention %q, %q, %q, %t {heads = 2 : i64, causal = false, format = f8E4M3FN} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @format_f64(%q: tensor<?x?x8xf64>, %t: tensor<?x?xi32>, %g: tensor<?x?x8xf64>) {
  // expected-error@+1 {{'mbt.attention_grad' op rounds the products of f32 values to bf16 or f16, got 'f64' values and format 'bf16'}}
  %0:3 = mbt.attention_grad %q, %q, %q, %t, %g {heads = 2 : i64, causal = false, format = bf16} : (tensor<?x?x8xf64>, tensor<?x?x8xf64>, tensor<?x?x8xf64>, tensor<?x?xi32>, tensor<?x?x8xf64>) -> (tensor<?x?x8xf64>, tensor<?x?x8xf64>, tensor<?x?x8xf64>)
  return
}
