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

func.func @matmul_element_types(%a: tensor<2x3xf32>, %b: tensor<3x5xf64>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{matmul operands have different element types: 'f32' and 'f64'}}
  %0 = mbt.matmul %a, %b : (tensor<2x3xf32>, tensor<3x5xf64>) -> tensor<2x5xf32>
  return
}

// -----

func.func @add_element_types(%a: tensor<2x3xf64>, %b: tensor<2x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{add operands have different element types: 'f64' and 'f32'}}
  %0 = mbt.add %a, %b : (tensor<2x3xf64>, tensor<2x3xf32>) -> tensor<2x3xf64>
  return
}

// -----

func.func @concat_element_types(%a: tensor<2x3xf64>, %b: tensor<2x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{concat operands have different element types: 'f64' and 'f32'}}
  %0 = mbt.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf64>, tensor<2x3xf32>) -> tensor<2x6xf64>
  return
}

// -----

func.func @f16_tensor(%a: tensor<2x3xf16>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of 32-bit float or 64-bit float values}}
  %0 = mbt.relu %a : tensor<2x3xf16>
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
  // expected-error@+1 {{names the optimizer @lamb, which is not an mbt.optimizer of the module}}
  %0, %1 = mbt.update @lamb %p, %p state(%p) hyper(%h) step(%t)
      : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf64>, tensor<f64>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @update_slots(%p: tensor<3xf32>, %h: tensor<5xf64>, %t: tensor<f64>) {
  // expected-error@+1 {{rule 'adam' has 2 state slots, got 1}}
  %0, %1 = mbt.update @adam %p, %p state(%p) hyper(%h) step(%t)
      : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<5xf64>, tensor<f64>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

mbt.optimizer @adam attributes {hyper = ["lr", "beta1", "beta2", "eps", "weight_decay"], slots = ["exp_avg", "exp_avg_sq"]} scalars {
^bb0(%arg0: f64, %arg1: f64, %arg2: f64, %arg3: f64, %arg4: f64, %arg5: f64):
  %cst = arith.constant 1.000000e+00 : f64
  %0 = arith.truncf %arg4 : f64 to f32
  %1 = arith.truncf %arg1 : f64 to f32
  %2 = arith.subf %cst, %arg1 : f64
  %3 = arith.truncf %2 : f64 to f32
  %4 = arith.truncf %arg2 : f64 to f32
  %5 = arith.subf %cst, %arg2 : f64
  %6 = arith.truncf %5 : f64 to f32
  %7 = math.powf %arg2, %arg5 : f64
  %8 = arith.subf %cst, %7 : f64
  %9 = math.sqrt %8 : f64
  %10 = arith.truncf %9 : f64 to f32
  %11 = arith.truncf %arg3 : f64 to f32
  %12 = math.powf %arg1, %arg5 : f64
  %13 = arith.subf %cst, %12 : f64
  %14 = arith.divf %arg0, %13 : f64
  %15 = arith.truncf %14 : f64 to f32
  mbt.yield %0, %1, %3, %4, %6, %10, %11, %15 : f32, f32, f32, f32, f32, f32, f32, f32
} elements {
^bb0(%arg0: f32, %arg1: f32, %arg2: f32, %arg3: f32, %arg4: f32, %arg5: f32, %arg6: f32, %arg7: f32, %arg8: f32, %arg9: f32, %arg10: f32, %arg11: f32):
  %0 = arith.mulf %arg4, %arg1 : f32
  %1 = arith.addf %arg0, %0 : f32
  %2 = arith.mulf %arg5, %arg2 : f32
  %3 = arith.mulf %arg6, %1 : f32
  %4 = arith.addf %2, %3 : f32
  %5 = arith.mulf %arg7, %arg3 : f32
  %6 = arith.mulf %arg8, %1 : f32
  %7 = arith.mulf %6, %1 : f32
  %8 = arith.addf %5, %7 : f32
  %9 = math.sqrt %8 : f32
  %10 = arith.divf %9, %arg9 : f32
  %11 = arith.addf %10, %arg10 : f32
  %12 = arith.divf %4, %11 : f32
  %13 = arith.mulf %arg11, %12 : f32
  %14 = arith.subf %arg1, %13 : f32
  mbt.yield %14, %4, %8 : f32, f32, f32
}

// -----

func.func @fused_state(%p: tensor<2x6xf32>, %s: tensor<2x5xf32>, %h: tensor<2x5xf64>, %t: tensor<2xf64>) {
  // expected-error@+1 {{each state slot must be [2, 6] as params, got [2, 5]}}
  %0, %1, %2 = mbt.fused_update @adam %p, %p state(%s, %s : tensor<2x5xf32>, tensor<2x5xf32>) hyper(%h) step(%t) : tensor<2x6xf32>, tensor<2x5xf64>, tensor<2xf64>
  return
}

mbt.optimizer @adam attributes {hyper = ["lr", "beta1", "beta2", "eps", "weight_decay"], slots = ["exp_avg", "exp_avg_sq"]} scalars {
^bb0(%arg0: f64, %arg1: f64, %arg2: f64, %arg3: f64, %arg4: f64, %arg5: f64):
  %cst = arith.constant 1.000000e+00 : f64
  %0 = arith.truncf %arg4 : f64 to f32
  %1 = arith.truncf %arg1 : f64 to f32
  %2 = arith.subf %cst, %arg1 : f64
  %3 = arith.truncf %2 : f64 to f32
  %4 = arith.truncf %arg2 : f64 to f32
  %5 = arith.subf %cst, %arg2 : f64
  %6 = arith.truncf %5 : f64 to f32
  %7 = math.powf %arg2, %arg5 : f64
  %8 = arith.subf %cst, %7 : f64
  %9 = math.sqrt %8 : f64
  %10 = arith.truncf %9 : f64 to f32
  %11 = arith.truncf %arg3 : f64 to f32
  %12 = math.powf %arg1, %arg5 : f64
  %13 = arith.subf %cst, %12 : f64
  %14 = arith.divf %arg0, %13 : f64
  %15 = arith.truncf %14 : f64 to f32
  mbt.yield %0, %1, %3, %4, %6, %10, %11, %15 : f32, f32, f32, f32, f32, f32, f32, f32
} elements {
^bb0(%arg0: f32, %arg1: f32, %arg2: f32, %arg3: f32, %arg4: f32, %arg5: f32, %arg6: f32, %arg7: f32, %arg8: f32, %arg9: f32, %arg10: f32, %arg11: f32):
  %0 = arith.mulf %arg4, %arg1 : f32
  %1 = arith.addf %arg0, %0 : f32
  %2 = arith.mulf %arg5, %arg2 : f32
  %3 = arith.mulf %arg6, %1 : f32
  %4 = arith.addf %2, %3 : f32
  %5 = arith.mulf %arg7, %arg3 : f32
  %6 = arith.mulf %arg8, %1 : f32
  %7 = arith.mulf %6, %1 : f32
  %8 = arith.addf %5, %7 : f32
  %9 = math.sqrt %8 : f32
  %10 = arith.divf %9, %arg9 : f32
  %11 = arith.addf %10, %arg10 : f32
  %12 = arith.divf %4, %11 : f32
  %13 = arith.mulf %arg11, %12 : f32
  %14 = arith.subf %arg1, %13 : f32
  mbt.yield %14, %4, %8 : f32, f32, f32
}

// -----

func.func @m() { return }
// expected-error@+1 {{hyperparameter 'lr' has 1 values for 2 models}}
mbt.sweep @sweep {model = @m, models = 2 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0, 0.0>, array<f64: 0.0, 0.0>],
    seeds = array<i64: 0, 1>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64}

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

