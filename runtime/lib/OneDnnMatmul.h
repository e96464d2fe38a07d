//===- OneDnnMatmul.h - products on oneDNN's matmul ---------------*- C++
//-*-===//
//
// The runtime's one door to oneDNN: its engine, the matmul primitives of
// the f32 products (Kernels.cpp) and of the bf16 ones (Bf16Matmul.cpp), and
// what the CPU lets it do. Every product runs whole on the calling thread,
// as the BLAS ones do, so that model i's bits never depend on the batch.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_LIB_ONEDNNMATMUL_H
#define MBT_RUNTIME_LIB_ONEDNNMATMUL_H

#include "KernelMatrix.h"

#include <cstdint>

namespace mbt {
namespace runtime {

/// Whether the runtime was built with oneDNN (MBT_WITH_DNNL).
bool haveOneDnn();

/// Whether oneDNN multiplies bf16 in hardware on this CPU (AVX512-BF16 or
/// AMX-BF16); false without oneDNN.
bool oneDnnHasBf16Products();

/// Whether oneDNN's products run on AMX on this CPU.
bool oneDnnHasAmx();

/// Whether oneDNN's f32 products run on AVX-512 on this CPU.
bool oneDnnHasAvx512();

/// c = a b (+ c) on oneDNN's f32 matmul, for a, b and c as BLAS reads
/// them (KernelMatrix.h's blasLayout), c row-major. One primitive per
/// transpose pair serves every size (its dims are given when it runs), so
/// a sequence model's many batch lengths cost no primitive each. False
/// where oneDNN takes no such product (or is not built in): the caller
/// multiplies another way.
bool multiplyOnOneDnnF32(const Matrix<float> &a, const Matrix<float> &b,
                         const Matrix<float> &c, bool accumulate);

/// c = a b (+ c) on oneDNN's bf16 matmul, a and b bf16 bits (packed by
/// the caller, either order of their strides), c f32. False where oneDNN
/// has no primitive for these layouts.
bool multiplyOnOneDnnBf16(const Matrix<uint16_t> &a, const Matrix<uint16_t> &b,
                          const Matrix<float> &c, bool accumulate);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_ONEDNNMATMUL_H
