//===- Augment.h - per-model image augmentation in training -----*- C++ -*-===//
//
// torchvision's RandomCrop(size, padding = crop) followed by
// RandomHorizontalFlip(), as the runtime applies them to each training
// image of each model. The draws are Philox4x32-10 keyed by the model's
// seed at counter {position in the epoch, epoch, 0, kAugmentDomain}, so
// model m's augmented batch does not depend on the other models of the
// batch (nor on where m sits in it), and a resumed run draws what the
// uninterrupted one drew.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_AUGMENT_H
#define MBT_RUNTIME_AUGMENT_H

#include <cstdint>
#include <vector>

namespace mbt {
namespace runtime {

/// Domain word (Philox counter word 3) of the augmentation draws.
constexpr uint32_t kAugmentDomain = 0x41554731; // "AUG1"

/// One image's draw: the crop's offsets into the padded image (each in
/// [0, 2 crop]) and whether it is flipped.
struct AugmentDraw {
  int64_t top = 0, left = 0;
  bool flip = false;
};

/// The draw of the image at `position` of epoch `epoch`'s order for the
/// model with seed `seed`.
AugmentDraw drawAugment(uint64_t seed, int64_t epoch, int64_t position,
                        int64_t crop, bool flip);

/// Writes into `dst` the image `src` ([channels, height, width],
/// row-major) padded by `crop` zeros on each side, cropped back to
/// [height, width] at the draw's offsets, then mirrored left-right if the
/// draw says so.
void augmentImage(const float *src, float *dst, int64_t channels,
                  int64_t height, int64_t width, int64_t crop,
                  const AugmentDraw &draw);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_AUGMENT_H