// expected-error@+1 {{'func.func' op mbt.init must be an #mbt.init attribute}}
func.func @bad_init(%w: tensor<3xf32> {mbt.param = "w", mbt.init = {kind = "normal"}}) {
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

func.func @guard_step_shapes(%g: tensor<2x12xf32>, %t: tensor<3xf64>, %l: tensor<3xf32>) {
  // expected-error@+1 {{needs step [M] and grads [M, P], got [3] and [2, 12]}}
  %0:2 = mbt.guard_step %t, %g, %l : tensor<3xf64>, tensor<2x12xf32>, tensor<3xf32>
  return
}

// -----

func.func @guard_step_loss(%g: tensor<2x12xf32>, %t: tensor<2xf64>, %l: tensor<2xf64>) {
  // expected-error@+1 {{needs a loss [M] of the gradients' type, got 'tensor<2xf64>'}}
  %0:2 = mbt.guard_step %t, %g, %l : tensor<2xf64>, tensor<2x12xf32>, tensor<2xf64>
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
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0>, array<f64: 0.0>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, clip_norm = array<f64: -1.0>}

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

// Counts are checked as signed numbers (an I64Attr's getter is unsigned).
// expected-error@+1 {{epochs must not be negative, got -1}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0>, array<f64: 0.0>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = -1 : i64, shuffle_seed = 0 : i64}

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

// expected-error@+1 {{batch_size must be positive, got -8}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0>, array<f64: 0.0>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = -8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64}

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

// expected-error@+1 {{crop must not be negative, got -2}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0>, array<f64: 0.0>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, crop = -2 : i64}

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

func.func @schedule_params(%h: tensor<2x5xf64>, %t: tensor<2xf64>, %p: tensor<2x2xf64>) {
  // expected-error@+1 {{needs hyper [M, H], step [M] and params [M, 3] for schedule 'cosine', got [2, 5], [2] and [2, 2]}}
  %0 = mbt.lr_schedule cosine %h, %t, %p : tensor<2x5xf64>, tensor<2xf64>, tensor<2x2xf64>
  return
}

// -----

func.func @schedule_rule(%h: tensor<2x5xf64>, %t: tensor<2xf64>, %p: tensor<2x2xf64>) {
  // expected-error@+1 {{unknown schedule 'warm_restarts'}}
  %0 = mbt.lr_schedule warm_restarts %h, %t, %p : tensor<2x5xf64>, tensor<2xf64>, tensor<2x2xf64>
  return
}

// -----

// expected-error@+1 {{schedule 'step' needs 2 parameter arrays}}
mbt.sweep @sweep {model = @forward, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1>, array<f64: 0.0>, array<f64: 0.0>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64, schedule = #mbt.schedule<step>,
    schedule_params = [array<f64: 10.0>]}

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

// expected-error@+1 {{'mbt.optimizer' op scalars region takes the 1 hyperparameters and the step, got 1 arguments}}
mbt.optimizer @a attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64):
  mbt.yield
} elements {
^bb0(%g: f32, %p: f32):
  mbt.yield %p : f32
}

