//===- CudaKernels.h - What a --target=cuda artifact imports ----*- C++ -*-===//
//
// The functions a CUDA artifact leaves undefined (docs/abi.md, "CUDA
// artifacts"): MLIR's GPU runtime interface (mgpu*), over the driver API,
// and the batched matmul of the CPU kernel's contract on device buffers,
// over cuBLAS. They are called from compiled code, so they never throw: the
// first failure is recorded with the CPU kernels' (Kernels.h,
// recordKernelError), and takeKernelError() returns (and clears) it.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_CUDA_CUDAKERNELS_H
#define MBT_RUNTIME_CUDA_CUDAKERNELS_H

#include "mbt/common/Abi.h"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" {
#define MBT_EXPORT __attribute__((visibility("default")))
MBT_EXPORT CUmodule mgpuModuleLoad(void *data, size_t size);
MBT_EXPORT void mgpuModuleUnload(CUmodule module);
MBT_EXPORT CUfunction mgpuModuleGetFunction(CUmodule module, const char *name);
MBT_EXPORT void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                 intptr_t gridY, intptr_t gridZ,
                                 intptr_t blockX, intptr_t blockY,
                                 intptr_t blockZ, int32_t sharedMemory,
                                 CUstream stream, void **params, void **extra,
                                 size_t paramCount);
MBT_EXPORT CUstream mgpuStreamCreate();
MBT_EXPORT void mgpuStreamDestroy(CUstream stream);
MBT_EXPORT void mgpuStreamSynchronize(CUstream stream);
MBT_EXPORT void _mlir_ciface_mbt_rt_cuda_batch_matmul_f32(
    mbt::MemRef3F *a, mbt::MemRef3F *b, mbt::MemRef3F *c, int64_t transposeA,
    int64_t transposeB, int64_t accumulate);
/// The f32 product of operands that hold bf16 (f16) values only
/// (mbt-autocast's), on the tensor cores: the same exact products.
MBT_EXPORT void _mlir_ciface_mbt_rt_cuda_batch_matmul_f32_bf16(
    mbt::MemRef3F *a, mbt::MemRef3F *b, mbt::MemRef3F *c, int64_t transposeA,
    int64_t transposeB, int64_t accumulate);
MBT_EXPORT void _mlir_ciface_mbt_rt_cuda_batch_matmul_f32_f16(
    mbt::MemRef3F *a, mbt::MemRef3F *b, mbt::MemRef3F *c, int64_t transposeA,
    int64_t transposeB, int64_t accumulate);
MBT_EXPORT void _mlir_ciface_mbt_rt_cuda_batch_matmul_f64(
    mbt::MemRef3D *a, mbt::MemRef3D *b, mbt::MemRef3D *c, int64_t transposeA,
    int64_t transposeB, int64_t accumulate);
#undef MBT_EXPORT
}

#endif // MBT_RUNTIME_CUDA_CUDAKERNELS_H
