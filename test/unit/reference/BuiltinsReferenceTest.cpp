//===- BuiltinsReferenceTest.cpp - the builtins vs LibTorch, value and grad
//===//
//
// The language's builtins (exp, log, softplus, transpose, sum/mean/max over
// everything or one axis, logsumexp, softmax, log_softmax, one_hot,
// cross_entropy with label_smoothing, top-k accuracy) and the stdlib
// functions built from them (losses: mse, l1, huber, smooth_l1,
// bce_with_logits, nll; metrics: top5, error_rate, mae) computed by a compiled
// artifact, against the same expressions written with LibTorch's own functions
// (F::cross_entropy with label_smoothing, F::mse_loss, F::l1_loss,
// F::huber_loss, F::smooth_l1_loss, F::binary_cross_entropy_with_logits,
// F::nll_loss, torch::logsumexp, torch::amax, ...) in float64.
//
// Each case compiles a one-model spec with mbtc and evaluates it on one
// random batch (parameters N(0, 0.5²), x in [0, 1), random classes):
//  - forward: the eval step's loss and metrics are within 1e-5 relative of
//    torch's (the artifact computes in float32, torch here in float64, so
//    this is float32 rounding, not two implementations agreeing on a bug);
//  - gradient: with SGD at lr 1 and no momentum a train step moves the
//    parameters by exactly minus the gradient (as in GradientCheckTest), and
//    that is within 1e-4 (max|a-b| / max|b| per parameter tensor) of torch
//    autograd's gradient of the same loss. Finite differences
//    (test/unit/gradients) check that the gradient is the compiled loss's;
//    this checks that the loss is torch's, so a builtin with a consistent
//    but wrong definition (a smoothing mixed the other way round, a mean
//    over the wrong axis) fails here.
// Metrics carry no gradient and are checked forward only. Each case prints
// its measured relative differences.
//
//===----------------------------------------------------------------------===//
#include "mbt/common/Abi.h"
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Workspace.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/conv.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/functional/pooling.h>
#include <torch/types.h>

#include "CompileWithMbtc.h"
#include "RelativeDifference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
namespace F = torch::nn::functional;

namespace {

using mbt::test::compileSpec;
using mbt::test::relativeDifference;

constexpr int64_t kFeatures = 6;
constexpr double kForwardTolerance = 1e-5;
constexpr double kGradientTolerance = 1e-4;

/// A one-model spec over x: f32[6] and y: class[classes], trained by SGD at
/// lr 1, with `body` holding its params, values, loss and metrics.
std::string spec(int64_t classes, int64_t batch, const std::string &body,
                 const std::vector<int64_t> &input) {
  std::string dims;
  for (int64_t d : input)
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  return "import \"losses\"\n"
         "import \"metrics\"\n"
         "import \"nn\"\n"
         "model m {\n"
         "  input  x: f32[" +
         dims +
         "]\n"
         "  target y: class[" +
         std::to_string(classes) + "]\n" + body + "}\n" +
         mbt::test::oneModelSgdSweep(
             "fashion_mnist(batch = " + std::to_string(batch) + ")");
}

/// The batch and parameters in torch (float64), for a case's reference.
struct Inputs {
  torch::Tensor x, y, oneHot; // [B, F], [B] int64, [B, C] float64
  std::vector<std::pair<std::string, torch::Tensor>> params;

