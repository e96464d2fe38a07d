//===- CudaKernels.cpp - batched matmuls of a CUDA artifact over cuBLAS ---===//
//
// The contract of the CPU kernel (docs/abi.md): c[i] = op(a[i]) * op(b[i])
// (+ c[i] when accumulate) for every batch index i, on row-major strided
// operands whose last dimension is contiguous, here in device memory. One
// cublas<S|D>gemmStridedBatched call covers the batch: a batch stride of 0
// (the shared input of every model) is a valid stride for cuBLAS. cuBLAS is
// column-major, so the row-major product C = op(A) op(B) is computed as its
// transpose, C^T = op(B)^T op(A)^T, which reads the same memory.
//
// Every batch index runs the same kernel on its own matrices, so model i's
// product does not depend on the number of models beyond what cuBLAS's
// choice of algorithm for the batch size may change (checked on a GPU by
// tools/bench/gpu_check.sh, batch against alone).
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/cuda/CudaKernels.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/cuda/CudaContext.h"

#include <cublas_v2.h>

#include <algorithm>
#include <mutex>
#include <utility>

using namespace mbt::runtime;

namespace {
std::mutex errorMutex;
std::string firstError;

void checkCublas(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError(std::string(what) + ": " +
                       cublasGetStatusString(status));
}

/// The cuBLAS handle, bound to the shared stream.
cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    CUstream stream = cuda::sharedStream();
    cublasHandle_t created;
    checkCublas(cublasCreate(&created), "cublasCreate");
    checkCublas(cublasSetStream(created, stream), "cublasSetStream");
    // The FP32 path: TF32 would change every product's rounding.
    checkCublas(cublasSetMathMode(created, CUBLAS_PEDANTIC_MATH),
                "cublasSetMathMode");
    return created;
  }();
  return h;
}

/// One operand as cuBLAS sees it: its column-major leading dimension and
/// batch stride.
template <typename T> struct Operand {
  const T *data;
  int64_t rows, cols; // stored, row-major
  int64_t leading;    // elements between rows
  int64_t batchStride;
};

template <typename T>
Operand<T> operand(const MemRef<T, 3> &ref, const char *name) {
  if (ref.strides[2] != 1 && ref.sizes[2] > 1)
    throw RuntimeError(std::string("cuda batch matmul: operand ") + name +
                       " has a non-unit inner stride");
  int64_t leading = std::max<int64_t>({ref.strides[1], ref.sizes[2], 1});
  return {ref.aligned + ref.offset, ref.sizes[1], ref.sizes[2], leading,
          ref.strides[0]};
}

cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const float *alpha, const float *a, int lda,
                    long long sa, const float *b, int ldb, long long sb,
                    const float *beta, float *c, int ldc, long long sc,
                    int batch) {
  return cublasSgemmStridedBatched(handle(), ta, tb, m, n, k, alpha, a, lda,
                                   sa, b, ldb, sb, beta, c, ldc, sc, batch);
}
cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const double *alpha, const double *a, int lda,
                    long long sa, const double *b, int ldb, long long sb,
                    const double *beta, double *c, int ldc, long long sc,
                    int batch) {
  return cublasDgemmStridedBatched(handle(), ta, tb, m, n, k, alpha, a, lda,
                                   sa, b, ldb, sb, beta, c, ldc, sc, batch);
}

template <typename T>
void batchMatmul(MemRef<T, 3> *a, MemRef<T, 3> *b, MemRef<T, 3> *c,
                 int64_t transposeA, int64_t transposeB, int64_t accumulate) {
  try {
    if (!a || !b || !c)
      throw RuntimeError("cuda batch matmul: null operand");
    Operand<T> A = operand(*a, "a"), B = operand(*b, "b"), C = operand(*c, "c");
    int64_t m = C.rows, n = C.cols;
    int64_t k = transposeA ? A.rows : A.cols;
    int64_t batch = c->sizes[0];
    if ((transposeA ? A.cols : A.rows) != m ||
        (transposeB ? B.rows : B.cols) != n ||
        (transposeB ? B.cols : B.rows) != k || a->sizes[0] != batch ||
        b->sizes[0] != batch)
      throw RuntimeError("cuda batch matmul: operand shapes do not agree");
    if (batch == 0 || m == 0 || n == 0)
      return;
    T alpha = 1, beta = accumulate ? 1 : 0;
    // C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m), column-major.
    checkCublas(gemm(transposeB ? CUBLAS_OP_T : CUBLAS_OP_N,
                     transposeA ? CUBLAS_OP_T : CUBLAS_OP_N, int(n), int(m),
                     int(k), &alpha, B.data, int(B.leading), B.batchStride,
                     A.data, int(A.leading), A.batchStride, &beta,
                     const_cast<T *>(C.data), int(C.leading), C.batchStride,
                     int(batch)),
                "cublasGemmStridedBatched");
  } catch (const RuntimeError &error) {
    cuda::recordCudaError(error.what());
  }
}
} // namespace

namespace mbt {
namespace runtime {
namespace cuda {
std::string takeCudaError() {
  std::lock_guard<std::mutex> lock(errorMutex);
  return std::exchange(firstError, std::string());
}

void recordCudaError(const std::string &message) {
  std::lock_guard<std::mutex> lock(errorMutex);
  if (firstError.empty())
    firstError = message;
}
} // namespace cuda
} // namespace runtime
} // namespace mbt

extern "C" void _mlir_ciface_mbt_rt_cuda_batch_matmul_f32(
    MemRef3F *a, MemRef3F *b, MemRef3F *c, int64_t transposeA,
    int64_t transposeB, int64_t accumulate) {
  batchMatmul(a, b, c, transposeA, transposeB, accumulate);
}

extern "C" void _mlir_ciface_mbt_rt_cuda_batch_matmul_f64(
    MemRef3D *a, MemRef3D *b, MemRef3D *c, int64_t transposeA,
    int64_t transposeB, int64_t accumulate) {
  batchMatmul(a, b, c, transposeA, transposeB, accumulate);
}
