//===- ImageFolderTest.cpp - Image folders: walk, resize, threads ---------===//
//
// Each test lays out its own DIR/<class>/... tree of tiny PNGs and JPEGs.
// Order tests give every file a 1x1 image whose one pixel names it, so a
// sample's value tells which file it came from. Resampling is checked
// three ways: by hand on tiny images, against the PIL formula recomputed
// here in double precision, and against bytes PIL itself produced.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/ImageFolder.h"
#include "mbt/runtime/Error.h"

#include "ImageTestFiles.h"
#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

namespace {

SampleLayout imageLayout(std::vector<int64_t> shape, int64_t classes = 10) {
  SampleLayout layout;
  layout.inputShape = std::move(shape);
  layout.classes = classes;
  return layout;
}

/// A 1x1 gray PNG whose pixel is `value`.
void writeMarker(const std::string &path, int value) {
  writeBytes(path, encodePng(makeImage(1, 1, 1, [&](int64_t, int64_t, int64_t) {
               return value;
             })));
}

/// The pixel values (x * 255) of a [1, 1] data set: which files it read.
std::vector<int> markers(const Dataset &data) {
  std::vector<int> values;
  for (float v : data.x)
    values.push_back(int(std::lround(v * 255.0f)));
  return values;
}

Dataset readFolder(const std::string &dir, std::vector<int64_t> shape,
                   const ImageFolderOptions &options = {},
                   const std::vector<std::string> *train = nullptr,
                   int64_t classes = 10) {
  return readImageFolder(dir, options, imageLayout(std::move(shape), classes),
                         train, "test");
}

/// The test image PIL's results below were computed from.
Image pilTestImage(int64_t channels) {
  return makeImage(13, 9, channels, [](int64_t x, int64_t y, int64_t c) {
    return int((x * 37 + y * 91 + c * 53 + (x * y) % 7 * 11) % 256);
  });
}

TEST(ImageFolderTest, ClassesAreSortedFoldersAndLabelsFollowThem) {
  TempDir dir;
  writeMarker(dir.file("b/1.png"), 1);
  writeMarker(dir.file("a/4.png"), 4);
  writeMarker(dir.file("a/2.png"), 2);
  writeMarker(dir.file("C/3.png"), 3);
  writeMarker(dir.file("stray.png"), 99); // not in a class folder
  Dataset data = readFolder(dir.path(), {1, 1});
  EXPECT_THAT(data.classNames, ElementsAre("C", "a", "b")); // byte order
  EXPECT_EQ(data.count, 4);
  EXPECT_EQ(data.numFeatures, 1);
  EXPECT_EQ(data.numClasses, 10);
  EXPECT_THAT(markers(data), ElementsAre(3, 2, 4, 1));
  EXPECT_THAT(data.y, ElementsAre(0, 1, 1, 2));
}

TEST(ImageFolderTest, WalkSortsDirectoriesByWholePathLikeSortedOsWalk) {
  TempDir dir;
  std::string cls = dir.file("cls");
  for (const char *name : {"z.png", "a/x.png", "a-b/y.png", "a/q/w.png"})
    writeMarker(cls + "/" + name, 1);
  // sorted(os.walk()) orders roots "cls" < "cls/a" < "cls/a-b" < "cls/a/q"
  // ('-' sorts before '/'): not a depth-first walk in sorted order.
  EXPECT_THAT(listClassImages(cls),
              ElementsAre(cls + "/z.png", cls + "/a/x.png", cls + "/a-b/y.png",
                          cls + "/a/q/w.png"));
}

TEST(ImageFolderTest, KeepsPngAndJpegExtensionsInAnyCase) {
  TempDir dir;
  std::string cls = dir.file("c");
  for (const char *name :
       {"img.PNG", "b.JpEg", "c.jpg", "f.jpeg", "B.png", "e.png.bak"})
    writeMarker(cls + "/" + name, 1);
  writeBytes(cls + "/notes.txt", "not an image");
  writeBytes(cls + "/d.gif", "GIF89a");
  EXPECT_THAT(listClassImages(cls),
              ElementsAre(cls + "/B.png", cls + "/b.JpEg", cls + "/c.jpg",
                          cls + "/f.jpeg", cls + "/img.PNG"));
  EXPECT_EQ(readFolder(dir.path(), {1, 1}).count, 5);
}

TEST(ImageFolderTest, FollowsDirectoryLinksAndRefusesLoops) {
  TempDir dir;
  writeMarker(dir.file("elsewhere/o.png"), 7);
  writeMarker(dir.file("data/cls/a.png"), 5);
  std::filesystem::create_directory_symlink(dir.file("elsewhere"),
                                            dir.file("data/cls/link"));
  EXPECT_THAT(markers(readFolder(dir.file("data"), {1, 1})), ElementsAre(5, 7));
  std::filesystem::create_directory_symlink(dir.file("data/cls"),
                                            dir.file("data/cls/sub"));
  EXPECT_THAT(
      errorOf([&] { readFolder(dir.file("data"), {1, 1}); }),
      AllOf(HasSubstr(dir.file("data/cls/sub")), HasSubstr("loops back")));
}

TEST(ImageFolderTest, FormatComesFromMagicNotExtension) {
  TempDir dir;
  Image gray = makeImage(1, 1, 1, [](int64_t, int64_t, int64_t) { return 40; });
  writeBytes(dir.file("c/a.jpg"), encodePng(gray));
  writeBytes(dir.file("c/b.png"), encodeJpeg(gray, 100));
  std::vector<int> values = markers(readFolder(dir.path(), {1, 1}));
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0], 40);
  EXPECT_NEAR(values[1], 40, 1);
}

