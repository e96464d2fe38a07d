//===- CudaKernels.cpp - batched matmuls of a CUDA artifact over cuBLAS ---===//
//
// The contract of the CPU kernel (docs/abi.md): c[i] = op(a[i]) * op(b[i])
// (+ c[i] when accumulate) for every batch index i, on row-major strided
// operands whose last dimension is contiguous, here in device memory. One
// cublas<S|D>gemmStridedBatched call covers the batch: a batch stride of 0
// (the shared input of every model) is a valid stride for cuBLAS. cuBLAS is
// column-major, so the row-major product C = op(A) op(B) is computed as its
// transpose, C^T = op(B)^T op(A)^T, which reads the same memory (GemmPlan.h).
//
// Every batch index runs the same kernel on its own matrices, so model i's
// product does not depend on the number of models beyond what cuBLAS's
// choice of algorithm for the batch size may change (checked on a GPU by
// tools/bench/gpu_check.sh, batch against alone).
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/cuda/CudaKernels.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Kernels.h"
#include "mbt/runtime/cuda/CudaContext.h"
#include "mbt/runtime/cuda/GemmPlan.h"

#include <cublas_v2.h>

#include <algorithm>
#include <optional>
#include <type_traits>

using namespace mbt;
using namespace mbt::runtime;

namespace {
void checkCublas(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError(std::string(what) + ": " +
                       cublasGetStatusString(status));
}

/// A cuBLAS handle bound to the shared stream, with `mode`, and a
/// workspace of its own, so that no call allocates one, which a captured
/// step (CUDA graph) must not (32 MiB: NVIDIA's advice for Hopper).
cublasHandle_t createHandle(cublasMath_t mode) {
  cublasHandle_t created;
  checkCublas(cublasCreate(&created), "cublasCreate");
  checkCublas(cublasSetStream(created, cuda::sharedStream()),
              "cublasSetStream");
  checkCublas(cublasSetMathMode(created, mode), "cublasSetMathMode");
  // As long as the handle: to the end of the process.
  auto *workspace = new cuda::DeviceBuffer(size_t(32) << 20);
  checkCublas(cublasSetWorkspace(created, workspace->data(), workspace->size()),
              "cublasSetWorkspace");
  return created;
}

/// The handle of the exact f32 and f64 products: pedantic math, since TF32
/// would change every product's rounding.
cublasHandle_t handle() {
  static cublasHandle_t h = createHandle(CUBLAS_PEDANTIC_MATH);
  return h;
}

/// The handle of the 16-bit products: the default math mode, which leaves
/// the tensor cores to the compute type each call names.
cublasHandle_t tensorCoreHandle() {
  static cublasHandle_t h = createHandle(CUBLAS_DEFAULT_MATH);
  return h;
}

cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const float *alpha, const float *a, int lda,
                    long long sa, const float *b, int ldb, long long sb,
                    const float *beta, float *c, int ldc, long long sc,
                    int batch) {
  return cublasSgemmStridedBatched(handle(), ta, tb, m, n, k, alpha, a, lda, sa,
                                   b, ldb, sb, beta, c, ldc, sc, batch);
}
cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const double *alpha, const double *a, int lda,
                    long long sa, const double *b, int ldb, long long sb,
                    const double *beta, double *c, int ldc, long long sc,
                    int batch) {
  return cublasDgemmStridedBatched(handle(), ta, tb, m, n, k, alpha, a, lda, sa,
                                   b, ldb, sb, beta, c, ldc, sc, batch);
}

/// f32 operands whose values are all bf16 (f16) ones: mbt-autocast rounded
/// them. cuBLAS's "fast" compute types convert them to that format, which
/// is exact for such values, and multiply on the tensor cores with f32
/// accumulation: the products of the f32 path, at the throughput of the
/// 16-bit one, with no copy of the operands.
cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const float *alpha, const float *a, int lda,
                    long long sa, const float *b, int ldb, long long sb,
                    const float *beta, float *c, int ldc, long long sc,
                    int batch, cublasComputeType_t compute) {
  return cublasGemmStridedBatchedEx(tensorCoreHandle(), ta, tb, m, n, k, alpha,
                                    a, CUDA_R_32F, lda, sa, b, CUDA_R_32F, ldb,
                                    sb, beta, c, CUDA_R_32F, ldc, sc, batch,
                                    compute, CUBLAS_GEMM_DEFAULT);
}

/// The batched product; `compute` (f32 only) the compute type of operands
/// that hold 16-bit values, none for the exact f32 (f64) path.
template <typename T>
void batchMatmul(MemRef<T, 3> *a, MemRef<T, 3> *b, MemRef<T, 3> *c,
                 int64_t transposeA, int64_t transposeB, int64_t accumulate,
                 std::optional<cublasComputeType_t> compute = std::nullopt) {
  try {
    if (!a || !b || !c)
      throw RuntimeError("cuda batch matmul: null operand");
    cuda::GemmPlan<T> plan = cuda::planBatchMatmul(
        *a, *b, *c, transposeA != 0, transposeB != 0, accumulate != 0);
    if (plan.batch == 0 || plan.m == 0 || plan.n == 0)
      return;
    T alpha = 1, beta = plan.accumulate ? 1 : 0;
    auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
    auto call = [&](auto... computeType) {
      return gemm(
          op(plan.first.transpose), op(plan.second.transpose), int(plan.m),
          int(plan.n), int(plan.k), &alpha, plan.first.data,
          int(plan.first.leading), plan.first.batchStride, plan.second.data,
          int(plan.second.leading), plan.second.batchStride, &beta, plan.c,
          int(plan.ldc), plan.strideC, int(plan.batch), computeType...);
    };
    if constexpr (std::is_same_v<T, float>)
      if (compute) {
        checkCublas(call(*compute), "cublasGemmStridedBatchedEx");
        return;
      }
    checkCublas(call(), "cublasGemmStridedBatched");
  } catch (const RuntimeError &error) {
    recordKernelError(error.what());
  }
}
} // namespace

extern "C" void _mlir_ciface_mbt_rt_cuda_batch_matmul_f32(
    MemRef3F *a, MemRef3F *b, MemRef3F *c, int64_t transposeA,
    int64_t transposeB, int64_t accumulate) {
  batchMatmul(a, b, c, transposeA, transposeB, accumulate);
}

extern "C" void _mlir_ciface_mbt_rt_cuda_batch_matmul_f32_bf16(
    MemRef3F *a, MemRef3F *b, MemRef3F *c, int64_t transposeA,
    int64_t transposeB, int64_t accumulate) {
  batchMatmul(a, b, c, transposeA, transposeB, accumulate,
              CUBLAS_COMPUTE_32F_FAST_16BF);
}

extern "C" void _mlir_ciface_mbt_rt_cuda_batch_matmul_f32_f16(
    MemRef3F *a, MemRef3F *b, MemRef3F *c, int64_t transposeA,
    int64_t transposeB, int64_t accumulate) {
  batchMatmul(a, b, c, transposeA, transposeB, accumulate,
              CUBLAS_COMPUTE_32F_FAST_16F);
}

extern "C" void _mlir_ciface_mbt_rt_cuda_batch_matmul_f64(
    MemRef3D *a, MemRef3D *b, MemRef3D *c, int64_t transposeA,
    int64_t transposeB, int64_t accumulate) {
  batchMatmul(a, b, c, transposeA, transposeB, accumulate);
}
