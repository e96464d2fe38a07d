// RUN: mbt-opt --split-input-file --verify-diagnostics %s

// #mbt.init is checked where it is parsed or built: its kind, the arguments
// that kind takes (by name, in order) and their ranges, which the runtime
// then trusts.

// expected-error@+1 {{unknown initializer 'gaussian' (expected one of: zeros, ones, constant, normal, uniform, xavier_uniform, kaiming_uniform)}}
func.func @unknown(%w: tensor<3xf32> {mbt.param = "w", mbt.init = #mbt.init<gaussian>}) {
  return
}

// -----

// expected-error@+1 {{initializer 'normal' needs 'std'}}
func.func @missing(%w: tensor<3xf32> {mbt.param = "w", mbt.init = #mbt.init<normal, mean = 0.0>}) {
  return
}

// -----

// The arguments come in the order of the rule.
// expected-error@+1 {{expected 'low'}}
func.func @order(%w: tensor<3xf32> {mbt.param = "w", mbt.init = #mbt.init<uniform, high = 1.0, low = 0.0>}) {
  return
}

// -----

// expected-error@+1 {{expected '>'}}
func.func @extra(%w: tensor<3xf32> {mbt.param = "w", mbt.init = #mbt.init<zeros, value = 1.0>}) {
  return
}

// -----

// expected-error@+1 {{the std of initializer 'normal' must be non-negative}}
func.func @negative_std(%w: tensor<3xf32> {mbt.param = "w", mbt.init = #mbt.init<normal, mean = 0.0, std = -1.0>}) {
  return
}

// -----

// expected-error@+1 {{initializer 'uniform' needs low <= high}}
func.func @empty_range(%w: tensor<3xf32> {mbt.param = "w", mbt.init = #mbt.init<uniform, low = 1.0, high = 0.0>}) {
  return
}

// -----

// expected-error@+1 {{the arguments of initializer 'constant' must be finite}}
func.func @infinite(%w: tensor<3xf32> {mbt.param = "w", mbt.init = #mbt.init<constant, value = 0x7FF0000000000000>}) {
  return
}
