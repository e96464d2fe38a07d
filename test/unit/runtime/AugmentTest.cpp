//===- AugmentTest.cpp - random crop with padding and horizontal flip -----===//
#include "mbt/runtime/Augment.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

using namespace mbt::runtime;

namespace {

/// A [2, 4, 5] image whose values name their position: 100 c + 10 i + j + 1.
std::vector<float> image() {
  std::vector<float> x(2 * 4 * 5);
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j)
        x[(c * 4 + i) * 5 + j] = 100.0f * c + 10.0f * i + j + 1;
  return x;
}

TEST(AugmentTest, NoCropNoFlipIsTheIdentity) {
  std::vector<float> x = image(), out(x.size());
  AugmentDraw draw = drawAugment(7, 0, 3, 0, false);
  EXPECT_EQ(draw.top, 0);
  EXPECT_EQ(draw.left, 0);
  EXPECT_FALSE(draw.flip);
  augmentImage(x.data(), out.data(), 2, 4, 5, 0, draw);
  EXPECT_EQ(out, x);
}

TEST(AugmentTest, CropShiftsThePaddedImageWithZerosOutside) {
  std::vector<float> x = image(), out(x.size());
  // Padding 2, offsets (top 3, left 0): row i of the result is row i + 1
  // of the image, column j is column j - 2 (zero for j < 2).
  augmentImage(x.data(), out.data(), 2, 4, 5, 2, AugmentDraw{3, 0, false});
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j) {
        int row = i + 1, col = j - 2;
        float want = row < 4 && col >= 0 ? x[(c * 4 + row) * 5 + col] : 0.0f;
        EXPECT_EQ(out[(c * 4 + i) * 5 + j], want) << c << " " << i << " " << j;
      }
}

TEST(AugmentTest, FlipMirrorsEachRowAfterTheCrop) {
  std::vector<float> x = image(), out(x.size());
  augmentImage(x.data(), out.data(), 2, 4, 5, 0, AugmentDraw{0, 0, true});
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j)
        EXPECT_EQ(out[(c * 4 + i) * 5 + j], x[(c * 4 + i) * 5 + (4 - j)]);
  // With a crop: flip(crop(x)), as RandomCrop then RandomHorizontalFlip.
  std::vector<float> cropped(x.size()), both(x.size()), expected(x.size());
  augmentImage(x.data(), cropped.data(), 2, 4, 5, 1, AugmentDraw{0, 2, false});
  augmentImage(cropped.data(), expected.data(), 2, 4, 5, 0,
               AugmentDraw{0, 0, true});
  augmentImage(x.data(), both.data(), 2, 4, 5, 1, AugmentDraw{0, 2, true});
  EXPECT_EQ(both, expected);
}

TEST(AugmentTest, DrawsCoverEveryOffsetAndBothFlipsDeterministically) {
  std::set<int64_t> tops, lefts;
  int flips = 0;
  for (int64_t pos = 0; pos < 2000; ++pos) {
    AugmentDraw d = drawAugment(42, 3, pos, 2, true);
    ASSERT_GE(d.top, 0);
    ASSERT_LE(d.top, 4);
    ASSERT_GE(d.left, 0);
    ASSERT_LE(d.left, 4);
    tops.insert(d.top);
    lefts.insert(d.left);
    flips += d.flip;
    // A pure function of (seed, epoch, position): nothing else.
    AugmentDraw again = drawAugment(42, 3, pos, 2, true);
    EXPECT_EQ(again.top, d.top);
    EXPECT_EQ(again.left, d.left);
    EXPECT_EQ(again.flip, d.flip);
  }
  EXPECT_EQ(tops.size(), 5u);
  EXPECT_EQ(lefts.size(), 5u);
  EXPECT_GT(flips, 900);
  EXPECT_LT(flips, 1100);
  // Another seed or epoch draws differently.
  int same = 0;
  for (int64_t pos = 0; pos < 100; ++pos) {
    AugmentDraw a = drawAugment(42, 3, pos, 2, true);
    AugmentDraw b = drawAugment(43, 3, pos, 2, true);
    AugmentDraw c = drawAugment(42, 4, pos, 2, true);
    same += a.top == b.top && a.left == b.left && a.flip == b.flip;
    same += a.top == c.top && a.left == c.left && a.flip == c.flip;
  }
  EXPECT_LT(same, 30);
  // Without flip no draw flips.
  for (int64_t pos = 0; pos < 100; ++pos)
    EXPECT_FALSE(drawAugment(42, 3, pos, 2, false).flip);
}

} // namespace
