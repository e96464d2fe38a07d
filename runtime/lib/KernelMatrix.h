//===- KernelMatrix.h - the matrices of a batched matmul's slices -*- C++
//-*-===//
//
// The CPU kernels' view of one batch index of an operand: a logical matrix
// of any strides, how BLAS can read it, and the reference product for the
// layouts it cannot. Shared by the f32 kernel (Kernels.cpp) and the one
// that rounds its operands to bf16 (Bf16Matmul.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_LIB_KERNELMATRIX_H
#define MBT_RUNTIME_LIB_KERNELMATRIX_H

#include "mbt/common/Abi.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

namespace mbt {
namespace runtime {

/// A logical rows x cols matrix: element (r, c) at
/// data[r * rowStride + c * colStride], whatever the strides.
template <typename T> struct Matrix {
  T *data;
  int64_t rows, cols;
  int64_t rowStride, colStride;
};

template <typename T> Matrix<T> transposed(const Matrix<T> &m) {
  return {m.data, m.cols, m.rows, m.colStride, m.rowStride};
}

/// Matrix `i` of a rank-R operand: the batch dims (all but the last two)
/// taken in row-major order of their sizes, which every operand shares.
template <typename T, int R>
Matrix<T> slice(const MemRef<T, R> &ref, int64_t i) {
  int64_t offset = ref.offset;
  for (int d = R - 3; d >= 0; --d) {
    offset += (i % ref.sizes[d]) * ref.strides[d];
    i /= ref.sizes[d];
  }
  return {ref.data + offset, ref.sizes[R - 2], ref.sizes[R - 1],
          ref.strides[R - 2], ref.strides[R - 1]};
}

/// How BLAS reads a matrix: row-major (its columns contiguous, the row
/// stride covering a row) or, transposed, column-major. A single row or
/// column may carry any stride, since only one step along that dim is
/// ever taken. Row-major is preferred where both hold, which keeps the
/// choice the same for every batch index.
struct BlasLayout {
  bool valid = false;
  bool transposed = false;
  int leadingDim = 1;
};

template <typename T> inline BlasLayout blasLayout(const Matrix<T> &m) {
  if ((m.colStride == 1 || m.cols <= 1) &&
      (m.rowStride >= m.cols || m.rows <= 1))
    return {true, false,
            static_cast<int>(std::max<int64_t>({m.rowStride, m.cols, 1}))};
  if ((m.rowStride == 1 || m.rows <= 1) &&
      (m.colStride >= m.rows || m.cols <= 1))
    return {true, true,
            static_cast<int>(std::max<int64_t>({m.colStride, m.rows, 1}))};
  return {};
}

/// c = a b (+ c) on layouts BLAS cannot take.
template <typename T>
void naiveMatmul(const Matrix<T> &a, const Matrix<T> &b, const Matrix<T> &c,
                 bool accumulate) {
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t col = 0; col < c.cols; ++col) {
      T &out = c.data[r * c.rowStride + col * c.colStride];
      T sum = accumulate ? out : T(0);
      for (int64_t j = 0; j < a.cols; ++j)
        sum += a.data[r * a.rowStride + j * a.colStride] *
               b.data[j * b.rowStride + col * b.colStride];
      out = sum;
    }
}

/// `ref`'s sizes as "[2,64,6]", for error messages.
template <typename T, int R> std::string shapeOf(const MemRef<T, R> &ref) {
  std::string text = "[";
  for (int d = 0; d < R; ++d)
    text += fmt::format("{}{}", d ? "," : "", ref.sizes[d]);
  return text + "]";
}

/// Every element of `c` NaN: the output of a call the kernel refused, so
/// that no step goes on from stale values.
template <typename T, int R> void fillNaN(MemRef<T, R> *c) {
  if (!c || !c->data)
    return;
  int64_t count = numElements(*c);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = c->offset, rest = i;
    for (int d = R - 1; d >= 0; --d) {
      offset += (rest % c->sizes[d]) * c->strides[d];
      rest /= c->sizes[d];
    }
    c->data[offset] = std::numeric_limits<T>::quiet_NaN();
  }
}

/// c = a b (+ c) for logical matrices of any strides: one sgemm where BLAS
/// can read them, else the reference loop (Kernels.cpp).
void multiplyF32(Matrix<float> a, Matrix<float> b, Matrix<float> c,
                 bool accumulate);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_KERNELMATRIX_H
