// A two-layer MLP as MLIRGen emits it: the input to the mbt pipeline.
func.func @mlp(%w1: tensor<4x3xf32> {mbt.param = "w1", mbt.init = #mbt.init<normal, mean = 0.0, std = 0.5>},
               %b1: tensor<3xf32> {mbt.param = "b1", mbt.init = #mbt.init<zeros>},
               %w2: tensor<3x2xf32> {mbt.param = "w2", mbt.init = #mbt.init<kaiming_uniform>},
               %x: tensor<?x4xf32> {mbt.input = "x"},
               %y: tensor<?xi32> {mbt.target = "y"}) -> (tensor<f32>, tensor<f32>)
    attributes {mbt.outputs = ["loss", "acc"]} {
  %h = mbt.matmul %x, %w1 : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %b = mbt.reshape %b1 : (tensor<3xf32>) -> tensor<1x3xf32>
  %z = mbt.add %h, %b : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %a = mbt.relu %z : tensor<?x3xf32>
  %logits = mbt.matmul %a, %w2 : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %loss = mbt.cross_entropy %logits, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  %acc = mbt.accuracy %logits, %y : (tensor<?x2xf32>, tensor<?xi32>) -> tensor<f32>
  return %loss, %acc : tensor<f32>, tensor<f32>
}
mbt.sweep @sweep {model = @mlp, models = 4 : i64, optimizer = @adam,
    hyper_names = ["lr", "beta1", "beta2", "eps", "weight_decay"],
    hyper = [array<f64: 1.0e-3, 1.0e-2, 1.0e-1, 1.0>, array<f64: 0.9, 0.9, 0.9, 0.9>,
             array<f64: 0.999, 0.999, 0.999, 0.999>, array<f64: 1.0e-8, 1.0e-8, 1.0e-8, 1.0e-8>,
             array<f64: 0.0, 0.0, 0.0, 0.0>],
    seeds = array<i64: 0, 1, 2, 3>, data = #mbt.data_set<fashion_mnist>, batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64}

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
