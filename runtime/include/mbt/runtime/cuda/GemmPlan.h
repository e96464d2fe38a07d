//===- GemmPlan.h - a row-major batched matmul as a cuBLAS call -*- C++ -*-===//
//
// The batched matmul of docs/abi.md (row-major, strided, last dimension
// contiguous, C[i] = op(A[i]) op(B[i]) (+ C[i])) as the arguments of one
// column-major strided-batched GEMM, cuBLAS's convention. Row-major C is
// column-major C^T, so the call computes C^T = op(B)^T op(A)^T: B comes
// first, and each operand's row stride is its leading dimension. Kept free
// of cuBLAS so that a test checks the mapping on any host
// (test/unit/runtime/GemmPlanTest.cpp emulates the column-major call).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_CUDA_GEMMPLAN_H
#define MBT_RUNTIME_CUDA_GEMMPLAN_H

#include "mbt/common/Abi.h"
#include "mbt/runtime/Error.h"

#include <algorithm>
#include <string>

namespace mbt {
namespace runtime {
namespace cuda {

/// One column-major operand of the call: op(X) is X transposed when
/// `transpose`; element (r, c) of the stored matrix of batch i is at
/// data[i * batchStride + r + c * leading].
template <typename T> struct GemmOperand {
  const T *data;
  bool transpose;
  int64_t leading;
  int64_t batchStride;
};

/// C (m x n, column-major) = op(first) (m x k) op(second) (k x n)
/// [+ C when accumulate], for `batch` matrices.
template <typename T> struct GemmPlan {
  int64_t m, n, k, batch;
  GemmOperand<T> first, second;
  T *c;
  int64_t ldc, strideC;
  bool accumulate;
};

namespace detail {
template <typename T>
int64_t rowStride(const MemRef<T, 3> &ref, const char *name) {
  if (ref.strides[2] != 1 && ref.sizes[2] > 1)
    throw RuntimeError(std::string("cuda batch matmul: operand ") + name +
                       " has a non-unit inner stride");
  return std::max<int64_t>({ref.strides[1], ref.sizes[2], 1});
}
} // namespace detail

/// The plan of c = op(a) op(b) (+ c); throws RuntimeError when the shapes
/// disagree or an inner stride is not 1.
template <typename T>
GemmPlan<T> planBatchMatmul(const MemRef<T, 3> &a, const MemRef<T, 3> &b,
                            const MemRef<T, 3> &c, bool transposeA,
                            bool transposeB, bool accumulate) {
  int64_t m = c.sizes[1], n = c.sizes[2], batch = c.sizes[0];
  int64_t k = transposeA ? a.sizes[1] : a.sizes[2];
  if ((transposeA ? a.sizes[2] : a.sizes[1]) != m ||
      (transposeB ? b.sizes[1] : b.sizes[2]) != n ||
      (transposeB ? b.sizes[2] : b.sizes[1]) != k || a.sizes[0] != batch ||
      b.sizes[0] != batch)
    throw RuntimeError("cuda batch matmul: operand shapes do not agree");
  GemmPlan<T> plan;
  // Column-major: C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m). Stored
  // row-major B (k x n) is column-major B^T (n x k): no transpose unless
  // B itself is transposed; the same for A.
  plan.m = n;
  plan.n = m;
  plan.k = k;
  plan.batch = batch;
  plan.first = {b.data + b.offset, transposeB, detail::rowStride(b, "b"),
                b.strides[0]};
  plan.second = {a.data + a.offset, transposeA, detail::rowStride(a, "a"),
                 a.strides[0]};
  plan.c = c.data + c.offset;
  plan.ldc = detail::rowStride(c, "c");
  plan.strideC = c.strides[0];
  plan.accumulate = accumulate;
  return plan;
}

} // namespace cuda
} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_CUDA_GEMMPLAN_H