  const torch::Tensor &operator[](const std::string &name) const {
    for (const auto &[key, value] : params)
      if (key == name)
        return value;
    throw std::runtime_error("no parameter " + name);
  }
};

/// The loss, then the metrics in declaration order, each named as the
/// manifest names its outputs.
using Outputs = std::vector<std::pair<std::string, torch::Tensor>>;
using Reference = std::function<Outputs(const Inputs &)>;

std::vector<double> toVector(const torch::Tensor &t) {
  torch::Tensor c = t.detach().to(torch::kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(),
                             c.data_ptr<double>() + c.numel());
}

/// Top-k accuracy by ranks: a sample is a hit when fewer than k classes
/// come before its label, a class coming before when its logit is larger,
/// or equal with a lower index (the tie rule of `accuracy`).
torch::Tensor topK(const torch::Tensor &logits, const torch::Tensor &y,
                   int64_t k) {
  torch::Tensor label = logits.gather(1, y.unsqueeze(1)); // [B, 1]
  torch::Tensor index = torch::arange(logits.size(1)).unsqueeze(0);
  torch::Tensor before =
      (logits > label) | ((logits == label) & (index < y.unsqueeze(1)));
  return (before.sum(1) < k).to(torch::kFloat64).mean();
}

/// Compiles `body` into a spec, runs its eval and SGD train step on one
/// random batch, and compares both with `reference`. `input` is the
/// per-sample shape of x (torch sees x as [batch, input...]).
void checkAgainstTorch(const std::string &name, int64_t classes, int64_t batch,
                       const std::string &body, const Reference &reference,
                       const std::vector<int64_t> &input = {kFeatures}) {
  Artifact artifact =
      Artifact::load(compileSpec(name, spec(classes, batch, body, input)));
  int64_t features = 1;
  for (int64_t d : input)
    features *= d;
  const Manifest &manifest = artifact.manifest();
  int64_t p = manifest.paramCount;
  ASSERT_GT(p, 0);

  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> params(p), x(batch * features);
  std::vector<int32_t> y(batch);
  for (float &v : params)
    v = normal(rng);
  for (float &v : x)
    v = unit(rng);
  for (int32_t &v : y)
    v = static_cast<int32_t>(rng() % classes);

  // Forward: the eval step's loss and metrics.
  int64_t k = manifest.numColumns();
  std::vector<float> out(k);
  auto pm = makeDenseMemRef<float, 2>(params.data(), {1, p});
  // These models have no buffers (running statistics): Q = 0.
  auto bm = makeDenseMemRef<float, 2>(params.data(), {1, 0});
  auto xm = makeDenseMemRef<float, 3>(x.data(), {1, batch, features});
  auto ym = makeDenseMemRef<int32_t, 2>(y.data(), {1, batch});
  auto om = makeDenseMemRef<float, 2>(out.data(), {1, k});
  Workspace workspace;
  auto ws = workspace.descriptor(
      artifact.evalStepWorkspace()(&pm, &bm, &xm, &ym, &om));
  artifact.evalStep()(&pm, &bm, &xm, &ym, &om, &ws);

  // Gradient: params - (params after one SGD step at lr 1).
  std::vector<float> updated(params), state(p, 0.0f), trainOut(k);
  std::vector<double> hyper{1.0, 0.0, 0.0}, step{1.0};
  auto um = makeDenseMemRef<float, 2>(updated.data(), {1, p});
  auto sm = makeDenseMemRef<float, 3>(state.data(), {1, 1, p});
  auto hm = makeDenseMemRef<double, 2>(hyper.data(), {1, 3});
  auto tm = makeDenseMemRef<double, 1>(step.data(), {1});
  auto tom = makeDenseMemRef<float, 2>(trainOut.data(), {1, k});
  ws = workspace.descriptor(
      artifact.trainStepWorkspace()(&um, &bm, &sm, &hm, &tm, &xm, &ym, &tom));
  artifact.trainStep()(&um, &bm, &sm, &hm, &tm, &xm, &ym, &tom, &ws);

  // The same batch and parameters in torch, parameters from the manifest's
  // layout (offset, row-major shape).
  Inputs in;
  std::vector<int64_t> xShape{batch};
  xShape.insert(xShape.end(), input.begin(), input.end());
  in.x =
      torch::from_blob(x.data(), xShape, torch::kFloat32).to(torch::kFloat64);
  in.y = torch::from_blob(y.data(), {batch}, torch::kInt32).to(torch::kInt64);
  in.oneHot = torch::one_hot(in.y, classes).to(torch::kFloat64);
  for (const ParamSpec &param : manifest.params)
    in.params.emplace_back(param.name,
                           torch::from_blob(params.data() + param.offset,
                                            {param.size}, torch::kFloat32)
                               .to(torch::kFloat64)
                               .reshape(param.shape)
                               .set_requires_grad(true));
  Outputs expected = reference(in);
  ASSERT_EQ(expected.size(), size_t(k));

  std::printf("[ %s ] forward, relative |mbt - torch| / |torch|:\n",
              name.c_str());
  for (int64_t i = 0; i < k; ++i) {
    EXPECT_EQ(manifest.outputs[i], expected[i].first);
    double want = expected[i].second.item<double>();
    double diff = std::fabs(double(out[i]) - want);
    double relative = diff == 0 ? 0 : diff / std::fabs(want);
    std::printf("    %-8s mbt %.9g  torch %.9g  rel %.3g\n",
                manifest.outputs[i].c_str(), out[i], want, relative);
    EXPECT_LE(relative, kForwardTolerance)
        << name << ": " << manifest.outputs[i] << " is " << out[i]
        << ", torch says " << want;
  }
  // The train step reports the same loss.
  EXPECT_NEAR(trainOut[0], out[0], 1e-6 * std::fabs(out[0]) + 1e-7);

  expected[0].second.backward();
  std::printf("[ %s ] gradient, max|mbt - torch| / max|torch|:\n",
              name.c_str());
  for (size_t t = 0; t < manifest.params.size(); ++t) {
    const ParamSpec &param = manifest.params[t];
    std::vector<double> mbt(param.size);
    for (int64_t i = 0; i < param.size; ++i)
      mbt[i] =
          double(params[param.offset + i]) - double(updated[param.offset + i]);
    const torch::Tensor &grad = in.params[t].second.grad();
    ASSERT_TRUE(grad.defined()) << param.name << " has no torch gradient";
    std::vector<double> want = toVector(grad);
    double scale = 0, mbtScale = 0;
    for (int64_t i = 0; i < param.size; ++i) {
      scale = std::max(scale, std::fabs(want[i]));
      mbtScale = std::max(mbtScale, std::fabs(mbt[i]));
    }
    double relative = relativeDifference(mbt, want);
    std::printf("    %-8s max|grad| %.3g  rel %.3g\n", param.name.c_str(),
                scale, relative);
    // Not vacuous: the loss depends on every parameter.
    EXPECT_GT(scale, 1e-6) << param.name;
    EXPECT_GT(mbtScale, 1e-6) << param.name;
    EXPECT_LE(relative, kGradientTolerance) << name << ": " << param.name;
  }
}

const char *kLinear4 = "  param w: f32[6, 4] = zeros\n"
                       "  param b: f32[4] = zeros\n"
                       "  z = x @ w + b\n";

torch::Tensor linear(const Inputs &in) {
  return in.x.matmul(in["w"]) + in["b"];
}

// softmax and one_hot; sum and mean over everything, the batch included.
TEST(BuiltinsVsLibTorch, SoftmaxOneHotSumMean) {
  checkAgainstTorch(
      "softmax_one_hot", 4, 5,
      std::string(kLinear4) + "  loss = -sum(softmax(z) * one_hot(y))\n"
                              "  metric total = sum(z)\n"
                              "  metric avg = mean(z)\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor z = linear(in);
        return {{"loss", -(torch::softmax(z, -1) * in.oneHot).sum()},
                {"total", z.sum()},
                {"avg", z.mean()}};
      });
}

