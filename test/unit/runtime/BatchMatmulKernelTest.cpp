//===- BatchMatmulKernelTest.cpp - The BLAS kernel artifacts import -------===//
//
// Checks _mlir_ciface_mbt_rt_batch_matmul_f32 against a naive triple loop
// for every transpose combination, for strided operands (column slices of a
// [M, P] params buffer, as the compiler passes weights), for empty shapes,
// and that batch i's result is bitwise independent of the batch count; and
// the f64 kernel (dgemm) against the same loop to double precision.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Kernels.h"

#include "DeterministicValues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
using mbt::test::filled;

namespace {

template <typename T>
T element(const MemRef<T, 3> &ref, int64_t i, int64_t r, int64_t c) {
  return ref.data[ref.offset + i * ref.strides[0] + r * ref.strides[1] +
                  c * ref.strides[2]];
}

/// Naive reference for c = op(a) . op(b), accumulated in double.
template <typename T>
std::vector<double> reference(const MemRef<T, 3> &a, const MemRef<T, 3> &b,
                              bool ta, bool tb, int64_t batch, int64_t m,
                              int64_t n, int64_t k) {
  std::vector<double> c(batch * m * n, 0.0);
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        double sum = 0;
        for (int64_t j = 0; j < k; ++j)
          sum += double(ta ? element(a, i, j, r) : element(a, i, r, j)) *
                 double(tb ? element(b, i, col, j) : element(b, i, j, col));
        c[(i * m + r) * n + col] = sum;
      }
  return c;
}

template <typename T>
void expectMatches(const MemRef<T, 3> &c, const std::vector<double> &expected,
                   int64_t batch, int64_t m, int64_t n,
                   double tolerance = 1e-4) {
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col)
        ASSERT_NEAR(element(c, i, r, col), expected[(i * m + r) * n + col],
                    tolerance)
            << "at [" << i << "," << r << "," << col << "]";
}

class TransposeTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {
};

TEST_P(TransposeTest, DenseOperandsMatchNaiveLoop) {
  auto [ta, tb] = GetParam();
  const int64_t batch = 3, m = 5, n = 7, k = 11;
  std::vector<float> a = filled(batch * m * k, 1), b = filled(batch * k * n, 2);
  std::vector<float> c(batch * m * n, 99.0f);
  auto ra = ta ? makeDenseMemRef<float, 3>(a.data(), {batch, k, m})
               : makeDenseMemRef<float, 3>(a.data(), {batch, m, k});
  auto rb = tb ? makeDenseMemRef<float, 3>(b.data(), {batch, n, k})
               : makeDenseMemRef<float, 3>(b.data(), {batch, k, n});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, ta, tb, 0);
  EXPECT_EQ(takeKernelError(), "");
  expectMatches(rc, reference(ra, rb, ta, tb, batch, m, n, k), batch, m, n);
}

TEST_P(TransposeTest, ColumnSlicesOfParamsBufferMatchNaiveLoop) {
  // params [M, P] with P = 40: b is the [6, 4] (or [4, 6]) weight at column
  // 10 of each row, c is written at column 3 of a wider [M, 2, 30] buffer.
  auto [ta, tb] = GetParam();
  const int64_t batch = 4, m = 2, n = 4, k = 6, p = 40;
  std::vector<float> a = filled(batch * m * k, 3);
  std::vector<float> params = filled(batch * p, 4);
  std::vector<float> out(batch * m * 30, 5.0f);
  auto ra = ta ? makeDenseMemRef<float, 3>(a.data(), {batch, k, m})
               : makeDenseMemRef<float, 3>(a.data(), {batch, m, k});
  MemRef3F rb = {params.data(),
                 params.data(),
                 10,
                 {batch, tb ? n : k, tb ? k : n},
                 {p, tb ? k : n, 1}};
  MemRef3F rc = {out.data(), out.data(), 3, {batch, m, n}, {m * 30, 30, 1}};
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, ta, tb, 0);
  EXPECT_EQ(takeKernelError(), "");
  expectMatches(rc, reference(ra, rb, ta, tb, batch, m, n, k), batch, m, n);
  // Nothing outside c's slice was written.
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < 30; ++col)
        if (col < 3 || col >= 3 + n) {
          ASSERT_EQ(out[i * m * 30 + r * 30 + col], 5.0f);
        }
}

