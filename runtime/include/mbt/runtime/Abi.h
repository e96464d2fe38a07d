//===- Abi.h - C++ transcription of the artifact ABI (docs/abi.md) -*- C++ -*-//
//
// The artifact is a shared library produced by mbtc. It exchanges buffers
// with the runtime as MLIR strided memref descriptors, passed by pointer
// through the `_mlir_ciface_` wrappers. This header spells out that contract
// (descriptor layout, exported symbol names, function pointer types) for the
// runtime, which is built without MLIR. Keep it in sync with docs/abi.md.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_ABI_H
#define MBT_RUNTIME_ABI_H

#include <array>
#include <cstdint>
#include <type_traits>

namespace mbt {
namespace runtime {

/// The ABI version this runtime understands; the artifact's
/// `mbt_abi_version()` must return it.
/// Version 2: mbt_rt_batch_matmul_f32 takes an `accumulate` flag.
constexpr int64_t kAbiVersion = 2;

/// MLIR's strided memref descriptor of rank N. Element (i0, ..., iN-1) lives
/// at `aligned[offset + sum_k i_k * strides[k]]`. The layout must match what
/// MLIR's LLVM lowering produces, hence a plain aggregate with no padding
/// beyond the natural one.
template <typename T, int N> struct MemRef {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
};

static_assert(std::is_standard_layout<MemRef<float, 2>>::value,
              "MemRef must be a C-compatible aggregate");
static_assert(sizeof(MemRef<float, 3>) == 2 * sizeof(void *) + 8 + 2 * 3 * 8,
              "MemRef<float, 3> layout differs from MLIR's descriptor");

/// Describes `data` as a dense row-major array of the given sizes, offset 0:
/// the only layout the runtime ever passes to an artifact.
template <typename T, int N>
MemRef<T, N> makeDenseMemRef(T *data, const std::array<int64_t, N> &sizes) {
  MemRef<T, N> ref;
  ref.allocated = data;
  ref.aligned = data;
  ref.offset = 0;
  int64_t stride = 1;
  for (int k = N - 1; k >= 0; --k) {
    ref.sizes[k] = sizes[k];
    ref.strides[k] = stride;
    stride *= sizes[k];
  }
  return ref;
}

/// Number of elements a descriptor covers (product of its sizes).
template <typename T, int N> int64_t numElements(const MemRef<T, N> &ref) {
  int64_t count = 1;
  for (int k = 0; k < N; ++k)
    count *= ref.sizes[k];
  return count;
}

using MemRef1F = MemRef<float, 1>;
using MemRef2F = MemRef<float, 2>;
using MemRef3F = MemRef<float, 3>;
using MemRef1D = MemRef<double, 1>;
using MemRef2D = MemRef<double, 2>;
using MemRef2I = MemRef<int32_t, 2>;

// Symbols the artifact exports.
constexpr const char *kAbiVersionSymbol = "mbt_abi_version";
constexpr const char *kManifestSymbol = "mbt_manifest";
constexpr const char *kTrainStepSymbol = "_mlir_ciface_mbt_train_step";
constexpr const char *kEvalStepSymbol = "_mlir_ciface_mbt_eval_step";
constexpr const char *kOptimizerStepSymbol =
    "_mlir_ciface_mbt_optimizer_step";
// Symbol the artifact imports; libmbt_runtime.so defines it (Kernels.h).
constexpr const char *kBatchMatmulSymbol =
    "_mlir_ciface_mbt_rt_batch_matmul_f32";

extern "C" {
/// `int64_t mbt_abi_version(void)`.
typedef int64_t (*AbiVersionFn)(void);
/// `const char *mbt_manifest(void)`: NUL-terminated JSON.
typedef const char *(*ManifestFn)(void);
/// One optimizer step of every model, in place:
/// params [M,P], state [S,M,P], hyper [M,H], step [M], x [M,B,F], y [M,B],
/// out [M,K] (written).
typedef void (*TrainStepFn)(MemRef2F *params, MemRef3F *state, MemRef2D *hyper,
                            MemRef1D *step, MemRef3F *x, MemRef2I *y,
                            MemRef2F *out);
/// Forward pass and metrics of every model: params [M,P], x [M,B,F],
/// y [M,B], out [M,K] (written).
typedef void (*EvalStepFn)(MemRef2F *params, MemRef3F *x, MemRef2I *y,
                           MemRef2F *out);
/// The optimizer step alone, in place, on gradients the caller computed:
/// params [M,P], state [S,M,P], hyper [M,H], step [M], grads [M,P] (read).
typedef void (*OptimizerStepFn)(MemRef2F *params, MemRef3F *state,
                                MemRef2D *hyper, MemRef1D *step,
                                MemRef2F *grads);
/// The imported kernel: c[i] = op(a[i]) * op(b[i]) (+ c[i] if accumulate)
/// for every batch index.
typedef void (*BatchMatmulFn)(MemRef3F *a, MemRef3F *b, MemRef3F *c,
                              int64_t transposeA, int64_t transposeB,
                              int64_t accumulate);
}

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_ABI_H