// embedding of the class indices (seven samples over four classes share
// rows; row 4 of the table is never picked): torch::embedding, and its
// gradient to the table.
TEST(BuiltinsVsLibTorch, EmbeddingOfClassIndices) {
  checkAgainstTorch("embedding", 4, 7,
                    "  param t: f32[5, 6] = zeros\n"
                    "  param w: f32[6, 4] = zeros\n"
                    "  z = (x + embedding(y, t)) @ w\n"
                    "  loss = cross_entropy(z, y)\n",
                    [](const Inputs &in) -> Outputs {
                      namespace F = torch::nn::functional;
                      torch::Tensor e = torch::embedding(in["t"], in.y);
                      torch::Tensor z = (in.x + e).matmul(in["w"]);
                      return {{"loss", F::cross_entropy(z, in.y)}};
                    });
}

// log_softmax through the stdlib's nll (sum over axis -1, mean), which
// must equal F::nll_loss and the builtin cross-entropy.
TEST(BuiltinsVsLibTorch, LogSoftmaxNll) {
  checkAgainstTorch(
      "log_softmax_nll", 4, 5,
      std::string(kLinear4) + "  loss = nll(log_softmax(z, axis = -1), y)\n"
                              "  metric ce = cross_entropy(z, y)\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor z = linear(in);
        return {{"loss", F::nll_loss(torch::log_softmax(z, -1), in.y)},
                {"ce", F::cross_entropy(z, in.y)}};
      });
}

