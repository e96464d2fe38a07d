//===- Bf16MatmulKernelTest.cpp - the kernel that rounds to bf16 ----------===//
//
// _mlir_ciface_mbt_rt_batch_matmul_f32_bf16 on both of its engines (oneDNN's
// bf16 matmul where this CPU has bf16 products, and sgemm on rounded f32,
// which MBT_BF16_MATMUL=f32 selects): its operands are rounded to bf16 to
// nearest with ties to even, NaN kept, before exact products summed in f32;
// every transpose and strided operands; accumulation; and model i's bits
// alone and in a batch.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Kernels.h"

#include "DeterministicValues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
using mbt::test::bf16Reference;
using mbt::test::filled;

namespace {

float at(const MemRef3F &ref, int64_t i, int64_t r, int64_t c) {
  return ref.data[ref.offset + i * ref.strides[0] + r * ref.strides[1] +
                  c * ref.strides[2]];
}

/// The engine the test runs on: "" for the host's choice, "f32" for sgemm.
class Bf16MatmulTest : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    if (GetParam().empty())
      unsetenv("MBT_BF16_MATMUL");
    else
      setenv("MBT_BF16_MATMUL", GetParam().c_str(), 1);
  }
  void TearDown() override { unsetenv("MBT_BF16_MATMUL"); }
};

TEST_P(Bf16MatmulTest, RoundsOperandsToNearestTiesToEvenThenSumsExactly) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 (bf16's spacing at 1) and
  // goes to the even 1; 1 + 3 2^-8 goes up to the even 1 + 2^-6; 1 + 3
  // 2^-10 goes down to 1. Every product and sum below is exact in f32.
  const float values[] = {1 + 0x1p-8f, 1 + 3 * 0x1p-8f, 1 + 3 * 0x1p-10f,
                          -2 - 0x1p-7f};
  const int64_t m = 4, n = 3, k = 4;
  std::vector<float> a(m * k), b(k * n), c(m * n, 7.0f);
  for (int64_t i = 0; i < m * k; ++i)
    a[i] = values[i % 4] * float(1 + i % 3);
  for (int64_t i = 0; i < k * n; ++i)
    b[i] = values[(i + 1) % 4];
  auto ra = makeDenseMemRef<float, 3>(a.data(), {1, m, k});
  auto rb = makeDenseMemRef<float, 3>(b.data(), {1, k, n});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {1, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &rc, 0, 0, 0);
  ASSERT_EQ(takeKernelError(), "");
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col) {
      double sum = 0;
      for (int64_t j = 0; j < k; ++j)
        sum += bf16Reference(a[r * k + j]) * bf16Reference(b[j * n + col]);
      EXPECT_EQ(double(c[r * n + col]), sum)
          << "at [" << r << "," << col << "]";
    }
}

class Bf16TransposeTest
    : public ::testing::TestWithParam<std::tuple<std::string, bool, bool>> {
protected:
  void SetUp() override {
    const std::string &engine = std::get<0>(GetParam());
    if (engine.empty())
      unsetenv("MBT_BF16_MATMUL");
    else
      setenv("MBT_BF16_MATMUL", engine.c_str(), 1);
  }
  void TearDown() override { unsetenv("MBT_BF16_MATMUL"); }
};

TEST_P(Bf16TransposeTest, StridedOperandsMatchRoundedProductsInDouble) {
  auto [engine, ta, tb] = GetParam();
  // Columns [3, 3 + cols) of a wider buffer, as the compiler passes the
  // weights in the flat parameter buffer.
  const int64_t batch = 3, m = 17, n = 9, k = 64, width = 80, skip = 3;
  auto strided = [&](std::vector<float> &buffer, int64_t rows, int64_t cols) {
    return mbt::test::columnSlices(buffer, batch, rows, cols, width, skip,
                                   uint32_t(rows + cols));
  };
  std::vector<float> a, b, c(batch * m * n);
  MemRef3F ra = ta ? strided(a, k, m) : strided(a, m, k);
  MemRef3F rb = tb ? strided(b, n, k) : strided(b, k, n);
  auto rc = makeDenseMemRef<float, 3>(c.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &rc, ta, tb, 0);
  ASSERT_EQ(takeKernelError(), "");
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        double sum = 0, magnitude = 0, unrounded = 0;
        for (int64_t j = 0; j < k; ++j) {
          float x = ta ? at(ra, i, j, r) : at(ra, i, r, j);
          float y = tb ? at(rb, i, col, j) : at(rb, i, j, col);
          double p = bf16Reference(x) * bf16Reference(y);
          sum += p;
          magnitude += std::fabs(p);
          unrounded += double(x) * double(y);
        }
        // Exact products summed in f32 in some order: each of the k
        // additions errs by at most 2^-24 of a partial sum, each partial
        // sum at most the sum of the magnitudes.
        double tolerance = k * 0x1p-24 * magnitude;
        ASSERT_NEAR(at(rc, i, r, col), sum, tolerance)
            << "at [" << i << "," << r << "," << col << "]";
        // The operands' rounding moves the result by far more than that,
        // so an unrounded product would fail the check above.
        if (i == 0 && r == 0 && col == 0) {
          EXPECT_GT(std::fabs(unrounded - sum), 10 * tolerance);
        }
      }
}

