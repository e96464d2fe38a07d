//===- ImageFolder.h - A folder of class folders of images ------*- C++ -*-===//
//
// torchvision.datasets.ImageFolder's layout: DIR/<class>/**/<image>. The
// classes are DIR's sub-directories in sorted (byte) order; each class's
// images are found by os.walk (following links), its directories taken in
// sorted path order and each one's files in sorted name order, keeping
// .png, .jpg and .jpeg in any case. Samples come class by class.
//
// Every image becomes one [C, H, W] sample as torchvision's usual pipeline
// makes it from PIL: convert to gray (PIL's convert('L')) or RGB, Resize so
// the image covers H x W keeping its aspect ratio (PIL's bilinear filter,
// antialiased when shrinking, with PIL's fixed-point rounding to 8 bits),
// CenterCrop, ToTensor (p / 255.0f), then Normalize if asked. An image
// already H x W is never resampled, so its floats are bit-exact. Only the
// pixels that survive the crop are computed, so a very long thin image
// costs no giant intermediate.
//
// Decoding runs on a pool of threads, each writing its samples' rows in
// place; the result does not depend on the number of threads, nor does
// which error is reported (the first by sample order).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DATA_IMAGEFOLDER_H
#define MBT_RUNTIME_DATA_IMAGEFOLDER_H

#include "mbt/runtime/Dataset.h"
#include "mbt/runtime/data/ImageDecode.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

struct ImageFolderOptions {
  /// Per channel (empty: none); x = (x - mean[c]) / std[c] after scaling
  /// to [0, 1].
  std::vector<float> mean, std;
  /// 0: std::thread::hardware_concurrency().
  int threads = 0;
  /// The largest image accepted.
  ImageLimits limits;
};

/// Reads DIR/<class>/**/<image> (torchvision.datasets.ImageFolder's
/// layout) into layout.inputShape samples ([C, H, W] with C 1 or 3, or
/// [H, W]) and class labels. `trainClassNames`: null for the training
/// split; for a test split, the training split's classes (a test class the
/// training split never had is an error). `name` names the Dataset. Throws
/// RuntimeError naming the directory or image at fault.
Dataset readImageFolder(const std::string &dir,
                        const ImageFolderOptions &options,
                        const SampleLayout &layout,
                        const std::vector<std::string> *trainClassNames,
                        const std::string &name);

/// Writes the samples of `data` (rows of C*H*W floats p / 255 of 8-bit
/// pixels, as the built-in Fashion-MNIST loader gives them) as PNGs in
/// ImageFolder's layout: DIR/<classNames[label]>/<position>.png, the
/// position in `data` zero-padded to 5 digits or more so that the names
/// sort as the positions. `perClass` > 0 keeps the first that many of each
/// class. DIR is created; an existing non-empty DIR is an error (nothing
/// is overwritten). Returns the images written; readImageFolder of DIR
/// gives back their floats bit for bit, class by class.
int64_t writeImageFolder(const Dataset &data, int64_t channels, int64_t height,
                         int64_t width,
                         const std::vector<std::string> &classNames,
                         const std::string &dir, int64_t perClass = 0);

/// The image files of one class folder, in torchvision's order.
std::vector<std::string> listClassImages(const std::string &classDir);

/// `image` with `channels` channels: RGB to gray as PIL's convert('L')
/// (L = (R*19595 + G*38470 + B*7471 + 0x8000) >> 16), gray replicated to RGB.
Image convertChannels(const Image &image, int64_t channels);

/// PIL's Image.resize((width, height), BILINEAR) then crop of the box
/// [left, left + cropWidth) x [top, top + cropHeight) of the result,
/// computing only the box. A dimension whose size does not change is not
/// resampled.
Image resizeAndCrop(const Image &image, int64_t width, int64_t height,
                    int64_t left, int64_t top, int64_t cropWidth,
                    int64_t cropHeight);

/// PIL's Image.resize((width, height), BILINEAR) of an 8-bit image.
inline Image resizeBilinear(const Image &image, int64_t width, int64_t height) {
  return resizeAndCrop(image, width, height, 0, 0, width, height);
}

/// torchvision's Resize to cover height x width keeping the aspect ratio,
/// then CenterCrop(height, width): one sample's pixels before scaling.
Image fitImage(const Image &image, int64_t channels, int64_t height,
               int64_t width);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DATA_IMAGEFOLDER_H
