//===- ImageDecode.cpp - PNG and JPEG files to 8-bit pixels ---------------===//
//
// libpng and libjpeg report errors by longjmp back to a setjmp. Each
// decoder is split in two: an outer function owns every C++ object (the
// library's structures behind a guard, the Image) and an inner one holds
// the setjmp and only plain locals, so the jump skips no destructor and a
// failure just returns false with the library's message. Pixels are
// allocated only after the header passed the limits and the check that the
// file's bytes can hold that many pixels.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/ImageDecode.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

// jpeglib.h needs size_t and FILE declared first, and jerror.h needs
// jpeglib.h's configuration (which messages exist).
#include <jpeglib.h>

#include <jerror.h>
#include <png.h>

namespace mbt {
namespace runtime {

namespace {

constexpr uint8_t kPngMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
constexpr uint8_t kJpegMagic[3] = {0xff, 0xd8, 0xff};
/// Deflate's best case: 258 bytes from two 1-bit codes.
constexpr uint64_t kDeflateMaxRatio = 1032;
/// A Huffman-coded JPEG spends at least one bit on the DC coefficient of
/// every 8x8 block of its first component.
constexpr uint64_t kJpegMaxPixelsPerByte = 8 * 64;
/// Each progressive scan walks the whole coefficient buffer; libjpeg-turbo
/// recommends bounding their number against crafted files.
constexpr int kJpegMaxScans = 1000;
/// libpng's bound on one ancillary chunk (iCCP, zTXt) once decompressed.
constexpr size_t kPngChunkMax = 8u << 20;

/// A message of at most kMessageSize bytes, for the setjmp frames: those
/// must not hold a std::string across a call that may longjmp.
constexpr size_t kMessageSize = 256;

bool fail(char *message, const std::string &text) {
  std::snprintf(message, kMessageSize, "%s", text.c_str());
  return false;
}

/// Whether a width x height image is within `limits`; if not, says why in
/// `message`.
bool checkSize(uint64_t width, uint64_t height, const ImageLimits &limits,
               char *message) {
  if (width == 0 || height == 0)
    return fail(message, fmt::format("empty image ({}x{})", width, height));
  if (width > uint64_t(limits.maxSide) || height > uint64_t(limits.maxSide) ||
      width * height > uint64_t(limits.maxPixels))
    return fail(message,
                fmt::format("{}x{} pixels is over the limit ({} per side, {} "
                            "in all)",
                            width, height, limits.maxSide, limits.maxPixels));
  return true;
}

/// Whether `size` bytes, each standing for at most `perByte` units, can
/// hold `needed` units of a width x height image.
bool checkHolds(uint64_t needed, uint64_t perByte, size_t size, uint64_t width,
                uint64_t height, char *message) {
  if (needed <= perByte * uint64_t(size))
    return true;
  return fail(message, fmt::format("{}x{} pixels cannot fit in a {}-byte file",
                                   width, height, size));
}

//===--- PNG ----------------------------------------------------------===//

/// What libpng's callbacks share with readPng: plain data only.
struct PngSource {
  const uint8_t *bytes;
  size_t size;
  size_t offset;
  char message[3 * kMessageSize]; // room for an error and the warning
  /// libpng's last warning: its errors can be as terse as "Invalid IHDR
  /// data" after a warning that says what was invalid.
  char warning[kMessageSize];
};

void pngError(png_structp png, png_const_charp message) {
  auto *source = static_cast<PngSource *>(png_get_error_ptr(png));
  if (source->warning[0])
    std::snprintf(source->message, sizeof source->message,
                  "%s (after the warning: %s)", message, source->warning);
  else
    std::snprintf(source->message, sizeof source->message, "%s", message);
  png_longjmp(png, 1);
}

void pngWarning(png_structp png, png_const_charp message) {
  auto *source = static_cast<PngSource *>(png_get_error_ptr(png));
  std::snprintf(source->warning, sizeof source->warning, "%s", message);
}

void pngRead(png_structp png, png_bytep out, size_t count) {
  auto *source = static_cast<PngSource *>(png_get_io_ptr(png));
  if (count > source->size - source->offset) {
    std::snprintf(source->message, sizeof source->message,
                  "truncated: the file ends at byte offset %zu", source->size);
    png_longjmp(png, 1);
  }
  std::memcpy(out, source->bytes + source->offset, count);
  source->offset += count;
}

/// libpng's transforms to 8-bit gray or RGB without alpha.
void setPngTransforms(png_structp png, int depth, int colorType) {
  if (colorType == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (colorType == PNG_COLOR_TYPE_GRAY && depth < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (depth == 16)
    png_set_strip_16(png);
  // Also drops the alpha a palette's tRNS chunk expands to.
  png_set_strip_alpha(png);
  png_set_interlace_handling(png);
}

/// Reads the PNG into `image` (rows pointing into it via `rows`). Both
/// belong to the caller so that a longjmp back here leaves them intact.
/// Returns false with source.message set on any error.
bool readPng(png_structp png, png_infop info, PngSource &source,
             const ImageLimits &limits, Image &image,
             std::vector<png_bytep> &rows) {
  if (setjmp(png_jmpbuf(png)))
    return false;
  png_set_user_limits(png, uint32_t(limits.maxSide), uint32_t(limits.maxSide));
  png_set_chunk_malloc_max(png, kPngChunkMax);
  png_read_info(png, info);
  png_uint_32 width = 0, height = 0;
  int depth = 0, colorType = 0;
  png_get_IHDR(png, info, &width, &height, &depth, &colorType, nullptr, nullptr,
               nullptr);
  uint64_t packedRow =
      (uint64_t(width) * depth * png_get_channels(png, info) + 7) / 8;
  if (!checkSize(width, height, limits, source.message) ||
      !checkHolds(packedRow * height, kDeflateMaxRatio, source.size, width,
                  height, source.message))
    return false;
  setPngTransforms(png, depth, colorType);
  png_read_update_info(png, info);
  int channels = png_get_channels(png, info);
  if (png_get_bit_depth(png, info) != 8 || (channels != 1 && channels != 3)) {
    std::snprintf(source.message, sizeof source.message,
                  "unsupported layout (%d channels of %d bits)", channels,
                  png_get_bit_depth(png, info));
    return false;
  }
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.resize(size_t(width) * height * channels);
  rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y)
    rows[y] = image.pixels.data() + size_t(y) * width * channels;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  return true;
}

/// Frees libpng's structures however readPng ended.
struct PngGuard {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngGuard() { png_destroy_read_struct(&png, &info, nullptr); }
};

Image decodePng(const uint8_t *bytes, size_t size, const std::string &origin,
                const ImageLimits &limits) {
  PngSource source{bytes, size, 0, {}, {}};
  PngGuard guard;
  guard.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, pngError,
                                     pngWarning);
  if (guard.png)
    guard.info = png_create_info_struct(guard.png);
  if (!guard.info)
    throw RuntimeError(fmt::format("'{}': PNG: out of memory", origin));
  png_set_read_fn(guard.png, &source, pngRead);
  Image image;
  std::vector<png_bytep> rows;
  if (!readPng(guard.png, guard.info, source, limits, image, rows))
    throw RuntimeError(fmt::format("'{}': PNG: {}", origin, source.message));
  return image;
}

//===--- JPEG ---------------------------------------------------------===//

/// libjpeg's error manager (first, so cinfo->err points at the whole)
/// and where its callbacks jump to.
struct JpegErrors {
  jpeg_error_mgr manager;
  jpeg_progress_mgr progress;
  std::jmp_buf jump;
  char message[kMessageSize];
};

[[noreturn]] void jpegErrorExit(j_common_ptr cinfo) {
  auto *errors = reinterpret_cast<JpegErrors *>(cinfo->err);
  cinfo->err->format_message(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

/// libjpeg warns and goes on, filling with gray, where data is missing or
/// corrupt; such a file is an error here (as PIL makes it), while warnings
/// about metadata (a bad ICC profile, stray bytes between markers) are not.
void jpegMessage(j_common_ptr cinfo, int level) {
  if (level >= 0)
    return; // trace messages
  switch (cinfo->err->msg_code) {
  case JWRN_JPEG_EOF:
  case JWRN_HIT_MARKER:
  case JWRN_HUFF_BAD_CODE:
  case JWRN_ARITH_BAD_CODE:
  case JWRN_MUST_RESYNC:
  case JWRN_NOT_SEQUENTIAL:
  case JWRN_BOGUS_PROGRESSION:
    jpegErrorExit(cinfo);
  default:
    ++cinfo->err->num_warnings;
  }
}

void jpegProgress(j_common_ptr cinfo) {
  auto *decompress = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (decompress->input_scan_number <= kJpegMaxScans)
    return;
  auto *errors = reinterpret_cast<JpegErrors *>(cinfo->err);
  std::snprintf(errors->message, sizeof errors->message, "more than %d scans",
                kJpegMaxScans);
  std::longjmp(errors->jump, 1);
}

/// Whether the header is acceptable; if not, says why in `message`.
bool checkJpegHeader(const jpeg_decompress_struct &cinfo, size_t size,
                     const ImageLimits &limits, char *message) {
  uint64_t width = cinfo.image_width, height = cinfo.image_height;
  if (!checkSize(width, height, limits, message))
    return false;
  if (!cinfo.arith_code && !checkHolds(width * height, kJpegMaxPixelsPerByte,
                                       size, width, height, message))
    return false;
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK)
    return fail(message,
                "CMYK JPEGs are not supported (convert the image to RGB)");
  return true;
}

/// Reads the JPEG into `image`; cinfo, errors and image belong to the
/// caller. Returns false with errors.message set on any error.
bool readJpeg(jpeg_decompress_struct &cinfo, JpegErrors &errors,
              const uint8_t *bytes, size_t size, const ImageLimits &limits,
              Image &image) {
  if (setjmp(errors.jump))
    return false;
  jpeg_create_decompress(&cinfo);
  cinfo.progress = &errors.progress;
  jpeg_mem_src(&cinfo, bytes, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  if (!checkJpegHeader(cinfo, size, limits, errors.message))
    return false;
  cinfo.out_color_space =
      cinfo.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  int channels = cinfo.output_components;
  image.width = cinfo.output_width;
  image.height = cinfo.output_height;
  image.channels = channels;
  image.pixels.resize(size_t(image.width) * image.height * channels);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = image.pixels.data() +
                   size_t(cinfo.output_scanline) * image.width * channels;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  return true;
}

Image decodeJpeg(const uint8_t *bytes, size_t size, const std::string &origin,
                 const ImageLimits &limits) {
  JpegErrors errors{};
  jpeg_decompress_struct cinfo{};
  cinfo.err = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = jpegErrorExit;
  errors.manager.emit_message = jpegMessage;
  errors.progress.progress_monitor = jpegProgress;
  // jpeg_destroy frees whatever jpeg_create got to allocate (nothing when
  // cinfo.mem is still null).
  struct Guard {
    jpeg_decompress_struct &cinfo;
    ~Guard() { jpeg_destroy_decompress(&cinfo); }
  } guard{cinfo};
  Image image;
  if (!readJpeg(cinfo, errors, bytes, size, limits, image))
    throw RuntimeError(fmt::format("'{}': JPEG: {}", origin, errors.message));
  return image;
}

} // namespace

Image decodeImage(const uint8_t *bytes, size_t size, const std::string &origin,
                  const ImageLimits &limits) {
  if (size >= sizeof kPngMagic &&
      std::memcmp(bytes, kPngMagic, sizeof kPngMagic) == 0)
    return decodePng(bytes, size, origin, limits);
  if (size >= sizeof kJpegMagic &&
      std::memcmp(bytes, kJpegMagic, sizeof kJpegMagic) == 0)
    return decodeJpeg(bytes, size, origin, limits);
  if (size == 0)
    throw RuntimeError(fmt::format("'{}': empty file, not an image", origin));
  std::string start;
  for (size_t i = 0; i < size && i < 8; ++i)
    start += fmt::format("{}{:02x}", i ? " " : "", bytes[i]);
  throw RuntimeError(fmt::format(
      "'{}': not a PNG or JPEG image (its first bytes are {})", origin, start));
}

void writePng(const Image &image, const std::string &path) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = image.channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  if ((image.channels != 1 && image.channels != 3) ||
      static_cast<int64_t>(image.pixels.size()) !=
          image.width * image.height * image.channels)
    throw RuntimeError(fmt::format("'{}': cannot write a {}x{} image of {} "
                                   "channels from {} bytes",
                                   path, image.width, image.height,
                                   image.channels, image.pixels.size()));
  if (!png_image_write_to_file(&png, path.c_str(), /*convert_to_8bit=*/0,
                               image.pixels.data(), /*row_stride=*/0,
                               /*colormap=*/nullptr))
    throw RuntimeError(fmt::format("cannot write '{}': {}", path, png.message));
  png_image_free(&png);
}

} // namespace runtime
} // namespace mbt
