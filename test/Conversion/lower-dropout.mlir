// RUN: mbt-opt --mbt-lower-to-linalg %s | FileCheck %s

// The training form of mbt.dropout becomes one elementwise linalg.generic
// that draws each element's word with Philox4x32-10 from (seed, site, step,
// element index within the model's slice): ten rounds of 32x32->64
// products; the element is kept (and scaled by 1 / (1 - rate)) when the
// word's top 24 bits, as a fraction, are at least the rate. The evaluation
// form is the identity.

// CHECK-LABEL: func.func @train
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x?x8xf32>, %[[RATE:[^:]*]]: tensor<2xf32>, %[[SEED:[^:]*]]: tensor<2xi64>, %[[STEP:[^:]*]]: tensor<2xf64>
// CHECK:         linalg.generic {indexing_maps = [#[[ID:.*]], #[[PER_MODEL:.*]], #[[PER_MODEL]], #[[PER_MODEL]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]], %[[RATE]], %[[SEED]], %[[STEP]] : tensor<2x?x8xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xf64>)
// CHECK:         ^bb0(%[[IN:[^:]*]]: f32, %[[R:[^:]*]]: f32, %[[S:[^:]*]]: i64, %[[T:[^:]*]]: f64,
// The element index counts within the model: dims 1 and 2, not dim 0.
// CHECK:           %[[I1:.*]] = linalg.index 1 : index
// CHECK:           %[[SCALED:.*]] = arith.muli %[[I1]], %{{c8(_[0-9a-z]+)?}}
// CHECK:           %[[I2:.*]] = linalg.index 2 : index
// CHECK:           %[[E:.*]] = arith.addi %[[SCALED]], %[[I2]] : index
// CHECK:           arith.index_castui %[[E]] : index to i32
// CHECK:           arith.fptoui %[[T]] : f64 to i64
// CHECK:           arith.trunci %[[S]] : i64 to i32
// Ten rounds of two products, but word 0 of the last round needs only one.
// CHECK-COUNT-19:  arith.mului_extended
// CHECK-NOT:       arith.mului_extended
// CHECK:           %[[TOP:.*]] = arith.shrui %{{.*}}, %{{c8(_[0-9a-z]+)?}} : i32
// CHECK:           %[[U:.*]] = arith.uitofp %[[TOP]] : i32 to f32
// CHECK:           %[[FRACTION:.*]] = arith.mulf %[[U]], %cst{{.*}} : f32
// CHECK:           %[[KEEP:.*]] = arith.cmpf oge, %[[FRACTION]], %[[R]] : f32
// CHECK:           %[[DROPPED:.*]] = arith.subf %cst{{.*}}, %[[R]] : f32
// CHECK:           %[[SCALE:.*]] = arith.divf %cst{{.*}}, %[[DROPPED]] : f32
// CHECK:           %[[Y:.*]] = arith.mulf %[[IN]], %[[SCALE]] : f32
// CHECK:           arith.select %[[KEEP]], %[[Y]], %cst{{.*}} : f32
func.func @train(%x: tensor<2x?x8xf32>, %rate: tensor<2xf32>, %seed: tensor<2xi64>, %step: tensor<2xf64>) -> tensor<2x?x8xf32> {
  %0 = mbt.dropout %x, %rate, %seed, %step {site = 3 : i64} : tensor<2x?x8xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xf64>
  return %0 : tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @eval
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x?x8xf32>
// CHECK-NEXT:    return %[[X]]
func.func @eval(%x: tensor<2x?x8xf32>, %rate: tensor<2xf32>) -> tensor<2x?x8xf32> {
  %0 = mbt.dropout %x, %rate {site = 0 : i64} : tensor<2x?x8xf32>, tensor<2xf32>
  return %0 : tensor<2x?x8xf32>
}

// dropout2d (shared_dims = 2): one draw per (sample, channel), indexed by
// dims 1 and 2 only; the H x W plane shares it.
// CHECK-LABEL: func.func @per_channel
// CHECK:         linalg.generic
// CHECK:           %[[B:.*]] = linalg.index 1 : index
// CHECK:           %[[SCALED:.*]] = arith.muli %[[B]], %{{c6(_[0-9a-z]+)?}}
// CHECK:           %[[C:.*]] = linalg.index 2 : index
// CHECK:           %[[E:.*]] = arith.addi %[[SCALED]], %[[C]] : index
// CHECK-NOT:       linalg.index 3
// CHECK:           arith.index_castui %[[E]] : index to i32
func.func @per_channel(%x: tensor<2x?x6x4x4xf32>, %rate: tensor<2xf32>, %seed: tensor<2xi64>, %step: tensor<2xf64>) -> tensor<2x?x6x4x4xf32> {
  %0 = mbt.dropout %x, %rate, %seed, %step {site = 0 : i64, shared_dims = 2 : i64} : tensor<2x?x6x4x4xf32>, tensor<2xf32>, tensor<2xi64>, tensor<2xf64>
  return %0 : tensor<2x?x6x4x4xf32>
}