// max over one per-sample axis and over everything (the batch included).
TEST(BuiltinsVsLibTorch, MaxOverAxisAndAll) {
  checkAgainstTorch(
      "max", 4, 5,
      std::string(kLinear4) +
          "  loss = mean(max(tanh(z), axis = -1)) + 0.5 * max(z)\n"
          "  metric rowmax = mean(max(z, axis = 0))\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor z = linear(in);
        return {
            {"loss", torch::amax(torch::tanh(z), {-1}).mean() + 0.5 * z.max()},
            {"rowmax", torch::amax(z, {1}).mean()}};
      });
}

TEST(BuiltinsVsLibTorch, CrossEntropyLabelSmoothing) {
  auto smoothed = [](double e) {
    return F::CrossEntropyFuncOptions().label_smoothing(e);
  };
  checkAgainstTorch(
      "label_smoothing", 4, 5,
      std::string(kLinear4) +
          "  loss = cross_entropy(z, y, label_smoothing = 0.2)\n"
          "  metric ls01 = cross_entropy(z, y, label_smoothing = 0.1)\n"
          "  metric ls1 = cross_entropy(z, y, label_smoothing = 1.0)\n",
      [&](const Inputs &in) -> Outputs {
        torch::Tensor z = linear(in);
        return {{"loss", F::cross_entropy(z, in.y, smoothed(0.2))},
                {"ls01", F::cross_entropy(z, in.y, smoothed(0.1))},
                {"ls1", F::cross_entropy(z, in.y, smoothed(1.0))}};
      });
}

TEST(BuiltinsVsLibTorch, LogSumExpExpLogSoftplus) {
  checkAgainstTorch("elementwise", 4, 5,
                    std::string(kLinear4) +
                        "  loss = mean(logsumexp(z)) + mean(exp(0.1 * z)) + "
                        "mean(log(softplus(z)))\n"
                        "  metric lse0 = mean(logsumexp(z, axis = 0))\n"
                        "  metric sp = mean(softplus(20 * z))\n",
                    [](const Inputs &in) -> Outputs {
                      torch::Tensor z = linear(in);
                      return {{"loss", torch::logsumexp(z, {-1}).mean() +
                                           torch::exp(0.1 * z).mean() +
                                           torch::log(F::softplus(z)).mean()},
                              {"lse0", torch::logsumexp(z, {1}).mean()},
                              {"sp", F::softplus(20 * z).mean()}};
                    });
}

// transpose of a parameter, into a matmul and elementwise with another;
// sum and mean over a per-sample axis.
TEST(BuiltinsVsLibTorch, TransposeAndAxisSums) {
  checkAgainstTorch(
      "transpose", 4, 5,
      "  param w: f32[6, 4] = zeros\n"
      "  param v: f32[4, 6] = zeros\n"
      "  z = x @ w + x @ transpose(v)\n"
      "  loss = mean(sum(z * z, axis = 0)) + mean(mean(z, axis = -1)) + "
      "sum(w * transpose(v))\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor vt = in["v"].t();
        torch::Tensor z = in.x.matmul(in["w"]) + in.x.matmul(vt);
        return {{"loss", (z * z).sum(-1).mean() + z.mean(-1).mean() +
                             (in["w"] * vt).sum()}};
      });
}

// Reductions and the softmax family along either axis of unbatched
// (parameter) matrices, where the axis is not shifted by a batch dim.
TEST(BuiltinsVsLibTorch, ParameterAxisReductions) {
  checkAgainstTorch(
      "param_axes", 4, 5,
      "  param w: f32[6, 4] = zeros\n"
      "  param u: f32[4, 3] = zeros\n"
      "  z = x @ softmax(w, axis = 0) + mean(transpose(u), axis = 0) + "
      "max(u, axis = -1) + logsumexp(w, axis = 0) + "
      "sum(log_softmax(u, axis = 0), axis = 1)\n"
      "  loss = cross_entropy(z, y)\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor w = in["w"], u = in["u"];
        torch::Tensor z = in.x.matmul(torch::softmax(w, 0)) + u.t().mean(0) +
                          torch::amax(u, {-1}) + torch::logsumexp(w, {0}) +
                          torch::log_softmax(u, 0).sum(1);
        return {{"loss", F::cross_entropy(z, in.y)}};
      });
}

TEST(BuiltinsVsLibTorch, MseOfSoftmax) {
  checkAgainstTorch(
      "mse", 4, 5,
      std::string(kLinear4) + "  loss = mse(softmax(z), one_hot(y))\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor z = linear(in);
        return {{"loss", F::mse_loss(torch::softmax(z, -1), in.oneHot)}};
      });
}

