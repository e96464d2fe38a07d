//===- DeterministicValues.h - reproducible operands for kernel tests ----===//
#ifndef MBT_TEST_UNIT_RUNTIME_DETERMINISTICVALUES_H
#define MBT_TEST_UNIT_RUNTIME_DETERMINISTICVALUES_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mbt::test {

/// `n` values in [-1, 1) drawn by a linear congruential generator from
/// `seed`: the same on every machine.
inline std::vector<float> filled(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t state = seed * 747796405u + 2891336453u;
  for (float &x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;
  }
  return v;
}

} // namespace mbt::test

#endif
