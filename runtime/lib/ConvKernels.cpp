//===- ConvKernels.cpp - the convolution kernels artifacts import ---------===//
//
// mbt_rt_conv2d_f32 and its two adjoints (docs/abi.md): each model's pass
// on oneDNN's convolution where it takes the shape (OneDnnConv.cpp), else
// on the reference loops below; MBT_CONV=reference takes the loops for
// every call, MBT_CONV=onednn records an error where oneDNN has none. The
// `_f32_bf16` kernels first round the two operands the pass reads to bf16
// (dense copies, the calling thread's own), which oneDNN then multiplies in
// bf16 where the CPU can. Each model's pass runs whole on one thread
// (forEachBatchIndex), so model i's bits are the same alone and in a batch. A
// malformed call writes NaN and records why (Kernels.h).
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/Kernels.h"

#include "Bf16Rounding.h"
#include "Convolution.h"
#include "KernelMatrix.h"
#include "KernelThreads.h"
#include "OneDnnMatmul.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace mbt {
namespace runtime {

namespace {

/// ceil(a / b) for b > 0 and any a.
int64_t ceilDiv(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/// The output positions [first, last) along one dim whose tap `k` reads
/// the image (0 <= position * stride - padding + k * dilation < size).
std::pair<int64_t, int64_t> tapRange(int64_t k, int64_t size, int64_t positions,
                                     int64_t stride, int64_t padding,
                                     int64_t dilation) {
  int64_t shift = padding - k * dilation;
  return {std::max<int64_t>(0, ceilDiv(shift, stride)),
          std::min<int64_t>(positions, ceilDiv(size + shift, stride))};
}

} // namespace

void convolveReference(ConvPass pass, const ConvShape &s,
                       const ConvOperands &o) {
  const View4 &x = o.image, &w = o.filter, &y = o.result;
  const View4 &written = pass == ConvPass::Forward     ? y
                         : pass == ConvPass::GradInput ? x
                                                       : w;
  for (int64_t i = 0; i < written.sizes[0]; ++i)
    for (int64_t j = 0; j < written.sizes[1]; ++j)
      for (int64_t k = 0; k < written.sizes[2]; ++k)
        for (int64_t l = 0; l < written.sizes[3]; ++l)
          written.at(i, j, k, l) = 0.0f;
  const int64_t inPerGroup = s.channelsPerGroup(),
                outPerGroup = s.outPerGroup();
  // Tap by tap, the innermost loop along an output row: contiguous in the
  // result, the stride apart in the image, and free of bounds checks (the
  // tap's range of positions is computed first).
  for (int64_t out = 0; out < s.out; ++out)
    for (int64_t c = 0; c < inPerGroup; ++c)
      for (int64_t kh = 0; kh < s.kh; ++kh)
        for (int64_t kw = 0; kw < s.kw; ++kw) {
          int64_t ic = out / outPerGroup * inPerGroup + c;
          auto [ohFirst, ohLast] =
              tapRange(kh, s.height, s.oh, s.sh, s.ph, s.dh);
          auto [owFirst, owLast] =
              tapRange(kw, s.width, s.ow, s.sw, s.pw, s.dw);
          float &tap = w.at(out, c, kh, kw);
          float sum = 0.0f;
          for (int64_t b = 0; b < s.batch; ++b)
            for (int64_t oh = ohFirst; oh < ohLast; ++oh) {
              int64_t ih = oh * s.sh - s.ph + kh * s.dh;
              for (int64_t ow = owFirst; ow < owLast; ++ow) {
                float &image = x.at(b, ic, ih, ow * s.sw - s.pw + kw * s.dw);
                float &result = y.at(b, out, oh, ow);
                if (pass == ConvPass::Forward)
                  result += image * tap;
                else if (pass == ConvPass::GradInput)
                  image += result * tap;
                else
                  sum += result * image;
              }
            }
          if (pass == ConvPass::GradFilter)
            tap = sum;
        }
}

namespace {

using MemRef5F = MemRef<float, 5>;

/// The window positions along one dim, as torch counts them.
int64_t windowPositions(int64_t size, int64_t kernel, int64_t stride,
                        int64_t padding, int64_t dilation) {
  int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

/// Why the operands and parameters do not make a convolution; empty where
/// they do.
std::string malformed(const MemRef5F &image, const MemRef5F &filter,
                      const MemRef5F &result, const ConvShape &s) {
  for (const MemRef5F *ref : {&image, &filter, &result})
    for (int64_t size : ref->sizes)
      if (size < 0)
        return "a negative size";
  if (s.sh < 1 || s.sw < 1 || s.dh < 1 || s.dw < 1 || s.ph < 0 || s.pw < 0 ||
      s.groups < 1)
    return fmt::format("stride {}x{}, padding {}x{}, dilation {}x{}, groups "
                       "{}: strides, dilations and groups must be at least "
                       "1, padding at least 0",
                       s.sh, s.sw, s.ph, s.pw, s.dh, s.dw, s.groups);
  if (filter.sizes[0] != image.sizes[0] || result.sizes[0] != image.sizes[0] ||
      result.sizes[1] != image.sizes[1] || result.sizes[2] != s.out ||
      s.channels % s.groups != 0 || s.out % s.groups != 0 ||
      filter.sizes[2] != s.channels / s.groups ||
      result.sizes[3] != windowPositions(s.height, s.kh, s.sh, s.ph, s.dh) ||
      result.sizes[4] != windowPositions(s.width, s.kw, s.sw, s.pw, s.dw))
    return fmt::format("image {}, filter {} and result {} do not agree",
                       shapeOf(image), shapeOf(filter), shapeOf(result));
  return "";
}

/// Model `m`'s 4-D slice of a 5-D operand.
View4 modelSlice(const MemRef5F &ref, int64_t m) {
  return {ref.data + ref.offset + m * ref.strides[0],
          {ref.sizes[1], ref.sizes[2], ref.sizes[3], ref.sizes[4]},
          {ref.strides[1], ref.strides[2], ref.strides[3], ref.strides[4]}};
}

/// A dense copy of `view` in `storage`, each element rounded to bf16 as
/// mbt.round_to rounds it.
View4 roundedCopy(const View4 &view, std::vector<float> &storage) {
  const auto &n = view.sizes;
  storage.resize(n[0] * n[1] * n[2] * n[3]);
  View4 copy{storage.data(), n, {n[1] * n[2] * n[3], n[2] * n[3], n[3], 1}};
  if (view.strides == copy.strides) {
    roundRunToBf16(view.data, copy.data, int64_t(storage.size()));
    return copy;
  }
  for (int64_t i = 0; i < n[0]; ++i)
    for (int64_t j = 0; j < n[1]; ++j)
      for (int64_t k = 0; k < n[2]; ++k) {
        if (view.strides[3] == 1) {
          roundRunToBf16(&view.at(i, j, k, 0), &copy.at(i, j, k, 0), n[3]);
          continue;
        }
        for (int64_t l = 0; l < n[3]; ++l)
          copy.at(i, j, k, l) = roundedToBf16(view.at(i, j, k, l));
      }
  return copy;
}

/// `operands` with the two that `pass` reads replaced by rounded copies
/// (the calling thread's own buffers).
ConvOperands withReadOperandsRounded(ConvPass pass, ConvOperands operands) {
  thread_local std::vector<float> first, second;
  if (pass != ConvPass::GradInput)
    operands.image = roundedCopy(operands.image, first);
  if (pass != ConvPass::GradFilter)
    operands.filter = roundedCopy(operands.filter, second);
  if (pass != ConvPass::Forward)
    operands.result = roundedCopy(operands.result,
                                  pass == ConvPass::GradInput ? first : second);
  return operands;
}

/// The engine MBT_CONV asks for: "reference", "onednn" (oneDNN or an
/// error, never the loops: the tests' check that oneDNN takes a shape), or
/// empty for oneDNN where it takes the shape, else the loops.
std::string forcedEngine() {
  const char *forced = std::getenv("MBT_CONV");
  return forced ? forced : "";
}

/// `pass` over every model of image [M, B, C, H, W], filter [M, O, C/G,
/// KH, KW] and result [M, B, O, OH, OW]; with `roundToBf16`, of the two
/// operands it reads rounded to bf16. `name` is the ABI name, for errors.
void convolveModels(const char *name, ConvPass pass, bool roundToBf16,
                    MemRef5F *image, MemRef5F *filter, MemRef5F *result,
                    int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh,
                    int64_t dw, int64_t groups) {
  MemRef5F *written = pass == ConvPass::Forward     ? result
                      : pass == ConvPass::GradInput ? image
                                                    : filter;
  if (!image || !filter || !result) {
    recordKernelError(std::string(name) + ": null descriptor");
    fillNaN(written);
    return;
  }
  ConvShape s{image->sizes[1],
              image->sizes[2],
              image->sizes[3],
              image->sizes[4],
              filter->sizes[1],
              groups,
              filter->sizes[3],
              filter->sizes[4],
              result->sizes[3],
              result->sizes[4],
              sh,
              sw,
              ph,
              pw,
              dh,
              dw};
  std::string why = malformed(*image, *filter, *result, s);
  if (!why.empty()) {
    recordKernelError(fmt::format("{}: {}", name, why));
    fillNaN(written);
    return;
  }
  std::string engine = forcedEngine();
  forEachBatchIndex(
      image->sizes[0], 2.0 * s.multiplyAdds() * double(image->sizes[0]),
      [&](int64_t m) {
        ConvOperands operands{modelSlice(*image, m), modelSlice(*filter, m),
                              modelSlice(*result, m)};
        if (roundToBf16)
          operands = withReadOperandsRounded(pass, operands);
        if (engine != "reference" &&
            convolveOnOneDnn(pass, s, operands, roundToBf16))
          return;
        if (engine == "onednn")
          recordKernelError(fmt::format(
              "{}: MBT_CONV=onednn, but oneDNN has no convolution for "
              "image {}, filter {}, result {}",
              name, shapeOf(*image), shapeOf(*filter), shapeOf(*result)));
        convolveReference(pass, s, operands);
      });
}

} // namespace

std::string convolutionEngine() {
  return haveOneDnn() && forcedEngine() != "reference" ? "oneDNN"
                                                       : "reference loops";
}

} // namespace runtime
} // namespace mbt

using mbt::MemRef;
using mbt::runtime::ConvPass;

// Each pass's kernel, f32 and with its operands rounded to bf16 (`_bf16`).
#define MBT_CONV_PARAMETERS                                                    \
  int64_t strideH, int64_t strideW, int64_t padH, int64_t padW,                \
      int64_t dilationH, int64_t dilationW, int64_t groups
#define MBT_CONV_ARGUMENTS                                                     \
  strideH, strideW, padH, padW, dilationH, dilationW, groups
#define MBT_CONV_KERNELS(SUFFIX, ROUND)                                        \
  extern "C" void _mlir_ciface_mbt_rt_conv2d_##SUFFIX(                         \
      MemRef<float, 5> *input, MemRef<float, 5> *filter,                       \
      MemRef<float, 5> *result, MBT_CONV_PARAMETERS) {                         \
    mbt::runtime::convolveModels("mbt_rt_conv2d_" #SUFFIX, ConvPass::Forward,  \
                                 ROUND, input, filter, result,                 \
                                 MBT_CONV_ARGUMENTS);                          \
  }                                                                            \
  extern "C" void _mlir_ciface_mbt_rt_conv2d_grad_input_##SUFFIX(              \
      MemRef<float, 5> *grad, MemRef<float, 5> *filter,                        \
      MemRef<float, 5> *inputGrad, MBT_CONV_PARAMETERS) {                      \
    mbt::runtime::convolveModels("mbt_rt_conv2d_grad_input_" #SUFFIX,          \
                                 ConvPass::GradInput, ROUND, inputGrad,        \
                                 filter, grad, MBT_CONV_ARGUMENTS);            \
  }                                                                            \
  extern "C" void _mlir_ciface_mbt_rt_conv2d_grad_filter_##SUFFIX(             \
      MemRef<float, 5> *input, MemRef<float, 5> *grad,                         \
      MemRef<float, 5> *filterGrad, MBT_CONV_PARAMETERS) {                     \
    mbt::runtime::convolveModels("mbt_rt_conv2d_grad_filter_" #SUFFIX,         \
                                 ConvPass::GradFilter, ROUND, input,           \
                                 filterGrad, grad, MBT_CONV_ARGUMENTS);        \
  }
MBT_CONV_KERNELS(f32, false)
MBT_CONV_KERNELS(f32_bf16, true)
#undef MBT_CONV_KERNELS
#undef MBT_CONV_ARGUMENTS
#undef MBT_CONV_PARAMETERS
