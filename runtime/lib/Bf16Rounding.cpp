//===- Bf16Rounding.cpp - runs of values rounded to bf16 ------------------===//
//
// The rounding of a contiguous run, which the kernels that round their
// operands as they copy them (Bf16Matmul.cpp, ConvKernels.cpp) spend a pass
// over each operand in: the compiler vectorizes bf16Bits's integer rounding,
// once per vector width, and the widest the CPU has is chosen when the
// runtime loads. One element at a time it took a tenth of the bf16 fashion
// CNN's step.
//
//===----------------------------------------------------------------------===//
#include "Bf16Rounding.h"

namespace mbt {
namespace runtime {

__attribute__((target_clones("avx512f", "avx2", "default"))) void
roundRunToBf16(const float *from, float *to, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    to[i] = roundedToBf16(from[i]);
}

} // namespace runtime
} // namespace mbt
