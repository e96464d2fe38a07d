// A model with the reduction and layout ops: the input to the batching
// and lowering tests of the ops that carry axes or permutations.
func.func @red(%w: tensor<3x4xf32> {mbt.param = "w", mbt.init = #mbt.init<zeros>},
               %x: tensor<?x4xf32> {mbt.input = "x"},
               %y: tensor<?xi32> {mbt.target = "y", mbt.classes = 3 : i64}) -> (tensor<f32>, tensor<f32>)
    attributes {mbt.outputs = ["loss", "top2"]} {
  %wt = mbt.transpose %w {permutation = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %z = mbt.matmul %x, %wt : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %m = mbt.reduce_max %z {axes = array<i64: 1>} : (tensor<?x3xf32>) -> tensor<?xf32>
  %lse = mbt.logsumexp %z {axes = array<i64: 1>} : (tensor<?x3xf32>) -> tensor<?xf32>
  %d = mbt.sub %lse, %m : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %t = mbt.one_hot %y {num_classes = 3 : i64} : (tensor<?xi32>) -> tensor<?x3xf32>
  %sp = mbt.softplus %z : tensor<?x3xf32>
  %zt = mbt.mul %z, %t : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %b = mbt.sub %sp, %zt : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %s = mbt.reduce_sum %b {axes = array<i64: 0, 1>} : (tensor<?x3xf32>) -> tensor<f32>
  %n = mbt.count %b {axes = array<i64: 0, 1>} : (tensor<?x3xf32>) -> tensor<f32>
  %bce = mbt.div %s, %n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ds = mbt.reduce_sum %d {axes = array<i64: 0>} : (tensor<?xf32>) -> tensor<f32>
  %loss = mbt.add %bce, %ds : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %acc = mbt.accuracy %z, %y {top_k = 2 : i64} : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  return %loss, %acc : tensor<f32>, tensor<f32>
}
mbt.sweep @sweep {model = @red, models = 4 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1, 0.2, 0.3, 0.4>, array<f64: 0.0, 0.0, 0.0, 0.0>,
             array<f64: 0.0, 0.0, 0.0, 0.0>],
    seeds = array<i64: 0, 1, 2, 3>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
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