// The regression losses, on differences that fall on both sides of each
// threshold (z is about N(0, 0.7) against 0 or 1): l1, huber and smooth_l1
// at chosen and default thresholds, and the metric mae.
TEST(BuiltinsVsLibTorch, RegressionLosses) {
  checkAgainstTorch(
      "regression", 4, 16,
      std::string(kLinear4) + "  t = one_hot(y)\n"
                              "  loss = l1(z, t) + huber(z, t, delta = 0.5) + "
                              "smooth_l1(z, t, beta = 0.3)\n"
                              "  metric h = huber(z, t)\n"
                              "  metric s = smooth_l1(2 * z, t)\n"
                              "  metric e = mae(z, t)\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor z = linear(in), t = in.oneHot;
        torch::Tensor loss =
            F::l1_loss(z, t) +
            F::huber_loss(z, t, F::HuberLossFuncOptions().delta(0.5)) +
            // This LibTorch takes beta as an argument of its own; its
            // options' beta is ignored.
            F::smooth_l1_loss(z, t, {}, /*beta=*/0.3);
        return {{"loss", loss},
                {"h", F::huber_loss(z, t)},
                {"s", F::smooth_l1_loss(2 * z, t)},
                {"e", F::l1_loss(z, t)}};
      });
}

// bce_with_logits, also at logits large enough (x60) that exp overflows
// float32 unless softplus is computed stably, and with soft targets.
TEST(BuiltinsVsLibTorch, BceWithLogits) {
  checkAgainstTorch(
      "bce", 4, 5,
      std::string(kLinear4) +
          "  loss = bce_with_logits(z, one_hot(y))\n"
          "  metric big = bce_with_logits(60 * z, one_hot(y))\n"
          "  metric soft = bce_with_logits(z, sigmoid(2 * z))\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor z = linear(in);
        return {{"loss", F::binary_cross_entropy_with_logits(z, in.oneHot)},
                {"big", F::binary_cross_entropy_with_logits(60 * z, in.oneHot)},
                {"soft", F::binary_cross_entropy_with_logits(
                             z, torch::sigmoid(2 * z).detach())}};
      });
}

// Top-k accuracy for k = 1, 3 and 4 of 4 classes (all hits), and on
// all-equal logits, where the tie rule makes a hit exactly when y < k.
// A batch of 64 makes a wrong rank visible.
TEST(BuiltinsVsLibTorch, TopKAccuracy) {
  checkAgainstTorch(
      "top_k", 4, 64,
      std::string(kLinear4) + "  loss = cross_entropy(z, y)\n"
                              "  metric top1 = accuracy(z, y)\n"
                              "  metric top3 = accuracy(z, y, k = 3)\n"
                              "  metric top4 = accuracy(z, y, k = 4)\n"
                              "  metric tied1 = accuracy(0 * z, y)\n"
                              "  metric tied3 = accuracy(0 * z, y, k = 3)\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor z = linear(in).detach();
        torch::Tensor zero = torch::zeros_like(z);
        // Independently of the rank formula: top-1 is arg-max, top-4 is 1.
        EXPECT_NEAR(
            topK(z, in.y, 1).item<double>(),
            (z.argmax(1) == in.y).to(torch::kFloat64).mean().item<double>(),
            1e-12);
        EXPECT_EQ(topK(z, in.y, 4).item<double>(), 1.0);
        return {{"loss", F::cross_entropy(linear(in), in.y)},
                {"top1", topK(z, in.y, 1)},
                {"top3", topK(z, in.y, 3)},
                {"top4", topK(z, in.y, 4)},
                {"tied1", (in.y < 1).to(torch::kFloat64).mean()},
                {"tied3", (in.y < 3).to(torch::kFloat64).mean()}};
      });
}

