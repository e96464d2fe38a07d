// A two-layer MLP as MLIRGen emits it: the input to the mbt pipeline.
func.func @mlp(%w1: tensor<4x3xf32> {mbt.param = "w1", mbt.init = {kind = "normal", mean = 0.0 : f64, std = 0.5 : f64}},
               %b1: tensor<3xf32> {mbt.param = "b1", mbt.init = {kind = "zeros"}},
               %w2: tensor<3x2xf32> {mbt.param = "w2", mbt.init = {kind = "kaiming_uniform"}},
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
mbt.sweep @sweep {model = @mlp, models = 4 : i64, optimizer = "adam",
    hyper_names = ["lr", "beta1", "beta2", "eps", "weight_decay"],
    hyper = [array<f64: 1.0e-3, 1.0e-2, 1.0e-1, 1.0>, array<f64: 0.9, 0.9, 0.9, 0.9>,
             array<f64: 0.999, 0.999, 0.999, 0.999>, array<f64: 1.0e-8, 1.0e-8, 1.0e-8, 1.0e-8>,
             array<f64: 0.0, 0.0, 0.0, 0.0>],
    seeds = array<i64: 0, 1, 2, 3>, data = "fashion_mnist", batch_size = 8 : i64,
    epochs = 1 : i64, shuffle_seed = 0 : i64}
