// RUN: mbt-opt %s -split-input-file -verify-diagnostics

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{matmul contraction dimensions differ: [2, 3] and [4, 5]}}
  %0 = mbt.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<2x3xf32>, %b: tensor<1x3x5xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{matmul operands must have equal rank, got [2, 3] and [1, 3, 5]}}
  %0 = mbt.matmul %a, %b : (tensor<2x3xf32>, tensor<1x3x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{add operands cannot be broadcast: [2, 3] and [2, 4]}}
  %0 = mbt.add %a, %b : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<6xf32>) {
  // expected-error@+1 {{cannot reshape [6] (6 elements) to [4] (4 elements)}}
  %0 = mbt.reshape %a : (tensor<6xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unbroadcast_source(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{result [2, 2] is not a broadcast source of [2, 3] (dimension 1)}}
  %0 = mbt.unbroadcast %a : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @ce_labels(%l: tensor<4x10xf32>, %y: tensor<5xi32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{cross_entropy logits [4, 10] do not match labels [5]}}
  %0 = mbt.cross_entropy %l, %y : (tensor<4x10xf32>, tensor<5xi32>) -> tensor<f32>
  return
}

// -----

func.func @update_rule(%p: tensor<3xf32>, %h: tensor<3xf64>, %t: tensor<f64>) {
  // expected-error@+1 {{unknown optimizer rule 'lamb' (known: sgd, adam)}}
  %0, %1 = mbt.update "lamb" %p, %p state(%p) hyper(%h) step(%t)
      : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf64>, tensor<f64>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @update_slots(%p: tensor<3xf32>, %h: tensor<5xf64>, %t: tensor<f64>) {
  // expected-error@+1 {{rule 'adam' has 2 state slots, got 1}}
  %0, %1 = mbt.update "adam" %p, %p state(%p) hyper(%h) step(%t)
      : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<5xf64>, tensor<f64>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @fused_state(%p: tensor<2x6xf32>, %s: tensor<2x2x5xf32>, %h: tensor<2x5xf64>, %t: tensor<2xf64>) {
  // expected-error@+1 {{state must be [S, 2, 6], got [2, 2, 5]}}
  %0, %1 = mbt.fused_update "adam" %p, %p, %s, %h, %t : tensor<2x6xf32>, tensor<2x2x5xf32>, tensor<2x5xf64>, tensor<2xf64>
  return
}

// -----

func.func @m() { return }
// expected-error@+1 {{hyperparameter 'lr' has 1 values for 2 models}}
mbt.sweep @sweep {model = @m, models = 2 : i64, optimizer = "sgd",
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0, 0.0>, array<f64: 0.0, 0.0>],
    seeds = array<i64: 0, 1>, data = "fashion_mnist", batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64}

// -----

// expected-error@+1 {{'func.func' op unknown initializer 'gaussian'}}
func.func @bad_init(%w: tensor<3xf32> {mbt.param = "w", mbt.init = {kind = "gaussian"}}) {
  return
}

// -----

func.func @reduce_axis_range(%a: tensor<2x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{reduce_max axis 2 out of range for [2, 3]}}
  %0 = mbt.reduce_max %a {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @reduce_axis_twice(%a: tensor<2x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{logsumexp axis 1 listed twice}}
  %0 = mbt.logsumexp %a {axes = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @reduce_max_grad_shape(%a: tensor<2x3xf32>, %m: tensor<3xf32>) {
  // expected-error@+1 {{max and grad must have the reduced shape [2], got [3]}}
  %0 = mbt.reduce_max_grad %a, %m, %m {axes = array<i64: 1>} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_length(%a: tensor<2x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{transpose permutation of 3 dimensions for [2, 3]}}
  %0 = mbt.transpose %a {permutation = array<i64: 0, 1, 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_repeat(%a: tensor<2x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{transpose permutation [0, 0] is not a permutation of 2 dimensions}}
  %0 = mbt.transpose %a {permutation = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @one_hot_classes(%y: tensor<4xi32>) {
  // expected-error@+1 {{attribute 'num_classes' failed to satisfy constraint}}
  %0 = mbt.one_hot %y {num_classes = 0 : i64} : (tensor<4xi32>) -> tensor<4x0xf32>
  return
}

// -----

func.func @accuracy_top_k(%l: tensor<4x10xf32>, %y: tensor<4xi32>) {
  // expected-error@+1 {{attribute 'top_k' failed to satisfy constraint}}
  %0 = mbt.accuracy %l, %y {top_k = 0 : i64} : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  return
}

// -----

// expected-error@+1 {{'func.func' op mbt.classes must be a positive integer}}
func.func @classes(%y: tensor<?xi32> {mbt.target = "y", mbt.classes = 0 : i64}) {
  return
}

// -----

func.func @model_constant_empty() {
  // expected-error@+1 {{'mbt.model_constant' op needs at least one value}}
  %0 = mbt.model_constant {values = array<f64>} : tensor<f32>
  return
}

// -----

func.func @reshape_dynamic(%a: tensor<?x6xf32>) {
  // expected-error@+1 {{with dynamic sizes can only insert or remove unit dimensions or regroup the static dimensions after the last dynamic one, got [?, 6] -> [2, ?, 3]}}
  %0 = mbt.reshape %a : (tensor<?x6xf32>) -> tensor<2x?x3xf32>
  return
}

// -----

func.func @concat_shapes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{concat operands [2, 3] and [4, 5] differ outside axis 1}}
  %0 = mbt.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @concat_dynamic_axis(%a: tensor<?x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{concat axis 0 is not a static dimension of [?, 3] and [?, 3]}}
  %0 = mbt.concat %a, %a {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @slice_range(%a: tensor<2x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{slice [2, 4) out of range for size 3}}
  %0 = mbt.slice %a {axis = 1 : i64, start = 2 : i64, end = 4 : i64} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @slice_grad_fit(%g: tensor<2x2xf32>, %x: tensor<2x3xf32>) {
  // expected-error@+1 {{grad [2, 2] at 2 of axis 1 does not fit [2, 3]}}
  %0 = mbt.slice_grad %g like %x {axis = 1 : i64, start = 2 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @clip_shapes(%g: tensor<2x12xf32>, %m: tensor<3xf64>) {
  // expected-error@+1 {{needs grads [M, P] and max_norm [M], got [2, 12] and [3]}}
  %0 = mbt.clip_grad_norm %g, %m : tensor<2x12xf32>, tensor<3xf64>
  return
}

// -----

// expected-error@+1 {{clip_norm must be positive, got -1}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = "sgd",
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0>, array<f64: 0.0>],
    seeds = array<i64: 0>, data = "fashion_mnist", batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, clip_norm = array<f64: -1.0>}

// -----

func.func @schedule_params(%h: tensor<2x5xf64>, %t: tensor<2xf64>, %p: tensor<2x2xf64>) {
  // expected-error@+1 {{needs hyper [M, H], step [M] and params [M, 3] for schedule 'cosine', got [2, 5], [2] and [2, 2]}}
  %0 = mbt.lr_schedule "cosine" %h, %t, %p : tensor<2x5xf64>, tensor<2xf64>, tensor<2x2xf64>
  return
}

// -----

func.func @schedule_rule(%h: tensor<2x5xf64>, %t: tensor<2xf64>, %p: tensor<2x2xf64>) {
  // expected-error@+1 {{unknown schedule 'warm_restarts'}}
  %0 = mbt.lr_schedule "warm_restarts" %h, %t, %p : tensor<2x5xf64>, tensor<2xf64>, tensor<2x2xf64>
  return
}

// -----

// expected-error@+1 {{schedule 'step' needs 2 parameter arrays}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = "sgd",
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0>, array<f64: 0.0>],
    seeds = array<i64: 0>, data = "fashion_mnist", batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, schedule = "step",
    schedule_params = [array<f64: 10.0>]}
