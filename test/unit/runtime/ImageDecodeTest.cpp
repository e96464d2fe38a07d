//===- ImageDecodeTest.cpp - PNG and JPEG decoding, good and broken -------===//
//
// Each PNG layout libpng can hand us is written by the test and decoded
// back to exact bytes; JPEGs, being lossy, are compared within a small
// tolerance. The broken files are cut or patched copies of good ones, so
// each error path is reached on purpose.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/ImageDecode.h"
#include "mbt/runtime/Error.h"

#include "ImageTestFiles.h"
#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

/// A 3x2 RGB image with distinct samples.
Image rgb3x2() {
  return makeImage(3, 2, 3, [](int64_t x, int64_t y, int64_t c) {
    return int(10 + 40 * x + 100 * y + 7 * c);
  });
}

TEST(ImageDecodeTest, Gray8PngIsExact) {
  Image gray = makeImage(4, 3, 1, [](int64_t x, int64_t y, int64_t) {
    return int(x * 60 + y * 7);
  });
  Image decoded = decodeString(encodePng(gray));
  EXPECT_EQ(decoded.width, 4);
  EXPECT_EQ(decoded.height, 3);
  EXPECT_EQ(decoded.channels, 1);
  EXPECT_EQ(decoded.pixels, gray.pixels);
}

TEST(ImageDecodeTest, RgbPngIsExact) {
  Image decoded = decodeString(encodePng(rgb3x2()));
  EXPECT_EQ(decoded.channels, 3);
  EXPECT_EQ(decoded.pixels, rgb3x2().pixels);
}

TEST(ImageDecodeTest, RgbaPngDropsAlphaWithoutCompositing) {
  PngSpec spec{2, 1, PNG_COLOR_TYPE_RGBA, 8, false, {}, {}, {}};
  spec.rows = {200, 100, 50, 0, 1, 2, 3, 128};
  Image decoded = decodeString(encodePng(spec));
  EXPECT_EQ(decoded.channels, 3);
  EXPECT_THAT(decoded.pixels, ElementsAre(200, 100, 50, 1, 2, 3));
}

TEST(ImageDecodeTest, GrayAlphaPngBecomesGray) {
  PngSpec spec{2,  1, PNG_COLOR_TYPE_GRAY_ALPHA, 8, false, {9, 0, 250, 77},
               {}, {}};
  Image decoded = decodeString(encodePng(spec));
  EXPECT_EQ(decoded.channels, 1);
  EXPECT_THAT(decoded.pixels, ElementsAre(9, 250));
}

TEST(ImageDecodeTest, SixteenBitPngKeepsHighByte) {
  PngSpec gray{2,  1, PNG_COLOR_TYPE_GRAY, 16, false, {0x12, 0xff, 0xab, 0x01},
               {}, {}};
  EXPECT_THAT(decodeString(encodePng(gray)).pixels, ElementsAre(0x12, 0xab));
  PngSpec rgb{1,  1,     PNG_COLOR_TYPE_RGB,
              16, false, {0x01, 0x80, 0x02, 0x80, 0xfe, 0x7f},
              {}, {}};
  EXPECT_THAT(decodeString(encodePng(rgb)).pixels, ElementsAre(1, 2, 0xfe));
}

TEST(ImageDecodeTest, PalettePngExpandsToRgbAndDropsTransparency) {
  PngSpec spec{3, 1, PNG_COLOR_TYPE_PALETTE, 8, false, {2, 0, 1}, {}, {}};
  spec.palette = {{10, 20, 30}, {40, 50, 60}, {70, 80, 90}};
  spec.transparency = {0, 128};
  Image decoded = decodeString(encodePng(spec));
  EXPECT_EQ(decoded.channels, 3);
  EXPECT_THAT(decoded.pixels, ElementsAre(70, 80, 90, 10, 20, 30, 40, 50, 60));
}

TEST(ImageDecodeTest, LowBitDepthGrayIsScaledTo255) {
  // 2-bit samples 0, 1, 2, 3 packed in one byte: 0b00011011.
  PngSpec spec{4, 1, PNG_COLOR_TYPE_GRAY, 2, false, {0x1b}, {}, {}};
  EXPECT_THAT(decodeString(encodePng(spec)).pixels,
              ElementsAre(0, 85, 170, 255));
}

TEST(ImageDecodeTest, InterlacedPngMatchesPlain) {
  Image image = makeImage(11, 9, 3, [](int64_t x, int64_t y, int64_t c) {
    return int((x * 23 + y * 41 + c * 5) % 256);
  });
  PngSpec spec{11, 9, PNG_COLOR_TYPE_RGB, 8, true, image.pixels, {}, {}};
  EXPECT_EQ(decodeString(encodePng(spec)).pixels, image.pixels);
}