// Arg-max over rows that hold NaNs: log(z + 1) is NaN where a logit is
// below -1, and torch.argmax takes the first NaN of such a row (the first
// maximum of the others). Catches an arg-max that lets a NaN lose every
// comparison (it then picks no class, or the largest real one, and the
// hits differ: 0.203 against 0.25 here) or that picks the last NaN.
TEST(BuiltinsVsLibTorch, AccuracyTakesTheFirstNaN) {
  checkAgainstTorch(
      "nan_argmax", 4, 64,
      std::string(kLinear4) + "  loss = cross_entropy(z, y)\n"
                              "  metric top1 = accuracy(log(z + 1), y)\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor z = linear(in).detach();
        torch::Tensor logs = torch::log(z + 1);
        // The case needs rows with a NaN and rows without one.
        torch::Tensor nanRows = logs.isnan().any(1);
        EXPECT_GT(nanRows.sum().item<int64_t>(), 4);
        EXPECT_GT((~nanRows).sum().item<int64_t>(), 0);
        return {{"loss", F::cross_entropy(linear(in), in.y)},
                {"top1", (logs.argmax(1) == in.y).to(torch::kFloat64).mean()}};
      });
}

// The stdlib's top5 and error_rate over 8 classes.
TEST(BuiltinsVsLibTorch, Top5AndErrorRate) {
  checkAgainstTorch(
      "top5", 8, 64,
      "  param w: f32[6, 8] = zeros\n"
      "  param b: f32[8] = zeros\n"
      "  z = x @ w + b\n"
      "  loss = cross_entropy(z, y)\n"
      "  metric top5 = top5(z, y)\n"
      "  metric top3 = accuracy(z, y, k = 3)\n"
      "  metric err = error_rate(z, y)\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor z = linear(in).detach();
        // torch::topk's indices: the same top-5 hits unless logits tie.
        torch::Tensor top = std::get<1>(torch::topk(z, 5, 1));
        torch::Tensor viaTopk =
            (top == in.y.unsqueeze(1)).any(1).to(torch::kFloat64).mean();
        EXPECT_EQ(topK(z, in.y, 5).item<double>(), viaTopk.item<double>());
        return {{"loss", F::cross_entropy(linear(in), in.y)},
                {"top5", viaTopk},
                {"top3", topK(z, in.y, 3)},
                {"err", 1 - topK(z, in.y, 1)}};
      });
}

// The stdlib's normalization layers (mean over an axis, a batched value
// broadcast against a wider one, sqrt) against torch::layer_norm and RMS
// normalization written out in torch.
TEST(BuiltinsVsLibTorch, LayerNormAndRmsNorm) {
  checkAgainstTorch(
      "norms", 4, 5,
      "  param w: f32[6, 8] = zeros\n"
      "  param v: f32[8, 4] = zeros\n"
      "  h = layer_norm(x @ w)\n"
      "  r = rms_norm(tanh(h))\n"
      "  loss = cross_entropy(r @ v, y)\n",
      [](const Inputs &in) -> Outputs {
        torch::Tensor h = torch::layer_norm(in.x.matmul(in["w"]), {8},
                                            in["h.g"], in["h.b"], 1e-5);
        torch::Tensor t = torch::tanh(h);
        torch::Tensor r =
            t / torch::sqrt((t * t).mean(-1, /*keepdim=*/true) + 1e-6) *
            in["r.g"];
        return {{"loss", F::cross_entropy(r.matmul(in["v"]), in.y)}};
      });
}

// conv2d (stride, padding, dilation, groups), max and average pooling and
// the stdlib's conv layer against F::conv2d, F::max_pool2d, F::avg_pool2d:
// the layouts ([C, H, W] images, [O, C/groups, KH, KW] filters), the window
// arithmetic and the padding rules are torch's, not just self-consistent.
TEST(BuiltinsVsLibTorch, Conv2dStridePaddingDilationGroups) {
  checkAgainstTorch(
      "conv2d", 4, 3,
      "  param k1: f32[4, 2, 3, 3] = zeros\n"
      "  param k2: f32[6, 2, 2, 2] = zeros\n"
      "  param w: f32[96, 4] = zeros\n"
      "  c1 = tanh(conv2d(x, k1, stride = 2, padding = 1))\n"
      "  c2 = conv2d(c1, k2, dilation = 2, groups = 2, padding = 1)\n"
      "  loss = cross_entropy(flatten(c2) @ w, y)\n",
      [](const Inputs &in) -> Outputs {
        auto c1 = torch::tanh(F::conv2d(
            in.x, in["k1"], F::Conv2dFuncOptions().stride(2).padding(1)));
        auto c2 =
            F::conv2d(c1, in["k2"],
                      F::Conv2dFuncOptions().dilation(2).groups(2).padding(1));
        return {
            {"loss", F::cross_entropy(c2.flatten(1).matmul(in["w"]), in.y)}};
      },
      {2, 7, 7});
}

