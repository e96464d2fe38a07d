// RUN: mbt-opt --split-input-file --verify-diagnostics %s

// An enumeration's value outside its cases is a parse error that lists the
// cases (the verifier no longer compares strings).

// expected-error@+2 {{expected one of: shared, kfold, bootstrap}}
// expected-error@+1 {{failed to parse MBT_RoutingAttr parameter 'value'}}
func.func @routing() attributes {r = #mbt.routing<leave_one_out>} {
  return
}

// -----

// expected-error@+2 {{expected one of: fashion_mnist, fortunes}}
// expected-error@+1 {{failed to parse MBT_DataSetAttr parameter 'value'}}
func.func @data_set() attributes {d = #mbt.data_set<"mnist">} {
  return
}

// -----

// A batching strategy is spelled as in the language, with dashes.
// expected-error@+2 {{expected one of: dynamic, fixed, group-by-length, fixed-shape}}
// expected-error@+1 {{failed to parse MBT_BatchingAttr parameter 'value'}}
func.func @batching() attributes {b = #mbt.batching<group_by_length>} {
  return
}

// -----

// expected-error@+2 {{expected one of: constant, step, exponential, cosine, linear, one_cycle}}
// expected-error@+1 {{failed to parse MBT_ScheduleAttr parameter 'value'}}
func.func @schedule() attributes {s = #mbt.schedule<warm_restarts>} {
  return
}

// -----

// The rule of mbt.lr_schedule is a bare keyword.
func.func @rule(%h: tensor<2x5xf64>, %t: tensor<2xf64>, %p: tensor<2x3xf64>) {
  // expected-error@+1 {{unknown schedule 'Cosine'}}
  %0 = mbt.lr_schedule Cosine %h, %t, %p : tensor<2x5xf64>, tensor<2xf64>, tensor<2x3xf64>
  return
}
