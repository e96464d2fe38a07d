//===- ImageDecode.h - PNG and JPEG files to 8-bit pixels, and back *- C++
//-*-===//
//
// An image folder's files are PNGs (libpng) or JPEGs (libjpeg-turbo), told
// apart by their magic bytes rather than their extension, and decoded to
// what torchvision's loader gets from PIL after convert('RGB'): 8-bit gray
// or RGB, alpha dropped without compositing, palettes and gray+alpha
// expanded, 16-bit samples cut to their high byte. JPEGs decode with
// libjpeg's defaults (islow IDCT, fancy upsampling), as PIL's do.
//
// Both libraries report errors by longjmp; the code around them keeps every
// C++ object outside the frames a longjmp skips, so a corrupt file costs an
// exception and no leak. Sizes are checked against ImageLimits, and against
// what the file's bytes can possibly hold, before any pixel is allocated:
// a 100-byte file claiming 16384 x 16384 pixels is an error, not a
// gigabyte.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DATA_IMAGEDECODE_H
#define MBT_RUNTIME_DATA_IMAGEDECODE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// An 8-bit image, rows of width * channels bytes (channels 1 gray, 3 RGB).
struct Image {
  int64_t width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

/// The largest image decodeImage accepts.
struct ImageLimits {
  int64_t maxSide = 16384;
  int64_t maxPixels = int64_t(1) << 28;
};

/// Decodes a PNG or JPEG (by its magic bytes, not the extension). Alpha is
/// dropped, palettes and gray+alpha expanded, 16-bit samples reduced to 8.
/// Throws RuntimeError "'ORIGIN': ..." (origin: the path) for bytes that
/// are neither, a corrupt or truncated file, CMYK JPEGs, or an image over
/// `limits`.
Image decodeImage(const uint8_t *bytes, size_t size, const std::string &origin,
                  const ImageLimits &limits = ImageLimits());

/// Writes `image` (gray or RGB) as an 8-bit PNG at `path` through libpng,
/// replacing the file. Throws RuntimeError naming the path.
void writePng(const Image &image, const std::string &path);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DATA_IMAGEDECODE_H
