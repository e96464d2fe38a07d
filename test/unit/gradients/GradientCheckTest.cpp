//===- GradientCheckTest.cpp - finite differences of every op's gradient -===//
//
// Each case compiles a one-model spec with mbtc. With SGD at lr 1 and no
// momentum, one train step moves the parameters by exactly minus the
// gradient, and the eval step returns the loss, so the compiled gradient
// is compared with central differences of the compiled loss. Between them
// the cases reach every op that has a GradientOpInterface: matmul (plain,
// batched x parameter, parameter x parameter, each transpose), add, sub,
// mul, div, neg, relu, tanh, sigmoid, silu, gelu, exp, log, softplus,
// reshape, transpose, broadcast, reduce_sum, reduce_max, logsumexp, count
// (a mean), embedding, cross_entropy (with label smoothing), dropout (through
// the train step's loss, at the masks of its step) and the compositions the
// language builds from them (softmax, log_softmax, mse, bce_with_logits,
// nll over one_hot targets).
//
// Every spec case runs twice: as written (f32: central differences with a
// step of 2e-3, relative error below 2e-3) and as an f64 model (the same
// spec with f64 for f32: a step of 1e-5 and an error below 1e-7, a check
// 10^4 times tighter, which only an exact gradient passes).
//
//===----------------------------------------------------------------------===//
#include "mbt/common/Abi.h"
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Workspace.h"

#include "CompileWithMbtc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <regex>
#include <string>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;

namespace {

using mbt::test::compileFile;
using mbt::test::compileSpec;

constexpr int64_t kBatch = 5;
constexpr int64_t kFeatures = 6;
constexpr int64_t kClasses = 4;

/// A one-model spec over x: f32[6], y: class[4] with the given parameters,
/// body and loss, trained by SGD at lr 1.
std::string specWithLoss(const std::string &params, const std::string &body,
                         const std::string &loss,
                         const std::string &imports = "") {
  return imports +
         "model m {\n"
         "  input  x: f32[6]\n"
         "  target y: class[4]\n" +
         params + body + "  loss   = " + loss +
         "\n"
         "}\n" +
         mbt::test::oneModelSgdSweep("fashion_mnist(batch = 5)");
}

/// A one-model spec over an image x: f32[2, 6, 6] (channels first), the
/// logits' cross-entropy as the loss.
std::string imageSpec(const std::string &params, const std::string &body) {
  std::string source = specWithLoss(params, body, "cross_entropy(logits, y)");
  return std::regex_replace(source, std::regex("x: f32\\[6\\]"),
                            "x: f32[2, 6, 6]");
}

/// The same with the logits' cross-entropy as the loss, and accuracy.
std::string spec(const std::string &params, const std::string &body) {
  return specWithLoss(params, body + "  metric acc = accuracy(logits, y)\n",
                      "cross_entropy(logits, y)");
}

/// The loss and gradient of one compiled model on a fixed random batch, for
/// an artifact whose float type is T.
template <typename T> class CompiledModel {
public:
  explicit CompiledModel(const std::string &path)
      : artifact(Artifact::load(path)), p(artifact.manifest().paramCount),
        q(artifact.manifest().bufferCount),
        features(artifact.manifest().features), x(kBatch * features),
        y(kBatch) {
    // Drawn in float whatever T, so both precisions see the same values.
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.5f);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    params.resize(p);
    for (T &v : params)
      v = normal(rng);
    for (T &v : x)
      v = unit(rng);
    for (int32_t &v : y)
      v = static_cast<int32_t>(rng() % kClasses);
  }

  int64_t size() const { return p; }

  /// The loss at `at`: the eval step's, or, for a model that draws random
  /// numbers in training (dropout), the train step's at step 1, whose
  /// masks are those of gradient().
  T loss(const std::vector<T> &at) {
    if (lossFromTrainStep) {
      std::vector<T> local(at), out;
      trainStep(local, out);
      return out[0];
    }
    std::vector<T> local(at), out(artifact.manifest().outputs.size());
    std::vector<T> buffers(q, T(1));
    auto pm = makeDenseMemRef<T, 2>(local.data(), {1, p});
    auto bm = makeDenseMemRef<T, 2>(buffers.data(), {1, q});
    auto xm = makeDenseMemRef<T, 3>(x.data(), {1, kBatch, features});
    auto ym = makeDenseMemRef<int32_t, 2>(y.data(), {1, kBatch});
    auto om = makeDenseMemRef<T, 2>(out.data(), {1, (int64_t)out.size()});
    auto ws = workspace.descriptor(
        artifact.evalStepWorkspace<T>()(&pm, &bm, &xm, &ym, &om));
    artifact.evalStep<T>()(&pm, &bm, &xm, &ym, &om, &ws);
    return out[0];
  }

