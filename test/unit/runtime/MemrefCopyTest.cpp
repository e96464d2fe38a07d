// Checks the runtime's memrefCopy (what compiled code calls for a
// memref.copy between strided buffers) against an element-wise copy.
#include "mbt/common/Abi.h"

#include <gtest/gtest.h>

#include <vector>

// memrefCopy is declared by MLIR's CRunnerUtils.h (through Abi.h), with
// the signature compiled code calls it by.

namespace {

using mbt::MemRef;
using Unranked = UnrankedMemRefType<char>;

TEST(MemrefCopyTest, CopiesAStridedColumnBlockIntoADenseBuffer) {
  // src: columns [3, 7) of a 4x10 row-major matrix; dst: dense 4x4.
  std::vector<float> big(40), small(16, -1.0f);
  for (int i = 0; i < 40; ++i)
    big[i] = float(i);
  MemRef<float, 2> src{big.data(), big.data(), 3, {4, 4}, {10, 1}};
  MemRef<float, 2> dst{small.data(), small.data(), 0, {4, 4}, {4, 1}};
  Unranked s{2, &src}, d{2, &dst};
  memrefCopy(sizeof(float), &s, &d);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(small[r * 4 + c], float(r * 10 + 3 + c)) << r << "," << c;
}

TEST(MemrefCopyTest, CopiesATransposedViewElementByElement) {
  std::vector<float> a{0, 1, 2, 3, 4, 5}, b(6, -1.0f);         // a is 2x3
  MemRef<float, 2> src{a.data(), a.data(), 0, {3, 2}, {1, 3}}; // a^T
  MemRef<float, 2> dst{b.data(), b.data(), 0, {3, 2}, {2, 1}};
  Unranked s{2, &src}, d{2, &dst};
  memrefCopy(sizeof(float), &s, &d);
  EXPECT_EQ(b, (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(MemrefCopyTest, CopiesAScalar) {
  float x = 2.5f, y = 0.0f;
  MemRef<float, 0> src{&x, &x, 0}, dst{&y, &y, 0};
  Unranked s{0, &src}, d{0, &dst};
  memrefCopy(sizeof(float), &s, &d);
  EXPECT_EQ(y, 2.5f);
}

} // namespace