// -----

// expected-error@+1 {{'mbt.optimizer' op scalars region must yield 'f32' or i1 values, got 'f64'}}
mbt.optimizer @b attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  mbt.yield %lr : f64
} elements {
^bb0(%g: f32, %p: f32, %lr: f64):
  mbt.yield %p : f32
}

// -----

// expected-error@+1 {{'mbt.optimizer' op elements region takes grad, param, 1 state slots and the 1 yielded scalars, got 3 arguments}}
mbt.optimizer @c attributes {hyper = ["lr"], slots = ["m"]} scalars {
^bb0(%lr: f64, %step: f64):
  %f = arith.truncf %lr : f64 to f32
  mbt.yield %f : f32
} elements {
^bb0(%g: f32, %p: f32, %lr: f32):
  mbt.yield %p, %p : f32, f32
}

// -----

// expected-error@+1 {{'mbt.optimizer' op elements region must yield the new parameter and 1 state slots ('f32')}}
mbt.optimizer @d attributes {hyper = ["lr"], slots = ["m"]} scalars {
^bb0(%lr: f64, %step: f64):
  mbt.yield
} elements {
^bb0(%g: f32, %p: f32, %m: f32):
  mbt.yield %p : f32
}

// -----

// expected-error@+1 {{'mbt.optimizer' op hyperparameter 'lr' is named twice}}
mbt.optimizer @e attributes {hyper = ["lr", "lr"], slots = []} scalars {
^bb0(%lr: f64, %lr2: f64, %step: f64):
  mbt.yield
} elements {
^bb0(%g: f32, %p: f32):
  mbt.yield %p : f32
}

// -----

// expected-error@+1 {{'mbt.optimizer' op elements region argument 2 must have the yielded scalar's type 'i1'}}
mbt.optimizer @f attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  %c = arith.constant true
  mbt.yield %c : i1
} elements {
^bb0(%g: f32, %p: f32, %c: f32):
  mbt.yield %p : f32
}

// -----

mbt.optimizer @g attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  mbt.yield
} elements {
^bb0(%g: f32, %p: f32):
  mbt.yield %p : f32
}
func.func @decay_without_wd(%p: tensor<2x6xf32>, %h: tensor<2x1xf64>, %t: tensor<2xf64>, %mask: tensor<6xf32>) {
  // expected-error@+1 {{has a decay_mask, but rule 'g' has no weight_decay hyperparameter}}
  %0 = mbt.fused_update @g %p, %p hyper(%h) step(%t) decay_mask(%mask : tensor<6xf32>) : tensor<2x6xf32>, tensor<2x1xf64>, tensor<2xf64>
  return
}