TEST(ImageDecodeTest, JpegDecodesRgbAndGrayClose) {
  Image flat = makeImage(
      16, 16, 3, [](int64_t, int64_t, int64_t c) { return int(60 + 60 * c); });
  Image rgb = decodeString(encodeJpeg(flat, 100));
  ASSERT_EQ(rgb.channels, 3);
  ASSERT_EQ(rgb.pixels.size(), flat.pixels.size());
  for (size_t i = 0; i < rgb.pixels.size(); ++i)
    EXPECT_NEAR(rgb.pixels[i], flat.pixels[i], 2) << i;
  Image grayIn =
      makeImage(9, 7, 1, [](int64_t, int64_t, int64_t) { return 77; });
  Image gray = decodeString(encodeJpeg(grayIn, 100));
  EXPECT_EQ(gray.channels, 1);
  EXPECT_EQ(gray.width, 9);
  EXPECT_EQ(gray.height, 7);
  for (uint8_t p : gray.pixels)
    EXPECT_NEAR(p, 77, 1);
}

TEST(ImageDecodeTest, TruncatedPngNamesOriginAndEnd) {
  std::string png = encodePng(rgb3x2());
  png.resize(png.size() - 20); // into the IDAT chunk
  EXPECT_THAT(errorOf([&] { decodeString(png, "dir/cat/a.png"); }),
              AllOf(HasSubstr("'dir/cat/a.png': PNG: truncated"),
                    HasSubstr(std::to_string(png.size()))));
}

TEST(ImageDecodeTest, CorruptPngChecksumIsAnError) {
  std::string png = encodePng(rgb3x2());
  png[png.size() - 16] ^= 0x55; // the IDAT's CRC (before the 12-byte IEND)
  EXPECT_THAT(errorOf([&] { decodeString(png, "bad.png"); }),
              HasSubstr("'bad.png': PNG:"));
}

TEST(ImageDecodeTest, TruncatedJpegIsAnError) {
  Image image = makeImage(32, 32, 3, [](int64_t x, int64_t y, int64_t c) {
    return int((x * 7 + y * 13 + c * 50) % 256);
  });
  std::string jpeg = encodeJpeg(image);
  jpeg.resize(jpeg.size() * 2 / 3);
  EXPECT_THAT(errorOf([&] { decodeString(jpeg, "cut.jpg"); }),
              AllOf(HasSubstr("'cut.jpg': JPEG:"), HasSubstr("Premature")));
  EXPECT_THAT(errorOf([&] { decodeString(jpeg.substr(0, 40), "h.jpg"); }),
              HasSubstr("'h.jpg': JPEG:"));
}

TEST(ImageDecodeTest, NeitherPngNorJpegShowsItsFirstBytes) {
  EXPECT_THAT(errorOf([] { decodeString("GIF89a..", "x.png"); }),
              AllOf(HasSubstr("'x.png': not a PNG or JPEG"),
                    HasSubstr("47 49 46 38 39 61 2e 2e")));
  EXPECT_THAT(errorOf([] { decodeString("", "e.jpg"); }),
              HasSubstr("'e.jpg': empty file"));
}

/// A PNG whose IHDR claims width x height; its CRC is recomputed so only
/// the size is wrong.
std::string pngClaiming(uint32_t width, uint32_t height) {
  std::string png = encodePng(rgb3x2());
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = char(width >> (24 - 8 * i));
    png[20 + i] = char(height >> (24 - 8 * i));
  }
  uint32_t crc = uint32_t(
      ::crc32(0, reinterpret_cast<const Bytef *>(png.data() + 12), 17));
  for (int i = 0; i < 4; ++i)
    png[29 + i] = char(crc >> (24 - 8 * i));
  return png;
}

TEST(ImageDecodeTest, PngOverTheLimitsIsRefusedBeforeAllocating) {
  EXPECT_THAT(errorOf([] { decodeString(pngClaiming(16385, 2)); }),
              HasSubstr("Image width exceeds user limit"));
  // Within the limits, but deflate cannot expand ~100 bytes that far.
  EXPECT_THAT(errorOf([] { decodeString(pngClaiming(16000, 16000)); }),
              HasSubstr("16000x16000 pixels cannot fit in a"));
  ImageLimits small;
  small.maxPixels = 5;
  EXPECT_THAT(errorOf([&] {
                std::string png = encodePng(rgb3x2());
                decodeImage(reinterpret_cast<const uint8_t *>(png.data()),
                            png.size(), "six.png", small);
              }),
              HasSubstr("3x2 pixels is over the limit"));
}

TEST(ImageDecodeTest, JpegClaimingTooManyPixelsIsRefused) {
  std::string jpeg = encodeJpeg(rgb3x2());
  size_t sof = jpeg.find("\xff\xc0");
  ASSERT_NE(sof, std::string::npos);
  // SOF0: length (2), precision (1), height (2), width (2).
  jpeg[sof + 5] = char(0x3e), jpeg[sof + 6] = char(0x80); // 16000
  jpeg[sof + 7] = char(0x3e), jpeg[sof + 8] = char(0x80);
  EXPECT_THAT(errorOf([&] { decodeString(jpeg, "big.jpg"); }),
              HasSubstr("'big.jpg': JPEG: 16000x16000 pixels cannot fit"));
  jpeg[sof + 7] = char(0x40), jpeg[sof + 8] = char(0x01); // width 16385
  EXPECT_THAT(errorOf([&] { decodeString(jpeg, "wide.jpg"); }),
              HasSubstr("16385x16000 pixels is over the limit"));
}

} // namespace