// The input's adjoint both ways: col2im (c2: few positions and channels
// per group) and the transposed pass (c3: 4 input channels, 1 output, a
// stride).
TEST(BuiltinsVsLibTorch, Conv2dInputAdjointBothWays) {
  checkAgainstTorch(
      "conv2d_adjoints", 4, 3,
      "  param k1: f32[4, 2, 3, 3] = zeros\n"
      "  param k2: f32[6, 4, 3, 3] = zeros\n"
      "  param k3: f32[1, 4, 3, 3] = zeros\n"
      "  param w: f32[54, 4] = zeros\n"
      "  param v: f32[16, 4] = zeros\n"
      "  c1 = tanh(conv2d(x, k1, padding = 1))\n"
      "  c2 = conv2d(c1, k2, stride = 2)\n"
      "  c3 = conv2d(c1, k3, stride = 2, padding = 1)\n"
      "  loss = cross_entropy(flatten(c2) @ w + flatten(c3) @ v, y)\n",
      [](const Inputs &in) -> Outputs {
        auto c1 = torch::tanh(
            F::conv2d(in.x, in["k1"], F::Conv2dFuncOptions().padding(1)));
        auto c2 = F::conv2d(c1, in["k2"], F::Conv2dFuncOptions().stride(2));
        auto c3 = F::conv2d(c1, in["k3"],
                            F::Conv2dFuncOptions().stride(2).padding(1));
        return {{"loss", F::cross_entropy(c2.flatten(1).matmul(in["w"]) +
                                              c3.flatten(1).matmul(in["v"]),
                                          in.y)}};
      },
      {2, 7, 7});
}

// Pooling whose windows do not overlap (each input element read by at most
// one window: kernel 2 stride 2 with a row no window reads, kernel 2
// stride 3 with gaps between windows).
TEST(BuiltinsVsLibTorch, NonOverlappingPooling) {
  checkAgainstTorch(
      "pooling_disjoint", 4, 3,
      "  param k: f32[3, 2, 1, 1] = zeros\n"
      "  param w: f32[27, 4] = zeros\n"
      "  param v: f32[12, 4] = zeros\n"
      "  c = tanh(conv2d(x, k))\n"
      "  m = max_pool2d(c, 2)\n"
      "  a = avg_pool2d(c, 2, stride = 3)\n"
      "  loss = cross_entropy(flatten(m) @ w + flatten(a) @ v, y)\n",
      [](const Inputs &in) -> Outputs {
        auto c = torch::tanh(F::conv2d(in.x, in["k"]));
        auto m = F::max_pool2d(c, F::MaxPool2dFuncOptions(2));
        auto a = F::avg_pool2d(c, F::AvgPool2dFuncOptions(2).stride(3));
        return {{"loss", F::cross_entropy(m.flatten(1).matmul(in["w"]) +
                                              a.flatten(1).matmul(in["v"]),
                                          in.y)}};
      },
      {2, 7, 7});
}

TEST(BuiltinsVsLibTorch, PoolingAndConvLayer) {
  checkAgainstTorch(
      "pooling", 4, 3,
      "  c = conv(x, 3, 3, padding = 1)\n"
      "  m = max_pool2d(c, 3, stride = 2, padding = 1)\n"
      "  a = avg_pool2d(tanh(c), 2, padding = 1)\n"
      "  param w: f32[48, 4] = zeros\n"
      "  param v: f32[48, 4] = zeros\n"
      "  loss = cross_entropy(flatten(m) @ w + flatten(a) @ v, y)\n",
      [](const Inputs &in) -> Outputs {
        auto c = F::conv2d(in.x, in["c.w"], F::Conv2dFuncOptions().padding(1)) +
                 in["c.b"].reshape({3, 1, 1});
        auto m =
            F::max_pool2d(c, F::MaxPool2dFuncOptions(3).stride(2).padding(1));
        auto a = F::avg_pool2d(torch::tanh(c),
                               F::AvgPool2dFuncOptions(2).padding(1));
        return {{"loss", F::cross_entropy(m.flatten(1).matmul(in["w"]) +
                                              a.flatten(1).matmul(in["v"]),
                                          in.y)}};
      },
      {2, 7, 7});
}

} // namespace
