//===- DeterministicValues.h - reproducible operands for kernel tests ----===//
#ifndef MBT_TEST_UNIT_RUNTIME_DETERMINISTICVALUES_H
#define MBT_TEST_UNIT_RUNTIME_DETERMINISTICVALUES_H

#include "mbt/common/Abi.h"

#include <cmath>
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

/// x to 8 significant bits, to nearest, ties to even (nearbyint under the
/// default rounding mode): the bf16 value, computed without bit tricks, to
/// check the kernels' bit-level rounding against.
inline double bf16Reference(float x) {
  if (x == 0 || !std::isfinite(x))
    return x;
  int e = std::ilogb(x);
  return std::ldexp(std::nearbyint(std::ldexp(double(x), 7 - e)), e - 7);
}

/// `batch` matrices of rows x cols, each the columns [skip, skip + cols)
/// of a rows x `width` block, as the compiler passes the weights in the
/// flat parameter buffer; `buffer` gets the storage, filled from `seed`.
inline MemRef3F columnSlices(std::vector<float> &buffer, int64_t batch,
                             int64_t rows, int64_t cols, int64_t width,
                             int64_t skip, uint32_t seed) {
  buffer = filled(batch * rows * width, seed);
  MemRef3F ref = makeDenseMemRef<float, 3>(buffer.data(), {batch, rows, cols});
  ref.offset = skip;
  ref.strides[0] = rows * width;
  ref.strides[1] = width;
  return ref;
}

} // namespace mbt::test

#endif
