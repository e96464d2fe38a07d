//===- Bf16Matmul.h - products of operands rounded to bf16 -------*- C++
//-*-===//
#ifndef MBT_RUNTIME_LIB_BF16MATMUL_H
#define MBT_RUNTIME_LIB_BF16MATMUL_H

#include "KernelMatrix.h"

namespace mbt {
namespace runtime {

/// Tells the packing that a new batched call starts: the operands may have
/// changed since the last one. Within a call they do not, so an operand
/// the models share (the input batch, broadcast with a zero stride) is
/// packed once per thread, not once per model.
void startBf16Call();

/// c = bf16(a) bf16(b) (+ c): each element of a and b rounded to bf16 as
/// mbt.round_to rounds it (to nearest, ties to even, NaN kept), the
/// products exact and summed in f32: autocast's bf16 matmul. Runs on the
/// calling thread.
void multiplyRoundedToBf16(Matrix<float> a, Matrix<float> b, Matrix<float> c,
                           bool accumulate);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_BF16MATMUL_H