TEST(ImageFolderTest, ExactSizeIsNeverResampled) {
  TempDir dir;
  auto value = [](int64_t x, int64_t y, int64_t c) {
    return int((x * 9 + y * 31 + c * 85) % 256);
  };
  writeBytes(dir.file("g/a.png"), encodePng(makeImage(28, 28, 1, value)));
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{1, 28, 28}, std::vector<int64_t>{28, 28}}) {
    Dataset data = readFolder(dir.path(), shape);
    ASSERT_EQ(data.x.size(), 784u);
    for (int64_t i = 0; i < 784; ++i)
      ASSERT_EQ(data.x[i],
                static_cast<float>(value(i % 28, i / 28, 0)) / 255.0f)
          << i;
  }
  // RGB comes out channel-major, as ToTensor makes it.
  TempDir rgbDir;
  writeBytes(rgbDir.file("c/a.png"), encodePng(makeImage(28, 28, 3, value)));
  Dataset rgb = readFolder(rgbDir.path(), {3, 28, 28});
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t p = 0; p < 784; ++p)
      ASSERT_EQ(rgb.x[c * 784 + p],
                static_cast<float>(value(p % 28, p / 28, c)) / 255.0f);
}

TEST(ImageFolderTest, ChannelsConvertAsPil) {
  TempDir dir;
  Image rgb{2, 1, 3, {200, 100, 50, 0, 255, 0}};
  writeBytes(dir.file("c/a.png"), encodePng(rgb));
  // L = (R*19595 + G*38470 + B*7471 + 0x8000) >> 16:
  // (3919000 + 3847000 + 373550 + 32768) >> 16 = 8172318 >> 16 = 124;
  // (9809850 + 32768) >> 16 = 150 (149.69 rounds up).
  EXPECT_THAT(readFolder(dir.path(), {1, 1, 2}).x,
              ElementsAre(124 / 255.0f, 150 / 255.0f));
  // PIL's im.convert('L') of pilTestImage(3), its first row and a half.
  std::vector<uint8_t> gray = convertChannels(pilTestImage(3), 1).pixels;
  gray.resize(20);
  EXPECT_THAT(gray,
              ElementsAre(43, 80, 117, 154, 191, 199, 86, 46, 83, 120, 157, 165,
                          202, 134, 182, 201, 99, 70, 118, 166));
  // Gray is replicated into every channel.
  TempDir grayDir;
  writeBytes(grayDir.file("c/a.png"), encodePng(Image{2, 1, 1, {7, 250}}));
  EXPECT_THAT(readFolder(grayDir.path(), {3, 1, 2}).x,
              ElementsAre(7 / 255.0f, 250 / 255.0f, 7 / 255.0f, 250 / 255.0f,
                          7 / 255.0f, 250 / 255.0f));
}

