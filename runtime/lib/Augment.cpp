//===- Augment.cpp - per-model image augmentation in training -------------===//
#include "mbt/runtime/Augment.h"
#include "mbt/common/Philox.h"

namespace mbt {
namespace runtime {

/// An integer in [0, range) from 32 random bits (Lemire's multiply-shift;
/// the bias, below range / 2^32, is far under anything a crop can show).
static int64_t below(uint32_t bits, int64_t range) {
  return static_cast<int64_t>(
      (static_cast<uint64_t>(bits) * static_cast<uint64_t>(range)) >> 32);
}

AugmentDraw drawAugment(uint64_t seed, int64_t epoch, int64_t position,
                        int64_t crop, bool flip) {
  PhiloxCounter bits =
      philox4x32x10({static_cast<uint32_t>(position),
                     static_cast<uint32_t>(epoch), 0, kAugmentDomain},
                    makePhiloxKey(seed));
  AugmentDraw draw;
  if (crop > 0) {
    draw.top = below(bits[0], 2 * crop + 1);
    draw.left = below(bits[1], 2 * crop + 1);
  } else {
    draw.top = draw.left = 0;
  }
  draw.flip = flip && (bits[2] >> 31) != 0;
  return draw;
}

void augmentImage(const float *src, float *dst, int64_t channels,
                  int64_t height, int64_t width, int64_t crop,
                  const AugmentDraw &draw) {
  for (int64_t c = 0; c < channels; ++c) {
    const float *plane = src + c * height * width;
    float *out = dst + c * height * width;
    for (int64_t i = 0; i < height; ++i) {
      // Row i of the crop is row top + i of the padded image.
      int64_t row = i + draw.top - crop;
      for (int64_t j = 0; j < width; ++j) {
        int64_t jj = draw.flip ? width - 1 - j : j;
        int64_t col = jj + draw.left - crop;
        bool inside = row >= 0 && row < height && col >= 0 && col < width;
        out[i * width + j] = inside ? plane[row * width + col] : 0.0f;
      }
    }
  }
}

} // namespace runtime
} // namespace mbt
