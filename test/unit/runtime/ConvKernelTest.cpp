//===- ConvKernelTest.cpp - mbt_rt_conv2d_f32 and its adjoints ------------===//
//
// The three convolution kernels on their engines (the host's choice;
// oneDNN's direct convolution alone, MBT_CONV=onednn; the reference loops,
// MBT_CONV=reference) against sums computed in double: every
// element within the rounding error bound of a sum of n products in f32,
// gamma_n = n u / (1 - n u) times the sum of the products' magnitudes
// (u = 2^-24). Shapes cover padding, stride, dilation, groups, a window
// that stops short of the image's last row, and operands that are strided
// views (the filter in the flat parameter buffer); then model i's bits
// alone and in a batch, and a malformed call.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Kernels.h"

#include "DeterministicValues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
using mbt::test::bf16Reference;
using mbt::test::filled;

namespace {

using MemRef5F = MemRef<float, 5>;

struct Case {
  const char *name;
  int64_t models, batch, channels, height, width, out, kh, kw;
  int64_t sh, sw, ph, pw, dh, dw, groups;

  int64_t oh() const { return (height + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (width + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
};

/// A dense [M, d1, d2, d3, d4] operand in `storage`, each model's block
/// `gap` elements apart beyond its size (a strided view when gap > 0).
MemRef5F operand(std::vector<float> &storage, int64_t models, int64_t d1,
                 int64_t d2, int64_t d3, int64_t d4, int64_t gap,
                 uint32_t seed) {
  int64_t block = d1 * d2 * d3 * d4 + gap;
  storage = filled(models * block + 3, seed);
  MemRef5F ref =
      makeDenseMemRef<float, 5>(storage.data(), {models, d1, d2, d3, d4});
  ref.offset = 3;
  ref.strides[0] = block;
  return ref;
}

float &at(const MemRef5F &r, int64_t a, int64_t b, int64_t c, int64_t d,
          int64_t e) {
  return r.data[r.offset + a * r.strides[0] + b * r.strides[1] +
                c * r.strides[2] + d * r.strides[3] + e * r.strides[4]];
}

/// An exact sum of products and the bound on its f32 rounding error.
struct Expected {
  double sum = 0, magnitude = 0;
  int64_t terms = 0;
  void add(double a, double b) {
    sum += a * b;
    magnitude += std::fabs(a * b);
    ++terms;
  }
  double bound() const {
    double nu = double(terms) * std::ldexp(1.0, -24);
    return nu / (1 - nu) * magnitude;
  }
};

/// The case's three operands and the double-precision sums of each pass,
/// of the operands' values or (`rounded`) of their bf16 roundings.
struct Problem {
  Case c;
  std::vector<float> xs, ws, ys;
  MemRef5F x, w, y;
  std::vector<Expected> forward, gradInput, gradFilter;

  Problem(const Case &kase, int64_t gap, bool rounded = false) : c(kase) {
    auto value = [&](float v) { return rounded ? bf16Reference(v) : v; };
    int64_t cg = c.channels / c.groups, og = c.out / c.groups;
    x = operand(xs, c.models, c.batch, c.channels, c.height, c.width, gap, 1);
    w = operand(ws, c.models, c.out, cg, c.kh, c.kw, gap, 2);
    y = operand(ys, c.models, c.batch, c.out, c.oh(), c.ow(), gap, 3);
    forward.resize(numElements(y));
    gradInput.resize(numElements(x));
    gradFilter.resize(numElements(w));
    auto index = [](const MemRef5F &r, int64_t a, int64_t b, int64_t cc,
                    int64_t d, int64_t e) {
      return (((a * r.sizes[1] + b) * r.sizes[2] + cc) * r.sizes[3] + d) *
                 r.sizes[4] +
             e;
    };
    for (int64_t m = 0; m < c.models; ++m)
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t o = 0; o < c.out; ++o)
          for (int64_t oh = 0; oh < c.oh(); ++oh)
            for (int64_t ow = 0; ow < c.ow(); ++ow)
              for (int64_t ci = 0; ci < cg; ++ci)
                for (int64_t kh = 0; kh < c.kh; ++kh)
                  for (int64_t kw = 0; kw < c.kw; ++kw) {
                    int64_t ih = oh * c.sh - c.ph + kh * c.dh;
                    int64_t iw = ow * c.sw - c.pw + kw * c.dw;
                    if (ih < 0 || ih >= c.height || iw < 0 || iw >= c.width)
                      continue;
                    int64_t ic = o / og * cg + ci;
                    double xv = value(at(x, m, b, ic, ih, iw)),
                           wv = value(at(w, m, o, ci, kh, kw)),
                           yv = value(at(y, m, b, o, oh, ow));
                    forward[index(y, m, b, o, oh, ow)].add(xv, wv);
                    gradInput[index(x, m, b, ic, ih, iw)].add(yv, wv);
                    gradFilter[index(w, m, o, ci, kh, kw)].add(yv, xv);
                  }
  }
};

/// Every element of `got` within its bound of `expected`.
void expectWithinBound(const MemRef5F &got,
                       const std::vector<Expected> &expected,
                       const std::string &what) {
  int64_t i = 0, wrong = 0;
  for (int64_t a = 0; a < got.sizes[0]; ++a)
    for (int64_t b = 0; b < got.sizes[1]; ++b)
      for (int64_t c = 0; c < got.sizes[2]; ++c)
        for (int64_t d = 0; d < got.sizes[3]; ++d)
          for (int64_t e = 0; e < got.sizes[4]; ++e, ++i) {
            double value = at(got, a, b, c, d, e);
            const Expected &want = expected[i];
            if (!(std::fabs(value - want.sum) <= want.bound()) && wrong++ < 3)
              ADD_FAILURE()
                  << what << " element " << i << ": " << value << ", expected "
                  << want.sum << " within " << want.bound();
          }
  EXPECT_EQ(wrong, 0) << what;
}

const Case kCases[] = {
    // LeNet's two convolutions (batch cut to 4).
    {"lenet_conv1", 2, 4, 1, 28, 28, 6, 5, 5, 1, 1, 2, 2, 1, 1, 1},
    {"lenet_conv2", 2, 4, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0, 1, 1, 1},
    {"stride_padding_groups", 2, 3, 4, 8, 8, 6, 3, 3, 2, 2, 1, 1, 1, 1, 2},
    {"dilation", 1, 2, 3, 9, 7, 4, 3, 2, 1, 1, 2, 1, 2, 3, 1},
    // The last window ends before the image's last row and column.
    {"short_last_window", 2, 2, 3, 8, 9, 5, 3, 3, 2, 2, 0, 0, 1, 1, 1},
};

/// The three kernels of one precision.
struct Kernels {
  decltype(&_mlir_ciface_mbt_rt_conv2d_f32) forward;
  decltype(&_mlir_ciface_mbt_rt_conv2d_grad_input_f32) gradInput;
  decltype(&_mlir_ciface_mbt_rt_conv2d_grad_filter_f32) gradFilter;
};
const Kernels kF32{_mlir_ciface_mbt_rt_conv2d_f32,
                   _mlir_ciface_mbt_rt_conv2d_grad_input_f32,
                   _mlir_ciface_mbt_rt_conv2d_grad_filter_f32};
const Kernels kBf16{_mlir_ciface_mbt_rt_conv2d_f32_bf16,
                    _mlir_ciface_mbt_rt_conv2d_grad_input_f32_bf16,
                    _mlir_ciface_mbt_rt_conv2d_grad_filter_f32_bf16};

class ConvKernelTest : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    if (GetParam() == "onednn" && convolutionEngine() != "oneDNN")
      GTEST_SKIP() << "the runtime has no oneDNN: " << convolutionEngine();
    if (GetParam().empty())
      unsetenv("MBT_CONV");
    else
      setenv("MBT_CONV", GetParam().c_str(), 1);
  }
  void TearDown() override { unsetenv("MBT_CONV"); }

