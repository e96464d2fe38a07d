// Errors of mbt-autodiff on the sweep's freeze (run by freeze.mbt).
// A freeze pattern must match a parameter of the model.
func.func @m(%w: tensor<4x3xf32> {mbt.param = "w"}, %b: tensor<3xf32> {mbt.param = "b"},
             %x: tensor<?x4xf32> {mbt.input = "x"}, %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f32> {
  %h = mbt.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %loss = mbt.cross_entropy %h, %y : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
mbt.optimizer @sgd attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  %lr32 = arith.truncf %lr : f64 to f32
  mbt.yield %lr32 : f32
} elements {
^bb0(%g: f32, %p: f32, %lr: f32):
  %delta = arith.mulf %lr, %g : f32
  %new = arith.subf %p, %delta : f32
  mbt.yield %new : f32
}
// expected-error@+1 {{'mbt.sweep' op freeze pattern 'enc.*' matches no parameter of @m}}
mbt.sweep @sweep {batch_size = 8 : i64, data = #mbt.data_set<fashion_mnist>, epochs = 1 : i64, freeze = ["w", "enc.*"], hyper = [array<f64: 1.000000e-01>], hyper_names = ["lr"], model = @m, models = 1 : i64, optimizer = @sgd, seeds = array<i64: 0>, shuffle_seed = 0 : i64}

// -----

// Something must train.
func.func @m(%w: tensor<4x3xf32> {mbt.param = "w"}, %b: tensor<3xf32> {mbt.param = "b"},
             %x: tensor<?x4xf32> {mbt.input = "x"}, %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f32> {
  %h = mbt.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %loss = mbt.cross_entropy %h, %y : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
mbt.optimizer @sgd attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  %lr32 = arith.truncf %lr : f64 to f32
  mbt.yield %lr32 : f32
} elements {
^bb0(%g: f32, %p: f32, %lr: f32):
  %delta = arith.mulf %lr, %g : f32
  %new = arith.subf %p, %delta : f32
  mbt.yield %new : f32
}
// expected-error@+1 {{'mbt.sweep' op freezes every parameter of @m: nothing would train}}
mbt.sweep @sweep {batch_size = 8 : i64, data = #mbt.data_set<fashion_mnist>, epochs = 1 : i64, freeze = ["*"], hyper = [array<f64: 1.000000e-01>], hyper_names = ["lr"], model = @m, models = 1 : i64, optimizer = @sgd, seeds = array<i64: 0>, shuffle_seed = 0 : i64}

// -----

// The patterns are globs.
func.func @m(%w: tensor<4x3xf32> {mbt.param = "w"}, %b: tensor<3xf32> {mbt.param = "b"},
             %x: tensor<?x4xf32> {mbt.input = "x"}, %y: tensor<?xi32> {mbt.target = "y"}) -> tensor<f32> {
  %h = mbt.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %loss = mbt.cross_entropy %h, %y : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
mbt.optimizer @sgd attributes {hyper = ["lr"], slots = []} scalars {
^bb0(%lr: f64, %step: f64):
  %lr32 = arith.truncf %lr : f64 to f32
  mbt.yield %lr32 : f32
} elements {
^bb0(%g: f32, %p: f32, %lr: f32):
  %delta = arith.mulf %lr, %g : f32
  %new = arith.subf %p, %delta : f32
  mbt.yield %new : f32
}
// expected-error@+1 {{'mbt.sweep' op freeze pattern '[w' is invalid: invalid glob pattern, unmatched '['}}
mbt.sweep @sweep {batch_size = 8 : i64, data = #mbt.data_set<fashion_mnist>, epochs = 1 : i64, freeze = ["[w"], hyper = [array<f64: 1.000000e-01>], hyper_names = ["lr"], model = @m, models = 1 : i64, optimizer = @sgd, seeds = array<i64: 0>, shuffle_seed = 0 : i64}