TEST(ImageFolderTest, TinyResizesComputedByHand) {
  // Upscale 2 -> 4: scale 0.5, support 1. Output xx has centre
  // (xx + 0.5) * 0.5 and weights 1 - |x - centre + 0.5| on the pixels within
  // support: xx=0 -> only pixel 0; xx=1 -> 0.75, 0.25 -> 63.75 -> 64;
  // xx=2 -> 0.25, 0.75 -> 191.25 -> 191; xx=3 -> only pixel 1.
  EXPECT_THAT(resizeBilinear(Image{2, 1, 1, {0, 255}}, 4, 1).pixels,
              ElementsAre(0, 64, 191, 255));
  // A 4x2 image, rows [0 100 200 255], read as [1, 1, 2]: covering 1x2
  // takes a 2x1 resize (scale 2, support 2). Column 0: centre 1, pixels
  // 0..2 weighted 0.75, 0.75, 0.25 (sum 1.75): (300 + 200) / 7 = 71.4 -> 71.
  // Column 1: centre 3, pixels 1..3 weighted 0.25, 0.75, 0.75:
  // (100 + 600 + 765) / 7 = 209.3 -> 209. The two equal rows average to
  // themselves.
  TempDir dir;
  Image image{4, 2, 1, {0, 100, 200, 255, 0, 100, 200, 255}};
  writeBytes(dir.file("c/a.png"), encodePng(image));
  EXPECT_THAT(readFolder(dir.path(), {1, 1, 2}).x,
              ElementsAre(71 / 255.0f, 209 / 255.0f));
}

/// PIL's resize recomputed from its formula: for each output pixel o of an
/// in -> out resize, scale = in / out and filter = max(scale, 1); the input
/// pixels x in [int(centre - filter + 0.5), int(centre + filter + 0.5))
/// around centre = (o + 0.5) * scale weigh triangle((x - centre + 0.5) /
/// filter), normalized to sum 1 and then quantized to 22 bits (q =
/// round(w * 2^22)); the result is floor((2^21 + sum q * p) / 2^22) clipped
/// to 8 bits, i.e. rounded half up. Rows first, then columns, unless the
/// height shrinks by more than twice as many pixels as the width (Pillow
/// 13's order). (Without the
/// quantization, ties such as 0.9 * 17 + 0.1 * 62 = 21.5 would round the
/// other way: PIL's weights 3774874 and 419430 sum to 21.99998 * 2^22.)
std::vector<uint8_t> resizeReference(const std::vector<uint8_t> &in,
                                     int64_t inW, int64_t inH, int64_t outW,
                                     int64_t outH) {
  const double one = double(1 << 22);
  // src is lines x length; each of its lines is resampled to outN samples.
  auto pass = [&](const std::vector<uint8_t> &src, int64_t lines,
                  int64_t length, int64_t stride, int64_t step, int64_t outN) {
    double scale = double(length) / outN, filter = std::max(scale, 1.0);
    std::vector<uint8_t> out(size_t(lines * outN));
    for (int64_t o = 0; o < outN; ++o) {
      double centre = (o + 0.5) * scale;
      int64_t lo = std::max<int64_t>(0, int64_t(centre - filter + 0.5));
      int64_t hi = std::min<int64_t>(length, int64_t(centre + filter + 0.5));
      std::vector<double> w;
      double total = 0;
      for (int64_t x = lo; x < hi; ++x) {
        w.push_back(std::max(0.0, 1 - std::fabs((x - centre + 0.5) / filter)));
        total += w.back();
      }
      for (int64_t line = 0; line < lines; ++line) {
        double acc = one / 2;
        for (int64_t x = lo; x < hi; ++x)
          acc += std::floor(w[x - lo] / total * one + 0.5) *
                 src[line * stride + x * step];
        out[line * outN + o] =
            uint8_t(std::clamp(std::floor(acc / one), 0.0, 255.0));
      }
    }
    return out;
  };
  // Along columns the pass writes each column as a line: transpose back.
  auto byColumns = [&](const std::vector<uint8_t> &src, int64_t w, int64_t h,
                       int64_t outN) {
    std::vector<uint8_t> lines = pass(src, w, h, 1, w, outN);
    std::vector<uint8_t> out(size_t(w * outN));
    for (int64_t x = 0; x < w; ++x)
      for (int64_t y = 0; y < outN; ++y)
        out[y * w + x] = lines[x * outN + y];
    return out;
  };
  auto byRows = [&](const std::vector<uint8_t> &src, int64_t w, int64_t h,
                    int64_t outN) { return pass(src, h, w, w, 1, outN); };
  if (inH - outH > 0 && inH - outH > 2 * (inW - outW)) {
    std::vector<uint8_t> columns = byColumns(in, inW, inH, outH);
    return inW == outW ? columns : byRows(columns, inW, outH, outW);
  }
  std::vector<uint8_t> rows = inW == outW ? in : byRows(in, inW, inH, outW);
  return inH == outH ? rows : byColumns(rows, outW, inH, outH);
}