  static void forward(Problem &p, MemRef5F *x, MemRef5F *w, MemRef5F *y,
                      const Kernels &kernels = kF32) {
    const Case &c = p.c;
    kernels.forward(x, w, y, c.sh, c.sw, c.ph, c.pw, c.dh, c.dw, c.groups);
  }
  static void gradInput(Problem &p, MemRef5F *dy, MemRef5F *w, MemRef5F *dx,
                        const Kernels &kernels) {
    const Case &c = p.c;
    kernels.gradInput(dy, w, dx, c.sh, c.sw, c.ph, c.pw, c.dh, c.dw, c.groups);
  }
  static void gradFilter(Problem &p, MemRef5F *x, MemRef5F *dy, MemRef5F *dw,
                         const Kernels &kernels) {
    const Case &c = p.c;
    kernels.gradFilter(x, dy, dw, c.sh, c.sw, c.ph, c.pw, c.dh, c.dw, c.groups);
  }

  /// Every pass of `kernels` on every case against its sums (of the
  /// operands rounded to bf16 where `rounded`).
  static void expectEachPassWithinBound(const Kernels &kernels, bool rounded);

  /// `kernels`' forward pass over 6 models, then over each model alone.
  static void expectModelsGetTheirBitsAlone(const Kernels &kernels);
};

void ConvKernelTest::expectEachPassWithinBound(const Kernels &kernels,
                                               bool rounded) {
  for (int64_t gap : {0, 5})
    for (const Case &c : kCases) {
      SCOPED_TRACE(std::string(c.name) + (gap ? " (strided views)" : ""));
      Problem p(c, gap, rounded);
      // Each pass writes one operand; a copy keeps the other two intact.
      std::vector<float> out;
      MemRef5F y =
          operand(out, c.models, c.batch, c.out, c.oh(), c.ow(), gap, 9);
      forward(p, &p.x, &p.w, &y, kernels);
      ASSERT_EQ(takeKernelError(), "");
      expectWithinBound(y, p.forward, "forward");
      MemRef5F dx = operand(out, c.models, c.batch, c.channels, c.height,
                            c.width, gap, 9);
      gradInput(p, &p.y, &p.w, &dx, kernels);
      ASSERT_EQ(takeKernelError(), "");
      expectWithinBound(dx, p.gradInput, "input's adjoint");
      MemRef5F dw = operand(out, c.models, c.out, c.channels / c.groups, c.kh,
                            c.kw, gap, 9);
      gradFilter(p, &p.x, &p.y, &dw, kernels);
      ASSERT_EQ(takeKernelError(), "");
      expectWithinBound(dw, p.gradFilter, "filter's adjoint");
    }
}

void ConvKernelTest::expectModelsGetTheirBitsAlone(const Kernels &kernels) {
  // LeNet's second convolution, enough work to be spread over the threads.
  Case c{"lenet_conv2", 6, 16, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0, 1, 1, 1};
  Problem p(c, 0);
  std::vector<float> together, alone;
  MemRef5F all =
      operand(together, c.models, c.batch, c.out, c.oh(), c.ow(), 0, 9);
  forward(p, &p.x, &p.w, &all, kernels);
  ASSERT_EQ(takeKernelError(), "");
  int64_t block = all.strides[0];
  for (int64_t m = 0; m < c.models; ++m) {
    MemRef5F x = p.x, w = p.w;
    x.offset += m * x.strides[0];
    w.offset += m * w.strides[0];
    x.sizes[0] = w.sizes[0] = 1;
    MemRef5F one = operand(alone, 1, c.batch, c.out, c.oh(), c.ow(), 0, 9);
    forward(p, &x, &w, &one, kernels);
    ASSERT_EQ(takeKernelError(), "");
    ASSERT_EQ(std::memcmp(one.data + one.offset,
                          all.data + all.offset + m * block,
                          block * sizeof(float)),
              0)
        << "model " << m;
  }
}

TEST_P(ConvKernelTest, EachPassIsItsSumsWithinTheirRoundingBound) {
  expectEachPassWithinBound(kF32, false);
}

// The bf16 kernels' sums are those of the operands rounded to bf16 (the
// products exact), within f32's bound: the f32 operands' sums differ
// from them by far more (2^-9 relative per operand), so a kernel that
// forgot to round, or rounded the operand it writes, fails.
TEST_P(ConvKernelTest, Bf16KernelsSumTheirOperandsRoundedToBf16) {
  expectEachPassWithinBound(kBf16, true);
}

TEST_P(ConvKernelTest, ModelsInABatchGetTheirBitsAlone) {
  expectModelsGetTheirBitsAlone(kF32);
}

TEST_P(ConvKernelTest, Bf16ModelsInABatchGetTheirBitsAlone) {
  expectModelsGetTheirBitsAlone(kBf16);
}

TEST_P(ConvKernelTest, MalformedCallWritesNaNAndSaysWhy) {
  Case c{"mismatch", 1, 2, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1};
  Problem p(c, 0);
  // A result two rows short of what padding 1 gives.
  std::vector<float> out;
  MemRef5F y = operand(out, 1, 2, 4, 6, 8, 0, 9);
  forward(p, &p.x, &p.w, &y);
  EXPECT_NE(takeKernelError().find("mbt_rt_conv2d_f32: image [1,2,3,8,8], "
                                   "filter [1,4,3,3,3] and result "
                                   "[1,2,4,6,8] do not agree"),
            std::string::npos);
  for (int64_t i = 0; i < numElements(y); ++i)
    ASSERT_TRUE(std::isnan(y.data[y.offset + i])) << i;
  _mlir_ciface_mbt_rt_conv2d_f32(&p.x, &p.w, &p.y, 1, 1, 1, 1, 1, 1, 2);
  EXPECT_NE(takeKernelError().find("do not agree"), std::string::npos);
  _mlir_ciface_mbt_rt_conv2d_f32(&p.x, &p.w, &p.y, 0, 1, 1, 1, 1, 1, 1);
  EXPECT_NE(takeKernelError().find("must be at least 1"), std::string::npos);
}

// "onednn": every pass on oneDNN or a kernel error, so that a primitive
// oneDNN refuses (a wrong dilation, padding or layout) fails here instead
// of passing on the reference loops behind it.
INSTANTIATE_TEST_SUITE_P(Engines, ConvKernelTest,
                         ::testing::Values(std::string(), "reference",
                                           "onednn"),
                         [](const auto &info) {
                           return info.param.empty() ? std::string("host")
                                                     : info.param;
                         });

} // namespace
