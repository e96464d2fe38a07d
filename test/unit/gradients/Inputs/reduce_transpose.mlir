// Ops the language does not spell directly: reduce_sum (whose gradient is
// mbt.broadcast) and matmuls with transposed operands.
func.func @m(%a: tensor<4x6xf32> {mbt.param = "a", mbt.init = #mbt.init<zeros>},
             %c: tensor<5x4xf32> {mbt.param = "c", mbt.init = #mbt.init<zeros>},
             %d: tensor<3x4x5xf32> {mbt.param = "d", mbt.init = #mbt.init<zeros>},
             %e: tensor<4x4xf32> {mbt.param = "e", mbt.init = #mbt.init<zeros>},
             %x: tensor<?x6xf32> {mbt.input = "x"},
             %y: tensor<?xi32> {mbt.target = "y"}) -> (tensor<f32>, tensor<f32>)
    attributes {mbt.outputs = ["loss", "acc"]} {
  // x [B,6] @ a^T [6,4]
  %h = mbt.matmul %x, %a {transpose_rhs} : (tensor<?x6xf32>, tensor<4x6xf32>) -> tensor<?x4xf32>
  // (c^T [4,5]) (c [5,4]) via transpose_lhs, then e^T e^T via both flags
  %cc = mbt.matmul %c, %c {transpose_lhs} : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<4x4xf32>
  %ee = mbt.matmul %e, %cc {transpose_lhs, transpose_rhs} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = mbt.matmul %h, %ee : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  // bias = sum over d's first and last dims: [4]
  %s = mbt.reduce_sum %d {axes = array<i64: 0, 2>} : (tensor<3x4x5xf32>) -> tensor<4xf32>
  %b = mbt.reshape %s : (tensor<4xf32>) -> tensor<1x4xf32>
  %logits = mbt.add %z, %b : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %loss = mbt.cross_entropy %logits, %y : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
  %acc = mbt.accuracy %logits, %y : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
  return %loss, %acc : tensor<f32>, tensor<f32>
}
mbt.sweep @sweep {model = @m, models = 1 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 1.0>, array<f64: 0.0>, array<f64: 0.0>],
    seeds = array<i64: 0>, data = #mbt.data_set<fashion_mnist>, batch_size = 5 : i64,
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