TEST_P(Bf16MatmulTest, NaNOperandStaysNaN) {
  // 0x7f800001 is a NaN whose rounding carry, unchecked, would leave the
  // bits of infinity.
  const uint32_t nanBits = 0x7f800001u;
  float nan;
  std::memcpy(&nan, &nanBits, sizeof nan);
  const int64_t m = 2, n = 2, k = 8;
  std::vector<float> a(m * k, 1.0f), b(k * n, 1.0f), c(m * n);
  a[3] = nan; // row 0
  auto ra = makeDenseMemRef<float, 3>(a.data(), {1, m, k});
  auto rb = makeDenseMemRef<float, 3>(b.data(), {1, k, n});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {1, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &rc, 0, 0, 0);
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_TRUE(std::isnan(c[1]));
  EXPECT_EQ(c[2], 8.0f);
  EXPECT_EQ(c[3], 8.0f);
}

TEST_P(Bf16MatmulTest, AccumulateAddsTheProductToC) {
  const int64_t m = 3, n = 5, k = 16;
  std::vector<float> a = filled(m * k, 4), b = filled(k * n, 5);
  std::vector<float> once(m * n), twice(m * n);
  auto ra = makeDenseMemRef<float, 3>(a.data(), {1, m, k});
  auto rb = makeDenseMemRef<float, 3>(b.data(), {1, k, n});
  auto r1 = makeDenseMemRef<float, 3>(once.data(), {1, m, n});
  auto r2 = makeDenseMemRef<float, 3>(twice.data(), {1, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &r1, 0, 0, 0);
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &r2, 0, 0, 0);
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &r2, 0, 0, 1);
  for (int64_t i = 0; i < m * n; ++i)
    EXPECT_EQ(twice[i], 2 * once[i]) << i; // doubling is exact
}

TEST_P(Bf16MatmulTest, ModelsInABatchGetTheirBitsAlone) {
  // Large enough to be spread over the kernel pool's threads.
  const int64_t batch = 8, m = 64, n = 48, k = 96;
  std::vector<float> a = filled(batch * m * k, 6), b = filled(batch * k * n, 7);
  std::vector<float> together(batch * m * n), alone(m * n);
  auto ra = makeDenseMemRef<float, 3>(a.data(), {batch, m, k});
  auto rb = makeDenseMemRef<float, 3>(b.data(), {batch, n, k});
  auto rc = makeDenseMemRef<float, 3>(together.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &rc, 0, 1, 0);
  ASSERT_EQ(takeKernelError(), "");
  for (int64_t i = 0; i < batch; ++i) {
    auto ai = makeDenseMemRef<float, 3>(a.data() + i * m * k, {1, m, k});
    auto bi = makeDenseMemRef<float, 3>(b.data() + i * k * n, {1, n, k});
    auto ci = makeDenseMemRef<float, 3>(alone.data(), {1, m, n});
    _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ai, &bi, &ci, 0, 1, 0);
    ASSERT_EQ(takeKernelError(), "");
    ASSERT_EQ(std::memcmp(alone.data(), together.data() + i * m * n,
                          alone.size() * sizeof(float)),
              0)
        << "model " << i;
  }
}

TEST_P(Bf16MatmulTest, SharedOperandIsPackedAgainInTheNextCall) {
  // The models share a (a zero batch stride, as the input batch is), so
  // the kernel packs it once per thread in a call; the next call, after a
  // changed in place, must see the new values.
  const int64_t batch = 6, m = 32, n = 24, k = 40;
  std::vector<float> a = filled(m * k, 8), b = filled(batch * k * n, 9);
  std::vector<float> c(batch * m * n), fresh(batch * m * n);
  auto ra = makeDenseMemRef<float, 3>(a.data(), {batch, m, k});
  ra.strides[0] = 0;
  auto rb = makeDenseMemRef<float, 3>(b.data(), {batch, k, n});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &rc, 0, 0, 0);
  for (float &x : a)
    x = -2 * x;
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &rc, 0, 0, 0);
  std::vector<float> copy = a; // another address: nothing packed from it
  auto rcopy = makeDenseMemRef<float, 3>(copy.data(), {batch, m, k});
  rcopy.strides[0] = 0;
  auto rfresh = makeDenseMemRef<float, 3>(fresh.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&rcopy, &rb, &rfresh, 0, 0, 0);
  ASSERT_EQ(takeKernelError(), "");
  EXPECT_EQ(std::memcmp(c.data(), fresh.data(), c.size() * sizeof(float)), 0);
}

