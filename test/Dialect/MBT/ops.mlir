// RUN: mbt-opt %s | mbt-opt | FileCheck %s
// RUN: mbt-opt %s --mlir-print-op-generic | mbt-opt | FileCheck %s

// Every mbt op round-trips through its custom and its generic form.

// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<?x784xf32>, %w: tensor<784x128xf32>,
                   %b: tensor<128xf32>, %y: tensor<?xi32>) -> (tensor<f32>, tensor<f32>) {
  // CHECK: %[[H:.*]] = mbt.matmul %{{.*}}, %{{.*}} : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  %h = mbt.matmul %x, %w : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  // CHECK: %[[B:.*]] = mbt.reshape %{{.*}} : (tensor<128xf32>) -> tensor<1x128xf32>
  %b2 = mbt.reshape %b : (tensor<128xf32>) -> tensor<1x128xf32>
  // CHECK: mbt.add %[[H]], %[[B]] : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
  %z = mbt.add %h, %b2 : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
  // CHECK: mbt.sub
  %s = mbt.sub %z, %b2 : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
  // CHECK: mbt.mul
  %m = mbt.mul %s, %z : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
  // CHECK: mbt.div %{{.*}}, %{{.*}} : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
  %dv = mbt.div %m, %b2 : (tensor<?x128xf32>, tensor<1x128xf32>) -> tensor<?x128xf32>
  // CHECK: mbt.neg %{{.*}} : tensor<?x128xf32>
  %n = mbt.neg %m : tensor<?x128xf32>
  // CHECK: mbt.relu %{{.*}} : tensor<?x128xf32>
  %r = mbt.relu %n : tensor<?x128xf32>
  // CHECK: mbt.tanh %{{.*}} : tensor<?x128xf32>
  %t = mbt.tanh %r : tensor<?x128xf32>
  // CHECK: mbt.sigmoid %{{.*}} : tensor<?x128xf32>
  %sg = mbt.sigmoid %t : tensor<?x128xf32>
  // CHECK: mbt.silu %{{.*}} : tensor<?x128xf32>
  %sl = mbt.silu %sg : tensor<?x128xf32>
  // CHECK: mbt.gelu %{{.*}} : tensor<?x128xf32>
  %gl = mbt.gelu %sl : tensor<?x128xf32>
  // CHECK: mbt.sigmoid_grad %{{.*}}, %{{.*}} : tensor<?x128xf32>
  %sgg = mbt.sigmoid_grad %sg, %gl : tensor<?x128xf32>
  // CHECK: mbt.silu_grad %{{.*}}, %{{.*}} : tensor<?x128xf32>
  %slg = mbt.silu_grad %sl, %sgg : tensor<?x128xf32>
  // CHECK: mbt.gelu_grad %{{.*}}, %{{.*}} : tensor<?x128xf32>
  %glg = mbt.gelu_grad %gl, %slg : tensor<?x128xf32>
  // CHECK: mbt.relu_grad %{{.*}}, %{{.*}} : tensor<?x128xf32>
  %rg = mbt.relu_grad %n, %t : tensor<?x128xf32>
  // CHECK: mbt.tanh_grad %{{.*}}, %{{.*}} : tensor<?x128xf32>
  %tg = mbt.tanh_grad %t, %rg : tensor<?x128xf32>
  // CHECK: mbt.unbroadcast %{{.*}} : (tensor<?x128xf32>) -> tensor<1x128xf32>
  %u = mbt.unbroadcast %tg : (tensor<?x128xf32>) -> tensor<1x128xf32>
  // CHECK: mbt.matmul %{{.*}}, %{{.*}} {transpose_lhs} : (tensor<?x784xf32>, tensor<?x128xf32>) -> tensor<784x128xf32>
  %gw = mbt.matmul %x, %tg {transpose_lhs} : (tensor<?x784xf32>, tensor<?x128xf32>) -> tensor<784x128xf32>
  // CHECK: mbt.constant dense<5.000000e-01> : tensor<128x10xf32>
  %w2 = mbt.constant dense<0.5> : tensor<128x10xf32>
  %logits = mbt.matmul %t, %w2 : (tensor<?x128xf32>, tensor<128x10xf32>) -> tensor<?x10xf32>
  // CHECK: mbt.cross_entropy %{{.*}}, %{{.*}} : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  %loss = mbt.cross_entropy %logits, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  // CHECK: mbt.cross_entropy_grad
  %dl = mbt.cross_entropy_grad %logits, %y, %loss : (tensor<?x10xf32>, tensor<?xi32>, tensor<f32>) -> tensor<?x10xf32>
  // CHECK: mbt.accuracy
  %acc = mbt.accuracy %dl, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  // CHECK: mbt.reduce_sum %{{.*}} {axes = array<i64: 0, 1>} : (tensor<?x10xf32>) -> tensor<f32>
  %sum = mbt.reduce_sum %dl {axes = array<i64: 0, 1>} : (tensor<?x10xf32>) -> tensor<f32>
  // CHECK: mbt.broadcast %{{.*}} like %{{.*}} {dims = array<i64: 0, 1>} : (tensor<f32>, tensor<?x10xf32>) -> tensor<?x10xf32>
  %bc = mbt.broadcast %sum like %dl {dims = array<i64: 0, 1>} : (tensor<f32>, tensor<?x10xf32>) -> tensor<?x10xf32>
  return %loss, %acc : tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @reductions_and_layout
func.func @reductions_and_layout(%x: tensor<?x10xf32>, %w: tensor<4x3xf32>,
                                 %y: tensor<?xi32>) {
  // CHECK: mbt.exp %{{.*}} : tensor<?x10xf32>
  %e = mbt.exp %x : tensor<?x10xf32>
  // CHECK: mbt.log %{{.*}} : tensor<?x10xf32>
  %l = mbt.log %e : tensor<?x10xf32>
  // CHECK: mbt.softplus %{{.*}} : tensor<?x10xf32>
  %s = mbt.softplus %l : tensor<?x10xf32>
  // CHECK: mbt.transpose %{{.*}} {permutation = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %wt = mbt.transpose %w {permutation = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  // CHECK: mbt.reduce_max %{{.*}} {axes = array<i64: 1>} : (tensor<?x10xf32>) -> tensor<?xf32>
  %m = mbt.reduce_max %s {axes = array<i64: 1>} : (tensor<?x10xf32>) -> tensor<?xf32>
  // CHECK: mbt.reduce_max_grad %{{.*}}, %{{.*}}, %{{.*}} {axes = array<i64: 1>} : (tensor<?x10xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x10xf32>
  %dm = mbt.reduce_max_grad %s, %m, %m {axes = array<i64: 1>} : (tensor<?x10xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x10xf32>
  // CHECK: mbt.logsumexp %{{.*}} {axes = array<i64: 1>} : (tensor<?x10xf32>) -> tensor<?xf32>
  %lse = mbt.logsumexp %x {axes = array<i64: 1>} : (tensor<?x10xf32>) -> tensor<?xf32>
  // CHECK: mbt.count %{{.*}} {axes = array<i64: 0, 1>} : (tensor<?x10xf32>) -> tensor<f32>
  %n = mbt.count %x {axes = array<i64: 0, 1>} : (tensor<?x10xf32>) -> tensor<f32>
  // CHECK: mbt.one_hot %{{.*}} {num_classes = 10 : i64} : (tensor<?xi32>) -> tensor<?x10xf32>
  %t = mbt.one_hot %y {num_classes = 10 : i64} : (tensor<?xi32>) -> tensor<?x10xf32>
  // CHECK: mbt.reshape %{{.*}} : (tensor<?x10xf32>) -> tensor<?x2x5xf32>
  %r = mbt.reshape %x : (tensor<?x10xf32>) -> tensor<?x2x5xf32>
  // CHECK: mbt.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x20xf32>
  %c = mbt.concat %x, %x {axis = 1 : i64} : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x20xf32>
  // CHECK: mbt.slice %{{.*}} {axis = 1 : i64, end = 5 : i64, start = 2 : i64} : (tensor<?x20xf32>) -> tensor<?x3xf32>
  %sl = mbt.slice %c {axis = 1 : i64, start = 2 : i64, end = 5 : i64} : (tensor<?x20xf32>) -> tensor<?x3xf32>
  // CHECK: mbt.slice_grad %{{.*}} like %{{.*}} {axis = 1 : i64, start = 2 : i64} : (tensor<?x3xf32>, tensor<?x20xf32>) -> tensor<?x20xf32>
  %sg = mbt.slice_grad %sl like %c {axis = 1 : i64, start = 2 : i64} : (tensor<?x3xf32>, tensor<?x20xf32>) -> tensor<?x20xf32>
  // CHECK: mbt.model_constant {values = array<f64: 5.000000e-01, 2.000000e+00>} : tensor<f32>
  %g = mbt.model_constant {values = array<f64: 0.5, 2.0>} : tensor<f32>
  // CHECK: mbt.accuracy %{{.*}}, %{{.*}} {top_k = 5 : i64}
  %a5 = mbt.accuracy %x, %y {top_k = 5 : i64} : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// CHECK-LABEL: func.func @updates
func.func @updates(%p: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m: tensor<4x3xf32>,
                   %v: tensor<4x3xf32>, %h: tensor<5xf64>, %t: tensor<f64>,
                   %flat: tensor<2x12xf32>, %state: tensor<2x2x12xf32>,
                   %hs: tensor<2x5xf64>, %ts: tensor<2xf64>) {
  // CHECK: mbt.update @adam %{{.*}}, %{{.*}} state(%{{.*}}, %{{.*}}) hyper(%{{.*}}) step(%{{.*}})
  %p1, %m1, %v1 = mbt.update @adam %p, %g state(%m, %v) hyper(%h) step(%t)
      : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<5xf64>, tensor<f64>)
      -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
  // CHECK: mbt.guard_step %{{.*}}, %{{.*}}, %{{.*}} : tensor<2xf64>, tensor<2x12xf32>, tensor<2xf32>
  %loss = mbt.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %guarded, %reported = mbt.guard_step %ts, %flat, %loss : tensor<2xf64>, tensor<2x12xf32>, tensor<2xf32>
  // CHECK: mbt.clip_grad_norm %{{.*}}, %{{.*}} : tensor<2x12xf32>, tensor<2xf64>
  %clipped = mbt.clip_grad_norm %flat, %ts : tensor<2x12xf32>, tensor<2xf64>
  // CHECK: mbt.lr_schedule cosine %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x5xf64>, tensor<2xf64>, tensor<2x3xf64>
  %table = mbt.constant dense<[[100.0, 10.0, 0.0], [100.0, 0.0, 0.1]]> : tensor<2x3xf64>
  %sched = mbt.lr_schedule cosine %hs, %ts, %table : tensor<2x5xf64>, tensor<2xf64>, tensor<2x3xf64>
  // CHECK: mbt.fused_update @adam %{{.*}}, %{{.*}} state(%{{.*}}, %{{.*}} : tensor<2x12xf32>, tensor<2x12xf32>) hyper(%{{.*}}) step(%{{.*}}) : tensor<2x12xf32>, tensor<2x5xf64>, tensor<2xf64>
  %np, %nm, %nv = mbt.fused_update @adam %flat, %flat state(%flat, %flat : tensor<2x12xf32>, tensor<2x12xf32>) hyper(%hs) step(%ts)
      : tensor<2x12xf32>, tensor<2x5xf64>, tensor<2xf64>
  return
}

// CHECK: mbt.sweep @sweep {batch_size = 128 : i64, data = #mbt.data_set<fashion_mnist>
mbt.sweep @sweep {model = @forward, models = 2 : i64, optimizer = @sgd,
    hyper_names = ["lr", "momentum", "weight_decay"],
    hyper = [array<f64: 0.1, 0.01>, array<f64: 0.0, 0.0>, array<f64: 0.0, 0.0>],
    seeds = array<i64: 0, 1>, data = #mbt.data_set<fashion_mnist>, batch_size = 128 : i64,
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

// Dropout: the evaluation form (a model's function) and the training form,
// keyed by the model's seed and the step, unbatched and batched.
// CHECK-LABEL: func.func @dropout
// CHECK:         %[[SEED:.*]] = mbt.model_seed {seeds = array<i64: 7, 8>} : tensor<i64>
// CHECK:         mbt.dropout %{{.*}}, %{{.*}} {site = 0 : i64} : tensor<?x128xf32>, tensor<f32>
// CHECK:         mbt.dropout %{{.*}}, %{{.*}}, %[[SEED]], %{{.*}} {site = 1 : i64} : tensor<?x128xf32>, tensor<f32>, tensor<i64>, tensor<f64>
// CHECK:         mbt.dropout %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {site = 1 : i64} : tensor<2x?x128xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xf64>
func.func @dropout(%h: tensor<?x128xf32>, %rate: tensor<f32>, %step: tensor<f64>,
                   %hb: tensor<2x?x128xf32>, %rates: tensor<2xf32>,
                   %seeds: tensor<2xi64>, %steps: tensor<2xf64>) {
  %seed = mbt.model_seed {seeds = array<i64: 7, 8>} : tensor<i64>
  %0 = mbt.dropout %h, %rate {site = 0 : i64} : tensor<?x128xf32>, tensor<f32>
  %1 = mbt.dropout %h, %rate, %seed, %step {site = 1 : i64} : tensor<?x128xf32>, tensor<f32>, tensor<i64>, tensor<f64>
  %2 = mbt.dropout %hb, %rates, %seeds, %steps {site = 1 : i64} : tensor<2x?x128xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xf64>
  return
}

// Convolution and pooling, and their adjoints, batched over 2 models.
// CHECK-LABEL: func.func @conv_pool
// CHECK:         mbt.conv2d %{{.*}}, %{{.*}} {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 2, 2>, stride = array<i64: 1, 1>} : (tensor<2x?x1x28x28xf32>, tensor<2x6x1x5x5xf32>) -> tensor<2x?x6x28x28xf32>
// CHECK:         mbt.conv2d_grad_input
// CHECK:         mbt.conv2d_grad_filter
// CHECK:         %{{.*}}, %[[I:.*]] = mbt.max_pool2d
// CHECK:         mbt.max_pool2d_grad %{{.*}}, %[[I]] like
// CHECK:         mbt.avg_pool2d
// CHECK:         mbt.avg_pool2d_grad
func.func @conv_pool(%x: tensor<2x?x1x28x28xf32>, %w: tensor<2x6x1x5x5xf32>) {
  %y = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x?x1x28x28xf32>, tensor<2x6x1x5x5xf32>) -> tensor<2x?x6x28x28xf32>
  %dx = mbt.conv2d_grad_input %y, %w like %x {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, groups = 1 : i64} : tensor<2x?x6x28x28xf32>, tensor<2x6x1x5x5xf32>, tensor<2x?x1x28x28xf32>
  %dw = mbt.conv2d_grad_filter %x, %y like %w {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, groups = 1 : i64} : tensor<2x?x1x28x28xf32>, tensor<2x?x6x28x28xf32>, tensor<2x6x1x5x5xf32>
  %p, %i = mbt.max_pool2d %y {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : (tensor<2x?x6x28x28xf32>) -> (tensor<2x?x6x14x14xf32>, tensor<2x?x6x14x14xi32>)
  %dp = mbt.max_pool2d_grad %p, %i like %y {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : tensor<2x?x6x14x14xf32>, tensor<2x?x6x14x14xi32>, tensor<2x?x6x28x28xf32>
  %a = mbt.avg_pool2d %y {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : (tensor<2x?x6x28x28xf32>) -> tensor<2x?x6x14x14xf32>
  %da = mbt.avg_pool2d_grad %a like %y {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : tensor<2x?x6x14x14xf32>, tensor<2x?x6x28x28xf32>
  return
}

// Batch normalization with given statistics, per model and not.
// CHECK-LABEL: func.func @batch_norm
// CHECK:         mbt.batch_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64} : tensor<?x6x4x4xf32>, tensor<6xf32>
// CHECK:         mbt.batch_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f64, momentum = 0.000000e+00 : f64} : tensor<2x?x32xf64>, tensor<2x32xf64>
func.func @batch_norm(%x: tensor<?x6x4x4xf32>, %s: tensor<6xf32>,
                      %h: tensor<2x?x32xf64>, %t: tensor<2x32xf64>) {
  %0 = mbt.batch_norm %x, %s, %s {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<?x6x4x4xf32>, tensor<6xf32>
  %1 = mbt.batch_norm %h, %t, %t {epsilon = 1.0e-03 : f64, momentum = 0.0 : f64} : tensor<2x?x32xf64>, tensor<2x32xf64>
  return
}
