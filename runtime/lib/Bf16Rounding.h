//===- Bf16Rounding.h - mbt.round_to's rounding to bf16 ---------*- C++ -*-===//
//
// The runtime's kernels that round their operands to bf16 themselves (the
// matmuls of Bf16Matmul.cpp, the convolutions of ConvKernels.cpp) round
// each element as the compiled mbt.round_to does, bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_LIB_BF16ROUNDING_H
#define MBT_RUNTIME_LIB_BF16ROUNDING_H

#include <cstdint>
#include <cstring>

namespace mbt {
namespace runtime {

/// mbt.round_to's rounding to bf16, as the bf16's bits: to nearest, ties
/// to even (the carry may reach the exponent: the next binade, or
/// infinity), and a NaN stays a (quiet) NaN.
inline uint16_t bf16Bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(nan ? (bits >> 16) | 0x40u : rounded >> 16);
}

/// x rounded to bf16, as an f32.
inline float roundedToBf16(float x) {
  uint32_t bits = uint32_t(bf16Bits(x)) << 16;
  float rounded;
  std::memcpy(&rounded, &bits, sizeof rounded);
  return rounded;
}

/// `count` values from `from` rounded to bf16 as roundedToBf16 rounds them,
/// into `to` (which may be `from`): vectorized, the widest vectors the CPU
/// has (Bf16Rounding.cpp).
void roundRunToBf16(const float *from, float *to, int64_t count);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_BF16ROUNDING_H