  /// params - (params after one SGD step at lr 1) = the gradient.
  std::vector<double> gradient() {
    std::vector<T> updated(params), out;
    trainStep(updated, out);
    std::vector<double> g(p);
    for (int64_t i = 0; i < p; ++i)
      g[i] = double(params[i]) - double(updated[i]);
    return g;
  }

  /// One SGD step at lr 1 (step number 1) on `at`, in place; `out` gets
  /// the loss and metrics (computed before the update).
  void trainStep(std::vector<T> &at, std::vector<T> &out) {
    std::vector<T> &updated = at;
    std::vector<T> state(p, T(0));
    // Running statistics (batch_norm's buffers) do not enter the train
    // step's loss; any values do.
    std::vector<T> buffers(q, T(1));
    out.assign(artifact.manifest().outputs.size(), T(0));
    std::vector<double> hyper{1.0, 0.0, 0.0}, step{1.0};
    auto pm = makeDenseMemRef<T, 2>(updated.data(), {1, p});
    auto bm = makeDenseMemRef<T, 2>(buffers.data(), {1, q});
    auto sm = makeDenseMemRef<T, 3>(state.data(), {1, 1, p});
    auto hm = makeDenseMemRef<double, 2>(hyper.data(), {1, 3});
    auto tm = makeDenseMemRef<double, 1>(step.data(), {1});
    auto xm = makeDenseMemRef<T, 3>(x.data(), {1, kBatch, features});
    auto ym = makeDenseMemRef<int32_t, 2>(y.data(), {1, kBatch});
    auto om = makeDenseMemRef<T, 2>(out.data(), {1, (int64_t)out.size()});
    auto ws = workspace.descriptor(artifact.trainStepWorkspace<T>()(
        &pm, &bm, &sm, &hm, &tm, &xm, &ym, &om));
    artifact.trainStep<T>()(&pm, &bm, &sm, &hm, &tm, &xm, &ym, &om, &ws);
  }

  /// Central differences of the loss along every parameter.
  std::vector<double> finiteDifferences(T eps) {
    std::vector<double> g(p);
    for (int64_t i = 0; i < p; ++i) {
      std::vector<T> plus(params), minus(params);
      plus[i] += eps;
      minus[i] -= eps;
      g[i] = (double(loss(plus)) - double(loss(minus))) /
             (double(plus[i]) - double(minus[i]));
    }
    return g;
  }

  std::vector<T> params;
  bool lossFromTrainStep = false;

private:
  Artifact artifact;
  Workspace workspace;
  int64_t p;
  int64_t q;        // the buffers' elements
  int64_t features; // the input's per-sample size (kFeatures, or an image's)
  std::vector<T> x;
  std::vector<int32_t> y;
};