TEST_P(TransposeTest, F64OperandsMatchNaiveLoopToDoublePrecision) {
  auto [ta, tb] = GetParam();
  const int64_t batch = 3, m = 5, n = 7, k = 11;
  std::vector<float> af = filled(batch * m * k, 1),
                     bf = filled(batch * k * n, 2);
  // Values that need all of a double's bits: f32 reaches 1e-7, not 1e-13.
  std::vector<double> a(af.size()), b(bf.size()), c(batch * m * n, 99.0);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = af[i] + 1e-9 * std::sin(double(i));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = bf[i] + 1e-9 * std::cos(double(i));
  auto ra = ta ? makeDenseMemRef<double, 3>(a.data(), {batch, k, m})
               : makeDenseMemRef<double, 3>(a.data(), {batch, m, k});
  auto rb = tb ? makeDenseMemRef<double, 3>(b.data(), {batch, n, k})
               : makeDenseMemRef<double, 3>(b.data(), {batch, k, n});
  auto rc = makeDenseMemRef<double, 3>(c.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f64(&ra, &rb, &rc, ta, tb, 0);
  EXPECT_EQ(takeKernelError(), "");
  expectMatches(rc, reference(ra, rb, ta, tb, batch, m, n, k), batch, m, n,
                1e-13);
}

INSTANTIATE_TEST_SUITE_P(
    AllTransposes, TransposeTest,
    ::testing::Combine(::testing::Bool(), ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<bool, bool>> &info) {
      return std::string(std::get<0>(info.param) ? "TransA" : "A") +
             (std::get<1>(info.param) ? "TransB" : "B");
    });

TEST(BatchMatmulKernelTest, BatchResultIsBitwiseIndependentOfBatchCount) {
  const int64_t batch = 6, m = 33, n = 65, k = 129;
  std::vector<float> a = filled(batch * m * k, 6), b = filled(batch * k * n, 7);
  std::vector<float> all(batch * m * n), one(m * n);
  auto ra = makeDenseMemRef<float, 3>(a.data(), {batch, m, k});
  auto rb = makeDenseMemRef<float, 3>(b.data(), {batch, k, n});
  auto rc = makeDenseMemRef<float, 3>(all.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, 0, 0, 0);
  for (int64_t i = 0; i < batch; ++i) {
    auto a1 = makeDenseMemRef<float, 3>(a.data() + i * m * k, {1, m, k});
    auto b1 = makeDenseMemRef<float, 3>(b.data() + i * k * n, {1, k, n});
    auto c1 = makeDenseMemRef<float, 3>(one.data(), {1, m, n});
    _mlir_ciface_mbt_rt_batch_matmul_f32(&a1, &b1, &c1, 0, 0, 0);
    for (int64_t j = 0; j < m * n; ++j)
      ASSERT_EQ(one[j], all[i * m * n + j]) << "batch " << i << " elem " << j;
  }
}

// The kernel spreads the models over its threads (MBT_NUM_THREADS); every
// model's product must have the bits of that model alone, transposed
// operands and accumulation included, whatever the thread count.
TEST(BatchMatmulKernelTest, ThreadedBatchAgreesBitwiseWithEachModelAlone) {
  // 6.2 MFLOP: above the work the kernel leaves to the calling thread.
  const int64_t batch = 5, m = 97, n = 49, k = 131;
  for (int transposed = 0; transposed < 4; ++transposed) {
    bool ta = transposed & 1, tb = transposed & 2;
    std::vector<float> a = filled(batch * m * k, 21),
                       b = filled(batch * k * n, 22);
    std::vector<float> all = filled(batch * m * n, 23), start = all;
    auto ra = ta ? makeDenseMemRef<float, 3>(a.data(), {batch, k, m})
                 : makeDenseMemRef<float, 3>(a.data(), {batch, m, k});
    auto rb = tb ? makeDenseMemRef<float, 3>(b.data(), {batch, n, k})
                 : makeDenseMemRef<float, 3>(b.data(), {batch, k, n});
    auto rc = makeDenseMemRef<float, 3>(all.data(), {batch, m, n});
    _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, ta, tb, 1);
    for (int64_t i = 0; i < batch; ++i) {
      std::vector<float> one(start.begin() + i * m * n,
                             start.begin() + (i + 1) * m * n);
      auto a1 = ta ? makeDenseMemRef<float, 3>(a.data() + i * m * k, {1, k, m})
                   : makeDenseMemRef<float, 3>(a.data() + i * m * k, {1, m, k});
      auto b1 = tb ? makeDenseMemRef<float, 3>(b.data() + i * k * n, {1, n, k})
                   : makeDenseMemRef<float, 3>(b.data() + i * k * n, {1, k, n});
      auto c1 = makeDenseMemRef<float, 3>(one.data(), {1, m, n});
      _mlir_ciface_mbt_rt_batch_matmul_f32(&a1, &b1, &c1, ta, tb, 1);
      for (int64_t j = 0; j < m * n; ++j)
        ASSERT_EQ(one[j], all[i * m * n + j])
            << "ta " << ta << " tb " << tb << " batch " << i << " elem " << j;
    }
  }
  EXPECT_EQ(takeKernelError(), "");
}