// -----

mbt.optimizer @h attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  mbt.yield
} elements {
^bb0(%g: f32, %p: f32):
  mbt.yield %p : f32
}
func.func @update_hyper(%p: tensor<3xf32>, %h: tensor<2xf64>, %t: tensor<f64>) {
  // expected-error@+1 {{rule 'h' takes 1 hyperparameters, got hyper of size 2}}
  %0 = mbt.update @h %p, %p state() hyper(%h) step(%t)
      : (tensor<3xf32>, tensor<3xf32>, tensor<2xf64>, tensor<f64>) -> tensor<3xf32>
  return
}

// -----

func.func @m() { return }
mbt.optimizer @i attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  mbt.yield
} elements {
^bb0(%g: f32, %p: f32):
  mbt.yield %p : f32
}
// expected-error@+1 {{hyper_names must be the hyperparameters of 'i' in order: ["lr"]}}
mbt.sweep @sweep {model = @m, models = 1 : i64, optimizer = @i,
    hyper_names = ["rate"], hyper = [array<f64: 0.1>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64}

// -----

// expected-error@+1 {{'mbt.optimizer' op elements region argument 0 must be f32 or f64, got 'f16'}}
mbt.optimizer @f16 attributes {hyper = [], slots = []} scalars {
^bb0(%step: f64):
  mbt.yield
} elements {
^bb0(%g: f16, %p: f16):
  mbt.yield %p : f16
}

// -----

// expected-error@+1 {{'mbt.optimizer' op elements region argument 1 must be 'f64', got 'f32'}}
mbt.optimizer @mixed attributes {hyper = [], slots = []} scalars {
^bb0(%step: f64):
  mbt.yield
} elements {
^bb0(%g: f64, %p: f32):
  mbt.yield %p : f32
}

// -----

mbt.optimizer @sgd32 attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  mbt.yield
} elements {
^bb0(%g: f32, %p: f32):
  mbt.yield %p : f32
}
func.func @update_element_type(%p: tensor<3xf64>, %h: tensor<1xf64>, %t: tensor<f64>) {
  // expected-error@+1 {{rule 'sgd32' updates 'f32' elements, got parameters of 'f64'}}
  %0 = mbt.update @sgd32 %p, %p state() hyper(%h) step(%t)
      : (tensor<3xf64>, tensor<3xf64>, tensor<1xf64>, tensor<f64>) -> (tensor<3xf64>)
  return
}

// -----

func.func @model_seed_empty() {
  // expected-error@+1 {{'mbt.model_seed' op needs at least one seed}}
  %0 = mbt.model_seed {seeds = array<i64>} : tensor<i64>
  return
}

// -----

func.func @dropout_rate_type(%x: tensor<?x8xf32>, %rate: tensor<f64>) {
  // expected-error@+1 {{'mbt.dropout' op needs a rate of the input's element type 'f32', got 'tensor<f64>'}}
  %0 = mbt.dropout %x, %rate {site = 0 : i64} : tensor<?x8xf32>, tensor<f64>
  return
}

// -----

func.func @dropout_rate_shape(%x: tensor<2x?x8xf32>, %rate: tensor<3xf32>) {
  // expected-error@+1 {{'mbt.dropout' op needs a rate whose shape [3] is a prefix of the input's [2, ?, 8]}}
  %0 = mbt.dropout %x, %rate {site = 0 : i64} : tensor<2x?x8xf32>, tensor<3xf32>
  return
}

// -----

