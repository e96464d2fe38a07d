//===- Kernels.h - Library kernels the artifact imports ---------*- C++ -*-===//
//
// The artifact leaves large contractions to the runtime (docs/abi.md,
// "Symbols the artifact imports"), so that the same artifact uses the host's
// tuned BLAS. These functions are exported from libmbt_runtime.so with C
// linkage and default visibility; dlopen resolves the artifact's undefined
// references to them.
//
// The kernels cannot throw: they are called from compiled code that has no
// unwind tables. A malformed call (shapes that do not agree) writes NaN to
// the output instead and records a message, which the Trainer turns into a
// RuntimeError after the step returns (takeKernelError).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_KERNELS_H
#define MBT_RUNTIME_KERNELS_H

#include "mbt/common/Abi.h"

#include <string>

extern "C" {
/// c[i] = op(a[i]) * op(b[i]) (+ c[i] when `accumulate` is 1) for every
/// batch index i; op transposes the last two dims when its flag is 1, and
/// BLAS reads each matrix as its strides allow. Each
/// batch index is one sgemm call with the same shapes whatever the batch count,
/// so model i's product is bitwise independent of how many models share the
/// call.
__attribute__((visibility("default"))) void
_mlir_ciface_mbt_rt_batch_matmul_f32(mbt::MemRef3F *a, mbt::MemRef3F *b,
                                     mbt::MemRef3F *c, int64_t transposeA,
                                     int64_t transposeB, int64_t accumulate);
/// The same for an f64 model, on dgemm.
__attribute__((visibility("default"))) void
_mlir_ciface_mbt_rt_batch_matmul_f64(mbt::MemRef3D *a, mbt::MemRef3D *b,
                                     mbt::MemRef3D *c, int64_t transposeA,
                                     int64_t transposeB, int64_t accumulate);

/// The same with two, three or four batch dims (rank 4, 5, 6): the
/// contractions the compiler found in linalg.generic ops (attention's
/// products over models, sequences and heads). Each operand may have any
/// strides: a matrix whose rows, not columns, are contiguous goes to BLAS
/// transposed, and one that is neither goes to a reference loop.
#define MBT_DECLARE_BATCH_MATMUL(SUFFIX, T, R)                                 \
  __attribute__((visibility("default"))) void                                  \
      _mlir_ciface_mbt_rt_batch_matmul_##SUFFIX(                               \
          mbt::MemRef<T, R> *a, mbt::MemRef<T, R> *b, mbt::MemRef<T, R> *c,    \
          int64_t transposeA, int64_t transposeB, int64_t accumulate);
MBT_DECLARE_BATCH_MATMUL(f32_4d, float, 4)
MBT_DECLARE_BATCH_MATMUL(f64_4d, double, 4)
MBT_DECLARE_BATCH_MATMUL(f32_5d, float, 5)
MBT_DECLARE_BATCH_MATMUL(f64_5d, double, 5)
MBT_DECLARE_BATCH_MATMUL(f32_6d, float, 6)
MBT_DECLARE_BATCH_MATMUL(f64_6d, double, 6)
#undef MBT_DECLARE_BATCH_MATMUL

/// c[i] = bf16(op(a[i])) * bf16(op(b[i])) (+ c[i]): the f32 kernel's
/// contract, with every element of a and b first rounded to bf16 as
/// mbt.round_to rounds it, the products exact and summed in f32
/// (autocast's bf16 matmul). The compiler leaves the rounding of such a
/// product's operands to this kernel, which rounds them as it packs them;
/// where the CPU has bf16 products it multiplies them with oneDNN's bf16
/// matmul (bf16MatmulEngine).
__attribute__((visibility("default"))) void
_mlir_ciface_mbt_rt_batch_matmul_f32_bf16(mbt::MemRef3F *a, mbt::MemRef3F *b,
                                          mbt::MemRef3F *c, int64_t transposeA,
                                          int64_t transposeB,
                                          int64_t accumulate);

/// The convolutions of an f32 model (mbt.conv2d and its two adjoints, as
/// torch.nn.functional.conv2d computes them), for every model i: image
/// [M, B, C, H, W], filter [M, O, C/G, KH, KW] and result [M, B, O, OH, OW],
/// each of any strides, and the convolution's stride, padding and dilation
/// (height, width) and groups. mbt_rt_conv2d_f32 writes result[i] from
/// input[i] and filter[i]; _grad_input_f32 writes the input's adjoint
/// from the result's (`grad`) and the filter; _grad_filter_f32 the
/// filter's adjoint from the input and `grad`. Each writes its output
/// whole (no accumulation). Each model's pass runs on one thread, on
/// oneDNN's direct convolution where it takes the shape, else (or with
/// MBT_CONV=reference) on reference loops, so model i's bits do not
/// depend on the batch. The `_f32_bf16` kernels first round the two
/// operands they read to bf16 as mbt.round_to does (autocast's bf16
/// convolution: exact products summed in f32), and multiply them on
/// oneDNN's bf16 kernels where the CPU has bf16 products.
#define MBT_CONV_PARAMETERS                                                    \
  int64_t strideH, int64_t strideW, int64_t padH, int64_t padW,                \
      int64_t dilationH, int64_t dilationW, int64_t groups
