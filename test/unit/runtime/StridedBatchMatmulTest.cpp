//===- StridedBatchMatmulTest.cpp - The kernels of several batch dims -----===//
//
// mbt-linalg-to-blas calls `mbt_rt_batch_matmul_f32_5d` (and the other
// ranks) for attention's products, on transposed views of the heads'
// layout [M, B, T, H, D]: the matrices' rows, columns and batch dims all
// have strides other than the dense ones. These tests check each layout
// the kernel reads (row-major, column-major through BLAS's transpose, C
// written column-major, neither) against a loop in double, that model i's
// products have the same bits alone as in the batch, and that the frozen
// models' slices are skipped.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Kernels.h"

#include "DeterministicValues.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
using mbt::test::filled;

namespace {

constexpr int64_t kModels = 3, kSequences = 2, kTokens = 7, kHeads = 4,
                  kHeadSize = 5;

/// A view of `data` with the given sizes and strides.
MemRef<float, 5> view(float *data, std::array<int64_t, 5> sizes,
                      std::array<int64_t, 5> strides) {
  MemRef<float, 5> ref;
  ref.basePtr = ref.data = data;
  ref.offset = 0;
  for (int d = 0; d < 5; ++d) {
    ref.sizes[d] = sizes[d];
    ref.strides[d] = strides[d];
  }
  return ref;
}

float &at(const MemRef<float, 5> &ref, std::array<int64_t, 5> index) {
  int64_t offset = ref.offset;
  for (int d = 0; d < 5; ++d)
    offset += index[d] * ref.strides[d];
  return ref.data[offset];
}

/// c = a b (+ c0) for every batch index, in double.
std::vector<double> reference(const MemRef<float, 5> &a,
                              const MemRef<float, 5> &b,
                              const MemRef<float, 5> &c, bool accumulate) {
  std::vector<double> out;
  for (int64_t i = 0; i < c.sizes[0]; ++i)
    for (int64_t j = 0; j < c.sizes[1]; ++j)
      for (int64_t h = 0; h < c.sizes[2]; ++h)
        for (int64_t r = 0; r < c.sizes[3]; ++r)
          for (int64_t col = 0; col < c.sizes[4]; ++col) {
            double sum = accumulate ? at(c, {i, j, h, r, col}) : 0.0;
            for (int64_t k = 0; k < a.sizes[4]; ++k)
              sum += double(at(a, {i, j, h, r, k})) *
                     double(at(b, {i, j, h, k, col}));
            out.push_back(sum);
          }
  return out;
}

void expectMatches(const MemRef<float, 5> &c,
                   const std::vector<double> &expected) {
  size_t n = 0;
  for (int64_t i = 0; i < c.sizes[0]; ++i)
    for (int64_t j = 0; j < c.sizes[1]; ++j)
      for (int64_t h = 0; h < c.sizes[2]; ++h)
        for (int64_t r = 0; r < c.sizes[3]; ++r)
          for (int64_t col = 0; col < c.sizes[4]; ++col, ++n)
            ASSERT_NEAR(at(c, {i, j, h, r, col}), expected[n], 1e-5)
                << "at [" << i << "," << j << "," << h << "," << r << "," << col
                << "]";
}

/// [M, B, T, H, D] dense, as [M, B, H, T, D] (memref.transpose's view).
MemRef<float, 5> headsView(std::vector<float> &heads) {
  return view(heads.data(), {kModels, kSequences, kHeads, kTokens, kHeadSize},
              {kSequences * kTokens * kHeads * kHeadSize,
               kTokens * kHeads * kHeadSize, kHeadSize, kHeads * kHeadSize, 1});
}

/// The same heads as [M, B, H, D, T]: a column-major matrix per head.
MemRef<float, 5> headsTransposedView(std::vector<float> &heads) {
  MemRef<float, 5> ref = headsView(heads);
  std::swap(ref.sizes[3], ref.sizes[4]);
  std::swap(ref.strides[3], ref.strides[4]);
  return ref;
}

std::vector<float> heads(uint32_t seed) {
  return filled(kModels * kSequences * kTokens * kHeads * kHeadSize, seed);
}

constexpr size_t kWeightsSize =
    kModels * kSequences * kHeads * kTokens * kTokens;

/// Dense [M, B, H, T, T] weights.
MemRef<float, 5> weightsView(std::vector<float> &weights) {
  return view(weights.data(), {kModels, kSequences, kHeads, kTokens, kTokens},
              {kSequences * kHeads * kTokens * kTokens,
               kHeads * kTokens * kTokens, kTokens * kTokens, kTokens, 1});
}

TEST(StridedBatchMatmul, AttentionScoresFromTheHeadsLayout) {
  // scores [M, B, H, T, T] = q k^T: k read column-major, as BLAS's
  // transpose.
  std::vector<float> q = heads(1), k = heads(2);
  std::vector<float> scores(kWeightsSize, 9.0f);
  MemRef<float, 5> a = headsView(q), b = headsTransposedView(k),
                   c = weightsView(scores);
  std::vector<double> expected = reference(a, b, c, false);
  _mlir_ciface_mbt_rt_batch_matmul_f32_5d(&a, &b, &c, 0, 0, 0);
  EXPECT_EQ(takeKernelError(), "");
  expectMatches(c, expected);
}

TEST(StridedBatchMatmul, WeightedValuesAccumulateIntoTheHeadsLayout) {
  // out [M, B, H, T, D] (a view of [M, B, T, H, D]) += p v.
  std::vector<float> p = filled(kWeightsSize, 3), v = heads(4), out = heads(5);
  MemRef<float, 5> a = weightsView(p), b = headsView(v), c = headsView(out);
  std::vector<double> expected = reference(a, b, c, true);
  _mlir_ciface_mbt_rt_batch_matmul_f32_5d(&a, &b, &c, 0, 0, 1);
  EXPECT_EQ(takeKernelError(), "");
  expectMatches(c, expected);
}

TEST(StridedBatchMatmul, AColumnMajorOutputIsComputedAsItsTranspose) {
  // c [M, B, H, D, T] column-major per head: computed as c^T = b^T a^T.
  std::vector<float> p = filled(kWeightsSize, 6), v = heads(7), out = heads(8);
  MemRef<float, 5> b = weightsView(p), a = headsTransposedView(v),
                   c = headsTransposedView(out);
  std::vector<double> expected = reference(a, b, c, false);
  _mlir_ciface_mbt_rt_batch_matmul_f32_5d(&a, &b, &c, 0, 0, 0);
  EXPECT_EQ(takeKernelError(), "");
  expectMatches(c, expected);
}

TEST(StridedBatchMatmul, ALayoutBlasCannotReadGoesToTheLoop) {
  // a [M, B, H, T, T]: its rows and columns both step over every other
  // element.
  std::vector<float> storage = filled(2 * kWeightsSize, 9), v = heads(10);
  std::vector<float> out(kModels * kSequences * kHeads * kTokens * kHeadSize);
  MemRef<float, 5> a = weightsView(storage);
  for (int d = 0; d < 5; ++d)
    a.strides[d] *= 2;
  MemRef<float, 5> b = headsView(v);
  MemRef<float, 5> c =
      view(out.data(), {kModels, kSequences, kHeads, kTokens, kHeadSize},
           {kSequences * kHeads * kTokens * kHeadSize,
            kHeads * kTokens * kHeadSize, kTokens * kHeadSize, kHeadSize, 1});
  std::vector<double> expected = reference(a, b, c, false);
  _mlir_ciface_mbt_rt_batch_matmul_f32_5d(&a, &b, &c, 0, 0, 0);
  EXPECT_EQ(takeKernelError(), "");
  expectMatches(c, expected);
}

TEST(StridedBatchMatmul, EachModelHasTheBitsItHasAlone) {
  std::vector<float> q = heads(11), k = heads(12);
  std::vector<float> all(kWeightsSize);
  std::vector<float> one = all;
  MemRef<float, 5> a = headsView(q), b = headsTransposedView(k),
                   c = weightsView(all);
  _mlir_ciface_mbt_rt_batch_matmul_f32_5d(&a, &b, &c, 0, 0, 0);
  for (int64_t i = 0; i < kModels; ++i) {
    MemRef<float, 5> a1 = a, b1 = b, c1 = weightsView(one);
    a1.sizes[0] = b1.sizes[0] = c1.sizes[0] = 1;
    a1.offset = i * a.strides[0];
    b1.offset = i * b.strides[0];
    _mlir_ciface_mbt_rt_batch_matmul_f32_5d(&a1, &b1, &c1, 0, 0, 0);
    for (int64_t e = 0; e < c.strides[0]; ++e)
      ASSERT_EQ(one[e], all[i * c.strides[0] + e])
          << "model " << i << " element " << e;
  }
  EXPECT_EQ(takeKernelError(), "");
}

TEST(StridedBatchMatmul, FrozenModelsAreSkipped) {
  std::vector<float> q = heads(13), k = heads(14);
  std::vector<float> scores(kWeightsSize, 7.0f);
  MemRef<float, 5> a = headsView(q), b = headsTransposedView(k),
                   c = weightsView(scores);
  const uint8_t idle[kModels] = {0, 1, 0};
  {
    IdleModelsGuard guard(idle, kModels);
    _mlir_ciface_mbt_rt_batch_matmul_f32_5d(&a, &b, &c, 0, 0, 0);
  }
  for (int64_t e = 0; e < c.strides[0]; ++e) {
    ASSERT_NE(scores[e], 7.0f) << "model 0 was computed";
    ASSERT_EQ(scores[c.strides[0] + e], 7.0f) << "model 1 was skipped";
  }
  EXPECT_EQ(takeKernelError(), "");
}

TEST(StridedBatchMatmul, MismatchedBatchDimsAreReported) {
  std::vector<float> q = heads(15), k = heads(16);
  std::vector<float> scores(kWeightsSize);
  MemRef<float, 5> a = headsView(q), b = headsTransposedView(k),
                   c = weightsView(scores);
  b.sizes[2] = kHeads - 1;
  _mlir_ciface_mbt_rt_batch_matmul_f32_5d(&a, &b, &c, 0, 0, 0);
  std::string error = takeKernelError();
  EXPECT_NE(error.find("mbt_rt_batch_matmul_f32_5d: operand shapes do not "
                       "agree: a [3,2,4,7,5], b [3,2,3,5,7]"),
            std::string::npos)
      << error;
  EXPECT_TRUE(std::isnan(scores[0]));
}

} // namespace