func.func @dropout_key_size(%x: tensor<?x8xf32>, %rate: tensor<f32>, %seed: tensor<i64>) {
  // expected-error@+1 {{'mbt.dropout' op needs a key of a seed and a step, or none, got 1 values}}
  %0 = mbt.dropout %x, %rate, %seed {site = 0 : i64} : tensor<?x8xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

func.func @dropout_key_types(%x: tensor<?x8xf32>, %rate: tensor<f32>, %step: tensor<f64>) {
  // expected-error@+1 {{'mbt.dropout' op needs an i64 seed and an f64 step, got 'tensor<f64>' and 'tensor<f64>'}}
  %0 = mbt.dropout %x, %rate, %step, %step {site = 0 : i64} : tensor<?x8xf32>, tensor<f32>, tensor<f64>, tensor<f64>
  return
}

// -----

func.func @dropout_key_shapes(%x: tensor<2x?x8xf32>, %rate: tensor<2xf32>, %seed: tensor<i64>, %step: tensor<2xf64>) {
  // expected-error@+1 {{'mbt.dropout' op needs the seed and the step shaped like the rate [2], got [] and [2]}}
  %0 = mbt.dropout %x, %rate, %seed, %step {site = 0 : i64} : tensor<2x?x8xf32>, tensor<2xf32>, tensor<i64>, tensor<2xf64>
  return
}

// -----

func.func @dropout_site(%x: tensor<?x8xf32>, %rate: tensor<f32>) {
  // expected-error@+1 {{'mbt.dropout' op attribute 'site' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = mbt.dropout %x, %rate {site = -1 : i64} : tensor<?x8xf32>, tensor<f32>
  return
}

// -----

func.func @conv2d_channels(%x: tensor<?x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{conv2d filter [4, 2, 3, 3] takes 2 channels per group, but the image [3, 8, 8] has 3 in 1 group}}
  %0 = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x6x6xf32>
  return
}

// -----

func.func @conv2d_groups(%x: tensor<?x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{conv2d groups (2) must divide the input channels (4) and the output channels (3)}}
  %0 = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<?x3x6x6xf32>
  return
}

// -----

func.func @conv2d_fit(%x: tensor<?x1x4x4xf32>, %w: tensor<2x1x3x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{conv2d kernel (3, 3) (dilation (2, 2)) does not fit the image (4, 4) padded by (0, 0)}}
  %0 = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 2>, groups = 1 : i64} : (tensor<?x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<?x2x1x1xf32>
  return
}

// -----

func.func @conv2d_stride(%x: tensor<?x1x4x4xf32>, %w: tensor<2x1x3x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{conv2d stride must be at least 1, got (0, 1)}}
  %0 = mbt.conv2d %x, %w {stride = array<i64: 0, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<?x2x2x2xf32>
  return
}

// -----

func.func @conv2d_ranks(%x: tensor<?x1x4x4xf32>, %w: tensor<2x2x1x3x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{conv2d needs an input [..., B, C, H, W] and a filter [..., O, C/groups, KH, KW] with the same leading dims, got [?, 1, 4, 4] and [2, 2, 1, 3, 3]}}
  %0 = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x4x4xf32>, tensor<2x2x1x3x3xf32>) -> tensor<?x2x2x2xf32>
  return
}

// -----

func.func @conv2d_leading(%x: tensor<2x?x1x4x4xf32>, %w: tensor<3x2x1x3x3xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{conv2d leading dims differ: [2, ?, 1, 4, 4] and [3, 2, 1, 3, 3]}}
  %0 = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x?x1x4x4xf32>, tensor<3x2x1x3x3xf32>) -> tensor<2x?x2x2x2xf32>
  return
}

// -----

func.func @conv2d_pair(%x: tensor<?x1x4x4xf32>, %w: tensor<2x1x3x3xf32>) {
  // expected-error@+1 {{'mbt.conv2d' op attribute 'stride' failed to satisfy constraint: i64 dense array attribute with exactly 2 elements}}
  %0 = mbt.conv2d %x, %w {stride = array<i64: 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<?x2x2x2xf32>
  return
}

// -----

func.func @conv2d_grad_shape(%dy: tensor<?x2x3x3xf32>, %w: tensor<2x1x3x3xf32>, %x: tensor<?x1x4x4xf32>) {
  // expected-error@+1 {{'mbt.conv2d_grad_input' op needs a gradient shaped like the conv2d result [?, 2, 2, 2], got [?, 2, 3, 3]}}
  %0 = mbt.conv2d_grad_input %dy, %w like %x {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : tensor<?x2x3x3xf32>, tensor<2x1x3x3xf32>, tensor<?x1x4x4xf32>
  return
}

// -----

func.func @conv2d_grad_filter_shape(%x: tensor<?x1x4x4xf32>, %dy: tensor<?x3x2x2xf32>, %w: tensor<2x1x3x3xf32>) {
  // expected-error@+1 {{'mbt.conv2d_grad_filter' op needs a gradient shaped like the conv2d result [?, 2, 2, 2], got [?, 3, 2, 2]}}
  %0 = mbt.conv2d_grad_filter %x, %dy like %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : tensor<?x1x4x4xf32>, tensor<?x3x2x2xf32>, tensor<2x1x3x3xf32>
  return
}

// -----

func.func @conv2d_grad_bad_like(%x: tensor<?x1x4x4xf32>, %dy: tensor<?x3x2x2xf32>, %w: tensor<2x1x3x3xf32>) {
  // expected-error@+1 {{'mbt.conv2d_grad_input' op conv2d needs static image and filter sizes, got [3, 2, 2] and [?, 1, 4, 4]}}
  %0 = mbt.conv2d_grad_input %dy, %x like %dy {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : tensor<?x3x2x2xf32>, tensor<?x1x4x4xf32>, tensor<?x3x2x2xf32>
  return
}

// -----

func.func @pool_padding(%x: tensor<?x8x8xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{max_pool2d padding (2, 2) must be at most half the kernel (3, 3)}}
  %0, %1 = mbt.max_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 2, 2>} : (tensor<?x8x8xf32>) -> (tensor<?x10x10xf32>, tensor<?x10x10xi32>)
  return
}

// -----

func.func @pool_fit(%x: tensor<?x2x2xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{avg_pool2d kernel (3, 3) does not fit the plane (2, 2) padded by (0, 0)}}
  %0 = mbt.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>} : (tensor<?x2x2xf32>) -> tensor<?x1x1xf32>
  return
}

