//===- Abi.h - C++ transcription of the artifact ABI (docs/abi.md) -*- C++ -*-//
//
// The artifact is a shared library produced by mbtc. It exchanges buffers
// with the runtime as MLIR strided memref descriptors, passed by pointer
// through the `_mlir_ciface_` wrappers. This header spells out that contract
// (the descriptor, which is MLIR's own StridedMemRefType; exported symbol
// names; function pointer types) for the runtime, which is built without
// MLIR's libraries, and gives the compiler the version and symbol names it
// emits. Keep it in sync with docs/abi.md.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_COMMON_ABI_H
#define MBT_COMMON_ABI_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace mbt {

/// The ABI version the compiler emits and the runtime understands: the
/// artifact's `mbt_abi_version()` must return it. What each version changed
/// is in docs/abi.md ("Versioning").
constexpr int64_t kAbiVersion = 17;

/// The element type of the float buffers (params, state, out, and x unless
/// it holds token ids): the model's float type, the manifest's `dtype`.
enum class DType { F32, F64 };

inline const char *dtypeName(DType type) {
  return type == DType::F64 ? "f64" : "f32";
}

/// Bytes per element of a DType.
inline int64_t dtypeBytes(DType type) { return type == DType::F64 ? 8 : 4; }

/// The C++ type of a DType's elements.
template <typename T> constexpr DType dtypeOf();
template <> constexpr DType dtypeOf<float>() { return DType::F32; }
template <> constexpr DType dtypeOf<double>() { return DType::F64; }

/// MLIR's strided memref descriptor of rank N: StridedMemRefType from the
/// header-only CRunnerUtils.h (the runtime takes its include directory, no
/// MLIR library). Its fields are `basePtr` (what was allocated), `data`
/// (the aligned pointer), `offset`, `sizes[N]` and `strides[N]`; element
/// (i0, ..., iN-1) lives at `data[offset + sum_k i_k * strides[k]]`.
template <typename T, int N> using MemRef = StridedMemRefType<T, N>;

// The artifact's `_mlir_ciface_` wrappers take this layout by pointer: a
// plain aggregate with no padding beyond the natural one.
static_assert(std::is_standard_layout<MemRef<float, 2>>::value,
              "MemRef must be a C-compatible aggregate");
static_assert(std::is_trivially_copyable<MemRef<float, 2>>::value,
              "MemRef must be a C-compatible aggregate");
static_assert(sizeof(MemRef<float, 3>) == 2 * sizeof(void *) + 8 + 2 * 3 * 8,
              "MemRef<float, 3> layout differs from MLIR's descriptor");

