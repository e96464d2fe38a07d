// RUN: mbt-opt %s | FileCheck %s
// RUN: mbt-opt %s | mbt-opt | FileCheck %s

// The sweep's enumerations round-trip as `#mbt.<name><value>`; a spelling
// that is not an identifier (a batching strategy with a dash) is quoted.

// CHECK-LABEL: func.func @enums()
// CHECK-SAME: batchings = [#mbt.batching<dynamic>, #mbt.batching<fixed>, #mbt.batching<"group-by-length">, #mbt.batching<"fixed-shape">]
// CHECK-SAME: data_sets = [#mbt.data_set<fashion_mnist>, #mbt.data_set<fortunes>]
// CHECK-SAME: precisions = [#mbt.precision<bf16>, #mbt.precision<f16>]
// CHECK-SAME: routings = [#mbt.routing<shared>, #mbt.routing<kfold>, #mbt.routing<bootstrap>]
// CHECK-SAME: schedules = [#mbt.schedule<constant>, #mbt.schedule<step>, #mbt.schedule<exponential>, #mbt.schedule<cosine>, #mbt.schedule<linear>, #mbt.schedule<one_cycle>]
func.func @enums() attributes {
  data_sets = [#mbt.data_set<fashion_mnist>, #mbt.data_set<"fortunes">],
  routings = [#mbt.routing<shared>, #mbt.routing<kfold>, #mbt.routing<bootstrap>],
  batchings = [#mbt.batching<dynamic>, #mbt.batching<fixed>,
               #mbt.batching<"group-by-length">, #mbt.batching<"fixed-shape">],
  precisions = [#mbt.precision<bf16>, #mbt.precision<f16>],
  schedules = [#mbt.schedule<constant>, #mbt.schedule<step>,
               #mbt.schedule<exponential>, #mbt.schedule<cosine>,
               #mbt.schedule<linear>, #mbt.schedule<one_cycle>]} {
  return
}