/// ||a - b|| / ||b||.
double relativeError(const std::vector<double> &a,
                     const std::vector<double> &b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

/// The finite-difference step and the largest relative error accepted for
/// a model computing in T.
template <typename T> struct Precision;
template <> struct Precision<float> {
  static constexpr float kStep = 2e-3f;
  static constexpr double kTolerance = 2e-3;
};
template <> struct Precision<double> {
  static constexpr double kStep = 1e-5;
  static constexpr double kTolerance = 1e-7;
};

template <typename T = float>
void checkGradient(const std::string &artifactPath,
                   bool lossFromTrainStep = false) {
  CompiledModel<T> model(artifactPath);
  model.lossFromTrainStep = lossFromTrainStep;
  ASSERT_GT(model.size(), 0);
  std::vector<double> analytic = model.gradient();
  std::vector<double> numeric = model.finiteDifferences(Precision<T>::kStep);
  double norm = 0;
  for (double g : numeric)
    norm += g * g;
  ASSERT_GT(norm, 1e-6) << "the loss does not depend on the parameters";
  double error = relativeError(analytic, numeric);
  std::printf("relative error of the compiled %s gradient: %.3g\n",
              sizeof(T) == 8 ? "f64" : "f32", error);
  EXPECT_LT(error, Precision<T>::kTolerance);
  // The check can fail: a gradient off by 5% (f32) or 1e-5 (f64) does.
  std::vector<double> wrong(analytic);
  for (double &g : wrong)
    g *= sizeof(T) == 8 ? 1 + 1e-5 : 1.05;
  EXPECT_GT(relativeError(wrong, numeric), Precision<T>::kTolerance);
}

/// Compiles `source` as written (f32) and as an f64 model, and checks the
/// gradient of both.
void checkGradients(const std::string &name, const std::string &source,
                    bool lossFromTrainStep = false) {
  checkGradient<float>(compileSpec(name, source), lossFromTrainStep);
  std::string f64 = std::regex_replace(source, std::regex("f32\\["), "f64[");
  checkGradient<double>(compileSpec(name + "_f64", f64), lossFromTrainStep);
}

TEST(GradientCheck, MatmulAddReshapeCrossEntropy) {
  checkGradients("matmul_add", spec("  param w: f32[6, 4] = zeros\n"
                                    "  param b: f32[4] = zeros\n",
                                    "  logits = x @ w + b\n"));
}

// Dropout: the train step's loss at fixed masks (seed, site, step 1) is a
// smooth function of the parameters; two sites, so two different masks.
TEST(GradientCheck, Dropout) {
  checkGradients("dropout",
                 spec("  param w1: f32[6, 8] = zeros\n"
                      "  param w2: f32[8, 4] = zeros\n",
                      "  logits = dropout(tanh(dropout(x, 0.3) @ w1), 0.5)"
                      " @ w2\n"),
                 /*lossFromTrainStep=*/true);
}

// conv2d: padding, stride 2 (rows that no window reads), dilation and two
// groups, each through both adjoints (input and filter).
TEST(GradientCheck, Conv2dPaddingAndStride) {
  checkGradients("conv_stride",
                 imageSpec("  param k: f32[3, 2, 3, 3] = zeros\n"
                           "  param w: f32[27, 4] = zeros\n",
                           "  c = conv2d(x, k, stride = 2, padding = 1)\n"
                           "  logits = flatten(tanh(c)) @ w\n"));
}

TEST(GradientCheck, Conv2dDilationAndGroups) {
  checkGradients("conv_groups",
                 imageSpec("  param k1: f32[4, 2, 2, 2] = zeros\n"
                           "  param k2: f32[4, 2, 3, 3] = zeros\n"
                           "  param w: f32[16, 4] = zeros\n",
                           "  c1 = conv2d(x, k1, dilation = 2)\n"
                           "  c2 = conv2d(tanh(c1), k2, groups = 2)\n"
                           "  logits = flatten(c2) @ w\n"));
}

// The input's adjoint as a transposed pass (more input than output
// channels: it moves fewer column entries than col2im), with dilation and
// padding, and with a stride (zeros between the gradient's rows).
TEST(GradientCheck, Conv2dInputAdjointAsTransposedPass) {
  checkGradients("conv_transposed",
                 imageSpec("  param k1: f32[8, 2, 3, 3] = zeros\n"
                           "  param k2: f32[2, 8, 3, 3] = zeros\n"
                           "  param k3: f32[1, 8, 3, 3] = zeros\n"
                           "  param w: f32[32, 4] = zeros\n"
                           "  param v: f32[9, 4] = zeros\n",
                           "  c1 = tanh(conv2d(x, k1, padding = 1))\n"
                           "  c2 = conv2d(c1, k2, padding = 1, dilation = 2)\n"
                           "  c3 = conv2d(c1, k3, stride = 2, padding = 1)\n"
                           "  logits = flatten(c2) @ w + flatten(c3) @ v\n"));
}

// Pooling: max (overlapping windows with padding: kernel 3, stride 2) and
// average (with padding, which counts in the divisor).
TEST(GradientCheck, MaxPool2d) {
  checkGradients("max_pool",
                 imageSpec("  param k: f32[3, 2, 3, 3] = zeros\n"
                           "  param w: f32[27, 4] = zeros\n",
                           "  c = conv2d(x, k, padding = 1)\n"
                           "  p = max_pool2d(c, 3, stride = 2, padding = 1)\n"
                           "  logits = flatten(p) @ w\n"));
}

// Windows that do not overlap: kernel 2 stride 2 (with a row that no
// window reads) and kernel 2 stride 3.
TEST(GradientCheck, NonOverlappingPooling) {
  checkGradients("disjoint_pool",
                 imageSpec("  param k: f32[3, 2, 3, 3] = zeros\n"
                           "  param w: f32[12, 4] = zeros\n"
                           "  param v: f32[12, 4] = zeros\n",
                           "  c = tanh(conv2d(x, k, padding = 1))\n"
                           "  m = max_pool2d(c, 2, stride = 3)\n"
                           "  a = avg_pool2d(conv2d(x, k), 2)\n"
                           "  logits = flatten(m) @ w + flatten(a) @ v\n"));
}

TEST(GradientCheck, AvgPool2d) {
  checkGradients("avg_pool",
                 imageSpec("  param k: f32[3, 2, 3, 3] = zeros\n"
                           "  param w: f32[12, 4] = zeros\n",
                           "  c = tanh(conv2d(x, k))\n"
                           "  p = avg_pool2d(c, 3, stride = 2, padding = 1)\n"
                           "  logits = flatten(p) @ w\n"));
}

// dropout2d: whole channels of an image kept or zeroed, at fixed masks.
TEST(GradientCheck, Dropout2d) {
  checkGradients(
      "dropout2d",
      imageSpec("  param k: f32[4, 2, 3, 3] = zeros\n"
                "  param w: f32[144, 4] = zeros\n",
                "  c = dropout2d(tanh(conv2d(x, k, padding = 1)), 0.5)\n"
                "  logits = flatten(c) @ w\n"),
      /*lossFromTrainStep=*/true);
}

// Batch normalization in training: the batch's statistics (over the batch,
// and the image's positions for an image) carry the gradient, so every
// sample's loss depends on every other's. The loss is the train step's
// (the evaluation step normalizes with the running statistics instead).
TEST(GradientCheck, BatchNormOfFeatures) {
  checkGradients("batch_norm1d",
                 spec("  param w: f32[6, 4] = zeros\n"
                      "  param v: f32[4, 4] = zeros\n"
                      "  buffer mean: f32[4] = zeros\n"
                      "  buffer var: f32[4] = ones\n",
                      "  h = batch_norm(x @ w, mean, var)\n"
                      "  logits = tanh(h) @ v\n"),
                 /*lossFromTrainStep=*/true);
}

TEST(GradientCheck, BatchNormOfImages) {
  checkGradients("batch_norm2d",
                 imageSpec("  param k: f32[3, 2, 3, 3] = zeros\n"
                           "  param w: f32[27, 4] = zeros\n"
                           "  buffer mean: f32[3] = zeros\n"
                           "  buffer var: f32[3] = ones\n",
                           "  c = batch_norm(conv2d(x, k, stride = 2, padding "
                           "= 1), mean, var, eps = 0.01)\n"
                           "  logits = flatten(tanh(c)) @ w\n"),
                 /*lossFromTrainStep=*/true);
}

// The embedding's adjoint is a scatter-add: five samples over four classes
// share a row at least once (the rows' gradients must add up), and row 4 of
// the table is never picked (its gradient must stay zero).
TEST(GradientCheck, EmbeddingOfClassIndices) {
  checkGradients("embedding",
                 specWithLoss("  param t: f32[5, 4] = zeros\n"
                              "  param w: f32[6, 4] = zeros\n",
                              "  logits = tanh(x @ w + embedding(y, t))\n",
                              "cross_entropy(logits, y)"));
}

TEST(GradientCheck, Sub) {
  checkGradients("sub", spec("  param w: f32[6, 4] = zeros\n"
                             "  param b: f32[4] = zeros\n",
                             "  logits = x @ w - b\n"));
}

TEST(GradientCheck, MulBroadcastAndElementwise) {
  checkGradients("mul", spec("  param w: f32[6, 4] = zeros\n"
                             "  param v: f32[6, 4] = zeros\n"
                             "  param s: f32[4] = zeros\n",
                             "  logits = (x @ w) * (x @ v) * s\n"));
}

TEST(GradientCheck, NumbersInExpressions) {
  checkGradients("numbers",
                 spec("  param w: f32[6, 4] = zeros\n",
                      "  logits = 0.5 * (x @ w) - 2 * tanh(x @ w) + 1\n"));
}

TEST(GradientCheck, DivBroadcastAndElementwise) {
  checkGradients(
      "div",
      spec("  param w: f32[6, 4] = zeros\n"
           "  param s: f32[4] = ones\n",
           "  logits = (x @ w) / (s * s + 1) + 1 / (2 + tanh(x @ w))\n"));
}

TEST(GradientCheck, Neg) {
  checkGradients(
      "neg", spec("  param w: f32[6, 4] = zeros\n", "  logits = -(x @ w)\n"));
}

TEST(GradientCheck, Relu) {
  checkGradients("relu", spec("  param w1: f32[6, 8] = zeros\n"
                              "  param b1: f32[8] = zeros\n"
                              "  param w2: f32[8, 4] = zeros\n",
                              "  logits = relu(x @ w1 + b1) @ w2\n"));
}

TEST(GradientCheck, Tanh) {
  checkGradients("tanh", spec("  param w1: f32[6, 8] = zeros\n"
                              "  param w2: f32[8, 4] = zeros\n",
                              "  logits = tanh(x @ w1) @ w2\n"));
}

TEST(GradientCheck, Sigmoid) {
  checkGradients("sigmoid", spec("  param w1: f32[6, 8] = zeros\n"
                                 "  param w2: f32[8, 4] = zeros\n",
                                 "  logits = sigmoid(x @ w1) @ w2\n"));
}

TEST(GradientCheck, Silu) {
  checkGradients("silu", spec("  param w1: f32[6, 8] = zeros\n"
                              "  param w2: f32[8, 4] = zeros\n",
                              "  logits = silu(x @ w1) @ w2\n"));
}

TEST(GradientCheck, Gelu) {
  checkGradients("gelu", spec("  param w1: f32[6, 8] = zeros\n"
                              "  param w2: f32[8, 4] = zeros\n",
                              "  logits = gelu(x @ w1) @ w2\n"));
}

TEST(GradientCheck, ParameterTimesParameter) {
  checkGradients("param_matmul", spec("  param a: f32[6, 3] = zeros\n"
                                      "  param c: f32[3, 4] = zeros\n",
                                      "  logits = x @ (a @ c)\n"));
}

TEST(GradientCheck, ReduceSumAndTransposedMatmuls) {
  checkGradient(compileFile("reduce_transpose", std::string(MBT_TEST_INPUTS) +
                                                    "/reduce_transpose.mlir"));
}

// Layers from functions, local and from the standard library: each call is
// inlined with its own parameters, and the gradient of every one of them
// (fc1.w, res.fc2.b, ...) matches finite differences.
TEST(GradientCheck, LayersFromFunctionsAndImports) {
  checkGradients("layers",
                 "import \"nn\"\n"
                 "fn scaled(x, out: int, gain: float = 1.0) {\n"
                 "  param w: f32[dim(x), out] = zeros\n"
                 "  return gain * tanh(x @ w)\n"
                 "}\n" +
                     spec("", "  fc1    = scaled(x, 5, gain = 0.5)\n"
                              "  res    = residual(fc1, 3)\n"
                              "  logits = mlp(res, 4, dim(y), depth = 2)\n"));
}

TEST(GradientCheck, ExpLogSoftplus) {
  checkGradients(
      "exp_log_softplus",
      spec("  param w: f32[6, 4] = zeros\n"
           "  param v: f32[6, 4] = zeros\n",
           "  logits = exp(0.5 * (x @ w)) - log(softplus(x @ v) + 1)\n"));
}

TEST(GradientCheck, Transpose) {
  checkGradients("transpose",
                 spec("  param w: f32[4, 6] = zeros\n"
                      "  param a: f32[4, 4] = zeros\n",
                      "  logits = (x @ transpose(w)) @ transpose(a)\n"));
}

TEST(GradientCheck, SoftmaxAndLogSoftmax) {
  checkGradients("softmax",
                 specWithLoss("  param w: f32[6, 4] = zeros\n"
                              "  param v: f32[6, 4] = zeros\n",
                              "  p = softmax(x @ w)\n"
                              "  q = log_softmax(x @ v, axis = 0)\n",
                              "sum(p * one_hot(y)) + 0.3 * mean(q * p)"));
}

TEST(GradientCheck, SumMeanMaxOverAxes) {
  checkGradients(
      "reductions",
      specWithLoss("  param w: f32[6, 4] = zeros\n"
                   "  param v: f32[6, 4] = zeros\n",
                   "  h = tanh(x @ w)\n",
                   "mean(max(h, axis = -1)) + sum(mean(h * (x @ v), axis = 0))"
                   " - 0.5 * max(x @ v) + 0.1 * sum(h)"));
}

TEST(GradientCheck, LogSumExp) {
  checkGradients("logsumexp",
                 specWithLoss("  param w: f32[6, 4] = zeros\n", "  z = x @ w\n",
                              "mean(logsumexp(z)) - mean(z * one_hot(y))"));
}

TEST(GradientCheck, CrossEntropyWithLabelSmoothing) {
  checkGradients(
      "label_smoothing",
      specWithLoss("  param w: f32[6, 4] = zeros\n"
                   "  param b: f32[4] = zeros\n",
                   "  logits = x @ w + b\n",
                   "cross_entropy(logits, y, label_smoothing = 0.2)"));
}

// A matrix input (the ABI's flat x reshaped to [B, 2, 3]), flatten,
// reshape with an inferred size, and reductions over its axes.
TEST(GradientCheck, MatrixInputFlattenReshape) {
  checkGradients(
      "matrix_input",
      "model m {\n"
      "  input  x: f32[2, 3]\n"
      "  target y: class[4]\n"
      "  param  w: f32[6, 4] = zeros\n"
      "  param  v: f32[3, 4] = zeros\n"
      "  param  u: f32[3, 2] = zeros\n"
      "  cols   = sum(x, axis = 0)\n"
      "  g      = reshape(flatten(x) * flatten(reshape(u, [2, -1])), [3, 2])\n"
      "  logits = flatten(x) @ w + cols @ v + mean(g, axis = -1) @ v\n"
      "  loss   = cross_entropy(logits, y)\n"
      "}\n" +
          mbt::test::oneModelSgdSweep("fashion_mnist(batch = 5)"));
}

// concat of batched values and of parameters, slices with negative bounds
// and along a matrix's first axis.
TEST(GradientCheck, ConcatAndSlice) {
  checkGradients(
      "concat_slice",
      specWithLoss("  param w: f32[6, 3] = zeros\n"
                   "  param v: f32[4, 1] = zeros\n"
                   "  param u: f32[5, 4] = zeros\n",
                   "  h = concat(tanh(x @ w), slice(x, 1, -1) @ v)\n"
                   "  p = concat(u, transpose(v), axis = 0)\n"
                   "  logits = h @ slice(p, 1, 5, axis = 0) + slice(x, 0, 4)\n",
                   "cross_entropy(logits, y)"));
}

// sqrt, and the stdlib's layer_norm, rms_norm and prenorm_residual.
TEST(GradientCheck, SqrtAndNormalizationLayers) {
  checkGradients("norms",
                 "import \"nn\"\n" +
                     spec("  param w: f32[6, 8] = normal(0.0, 0.5)\n",
                          "  h = layer_norm(x @ w)\n"
                          "  r = prenorm_residual(rms_norm(h), 5)\n"
                          "  logits = linear(r + sqrt(h * h + 1), 4)\n"));
}

// The stdlib losses over one-hot targets: mse, bce_with_logits and nll.
TEST(GradientCheck, StdlibLosses) {
  checkGradients(
      "stdlib_losses",
      specWithLoss("  param w: f32[6, 4] = zeros\n"
                   "  param v: f32[6, 4] = zeros\n",
                   "  t = one_hot(y)\n",
                   "mse(sigmoid(x @ w), t) + bce_with_logits(x @ v, t)"
                   " + nll(log_softmax(x @ w), y)",
                   "import \"losses\"\n"));
}

} // namespace
