//===- PhiloxTest.cpp - Philox4x32-10 known answers and distributions -----===//
//
// The known-answer vectors are the "philox4x32 10" lines of Random123's
// tests/kat_vectors (D. E. Shaw Research), which cuRAND and PyTorch also
// reproduce: counter (4 words), key (2 words), expected output (4 words).
//
//===----------------------------------------------------------------------===//

#include "mbt/common/Philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace mbt;

namespace {

struct KnownAnswer {
  PhiloxCounter counter;
  PhiloxKey key;
  PhiloxCounter expected;
};

TEST(PhiloxTest, MatchesRandom123KnownAnswerVectors) {
  const KnownAnswer cases[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const KnownAnswer &c : cases)
    EXPECT_EQ(philox4x32x10(c.counter, c.key), c.expected);
}

TEST(PhiloxTest, UniformFloatCoversZeroToJustBelowOne) {
  EXPECT_EQ(uniformFloat(0u), 0.0f);
  EXPECT_EQ(uniformFloat(0xffffffffu), 1.0f - 1.0f / 16777216.0f);
  EXPECT_LT(uniformFloat(0xffffffffu), 1.0f);
}

TEST(PhiloxTest, StreamUniformsStayInRangeWithMeanOneHalf) {
  PhiloxStream stream(makePhiloxKey(123), 0, 0);
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    float u = uniformFloat(stream.next());
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
}

TEST(PhiloxTest, StreamWordsAreTheBlocksInCounterOrder) {
  PhiloxKey key = makePhiloxKey(0x0123456789abcdefull);
  PhiloxStream stream(key, 5, 9);
  for (uint32_t block = 0; block < 3; ++block) {
    PhiloxCounter expected = philox4x32x10({block, 0, 5, 9}, key);
    for (int lane = 0; lane < 4; ++lane)
      EXPECT_EQ(stream.next(), expected[lane]);
  }
}

TEST(PhiloxTest, NextBelowStaysInRangeAndHitsEveryValue) {
  PhiloxStream stream(makePhiloxKey(7), 1, 2);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) {
    uint32_t v = stream.nextBelow(7);
    ASSERT_LT(v, 7u);
    ++counts[v];
  }
  for (int c : counts)
    EXPECT_NEAR(c, 10000, 500);
  EXPECT_EQ(stream.nextBelow(1), 0u);
}

TEST(PhiloxTest, BoxMullerIsFiniteForExtremeWords) {
  float z0, z1;
  for (uint32_t a : {0u, 1u, 0xffffffffu})
    for (uint32_t b : {0u, 0x80000000u, 0xffffffffu}) {
      boxMuller(a, b, z0, z1);
      EXPECT_TRUE(std::isfinite(z0));
      EXPECT_TRUE(std::isfinite(z1));
    }
}

} // namespace