TEST(BatchMatmulKernelTest, EmptyContractionWritesZeros) {
  std::vector<float> c(2 * 3 * 4, 8.0f);
  float dummy = 0;
  auto ra = makeDenseMemRef<float, 3>(&dummy, {2, 3, 0});
  auto rb = makeDenseMemRef<float, 3>(&dummy, {2, 0, 4});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {2, 3, 4});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, 0, 0, 0);
  EXPECT_EQ(takeKernelError(), "");
  EXPECT_EQ(c, std::vector<float>(24, 0.0f));
}

TEST(BatchMatmulKernelTest, EmptyRowsOrColumnsOrBatchAreANoOp) {
  float dummy = 1;
  std::vector<float> a(12, 1.0f), b(12, 1.0f);
  auto noRowsA = makeDenseMemRef<float, 3>(a.data(), {2, 0, 3});
  auto b23 = makeDenseMemRef<float, 3>(b.data(), {2, 3, 2});
  auto noRowsC = makeDenseMemRef<float, 3>(&dummy, {2, 0, 2});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&noRowsA, &b23, &noRowsC, 0, 0, 0);
  auto a23 = makeDenseMemRef<float, 3>(a.data(), {2, 2, 3});
  auto noColsB = makeDenseMemRef<float, 3>(b.data(), {2, 3, 0});
  auto noColsC = makeDenseMemRef<float, 3>(&dummy, {2, 2, 0});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&a23, &noColsB, &noColsC, 0, 0, 0);
  auto emptyA = makeDenseMemRef<float, 3>(a.data(), {0, 2, 3});
  auto emptyB = makeDenseMemRef<float, 3>(b.data(), {0, 3, 2});
  auto emptyC = makeDenseMemRef<float, 3>(&dummy, {0, 2, 2});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&emptyA, &emptyB, &emptyC, 0, 0, 0);
  EXPECT_EQ(takeKernelError(), "");
  EXPECT_EQ(dummy, 1.0f);
}

TEST(BatchMatmulKernelTest, NonUnitColumnStrideFallsBackCorrectly) {
  // a viewed as the transpose of a dense buffer via swapped strides.
  const int64_t batch = 2, m = 3, n = 2, k = 4;
  std::vector<float> storage = filled(batch * k * m, 8),
                     b = filled(batch * k * n, 9);
  std::vector<float> c(batch * m * n);
  MemRef3F ra = {
      storage.data(), storage.data(), 0, {batch, m, k}, {k * m, 1, m}};
  auto rb = makeDenseMemRef<float, 3>(b.data(), {batch, k, n});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, 0, 0, 0);
  EXPECT_EQ(takeKernelError(), "");
  expectMatches(rc, reference(ra, rb, false, false, batch, m, n, k), batch, m,
                n);
}

TEST(BatchMatmulKernelTest,
     MismatchedShapesWriteNaNAndReportInsteadOfCrashing) {
  std::vector<float> a(2 * 3 * 4), b(2 * 5 * 6), c(2 * 3 * 6);
  auto ra = makeDenseMemRef<float, 3>(a.data(), {2, 3, 4});
  auto rb = makeDenseMemRef<float, 3>(b.data(), {2, 5, 6});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {2, 3, 6});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, 0, 0, 0);
  std::string error = takeKernelError();
  EXPECT_NE(error.find("a [2,3,4]"), std::string::npos) << error;
  EXPECT_NE(error.find("b [2,5,6]"), std::string::npos) << error;
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_EQ(takeKernelError(), ""); // taking the error clears it
}

