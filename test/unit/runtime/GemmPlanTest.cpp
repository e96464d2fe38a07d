//===- GemmPlanTest.cpp - the cuBLAS mapping of the batched matmul --------===//
//
// The CUDA runtime turns the row-major batched matmul of docs/abi.md into
// one column-major cublas<S|D>gemmStridedBatched call (GemmPlan.h). This
// test runs that call's definition (column-major GEMM, strided batch) on
// the CPU with the plan's arguments, and compares with the row-major
// product computed directly, for every transpose, padded rows, a shared
// (batch stride 0) operand and accumulation: a mapping bug shows here, on
// any host, before a GPU ever runs it.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/cuda/GemmPlan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
using namespace mbt::runtime::cuda;

namespace {

/// A row-major [batch, rows, cols] operand with `pad` unused elements after
/// each row and, if `shared`, one matrix that every batch index reads.
struct Operand3 {
  std::vector<double> data;
  MemRef<double, 3> ref;

  Operand3(int64_t batch, int64_t rows, int64_t cols, int64_t pad, bool shared,
           std::mt19937 &rng) {
    int64_t rowStride = cols + pad, matrix = rows * rowStride;
    data.resize((shared ? 1 : batch) * matrix);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (double &v : data)
      v = unit(rng);
    ref.basePtr = ref.data = data.data();
    ref.offset = 0;
    ref.sizes[0] = batch;
    ref.sizes[1] = rows;
    ref.sizes[2] = cols;
    ref.strides[0] = shared ? 0 : matrix;
    ref.strides[1] = rowStride;
    ref.strides[2] = 1;
  }
  double at(int64_t i, int64_t r, int64_t c) const {
    return data[i * ref.strides[0] + r * ref.strides[1] + c];
  }
};

/// What cublas<T>gemmStridedBatched computes, by its definition.
void columnMajorGemm(const GemmPlan<double> &p) {
  auto element = [](const GemmOperand<double> &x, int64_t i, int64_t r,
                    int64_t c) {
    if (x.transpose)
      std::swap(r, c);
    return x.data[i * x.batchStride + r + c * x.leading];
  };
  for (int64_t i = 0; i < p.batch; ++i)
    for (int64_t col = 0; col < p.n; ++col)
      for (int64_t row = 0; row < p.m; ++row) {
        double sum = 0;
        for (int64_t kk = 0; kk < p.k; ++kk)
          sum += element(p.first, i, row, kk) * element(p.second, i, kk, col);
        double &out = p.c[i * p.strideC + row + col * p.ldc];
        out = sum + (p.accumulate ? out : 0.0);
      }
}

struct Case {
  bool ta, tb, accumulate, sharedA;
};

class GemmPlanTest : public ::testing::TestWithParam<Case> {};

TEST_P(GemmPlanTest, ColumnMajorCallComputesTheRowMajorProduct) {
  Case t = GetParam();
  std::mt19937 rng(7);
  const int64_t batch = 3, m = 5, n = 4, k = 6;
  Operand3 a(batch, t.ta ? k : m, t.ta ? m : k, /*pad=*/2, t.sharedA, rng);
  Operand3 b(batch, t.tb ? n : k, t.tb ? k : n, /*pad=*/1, false, rng);
  Operand3 c(batch, m, n, /*pad=*/3, false, rng);
  std::vector<double> before = c.data;

  GemmPlan<double> plan =
      planBatchMatmul(a.ref, b.ref, c.ref, t.ta, t.tb, t.accumulate);
  columnMajorGemm(plan);

  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        double expected = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          expected += (t.ta ? a.at(i, kk, r) : a.at(i, r, kk)) *
                      (t.tb ? b.at(i, col, kk) : b.at(i, kk, col));
        int64_t index = i * c.ref.strides[0] + r * c.ref.strides[1] + col;
        if (t.accumulate)
          expected += before[index];
        ASSERT_NEAR(c.data[index], expected, 1e-12)
            << "batch " << i << " row " << r << " col " << col;
      }
  // The padding between rows is never written.
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t pad = n; pad < c.ref.strides[1]; ++pad) {
        int64_t index = i * c.ref.strides[0] + r * c.ref.strides[1] + pad;
        ASSERT_EQ(c.data[index], before[index]);
      }
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, GemmPlanTest,
                         ::testing::Values(Case{false, false, false, false},
                                           Case{true, false, false, false},
                                           Case{false, true, false, false},
                                           Case{true, true, false, false},
                                           Case{false, false, true, false},
                                           Case{false, false, false, true},
                                           Case{true, false, true, true}));

TEST(GemmPlanErrors, DisagreeingShapesAndStridedColumnsAreRefused) {
  std::mt19937 rng(1);
  Operand3 a(2, 3, 4, 0, false, rng), b(2, 5, 6, 0, false, rng),
      c(2, 3, 6, 0, false, rng);
  EXPECT_THROW(planBatchMatmul(a.ref, b.ref, c.ref, false, false, false),
               RuntimeError);
  Operand3 b2(2, 4, 6, 0, false, rng);
  b2.ref.strides[2] = 2;
  EXPECT_THROW(planBatchMatmul(a.ref, b2.ref, c.ref, false, false, false),
               RuntimeError);
}

} // namespace