TEST(ImageFolderTest, UpscaleMatchesPilFormula) {
  Image image = makeImage(3, 2, 1, [](int64_t x, int64_t y, int64_t) {
    return int(17 + 80 * x + 45 * y);
  });
  EXPECT_EQ(resizeBilinear(image, 7, 5).pixels,
            resizeReference(image.pixels, 3, 2, 7, 5));
}

TEST(ImageFolderTest, DownscaleMatchesPilFormula) {
  Image image = makeImage(9, 7, 1, [](int64_t x, int64_t y, int64_t) {
    return int((x * 29 + y * 53 + x * y * 7) % 256);
  });
  EXPECT_EQ(resizeBilinear(image, 4, 3).pixels,
            resizeReference(image.pixels, 9, 7, 4, 3));
  // Height shrinking 6 rows, width 1 column: columns first.
  EXPECT_EQ(resizeBilinear(image, 8, 1).pixels,
            resizeReference(image.pixels, 9, 7, 8, 1));
}

TEST(ImageFolderTest, ResizeMatchesPilBytes) {
  // Pillow 13's im.resize(size, Image.BILINEAR) of pilTestImage(3).
  EXPECT_THAT(resizeBilinear(pilTestImage(3), 5, 4).pixels,
              ElementsAreArray<uint8_t>(
                  {109, 134, 146, 124, 139, 157, 131, 125, 145, 122, 140, 146,
                   121, 149, 127, 128, 152, 111, 128, 125, 105, 120, 108, 135,
                   132, 158, 103, 136, 110, 122, 116, 168, 119, 126, 139, 89,
                   130, 160, 109, 119, 166, 113, 139, 136, 87,  126, 143, 111,
                   142, 135, 95,  134, 113, 127, 136, 153, 107, 140, 103, 96}));
  EXPECT_THAT(resizeBilinear(pilTestImage(1), 5, 4).pixels,
              ElementsAreArray<uint8_t>({109, 124, 131, 122, 121, 128, 128,
                                         120, 132, 136, 116, 126, 130, 119,
                                         139, 126, 142, 134, 136, 140}));
  // 13x9 -> 12x3 shrinks the height by 6 rows, more than twice the width's
  // 1 column: Pillow 13 resamples the columns first (Pillow 12 gave 131,
  // 130, 140 where this has 130, 129, 139).
  EXPECT_THAT(
      resizeBilinear(pilTestImage(1), 12, 3).pixels,
      ElementsAreArray<uint8_t>({87,  130, 129, 139, 112, 146, 118, 116, 126,
                                 153, 110, 136, 111, 132, 121, 98,  139, 137,
                                 109, 126, 136, 101, 120, 162, 130, 107, 145,
                                 153, 131, 138, 130, 117, 128, 165, 130, 151}));
  // Only the rows change (13x9 -> 13x4): the first row of the result.
  std::vector<uint8_t> rows = resizeBilinear(pilTestImage(3), 13, 4).pixels;
  EXPECT_THAT(std::vector<uint8_t>(rows.begin(), rows.begin() + 39),
              ElementsAreArray<uint8_t>({75,  128, 130, 122, 123, 176, 116, 169,
                                         113, 163, 106, 159, 84,  137, 190, 130,
                                         183, 141, 176, 82,  135, 78,  131, 133,
                                         125, 126, 179, 119, 172, 116, 166, 109,
                                         162, 87,  140, 97,  133, 186, 144}));
  // Only the columns change (13x9 -> 6x9): the first row of the result.
  std::vector<uint8_t> cols = resizeBilinear(pilTestImage(3), 6, 9).pixels;
  EXPECT_THAT(
      std::vector<uint8_t>(cols.begin(), cols.begin() + 18),
      ElementsAreArray<uint8_t>({29, 82, 135, 100, 153, 206, 177, 171, 112, 70,
                                 64, 113, 88, 141, 171, 159, 212, 56}));
}