#define MBT_DECLARE_CONV_KERNELS(SUFFIX)                                       \
  __attribute__((visibility("default"))) void                                  \
      _mlir_ciface_mbt_rt_conv2d_##SUFFIX(                                     \
          mbt::MemRef<float, 5> *input, mbt::MemRef<float, 5> *filter,         \
          mbt::MemRef<float, 5> *result, MBT_CONV_PARAMETERS);                 \
  __attribute__((visibility("default"))) void                                  \
      _mlir_ciface_mbt_rt_conv2d_grad_input_##SUFFIX(                          \
          mbt::MemRef<float, 5> *grad, mbt::MemRef<float, 5> *filter,          \
          mbt::MemRef<float, 5> *inputGrad, MBT_CONV_PARAMETERS);              \
  __attribute__((visibility("default"))) void                                  \
      _mlir_ciface_mbt_rt_conv2d_grad_filter_##SUFFIX(                         \
          mbt::MemRef<float, 5> *input, mbt::MemRef<float, 5> *grad,           \
          mbt::MemRef<float, 5> *filterGrad, MBT_CONV_PARAMETERS);
MBT_DECLARE_CONV_KERNELS(f32)
MBT_DECLARE_CONV_KERNELS(f32_bf16)
#undef MBT_DECLARE_CONV_KERNELS
#undef MBT_CONV_PARAMETERS

/// mbt.attention of every sequence s: query, key and value [S, T, D] and
/// the result [S, T, D], each of any strides, the sequences' tokens [S, T]
/// (0 is padding), `heads` heads of D / heads columns, and with `causal`
/// 1 each query sees the keys up to its own position. Each sequence runs
/// on one thread, so its bits do not depend on the others. The adjoint,
/// _grad_f32, writes dquery, dkey and dvalue [S, T, D] from the same
/// operands and the result's adjoint `grad`. The `_f32_bf16` kernels
/// round as autocast's bf16 attention (mbt.attention's `format`).
#define MBT_DECLARE_ATTENTION_KERNELS(SUFFIX)                                  \
  __attribute__((visibility("default"))) void                                  \
      _mlir_ciface_mbt_rt_attention_##SUFFIX(                                  \
          mbt::MemRef3F *query, mbt::MemRef3F *key, mbt::MemRef3F *value,      \
          mbt::MemRef2I *tokens, mbt::MemRef3F *result, int64_t heads,         \
          int64_t causal);                                                     \
  __attribute__((visibility("default"))) void                                  \
      _mlir_ciface_mbt_rt_attention_grad_##SUFFIX(                             \
          mbt::MemRef3F *query, mbt::MemRef3F *key, mbt::MemRef3F *value,      \
          mbt::MemRef2I *tokens, mbt::MemRef3F *grad, mbt::MemRef3F *dQuery,   \
          mbt::MemRef3F *dKey, mbt::MemRef3F *dValue, int64_t heads,           \
          int64_t causal);
MBT_DECLARE_ATTENTION_KERNELS(f32)
MBT_DECLARE_ATTENTION_KERNELS(f32_bf16)
#undef MBT_DECLARE_ATTENTION_KERNELS
}

namespace mbt {
namespace runtime {

/// What multiplies an f32 product of an m x k and a k x n matrix in
/// mbt_rt_batch_matmul_f32 on this host: "oneDNN f32" or "OpenBLAS
/// sgemm", chosen by the shape and the CPU (MBT_F32_MATMUL=openblas or
/// =onednn takes one for every product).
std::string f32MatmulEngine(int64_t m, int64_t n, int64_t k);

/// What multiplies the operands of mbt_rt_batch_matmul_f32_bf16 on this
/// host: "oneDNN bf16 (AVX512-BF16)" or "(AMX)" where the CPU has bf16
/// products and the runtime was built with oneDNN, else "sgemm on rounded
/// f32" (also where MBT_BF16_MATMUL=f32 asks for it).
std::string bf16MatmulEngine();

/// What computes the f32 convolutions (mbt_rt_conv2d_f32 and the rest) on
/// this host: "oneDNN" where the runtime was built with it (each shape
/// oneDNN has no primitive for falls back to the loops), else, or with
/// MBT_CONV=reference, "reference loops".
std::string convolutionEngine();

/// Returns the first error a kernel recorded since the last call and clears
/// it; empty when none. Callers check it after each artifact call.
std::string takeKernelError();

/// Records `message` unless an earlier error is pending. Every function an
/// artifact imports (these kernels, and the CUDA runtime's) reports here,
/// since it must not throw into compiled code.
void recordKernelError(const std::string &message);

/// Frozen models (diverged or stopped: their step is 0, and the train
/// step's results for them are discarded) whose slices the batched matmul
/// kernels skip while the guard lives, on the thread that creates it:
/// `idle[m]` for each of `models` models. A matmul whose batch is a
/// multiple k of `models` holds model m's slices at [m k, (m + 1) k) (the
/// model dimension is outermost); other batches are computed whole. The
/// trainer sets it around each CPU train step, so successive halving frees
/// the stopped models' matmul time.
class IdleModelsGuard {
public:
  IdleModelsGuard(const uint8_t *idle, int64_t models);
  ~IdleModelsGuard();
  IdleModelsGuard(const IdleModelsGuard &) = delete;
  IdleModelsGuard &operator=(const IdleModelsGuard &) = delete;
};

/// Sets up the OpenMP runtime that an artifact's parallel loops use, before
/// it starts (Artifact::load calls it): as many threads as the batched
/// kernels use (MBT_NUM_THREADS, else OPENBLAS_NUM_THREADS, else the
/// cores), and idle threads that spin for 1 ms (KMP_BLOCKTIME=1) before
/// they sleep, instead of libomp's 200 ms. The kernels run on the same
/// team (LoopTeam.h), so the spinning keeps it awake through a step
/// without taking a core from anything else. Variables the user set are
/// kept.
void configureLoopThreads();

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_KERNELS_H
