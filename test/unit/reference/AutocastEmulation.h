//===- AutocastEmulation.h - torch.autocast's casts in LibTorch -*- C++ -*-===//
//
// What autocast does to a product, emulated on the CPU in float32 with the
// values rounded (c10's conversions, round to nearest even): the operands
// and the result of a matmul rounded to bf16 or f16, and, since autograd
// hands a 16-bit tensor's gradient over in that format, the gradients that
// flow back through them too. Shared by the mixed-precision reference
// tests, with the MLP they both compile.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_TEST_UNIT_REFERENCE_AUTOCASTEMULATION_H
#define MBT_TEST_UNIT_REFERENCE_AUTOCASTEMULATION_H

#include <torch/torch.h>

#include <string>

namespace mbt::test {

/// `t` rounded to `format` (kBFloat16 or kHalf) and back to float32.
inline torch::Tensor roundedTo(const torch::Tensor &t,
                               torch::ScalarType format) {
  return t.to(format).to(torch::kFloat);
}

/// autocast's cast to `format` and back, as an autograd function: the
/// value and its gradient are both rounded (or the gradient passes as it
/// is, `roundGradient` false: a reference that is wrong on purpose).
struct RoundTo : public torch::autograd::Function<RoundTo> {
  static torch::Tensor forward(torch::autograd::AutogradContext *ctx,
                               torch::Tensor x, torch::ScalarType format,
                               bool roundGradient) {
    ctx->saved_data["format"] = static_cast<int64_t>(format);
    ctx->saved_data["round"] = roundGradient;
    return roundedTo(x, format);
  }
  static torch::autograd::tensor_list
  backward(torch::autograd::AutogradContext *ctx,
           torch::autograd::tensor_list grads) {
    auto format =
        static_cast<torch::ScalarType>(ctx->saved_data["format"].toInt());
    bool round = ctx->saved_data["round"].toBool();
    return {round ? roundedTo(grads[0], format) : grads[0], torch::Tensor(),
            torch::Tensor()};
  }
};

/// The MLP both tests compile (16 features, 12 tanh units, 4 classes), the
/// model block of a spec; the test writes the sweep.
inline std::string mlpModel() {
  return "model mlp {\n"
         "  input  x: f32[16]\n"
         "  target y: class[4]\n"
         "  param  w1: f32[16, 12] = zeros\n"
         "  param  b1: f32[12] = zeros\n"
         "  param  w2: f32[12, 4] = zeros\n"
         "  param  b2: f32[4] = zeros\n"
         "  h      = tanh(x @ w1 + b1)\n"
         "  logits = h @ w2 + b2\n"
         "  loss   = cross_entropy(logits, y)\n"
         "}\n";
}

} // namespace mbt::test

#endif // MBT_TEST_UNIT_REFERENCE_AUTOCASTEMULATION_H