TEST(ImageFolderTest, FitResizesShorterEdgeThenCentreCrops) {
  // Resize(4) of 13x9: shorter edge 9 -> 4, longer int(4 * 13 / 9) = 5,
  // then CenterCrop(4): left int(round(0.5)) = 0. So columns 0..3 of PIL's
  // 5x4 resize (ResizeMatchesPilBytes).
  Image fitted = fitImage(pilTestImage(1), 1, 4, 4);
  EXPECT_THAT(fitted.pixels,
              ElementsAre(109, 124, 131, 122, 128, 128, 120, 132, 116, 126, 130,
                          119, 126, 142, 134, 136));
  // No resampling needed; Python's round() takes halves to even: (5 - 2) / 2
  // = 1.5 -> 2 and (7 - 2) / 2 = 2.5 -> 2.
  auto columns = [](int64_t x, int64_t, int64_t) { return int(10 * x); };
  EXPECT_THAT(fitImage(makeImage(5, 2, 1, columns), 1, 2, 2).pixels,
              ElementsAre(20, 30, 20, 30));
  EXPECT_THAT(fitImage(makeImage(7, 2, 1, columns), 1, 2, 2).pixels,
              ElementsAre(20, 30, 20, 30));
  auto rows = [](int64_t, int64_t y, int64_t) { return int(10 * y); };
  EXPECT_THAT(fitImage(makeImage(2, 5, 1, rows), 1, 2, 2).pixels,
              ElementsAre(20, 20, 30, 30));
}

TEST(ImageFolderTest, MeanAndStdNormalizePerChannel) {
  TempDir dir;
  Image rgb = makeImage(2, 2, 3, [](int64_t x, int64_t y, int64_t c) {
    return int(30 * x + 70 * y + 51 * c);
  });
  writeBytes(dir.file("c/a.png"), encodePng(rgb));
  ImageFolderOptions options;
  options.mean = {0.5f, 0.25f, 0.125f};
  options.std = {0.5f, 2.0f, 0.3f};
  Dataset data = readFolder(dir.path(), {3, 2, 2}, options);
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t p = 0; p < 4; ++p) {
      float scaled = static_cast<float>(rgb.pixels[p * 3 + c]) / 255.0f;
      EXPECT_EQ(data.x[c * 4 + p], (scaled - options.mean[c]) / options.std[c]);
    }
  options.mean = {0.5f, 0.5f};
  EXPECT_THAT(errorOf([&] { readFolder(dir.path(), {3, 2, 2}, options); }),
              HasSubstr("mean and std need 3 values each"));
  options.mean = {0.5f, 0.5f, 0.5f};
  options.std = {1.0f, 0.0f, 1.0f};
  EXPECT_THAT(errorOf([&] { readFolder(dir.path(), {3, 2, 2}, options); }),
              HasSubstr("std must not be 0"));
}

TEST(ImageFolderTest, ThreadCountDoesNotChangeTheResult) {
  TempDir dir;
  for (int i = 0; i < 45; ++i) {
    Image image =
        makeImage(5 + (i * 37) % 90, 4 + (i * 11) % 67, 1 + 2 * (i % 2),
                  [i](int64_t x, int64_t y, int64_t c) {
                    return int((x * 13 + y * 7 + c * 40 + i) % 256);
                  });
    std::string path =
        dir.file(std::string(1, "abc"[i % 3]) + "/" + std::to_string(10 + i) +
                 (i % 4 == 0 ? ".jpg" : ".png"));
    writeBytes(path, i % 4 == 0 ? encodeJpeg(image) : encodePng(image));
  }
  ImageFolderOptions one, four;
  one.threads = 1;
  four.threads = 4;
  Dataset serial = readFolder(dir.path(), {3, 8, 8}, one);
  Dataset parallel = readFolder(dir.path(), {3, 8, 8}, four);
  EXPECT_EQ(serial.count, 45);
  EXPECT_EQ(serial.x, parallel.x);
  EXPECT_EQ(serial.y, parallel.y);
}

