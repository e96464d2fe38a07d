//===- Philox.cpp - Philox4x32-10 and derived distributions ---------------===//
//
// The distributions built on Philox4x32-10 (the block function itself is
// inline in Philox.h, so the compiler's seeded sweep draws use the same
// generator without linking the runtime).
//
//===----------------------------------------------------------------------===//

#include "mbt/common/Philox.h"

#include <cmath>

namespace mbt {

void boxMuller(uint32_t a, uint32_t b, float &z0, float &z1) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  // (k + 1) * 2^-24 for k in [0, 2^24) lies in (0, 1]: log is finite.
  double u1 = (static_cast<double>(a >> 8) + 1.0) * (1.0 / 16777216.0);
  double u2 = static_cast<double>(b >> 8) * (1.0 / 16777216.0);
  double radius = std::sqrt(-2.0 * std::log(u1));
  double theta = kTwoPi * u2;
  z0 = static_cast<float>(radius * std::cos(theta));
  z1 = static_cast<float>(radius * std::sin(theta));
}

std::array<float, 4> normalsFromBlock(const PhiloxCounter &block) {
  std::array<float, 4> z;
  boxMuller(block[0], block[1], z[0], z[1]);
  boxMuller(block[2], block[3], z[2], z[3]);
  return z;
}

uint32_t PhiloxStream::next() {
  if (lane == 4) {
    buffer = philox4x32x10({static_cast<uint32_t>(block),
                            static_cast<uint32_t>(block >> 32), word2, word3},
                           key);
    ++block;
    lane = 0;
  }
  return buffer[lane++];
}

uint32_t PhiloxStream::nextBelow(uint32_t range) {
  // Lemire, "Fast random integer generation in an interval" (2019).
  uint64_t product = static_cast<uint64_t>(next()) * range;
  uint32_t low = static_cast<uint32_t>(product);
  if (low < range) {
    uint32_t threshold = static_cast<uint32_t>(-range) % range;
    while (low < threshold) {
      product = static_cast<uint64_t>(next()) * range;
      low = static_cast<uint32_t>(product);
    }
  }
  return static_cast<uint32_t>(product >> 32);
}

} // namespace mbt
