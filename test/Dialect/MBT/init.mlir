// RUN: mbt-opt %s | FileCheck %s
// RUN: mbt-opt %s | mbt-opt | FileCheck %s

// Every initializer round-trips as #mbt.init<kind, argument = value, ...>,
// its arguments by name in the order of InitRules.h; a value that six
// significant digits would not give back exactly is printed in full.

// CHECK-LABEL: func.func @inits(
// CHECK-SAME: mbt.init = #mbt.init<zeros>
// CHECK-SAME: mbt.init = #mbt.init<ones>
// CHECK-SAME: mbt.init = #mbt.init<constant, value = 1.024000e+03>
// CHECK-SAME: mbt.init = #mbt.init<normal, mean = -1.000000e+00, std = 2.000000e-02>
// CHECK-SAME: mbt.init = #mbt.init<uniform, low = -2.500000e-01, high = 2.500000e-01>
// CHECK-SAME: mbt.init = #mbt.init<xavier_uniform>
// CHECK-SAME: mbt.init = #mbt.init<kaiming_uniform>
// CHECK-SAME: mbt.init = #mbt.init<normal, mean = 0.000000e+00, std = 0.123456789>
func.func @inits(
    %a: tensor<3xf32> {mbt.param = "a", mbt.init = #mbt.init<zeros>},
    %b: tensor<3xf32> {mbt.param = "b", mbt.init = #mbt.init<ones>},
    %c: tensor<3xf32> {mbt.param = "c", mbt.init = #mbt.init<constant, value = 1024.0>},
    %d: tensor<3xf32> {mbt.param = "d", mbt.init = #mbt.init<normal, mean = -1.0, std = 0.02>},
    %e: tensor<3xf32> {mbt.param = "e", mbt.init = #mbt.init<uniform, low = -0.25, high = 0.25>},
    %f: tensor<3x4xf32> {mbt.param = "f", mbt.init = #mbt.init<xavier_uniform>},
    %g: tensor<3x4xf32> {mbt.param = "g", mbt.init = #mbt.init<kaiming_uniform>},
    %h: tensor<3xf32> {mbt.param = "h", mbt.init = #mbt.init<normal, mean = 0.0, std = 0.123456789>}) {
  return
}
