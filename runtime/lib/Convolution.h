//===- Convolution.h - one model's convolution ------------------*- C++ -*-===//
//
// The convolution kernels' view of one model: its image [B, C, H, W], its
// filter [O, C/G, KH, KW] and its result [B, O, OH, OW], each of any
// strides, and the three passes over them. ConvKernels.cpp spreads the
// models over threads and runs each model's pass whole on one thread, on
// oneDNN's convolution primitives (OneDnnConv.cpp) where it takes the
// shape, else on the reference loops here: either way model i's bits
// depend on its own shapes alone, never on the batch of models.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_RUNTIME_LIB_CONVOLUTION_H
#define MBT_RUNTIME_LIB_CONVOLUTION_H

#include <array>
#include <cstdint>

namespace mbt {
namespace runtime {

/// Which of a convolution's passes a call computes, and so which operand it
/// writes: the result (Forward), the image (GradInput, the input's
/// adjoint from the result's) or the filter (GradFilter).
enum class ConvPass { Forward, GradInput, GradFilter };

/// The sizes of one model's convolution, as torch.nn.functional.conv2d
/// takes them: oh = (height + 2 ph - dh (kh - 1) - 1) / sh + 1, and the
/// same for ow. `channels` and `out` are whole (not per group).
struct ConvShape {
  int64_t batch, channels, height, width;
  int64_t out, groups, kh, kw;
  int64_t oh, ow;
  int64_t sh, sw, ph, pw, dh, dw;

  int64_t channelsPerGroup() const { return channels / groups; }
  int64_t outPerGroup() const { return out / groups; }
  /// Multiply-adds of one pass (each pass does the same number).
  double multiplyAdds() const {
    return double(batch) * double(out) * double(oh) * double(ow) *
           double(channelsPerGroup()) * double(kh) * double(kw);
  }
};

/// A 4-D operand of one model: element (i0, i1, i2, i3) at
/// data[i0 * strides[0] + ... + i3 * strides[3]].
struct View4 {
  float *data;
  std::array<int64_t, 4> sizes;
  std::array<int64_t, 4> strides;

  float &at(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return data[i0 * strides[0] + i1 * strides[1] + i2 * strides[2] +
                i3 * strides[3]];
  }
};

/// One model's operands: the image, the filter and the result.
struct ConvOperands {
  View4 image, filter, result;
};

/// `pass` of one model's convolution with the reference loops: the
/// written operand is overwritten (not accumulated into). Correct for every
/// shape; the fallback where oneDNN has no primitive, and the tests'
/// oracle.
void convolveReference(ConvPass pass, const ConvShape &shape,
                       const ConvOperands &operands);

/// `pass` on oneDNN's convolution primitive for this shape and these
/// strides, whole on the calling thread; `bf16Operands`: the two operands
/// the pass reads hold bf16 values, which it multiplies in bf16 where
/// oneDNN has a bf16 kernel for the pass (the same exact products). False
/// where oneDNN has no primitive (or the runtime was built without it):
/// the caller computes it another way.
bool convolveOnOneDnn(ConvPass pass, const ConvShape &shape,
                      const ConvOperands &operands, bool bf16Operands);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_CONVOLUTION_H