/// Describes `data` as a dense row-major array of the given sizes, offset 0:
/// the only layout the runtime ever passes to an artifact.
template <typename T, int N>
MemRef<T, N> makeDenseMemRef(T *data, const std::array<int64_t, N> &sizes) {
  MemRef<T, N> ref;
  ref.basePtr = data;
  ref.data = data;
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
using MemRef3D = MemRef<double, 3>;
using MemRef1D = MemRef<double, 1>;
using MemRef2D = MemRef<double, 2>;
using MemRef2I = MemRef<int32_t, 2>;
// The fields where MLIR's LLVM lowering puts them.
static_assert(offsetof(MemRef2F, data) == sizeof(void *) &&
                  offsetof(MemRef2F, offset) == 2 * sizeof(void *) &&
                  offsetof(MemRef2F, sizes) == 2 * sizeof(void *) + 8 &&
                  offsetof(MemRef2F, strides) == 2 * sizeof(void *) + 24,
              "MemRef<float, 2> field offsets differ from MLIR's descriptor");

/// The workspace: `memref<?xi8>`, at least as many bytes as the entry
/// point's `_workspace_bytes` function asked for, 64-byte aligned. The step
/// overwrites it; its contents before and after a call mean nothing.
using WorkspaceRef = MemRef<uint8_t, 1>;

// Symbols the artifact exports.
constexpr const char *kAbiVersionSymbol = "mbt_abi_version";
constexpr const char *kManifestSymbol = "mbt_manifest";
constexpr const char *kTrainStepSymbol = "_mlir_ciface_mbt_train_step";
constexpr const char *kEvalStepSymbol = "_mlir_ciface_mbt_eval_step";
constexpr const char *kOptimizerStepSymbol = "_mlir_ciface_mbt_optimizer_step";
constexpr const char *kGradStepSymbol = "_mlir_ciface_mbt_grad_step";
constexpr const char *kTrainStepWorkspaceSymbol =
    "_mlir_ciface_mbt_train_step_workspace_bytes";
constexpr const char *kEvalStepWorkspaceSymbol =
    "_mlir_ciface_mbt_eval_step_workspace_bytes";
constexpr const char *kOptimizerStepWorkspaceSymbol =
    "_mlir_ciface_mbt_optimizer_step_workspace_bytes";
constexpr const char *kGradStepWorkspaceSymbol =
    "_mlir_ciface_mbt_grad_step_workspace_bytes";
// Symbols the artifact imports; libmbt_runtime.so defines them (Kernels.h).
constexpr const char *kBatchMatmulSymbol =
    "_mlir_ciface_mbt_rt_batch_matmul_f32";
constexpr const char *kBatchMatmulF64Symbol =
    "_mlir_ciface_mbt_rt_batch_matmul_f64";

extern "C" {
/// `int64_t mbt_abi_version(void)`.
typedef int64_t (*AbiVersionFn)(void);
/// `const char *mbt_manifest(void)`: NUL-terminated JSON.
typedef const char *(*ManifestFn)(void);
}

// The entry points, for float buffers of element type T (float for an
// artifact of dtype f32, double for f64), an x of element type X (T, or
// int32_t for token ids) and a y of rank YRank (2: class indices [M, B];
// 3: next tokens [M, B, T]).

/// One optimizer step of every model, in place:
/// params [M,P], buffers [M,Q], state [S,M,P], hyper [M,H], step [M],
/// x [M,B,F] or [M,B,T], y [M,B] or [M,B,T], out [M,K] (written),
/// workspace.
template <typename T, typename X = T, int YRank = 2>
using TrainStepFnOf = void (*)(MemRef<T, 2> *params, MemRef<T, 2> *buffers,
                               MemRef<T, 3> *state, MemRef2D *hyper,
                               MemRef1D *step, MemRef<X, 3> *x,
                               MemRef<int32_t, YRank> *y, MemRef<T, 2> *out,
                               WorkspaceRef *workspace);
/// Forward pass and metrics of every model: params [M,P], buffers [M,Q]
/// (read), x [M,B,F] or [M,B,T], y [M,B] or [M,B,T], out [M,K] (written),
/// workspace.
template <typename T, typename X = T, int YRank = 2>
using EvalStepFnOf = void (*)(MemRef<T, 2> *params, MemRef<T, 2> *buffers,
                              MemRef<X, 3> *x, MemRef<int32_t, YRank> *y,
                              MemRef<T, 2> *out, WorkspaceRef *workspace);
/// The optimizer step alone, in place, on gradients the caller computed:
/// params [M,P], state [S,M,P], hyper [M,H], step [M], grads [M,P] (read),
/// workspace.
template <typename T>
using OptimizerStepFnOf = void (*)(MemRef<T, 2> *params, MemRef<T, 3> *state,
                                   MemRef2D *hyper, MemRef1D *step,
                                   MemRef<T, 2> *grads,
                                   WorkspaceRef *workspace);
/// The train step up to the gradients (mbtc --distribute=data): params
/// [M,P] (read), buffers [M,Q] (the rows of the models that stepped
/// rewritten), step [M], grads [M,P_t] (written), x, y, out [M,K]
/// (written; a NaN loss where the model did not step), workspace.
template <typename T, typename X = T, int YRank = 2>
using GradStepFnOf = void (*)(MemRef<T, 2> *params, MemRef<T, 2> *buffers,
                              MemRef1D *step, MemRef<T, 2> *grads,
                              MemRef<X, 3> *x, MemRef<int32_t, YRank> *y,
                              MemRef<T, 2> *out, WorkspaceRef *workspace);
/// The workspace each entry point needs for these arguments (the same as
/// the entry point's, without the workspace), in bytes. Only the
/// descriptors' sizes are read.
template <typename T, typename X = T, int YRank = 2>
using TrainStepWorkspaceFnOf = int64_t (*)(MemRef<T, 2> *params,
                                           MemRef<T, 2> *buffers,
                                           MemRef<T, 3> *state, MemRef2D *hyper,
                                           MemRef1D *step, MemRef<X, 3> *x,
                                           MemRef<int32_t, YRank> *y,
                                           MemRef<T, 2> *out);
template <typename T, typename X = T, int YRank = 2>
using EvalStepWorkspaceFnOf = int64_t (*)(MemRef<T, 2> *params,
                                          MemRef<T, 2> *buffers,
                                          MemRef<X, 3> *x,
                                          MemRef<int32_t, YRank> *y,
                                          MemRef<T, 2> *out);
template <typename T, typename X = T, int YRank = 2>
using GradStepWorkspaceFnOf = int64_t (*)(MemRef<T, 2> *params,
                                          MemRef<T, 2> *buffers, MemRef1D *step,
                                          MemRef<T, 2> *grads, MemRef<X, 3> *x,
                                          MemRef<int32_t, YRank> *y,
                                          MemRef<T, 2> *out);
template <typename T>
using OptimizerStepWorkspaceFnOf = int64_t (*)(MemRef<T, 2> *params,
                                               MemRef<T, 3> *state,
                                               MemRef2D *hyper, MemRef1D *step,
                                               MemRef<T, 2> *grads);
/// The imported kernel: c[i] = op(a[i]) * op(b[i]) (+ c[i] if accumulate)
/// for every batch index.
template <typename T>
using BatchMatmulFnOf = void (*)(MemRef<T, 3> *a, MemRef<T, 3> *b,
                                 MemRef<T, 3> *c, int64_t transposeA,
                                 int64_t transposeB, int64_t accumulate);

using TrainStepFn = TrainStepFnOf<float>;
using EvalStepFn = EvalStepFnOf<float>;
using OptimizerStepFn = OptimizerStepFnOf<float>;
using BatchMatmulFn = BatchMatmulFnOf<float>;

} // namespace mbt

#endif // MBT_COMMON_ABI_H