std::string engineName(const std::string &engine) {
  return engine.empty() ? "HostEngine" : "Sgemm";
}

/// The float of `bits`.
float fromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// An operand's long contiguous runs are rounded 16 values at a time (by
// the CPU's vcvtneps2bf16 where it has AVX512-BF16), its short ones value
// by value: both must give the same bits, the special values included.
// a is 48 values viewed as a [48, 1] column (transposed), so that each
// product c[i] = bf16(a[i]) * 1 reads one value, and a NaN or an infinity
// stays in its own row.
TEST_P(Bf16MatmulTest, LongRunsRoundAsSingleValues) {
  std::vector<float> a(48, 1.5f);
  const uint32_t special[] = {
      0x3F808000, // 1 + 2^-8: a tie, to the even 1
      0x3F818000, // a tie, up to the even 1 + 2^-6
      0x3F80FFFF, // past the tie between 1 and 1 + 2^-7: up
      0x3FFF8000, // a tie that carries into the exponent: 2
      0x7F7FFFFF, // the largest f32: rounds to infinity
      0xFF800000, // -infinity
      0x7FC00001, // a quiet NaN with a payload
      0x7F800001, // a signalling NaN: stays a NaN
      0x80000000, // -0
      0x00800000, // the smallest normal f32
      0xC2F6E979, // -123.456
  };
  for (size_t i = 0; i < std::size(special); ++i)
    a[i] = fromBits(special[i]);
  // Subnormals in the second group of 16: 0x007FFFFF rounds up to 2^-126,
  // a normal bf16; 0x00018000 to a bf16 subnormal.
  a[20] = fromBits(0x007FFFFF);
  a[21] = fromBits(0x00018000);
  a[40] = fromBits(0x807FFFFF);
  float one = 1.0f;
  std::vector<float> c(48, 7.0f);
  auto ra = makeDenseMemRef<float, 3>(a.data(), {1, 1, 48});
  auto rb = makeDenseMemRef<float, 3>(&one, {1, 1, 1});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {1, 48, 1});
  _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&ra, &rb, &rc, 1, 0, 0);
  ASSERT_EQ(takeKernelError(), "");
  for (int64_t i = 0; i < 48; ++i) {
    float alone = 7.0f;
    auto a1 = makeDenseMemRef<float, 3>(&a[i], {1, 1, 1});
    auto c1 = makeDenseMemRef<float, 3>(&alone, {1, 1, 1});
    _mlir_ciface_mbt_rt_batch_matmul_f32_bf16(&a1, &rb, &c1, 1, 0, 0);
    if (std::isnan(alone)) {
      EXPECT_TRUE(std::isnan(c[i])) << "at " << i;
      continue;
    }
    uint32_t got, want, from;
    std::memcpy(&got, &c[i], sizeof got);
    std::memcpy(&want, &alone, sizeof want);
    std::memcpy(&from, &a[i], sizeof from);
    EXPECT_EQ(got, want) << "at " << i << ": a = 0x" << std::hex << from;
  }
  // 0x007FFFFF is kept as 2^-126 (a vector rounding that flushed f32
  // subnormals first would give 0).
  EXPECT_EQ(c[20], 0x1p-126f);
}

INSTANTIATE_TEST_SUITE_P(Engines, Bf16MatmulTest,
                         ::testing::Values(std::string(), std::string("f32")),
                         [](const auto &info) {
                           return engineName(info.param);
                         });

INSTANTIATE_TEST_SUITE_P(
    Engines, Bf16TransposeTest,
    ::testing::Combine(::testing::Values(std::string(), std::string("f32")),
                       ::testing::Bool(), ::testing::Bool()),
    [](const auto &info) {
      return engineName(std::get<0>(info.param)) +
             (std::get<1>(info.param) ? "_At" : "_A") +
             (std::get<2>(info.param) ? "Bt" : "B");
    });

TEST(Bf16MatmulEngineTest, NamesTheEngineAndHonoursTheOverride) {
  setenv("MBT_BF16_MATMUL", "f32", 1);
  EXPECT_EQ(bf16MatmulEngine(), "sgemm on rounded f32");
  unsetenv("MBT_BF16_MATMUL");
  std::string engine = bf16MatmulEngine();
  EXPECT_TRUE(engine == "sgemm on rounded f32" ||
              engine.rfind("oneDNN bf16", 0) == 0)
      << engine;
}

} // namespace
