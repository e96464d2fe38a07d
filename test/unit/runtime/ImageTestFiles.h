//===- ImageTestFiles.h - PNGs and JPEGs made by the tests ------*- C++ -*-===//
//
// The image tests encode their own inputs with libpng and libjpeg, so every
// layout (palette, 16-bit, gray+alpha, interlaced) and every kind of damage
// is produced exactly, with no image files in the repository.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_TEST_UNIT_RUNTIME_IMAGETESTFILES_H
#define MBT_TEST_UNIT_RUNTIME_IMAGETESTFILES_H

#include "mbt/runtime/data/ImageDecode.h"

#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <png.h>

namespace mbt {
namespace test {

/// A PNG to write: rows of packed samples as the PNG holds them (16-bit
/// samples big-endian, depths below 8 packed high bit first).
struct PngSpec {
  uint32_t width = 0, height = 0;
  int colorType = PNG_COLOR_TYPE_GRAY;
  int bitDepth = 8;
  bool interlaced = false;
  std::vector<uint8_t> rows;
  std::vector<png_color> palette;
  std::vector<uint8_t> transparency; // a palette's tRNS alphas
};

inline void appendPngBytes(png_structp png, png_bytep data, size_t size) {
  static_cast<std::string *>(png_get_io_ptr(png))
      ->append(reinterpret_cast<const char *>(data), size);
}

/// The PNG file of `spec`; throws std::runtime_error if libpng refuses it.
inline std::string encodePng(const PngSpec &spec) {
  std::string out;
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  std::vector<png_bytep> rows(spec.height);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("encodePng: libpng error");
  }
  png_set_write_fn(png, &out, appendPngBytes, nullptr);
  png_set_IHDR(png, info, spec.width, spec.height, spec.bitDepth,
               spec.colorType,
               spec.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (!spec.palette.empty())
    png_set_PLTE(png, info, spec.palette.data(), int(spec.palette.size()));
  if (!spec.transparency.empty())
    png_set_tRNS(png, info, spec.transparency.data(),
                 int(spec.transparency.size()), nullptr);
  size_t rowBytes = spec.rows.size() / spec.height;
  for (uint32_t y = 0; y < spec.height; ++y)
    rows[y] = const_cast<png_bytep>(spec.rows.data()) + y * rowBytes;
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

/// An 8-bit gray or RGB image as a PNG.
inline std::string encodePng(const runtime::Image &image) {
  PngSpec spec;
  spec.width = uint32_t(image.width);
  spec.height = uint32_t(image.height);
  spec.colorType =
      image.channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB;
  spec.rows = image.pixels;
  return encodePng(spec);
}

/// An 8-bit gray or RGB image as a baseline JPEG of `quality`.
inline std::string encodeJpeg(const runtime::Image &image, int quality = 95) {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr errors{};
  cinfo.err = jpeg_std_error(&errors);
  jpeg_create_compress(&cinfo);
  unsigned char *buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = JDIMENSION(image.width);
  cinfo.image_height = JDIMENSION(image.height);
  cinfo.input_components = int(image.channels);
  cinfo.in_color_space = image.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(image.pixels.data()) +
                   size_t(cinfo.next_scanline) * image.width * image.channels;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::string out(reinterpret_cast<const char *>(buffer), size);
  jpeg_destroy_compress(&cinfo);
  std::free(buffer);
  return out;
}

/// A width x height image whose sample (x, y, c) is value(x, y, c).
inline runtime::Image
makeImage(int64_t width, int64_t height, int64_t channels,
          const std::function<int(int64_t, int64_t, int64_t)> &value) {
  runtime::Image image{width, height, channels, {}};
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int64_t c = 0; c < channels; ++c)
        image.pixels.push_back(uint8_t(value(x, y, c)));
  return image;
}

/// Writes `bytes` to `path`, creating its directory.
inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

inline runtime::Image decodeString(const std::string &bytes,
                                   const std::string &origin = "test.img") {
  return runtime::decodeImage(reinterpret_cast<const uint8_t *>(bytes.data()),
                              bytes.size(), origin);
}

} // namespace test
} // namespace mbt

#endif // MBT_TEST_UNIT_RUNTIME_IMAGETESTFILES_H
