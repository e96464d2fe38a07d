// RUN: mbt-opt %s -split-input-file -verify-diagnostics

// Every message of the verifiers of mbt.embedding and mbt.embedding_grad.

func.func @table_rank(%w: tensor<8xf32>, %i: tensor<?xi32>) {
  // expected-error@+1 {{'mbt.embedding' op needs a table [L..., V, D], got [8]}}
  %0 = mbt.embedding %w, %i : (tensor<8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @indices_rank(%w: tensor<2x3x4x8xf32>, %i: tensor<2xi32>) {
  // expected-error@+1 {{'mbt.embedding' op needs indices with the table's 2 leading dimensions, got [2]}}
  %0 = mbt.embedding %w, %i : (tensor<2x3x4x8xf32>, tensor<2xi32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @leading(%w: tensor<2x4x8xf32>, %i: tensor<3x?xi32>) {
  // expected-error@+1 {{'mbt.embedding' op has indices [3, ?] whose leading dims differ from the table's [2, 4, 8]}}
  %0 = mbt.embedding %w, %i : (tensor<2x4x8xf32>, tensor<3x?xi32>) -> tensor<3x?x8xf32>
  return
}

// -----

func.func @element(%w: tensor<4x8xf32>, %i: tensor<?xi32>) {
  // expected-error@+1 {{'mbt.embedding' op needs a result of the table's element type 'f32', got 'f64'}}
  %0 = mbt.embedding %w, %i : (tensor<4x8xf32>, tensor<?xi32>) -> tensor<?x8xf64>
  return
}

// -----

func.func @result_shape(%w: tensor<4x8xf32>, %i: tensor<?x5xi32>) {
  // expected-error@+1 {{'mbt.embedding' op needs a result of shape [indices..., D] = [?, 5] + [8], got [?, 8]}}
  %0 = mbt.embedding %w, %i : (tensor<4x8xf32>, tensor<?x5xi32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @float_indices(%w: tensor<4x8xf32>, %i: tensor<?xf32>) {
  // expected-error@+1 {{'mbt.embedding' op operand #1 must be ranked tensor of 32-bit signless integer values}}
  %0 = "mbt.embedding"(%w, %i) : (tensor<4x8xf32>, tensor<?xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @grad_result(%i: tensor<?xi32>, %g: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error@+1 {{'mbt.embedding_grad' op needs a result of the table's type 'tensor<4x8xf32>', got 'tensor<5x8xf32>'}}
  %0 = mbt.embedding_grad %i, %g like %w : (tensor<?xi32>, tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<5x8xf32>
  return
}

// -----

func.func @grad_shape(%i: tensor<?xi32>, %g: tensor<?x7xf32>, %w: tensor<4x8xf32>) {
  // expected-error@+1 {{'mbt.embedding_grad' op needs a gradient of shape [indices..., D] = [?] + [8], got [?, 7]}}
  %0 = mbt.embedding_grad %i, %g like %w : (tensor<?xi32>, tensor<?x7xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}