TEST(BatchMatmulKernelTest, F64MismatchedShapesNameTheF64Kernel) {
  std::vector<double> a(2 * 3 * 4), b(2 * 5 * 6), c(2 * 3 * 6);
  auto ra = makeDenseMemRef<double, 3>(a.data(), {2, 3, 4});
  auto rb = makeDenseMemRef<double, 3>(b.data(), {2, 5, 6});
  auto rc = makeDenseMemRef<double, 3>(c.data(), {2, 3, 6});
  _mlir_ciface_mbt_rt_batch_matmul_f64(&ra, &rb, &rc, 0, 0, 0);
  std::string error = takeKernelError();
  EXPECT_NE(error.find("mbt_rt_batch_matmul_f64: operand shapes"),
            std::string::npos)
      << error;
  EXPECT_TRUE(std::isnan(c[0]));
}

} // namespace

namespace {

TEST(BatchMatmulKernelTest, AccumulateAddsTheProductToC) {
  const int64_t batch = 2, m = 5, n = 7, k = 9;
  std::vector<float> a = filled(batch * m * k, 11),
                     b = filled(batch * k * n, 12);
  std::vector<float> c = filled(batch * m * n, 13), before = c;
  auto ra = makeDenseMemRef<float, 3>(a.data(), {batch, m, k});
  auto rb = makeDenseMemRef<float, 3>(b.data(), {batch, k, n});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, 0, 0, 1);
  std::vector<double> expected =
      reference(ra, rb, false, false, batch, m, n, k);
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] += before[i];
  expectMatches(rc, expected, batch, m, n);
}

TEST(BatchMatmulKernelTest, AccumulateWithEmptyContractionLeavesCUnchanged) {
  std::vector<float> c = filled(6, 14), before = c;
  float none = 0;
  auto ra = makeDenseMemRef<float, 3>(&none, {1, 2, 0});
  auto rb = makeDenseMemRef<float, 3>(&none, {1, 0, 3});
  auto rc = makeDenseMemRef<float, 3>(c.data(), {1, 2, 3});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, 0, 0, 1);
  EXPECT_EQ(c, before);
}

} // namespace

namespace {

// While an IdleModelsGuard lives, the slices of frozen models are skipped:
// a batch of 6 is 3 models x 2 slices; model 1 is idle, so slices 2 and 3
// keep what they held and the others are computed. Without the guard, or
// for a batch that is not a multiple of the model count, everything is.
TEST(BatchMatmulKernelTest, SkipsTheSlicesOfIdleModels) {
  const int64_t batch = 6, m = 3, n = 4, k = 5;
  std::vector<float> a = filled(batch * m * k, 1), b = filled(batch * k * n, 2);
  auto run = [&](std::vector<float> &c, int64_t slices) {
    auto ra = makeDenseMemRef<float, 3>(a.data(), {slices, m, k});
    auto rb = makeDenseMemRef<float, 3>(b.data(), {slices, k, n});
    auto rc = makeDenseMemRef<float, 3>(c.data(), {slices, m, n});
    _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, 0, 0, 0);
  };
  std::vector<float> full(batch * m * n, 0.0f);
  run(full, batch);
  const float sentinel = 12345.0f;
  const uint8_t idle[3] = {0, 1, 0};
  std::vector<float> skipped(batch * m * n, sentinel);
  {
    IdleModelsGuard guard(idle, 3);
    run(skipped, batch);
  }
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t e = 0; e < m * n; ++e) {
      float got = skipped[i * m * n + e];
      if (i == 2 || i == 3)
        ASSERT_EQ(got, sentinel) << "slice " << i << " of the idle model";
      else
        ASSERT_EQ(got, full[i * m * n + e]) << "slice " << i;
    }
  // The guard is gone: every slice again.
  std::vector<float> again(batch * m * n, sentinel);
  run(again, batch);
  EXPECT_EQ(again, full);
  // 5 slices are not a whole number per model: all are computed.
  std::vector<float> odd(5 * m * n, sentinel);
  {
    IdleModelsGuard guard(idle, 3);
    run(odd, 5);
  }
  for (float v : odd)
    ASSERT_NE(v, sentinel);
}

} // namespace
