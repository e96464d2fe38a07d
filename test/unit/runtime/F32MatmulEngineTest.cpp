//===- F32MatmulEngineTest.cpp - the f32 kernel on each of its libraries --===//
//
// _mlir_ciface_mbt_rt_batch_matmul_f32 runs a product on oneDNN's f32 GEMM
// or on OpenBLAS's sgemm, by its shape and the CPU (f32MatmulEngine), or on
// the one MBT_F32_MATMUL names. On each: every transpose of strided
// operands, c strided and accumulated into, against sums in double within
// f32's bound; each model's bits the same alone as in a threaded batch; and
// the choice by shape.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Kernels.h"

#include "DeterministicValues.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
using mbt::test::filled;

namespace {

float at(const MemRef3F &ref, int64_t i, int64_t r, int64_t c) {
  return ref.data[ref.offset + i * ref.strides[0] + r * ref.strides[1] +
                  c * ref.strides[2]];
}

/// Sets MBT_F32_MATMUL to `engine` for the test's lifetime.
class F32Engine {
public:
  explicit F32Engine(const std::string &engine) {
    setenv("MBT_F32_MATMUL", engine.c_str(), 1);
  }
  ~F32Engine() { unsetenv("MBT_F32_MATMUL"); }
};

/// Whether `engine` multiplies on this build: oneDNN is optional.
bool available(const std::string &engine) {
  F32Engine forced(engine);
  return f32MatmulEngine(64, 64, 64)
             .find(engine == "onednn" ? "oneDNN" : "OpenBLAS") !=
         std::string::npos;
}

class F32EngineTest
    : public ::testing::TestWithParam<std::tuple<std::string, bool, bool>> {
protected:
  void SetUp() override {
    if (!available(std::get<0>(GetParam())))
      GTEST_SKIP() << std::get<0>(GetParam()) << " is not built in";
  }
};

// 37 x 70 x 515: 1.3 million multiply-adds, a product the choice by shape
// gives to oneDNN on AVX-512, so the forced engine and the default agree.
TEST_P(F32EngineTest, StridedAccumulatedProductsMatchSumsInDouble) {
  auto [engine, ta, tb] = GetParam();
  F32Engine forced(engine);
  // Columns [3, 3 + cols) of a wider buffer, as the compiler passes the
  // weights in the flat parameter buffer; c likewise.
  const int64_t batch = 3, m = 37, n = 70, k = 515, width = 530, skip = 3;
  auto strided = [&](std::vector<float> &buffer, int64_t rows, int64_t cols,
                     uint32_t seed) {
    return mbt::test::columnSlices(buffer, batch, rows, cols, width, skip,
                                   seed);
  };
  std::vector<float> a, b, c;
  MemRef3F ra = ta ? strided(a, k, m, 31) : strided(a, m, k, 31);
  MemRef3F rb = tb ? strided(b, n, k, 32) : strided(b, k, n, 32);
  MemRef3F rc = strided(c, m, n, 33);
  const std::vector<float> before = c;
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, ta, tb, 1);
  ASSERT_EQ(takeKernelError(), "");
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        int64_t offset =
            rc.offset + i * rc.strides[0] + r * rc.strides[1] + col;
        double sum = before[offset], magnitude = std::fabs(sum);
        for (int64_t j = 0; j < k; ++j) {
          double p = double(ta ? at(ra, i, j, r) : at(ra, i, r, j)) *
                     double(tb ? at(rb, i, col, j) : at(rb, i, j, col));
          sum += p;
          magnitude += std::fabs(p);
        }
        // Each of the k rounded products and k additions errs by at most
        // 2^-24 of a value no larger than the sum of the magnitudes (fused
        // multiply-adds round once: fewer errors, not more).
        double tolerance = 2 * (k + 1) * 0x1p-24 * magnitude;
        ASSERT_NEAR(at(rc, i, r, col), sum, tolerance)
            << "at [" << i << "," << r << "," << col << "]";
      }
  // Nothing outside c's columns was written.
  for (int64_t row = 0; row < batch * m; ++row)
    for (int64_t col = 0; col < width; ++col)
      if (col < skip || col >= skip + n) {
        ASSERT_EQ(c[row * width + col], before[row * width + col]);
      }
}