TEST(ImageFolderTest, ClassFolderWithoutImagesIsAnError) {
  TempDir dir;
  writeMarker(dir.file("a/1.png"), 1);
  writeBytes(dir.file("b/notes.txt"), "hello");
  EXPECT_THAT(errorOf([&] { readFolder(dir.path(), {1, 1}); }),
              HasSubstr("'" + dir.file("b") + "': class folder without any"));
}

TEST(ImageFolderTest, CorruptImageErrorNamesTheFirstBadPath) {
  // Samples 0-4 are good, 5-39 broken: while one thread fails on sample 5,
  // the others fail on later ones, and only sample 5 may be reported.
  TempDir dir;
  std::string good =
      encodePng(makeImage(64, 64, 3, [](int64_t x, int64_t y, int64_t c) {
        return int((x * y + c) % 256);
      }));
  for (int i = 10; i < 50; ++i)
    writeBytes(dir.file("a/" + std::to_string(i) + ".png"),
               i < 15 ? good : good.substr(0, good.size() / 2));
  writeBytes(dir.file("b/0.png"), "not an image at all");
  ImageFolderOptions options;
  options.threads = 4;
  for (int run = 0; run < 5; ++run)
    EXPECT_THAT(errorOf([&] { readFolder(dir.path(), {3, 4, 4}, options); }),
                AllOf(HasSubstr("'" + dir.file("a/15.png") + "': PNG:"),
                      HasSubstr("truncated")));
}

TEST(ImageFolderTest, TestSplitUsesTheTrainingClasses) {
  TempDir dir;
  writeMarker(dir.file("test/dog/1.png"), 1);
  std::vector<std::string> train = {"cat", "dog"};
  Dataset test = readFolder(dir.file("test"), {1, 1}, {}, &train);
  EXPECT_THAT(test.y, ElementsAre(1));
  EXPECT_EQ(test.classNames, train);
  writeMarker(dir.file("test/eel/2.png"), 2);
  EXPECT_THAT(
      errorOf([&] { readFolder(dir.file("test"), {1, 1}, {}, &train); }),
      AllOf(HasSubstr(dir.file("test/eel")),
            HasSubstr("class 'eel' is not among the training split's "
                      "classes (cat, dog)")));
}

TEST(ImageFolderTest, MoreClassFoldersThanTheModelHasIsAnError) {
  TempDir dir;
  for (const char *name : {"a/1.png", "b/1.png", "c/1.png"})
    writeMarker(dir.file(name), 1);
  EXPECT_THAT(errorOf([&] { readFolder(dir.path(), {1, 1}, {}, nullptr, 2); }),
              HasSubstr("3 class folders, but the model has 2 classes"));
}

TEST(ImageFolderTest, MissingOrFlatDirectoryIsAnError) {
  TempDir dir;
  EXPECT_THAT(errorOf([&] { readFolder(dir.file("nope"), {1, 1}); }),
              HasSubstr("'" + dir.file("nope") + "': no such directory"));
  writeMarker(dir.file("flat/a.png"), 1);
  EXPECT_THAT(errorOf([&] { readFolder(dir.file("flat"), {1, 1}); }),
              HasSubstr("'" + dir.file("flat") + "': no class folders"));
}

TEST(ImageFolderTest, LayoutMustBeAnImageWithClasses) {
  TempDir dir;
  writeMarker(dir.file("a/1.png"), 1);
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{784}, std::vector<int64_t>{2, 8, 8},
        std::vector<int64_t>{1, 0, 8}, std::vector<int64_t>{3, 8, 20000}})
    EXPECT_THAT(errorOf([&] { readFolder(dir.path(), shape); }),
                HasSubstr("needs an input of shape [C, H, W]"));
  SampleLayout values = imageLayout({1, 1});
  values.target = SampleLayout::Target::Values;
  values.targetWidth = 1;
  EXPECT_THAT(
      errorOf([&] { readImageFolder(dir.path(), {}, values, nullptr, "t"); }),
      HasSubstr("target must be classes"));
}

} // namespace