// -----

func.func @pool_kernel(%x: tensor<?x4x4xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{avg_pool2d kernel must be at least 1, got (0, 2)}}
  %0 = mbt.avg_pool2d %x {kernel = array<i64: 0, 2>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>} : (tensor<?x4x4xf32>) -> tensor<?x1x1xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<4xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{max_pool2d needs an input [..., H, W], got [4]}}
  %0, %1 = mbt.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi32>)
  return
}

// -----

func.func @pool_dynamic(%x: tensor<?x?xf32>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{avg_pool2d needs a static [H, W] plane, got [?, ?]}}
  %0 = mbt.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @max_pool_grad_shape(%dy: tensor<?x3x3xf32>, %i: tensor<?x3x3xi32>, %x: tensor<?x8x8xf32>) {
  // expected-error@+1 {{'mbt.max_pool2d_grad' op needs a gradient shaped like the max_pool2d result [?, 4, 4], got [?, 3, 3]}}
  %0 = mbt.max_pool2d_grad %dy, %i like %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : tensor<?x3x3xf32>, tensor<?x3x3xi32>, tensor<?x8x8xf32>
  return
}

// -----

func.func @max_pool_grad_indices(%dy: tensor<?x4x4xf32>, %i: tensor<?x4x2xi32>, %x: tensor<?x8x8xf32>) {
  // expected-error@+1 {{'mbt.max_pool2d_grad' op needs indices shaped like the gradient [?, 4, 4], got [?, 4, 2]}}
  %0 = mbt.max_pool2d_grad %dy, %i like %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : tensor<?x4x4xf32>, tensor<?x4x2xi32>, tensor<?x8x8xf32>
  return
}

// -----

func.func @avg_pool_grad_shape(%dy: tensor<?x3x3xf32>, %x: tensor<?x8x8xf32>) {
  // expected-error@+1 {{'mbt.avg_pool2d_grad' op needs a gradient shaped like the avg_pool2d result [?, 4, 4], got [?, 3, 3]}}
  %0 = mbt.avg_pool2d_grad %dy like %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : tensor<?x3x3xf32>, tensor<?x8x8xf32>
  return
}

// -----

func.func @conv2d_element_types(%x: tensor<?x1x4x4xf32>, %w: tensor<2x1x3x3xf64>) {
  // expected-error@+2 {{failed to infer returned types}}
  // expected-error@+1 {{conv2d operands have different element types}}
  %0 = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x4x4xf32>, tensor<2x1x3x3xf64>) -> tensor<?x2x2x2xf32>
  return
}

// -----

func.func @dropout_shared_dims(%x: tensor<2x?x8xf32>, %rate: tensor<2xf32>) {
  // expected-error@+1 {{'mbt.dropout' op shares a draw over 3 trailing dims, but the input [2, ?, 8] has only 2 per model}}
  %0 = mbt.dropout %x, %rate {site = 0 : i64, shared_dims = 3 : i64} : tensor<2x?x8xf32>, tensor<2xf32>
  return
}