// The kernel spreads the models over its threads; model i's product must
// have the bits of model i alone, whichever library multiplies it and
// wherever its operands lie.
TEST_P(F32EngineTest, ThreadedBatchAgreesBitwiseWithEachModelAlone) {
  auto [engine, ta, tb] = GetParam();
  F32Engine forced(engine);
  const int64_t batch = 5, m = 97, n = 64, k = 131;
  std::vector<float> a = filled(batch * m * k, 41),
                     b = filled(batch * k * n, 42);
  std::vector<float> all = filled(batch * m * n, 43), start = all;
  auto matrixA = [&](float *data, int64_t count) {
    return ta ? makeDenseMemRef<float, 3>(data, {count, k, m})
              : makeDenseMemRef<float, 3>(data, {count, m, k});
  };
  auto matrixB = [&](float *data, int64_t count) {
    return tb ? makeDenseMemRef<float, 3>(data, {count, n, k})
              : makeDenseMemRef<float, 3>(data, {count, k, n});
  };
  auto ra = matrixA(a.data(), batch), rb = matrixB(b.data(), batch);
  auto rc = makeDenseMemRef<float, 3>(all.data(), {batch, m, n});
  _mlir_ciface_mbt_rt_batch_matmul_f32(&ra, &rb, &rc, ta, tb, 1);
  for (int64_t i = 0; i < batch; ++i) {
    // Model i alone, as a run of it alone would hold it: in buffers of
    // its own, at another alignment (i + 1 floats past a fresh one's).
    int64_t shift = i + 1;
    std::vector<float> aloneA(shift + m * k), aloneB(shift + k * n),
        aloneC(shift + m * n);
    std::copy_n(a.begin() + i * m * k, m * k, aloneA.begin() + shift);
    std::copy_n(b.begin() + i * k * n, k * n, aloneB.begin() + shift);
    std::copy_n(start.begin() + i * m * n, m * n, aloneC.begin() + shift);
    float *one = aloneC.data() + shift;
    auto a1 = matrixA(aloneA.data() + shift, 1);
    auto b1 = matrixB(aloneB.data() + shift, 1);
    auto c1 = makeDenseMemRef<float, 3>(one, {1, m, n});
    _mlir_ciface_mbt_rt_batch_matmul_f32(&a1, &b1, &c1, ta, tb, 1);
    for (int64_t j = 0; j < m * n; ++j)
      ASSERT_EQ(one[j], all[i * m * n + j]) << "model " << i << " elem " << j;
  }
  EXPECT_EQ(takeKernelError(), "");
}

INSTANTIATE_TEST_SUITE_P(
    EnginesAndTransposes, F32EngineTest,
    ::testing::Combine(::testing::Values("openblas", "onednn"),
                       ::testing::Bool(), ::testing::Bool()),
    [](const ::testing::TestParamInfo<F32EngineTest::ParamType> &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) ? "_TransA" : "_A") +
             (std::get<2>(info.param) ? "TransB" : "B");
    });

TEST(F32MatmulEngineTest, SmallAndNarrowProductsStayOnBlas) {
  // oneDNN's fixed cost per call loses on these: a classifier's logits
  // (n = 10), a product of fewer than 2^20 multiply-adds, and a narrow one
  // (n = 16) of a short contraction.
  EXPECT_EQ(f32MatmulEngine(128, 10, 128).rfind("oneDNN", 0),
            std::string::npos);
  EXPECT_EQ(f32MatmulEngine(64, 84, 120).rfind("oneDNN", 0), std::string::npos);
  EXPECT_EQ(f32MatmulEngine(128, 16, 512).rfind("oneDNN", 0),
            std::string::npos);
}

TEST(F32MatmulEngineTest, LargeProductsTakeOneDnnWhereItRunsOnAvx512) {
  // Where the default gives the one product to oneDNN it gives all of these:
  // wide ones, a convolution's few channels by many positions, and a
  // narrow one of many rows (a recurrence's input gradient).
  if (f32MatmulEngine(128, 128, 784) != "oneDNN f32")
    GTEST_SKIP() << "f32 products on " << f32MatmulEngine(128, 128, 784);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{4096, 64, 32},
                         {6, 50176, 25},
                         {6, 25, 50176},
                         {64, 128, 128},
                         {4096, 16, 96}})
    EXPECT_EQ(f32MatmulEngine(m, n, k), "oneDNN f32")
        << m << " x " << n << " x " << k;
}

TEST(F32MatmulEngineTest, EnvironmentTakesOneLibraryForEveryProduct) {
  {
    F32Engine forced("openblas");
    EXPECT_EQ(f32MatmulEngine(128, 128, 784).rfind("oneDNN", 0),
              std::string::npos);
  }
  if (!available("onednn"))
    GTEST_SKIP() << "oneDNN is not built in";
  F32Engine forced("onednn");
  EXPECT_EQ(f32MatmulEngine(2, 3, 4), "oneDNN f32");
}

} // namespace
