//===- TorchReferenceTest.cpp - a lone model vs LibTorch's torch::optim ---===//
//
// The "must show" (b): a model trained alone by an mbt artifact ends
// where LibTorch ends when it starts from the same initial weights and sees
// the same batches, optimized by torch::optim: within 1e-5 relative
// (max|a-b| / max|b| per parameter tensor) after 100 steps. Each case
// compiles a one-model spec with mbtc, copies the runtime's initial
// parameters into torch tensors and steps both in lockstep on Fashion-MNIST,
// comparing every parameter tensor after every step. The reference runs in
// float32 (what the artifact computes in) and in float64 (close to exact
// arithmetic on the same inputs), so a failure tells a bug (mbt far from
// both) from float32 rounding (mbt and torch float32 each as far from
// float64).
//
// Where the differences come from. One mbt step is reproduced bit for bit
// by a plain float32 loop nest doing what the lowering says (OpenBLAS sgemm,
// glibc tanhf / expf / logf, sums in index order, no FMA contraction), and
// its matmuls are bitwise equal to torch's (the same OpenBLAS sgemm calls).
// torch differs from that by an ulp here and there: its vectorized tanh and
// exp (Sleef) round differently from glibc's (either swap alone changes
// 20-60% of the step-1 gradient's elements by ~1e-7 relative), it writes the
// cross-entropy gradient as grad - exp(log_softmax) * sum(grad), sums the
// bias gradients in a vectorized order, and its AVX kernels are built with
// FMA contraction (Adam/SGD's add(alpha), addcmul, addcdiv). So after one
// step mbt and torch float32 differ by ~2e-7, as torch float32 and float64
// do. What 100 steps make of that depends on the configuration:
//
//  - SGD (lr 0.05, momentum 0.9) with a relu before the output bias, and
//    Adam (lr 1e-3) with a linear output layer: the differences stay at
//    rounding level (about 1e-6 and 4e-7 after 100 steps), so float32
//    shows the 1e-5 claim as stated. These are the check.
//
//  - Adam with the relu head: 1e-5 is out of float32's reach from step 1.
//    A few w1 gradients are sums of ~1e-3-sized terms that cancel to ~1e-8,
//    the size of Adam's eps; float32 gets them right to only a few percent,
//    and Adam's first update lr * g / (|g| + eps) turns that into ~1e-5 of
//    lr-sized steps (torch float32 is 1.2e-4 from float64 after step 1;
//    mbt 6e-5 from torch float32). The gap then shrinks as the moments fill.
//  - SGD with the linear head: the differences stay near 1e-7 for ~55
//    steps, then the trajectory amplifies them (doubling every ~5 steps) to
//    a few 1e-5 at step 100 — in torch float32 vs float64 just the same.
//
//  How far float32 ends from float64 in those two is luck of the rounding
//  (torch float32's w1 ends 2.8e-6 from float64 under OpenBLAS's SkylakeX
//  kernels and 3.9e-5 under its Prescott ones), so they check mbt against a
//  rounding ensemble of float32 runs (RoundingSpread.h): mbt must end as
//  close to float64 as they do. The F64 cases train the same two
//  configurations as f64 models and hold mbt to torch float64 within 1e-12,
//  which shows the semantics to float64's rounding.
//
// Each case prints the distances after steps 1-3 and every 10th step
// (every step with MBT_REFERENCE_VERBOSE=1 in the environment).
//
//===----------------------------------------------------------------------===//
#include "mbt/common/Philox.h"
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/FashionMnist.h"
#include "mbt/runtime/Sampler.h"
#include "mbt/runtime/Trainer.h"

#include <torch/nn/functional/loss.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>

#include "CompileWithMbtc.h"
#include "RelativeDifference.h"
#include "RoundingSpread.h"
#include "ScheduleReference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;

namespace {

using namespace mbt::test;

constexpr int64_t kSteps = 100;
/// Issue 4's cases (clipping, schedules, weight-decay exclusion) run twice
/// as long: the schedules change the learning rate over the whole run.
constexpr int64_t kLongSteps = 200;
/// An f64 model against torch float64: what is left is summation order
/// (dgemm's against torch's, glibc's tanh against Sleef's), about 1e-16
/// per step, amplified by the trajectory; 1e-12 leaves three orders for
/// that (the cases end near 1e-14).
constexpr double kF64Tolerance = 1e-12;

/// A one-model spec: the equivalence test's MLP (784-32-10, tanh hidden
/// layer) with `logits` as its output expression, computing in `type`.
std::string spec(const std::string &logits, const std::string &optim,
                 const std::string &extraSweep = "",
                 const std::string &type = "f32") {
  std::ostringstream os;
  // clang-format off
  os << "model mlp {\n"
        "  input  x: " << type << "[784]\n"
        "  target y: class[10]\n"
        "  param  w1: " << type << "[784, 32] = kaiming_uniform\n"
        "  param  b1: " << type << "[32] = uniform(-0.1, 0.1)\n"
        "  param  w2: " << type << "[32, 10] = normal(0.0, 0.1)\n"
        "  param  b2: " << type << "[10] = zeros\n"
        "  h      = tanh(x @ w1 + b1)\n"
        "  logits = " << logits << "\n"
        "  loss   = cross_entropy(logits, y)\n"
        "  metric acc = accuracy(logits, y)\n"
        "}\n"
        "sweep {\n"
        "  models = 1\n"
        "  model  = mlp\n"
        "  seed   = [123]\n"
        "  optim  = " << optim << "\n"
        "  data   = fashion_mnist(batch = 32)\n"
        "  epochs = 1\n"
     << extraSweep << "}\n";
  // clang-format on
  return os.str();
}

/// The manifest's value of hyperparameter `name` for model 0.
double hyper(const Manifest &manifest, const std::string &name) {
  for (size_t i = 0; i < manifest.hyperNames.size(); ++i)
    if (manifest.hyperNames[i] == name)
      return manifest.hyperValues[0][i];
  ADD_FAILURE() << "manifest has no hyperparameter '" << name << "'";
  return 0;
}

/// The spec's model in LibTorch: parameters as leaf tensors built from
/// mbt's initial parameter row, the forward pass written out by hand, and
/// the torch::optim optimizer the manifest names, configured from the
/// manifest's hyperparameters.
class TorchReference {
public:
  /// `dropout`: the rate of a dropout on the hidden layer (the spec's
  /// `dropout(h, rate)`, its only dropout call), 0 for none.
  /// `row`: mbt's initial parameters (float32 values for an f32 model).
  /// `member`: the float32 rounding ensemble's member (RoundingSpread.h).
  TorchReference(const Manifest &manifest, const std::vector<double> &row,
                 bool reluHead, torch::Dtype dtype, double dropout = 0.0,
                 int member = 0)
      : manifest(manifest), reluHead(reluHead), dtype(dtype), dropout(dropout),
        member(member) {
    for (const ParamSpec &param : manifest.params) {
      auto values =
          torch::from_blob(const_cast<double *>(row.data()) + param.offset,
                           {param.size}, torch::kFloat64);
      // A parameter the sweep freezes is requires_grad_(False), and the
      // optimizer does not get it, as one fine-tunes in PyTorch.
      params.push_back(values.to(dtype)
                           .reshape(param.shape)
                           .clone()
                           .set_requires_grad(param.trainable));
      if (param.trainable)
        trainable.push_back(params.back());
    }
    // Parameters the sweep's no_decay excludes go in a second param group
    // with weight_decay 0, as one writes it in PyTorch.
    std::vector<torch::Tensor> decayed, undecayed;
    for (size_t k = 0; k < params.size(); ++k)
      if (manifest.params[k].trainable)
        (manifest.params[k].decay ? decayed : undecayed).push_back(params[k]);
    auto groups = [&](const auto &options) {
      using Options = std::decay_t<decltype(options)>;
      std::vector<torch::optim::OptimizerParamGroup> result;
      result.emplace_back(decayed, std::make_unique<Options>(options));
      if (!undecayed.empty()) {
        Options none = options;
        none.weight_decay(0.0);
        result.emplace_back(undecayed, std::make_unique<Options>(none));
      }
      return result;
    };
    if (manifest.optimizerRule == "sgd") {
      auto options = torch::optim::SGDOptions(hyper(manifest, "lr"))
                         .momentum(hyper(manifest, "momentum"))
                         .weight_decay(hyper(manifest, "weight_decay"));
      optimizer = std::make_unique<torch::optim::SGD>(groups(options), options);
    } else if (manifest.optimizerRule == "adam") {
      auto options =
          torch::optim::AdamOptions(hyper(manifest, "lr"))
              .betas({hyper(manifest, "beta1"), hyper(manifest, "beta2")})
              .eps(hyper(manifest, "eps"))
              .weight_decay(hyper(manifest, "weight_decay"));
      optimizer =
          std::make_unique<torch::optim::Adam>(groups(options), options);
    } else {
      ADD_FAILURE() << "no torch::optim for rule " << manifest.optimizerRule;
    }
    baseLr = hyper(manifest, "lr");
  }

  const torch::Tensor &param(const std::string &name) const {
    for (size_t k = 0; k < manifest.params.size(); ++k)
      if (manifest.params[k].name == name)
        return params[k];
    throw std::runtime_error("no parameter " + name);
  }

  /// One optimizer step on samples `batch[0, b)`, their rows in the order
  /// of the reference's ensemble member; returns the loss.
  double step(const Dataset &data, const int64_t *batch, int64_t b) {
    std::vector<int64_t> rows = memberRowOrder(member, stepsTaken + 1, b);
    std::vector<int64_t> indices(b);
    for (int64_t j = 0; j < b; ++j)
      indices[j] = batch[rows[j]];
    std::vector<float> xs(b * data.numFeatures);
    std::vector<int64_t> ys(b);
    for (int64_t j = 0; j < b; ++j) {
      std::copy(data.sample(indices[j]),
                data.sample(indices[j]) + data.numFeatures,
                xs.begin() + j * data.numFeatures);
      ys[j] = data.y[indices[j]];
    }
    torch::Tensor x =
        torch::from_blob(xs.data(), {b, data.numFeatures}, torch::kFloat32)
            .to(dtype);
    torch::Tensor y = torch::from_blob(ys.data(), {b}, torch::kInt64).clone();

    optimizer->zero_grad();
    MemberRounding round(member, stepsTaken + 1);
    torch::Tensor h =
        round(torch::tanh(round(x.matmul(param("w1")) + param("b1"))));
    if (dropout > 0) {
      // The mask's rows follow the samples, whatever order they come in.
      torch::Tensor mask =
          dropoutMask(h.size(0), h.size(1))
              .index_select(
                  0, torch::tensor(rows, torch::TensorOptions(torch::kInt64)));
      h = h * mask.to(dtype);
    }
    torch::Tensor z = h.matmul(param("w2"));
    z = round(z);
    torch::Tensor logits = round((reluHead ? torch::relu(z) : z) + param("b2"));
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
    loss.backward();
    perturbGradients(trainable, member, stepsTaken + 1);
    // The learning rate the schedule gives this step, from the formulas
    // below (written from PyTorch's and transformers' definitions).
    if (!manifest.scheduleName.empty())
      for (auto &group : optimizer->param_groups())
        group.options().set_lr(
            baseLr * mbt::test::scheduleFactor(manifest.scheduleName,
                                               manifest.scheduleValues[0],
                                               stepsTaken));
    if (!manifest.clipNorm.empty()) {
      double norm =
          torch::nn::utils::clip_grad_norm_(trainable, manifest.clipNorm[0]);
      clippedSteps += norm > manifest.clipNorm[0];
    }
    optimizer->step();
    ++stepsTaken;
    return loss.item<double>();
  }

  /// Model 0's dropout mask of this step for an [b, n] hidden layer, as
  /// mbt draws it (mbt::dropoutBits: its seed, site 0, the step
  /// number, the row-major element index), holding 0 for a dropped element
  /// and 1 / (1 - rate) (in float32, as the artifact's scale) for a kept
  /// one. Only the masks are shared with mbt; torch does the arithmetic.
  torch::Tensor dropoutMask(int64_t b, int64_t n) const {
    float rate = static_cast<float>(dropout);
    float scale = 1.0f / (1.0f - rate);
    std::vector<float> mask(b * n);
    uint32_t step = static_cast<uint32_t>(stepsTaken + 1);
    for (int64_t e = 0; e < b * n; ++e)
      mask[e] = uniformFloat(dropoutBits(manifest.seeds[0], 0, step,
                                         static_cast<uint32_t>(e))) >= rate
                    ? scale
                    : 0.0f;
    return torch::from_blob(mask.data(), {b, n}, torch::kFloat32).clone();
  }

  /// Parameter `k` (manifest order), flattened, as doubles.
  std::vector<double> values(size_t k) const {
    torch::Tensor t = params[k].detach().to(torch::kFloat64).contiguous();
    const double *p = t.data_ptr<double>();
    return std::vector<double>(p, p + t.numel());
  }

  /// Steps whose gradient norm exceeded the clipping bound.
  int clippedSteps = 0;

private:
  double baseLr = 0;
  int64_t stepsTaken = 0;
  const Manifest &manifest;
  bool reluHead;
  torch::Dtype dtype;
  double dropout;
  int member;
  std::vector<torch::Tensor> params, trainable;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
};

/// Parameter `k` of a params row, as doubles.
std::vector<double> slice(const Manifest &manifest,
                          const std::vector<double> &row, size_t k) {
  const ParamSpec &param = manifest.params[k];
  return std::vector<double>(row.begin() + param.offset,
                             row.begin() + param.offset + param.size);
}

/// One comparison: the spec's output expression and optimizer, and how it
/// runs.
struct Case {
  std::string name, logits, optim;
  bool reluHead = false;
  std::string extraSweep;
  int64_t steps = kSteps;
  double dropout = 0.0;
  /// The model's float type: "f64" compares with torch float64 alone.
  std::string type = "f32";
  /// Float32 reference runs, member 0 in the data order (RoundingSpread.h).
  int members = 1;
};

/// Relative differences after the last step, per parameter tensor.
struct Result {
  std::vector<std::string> names;
  std::vector<double> mbtVsTorch32;     // the claim: mbt f32 vs torch f32
  std::vector<double> torch32VsTorch64; // float32 rounding in torch itself
  std::vector<double> mbtVsTorch64;     // float32 rounding in mbt
  /// Per parameter, each float32 member's distance from float64.
  std::vector<std::vector<double>> membersVsTorch64;
  std::vector<double> moved; // final vs initial (not vacuous)
  /// Per parameter: whether its bytes in mbt's params row are the initial
  /// ones after the last step (a frozen parameter's must be).
  std::vector<bool> bytesUnchanged;
  /// Per parameter: the manifest's `trainable` (false: the sweep froze it).
  std::vector<bool> trainable;
  double worstLossDiff = 0; // max over steps |loss_mbt - loss_t32|
  int clippedSteps = 0;     // steps torch float32 clipped
};

/// Trains the case in mbt and, from the same initial parameters on the same
/// batches, in torch float64 and (for an f32 model) in `members` float32
/// runs; returns the distances after the last step.
Result trainBoth(const Case &c) {
  static DataSplits data = loadDataSplits("fashion_mnist");
  bool f64 = c.type == "f64";
  std::string path =
      compileSpec(c.name, spec(c.logits, c.optim, c.extraSweep, c.type));
  Artifact artifact = Artifact::load(path);
  const Manifest &manifest = artifact.manifest();
  EXPECT_EQ(manifest.models, 1);
  TrainOptions options;
  options.quiet = true;
  options.outDir = path + ".out";
  Trainer trainer(artifact, data.train, data.test, options);
  std::vector<double> initial = trainer.modelParams(0);
  size_t elementBytes = f64 ? sizeof(double) : sizeof(float);
  auto rowBytes = [&] {
    const char *row =
        f64 ? reinterpret_cast<const char *>(trainer.params<double>())
            : reinterpret_cast<const char *>(trainer.params<float>());
    return std::string(row, row + manifest.paramCount * elementBytes);
  };
  std::string initialBytes = rowBytes();

  std::vector<std::unique_ptr<TorchReference>> refs32;
  for (int j = 0; !f64 && j < c.members; ++j)
    refs32.push_back(std::make_unique<TorchReference>(
        manifest, initial, c.reluHead, torch::kFloat32, c.dropout, j));
  TorchReference ref64(manifest, initial, c.reluHead, torch::kFloat64,
                       c.dropout);

  // The runtime's data order, rebuilt here independently of the Trainer:
  // epoch 0's permutation, batches of consecutive indices.
  int64_t batch = manifest.data.batch;
  std::vector<int64_t> order =
      epochPermutation(data.train.count, manifest.data.shuffleSeed, 0);
  if (int64_t(order.size()) < c.steps * batch)
    throw std::runtime_error("training set too small for the test");

  Result result;
  size_t numParams = manifest.params.size();
  for (const ParamSpec &param : manifest.params) {
    result.names.push_back(param.name);
    result.trainable.push_back(param.trainable);
  }
  result.membersVsTorch64.resize(numParams);
  std::cout << "[ " << c.name << " ] max over parameters of the relative "
            << "difference (max|a-b|/max|b|) after each step:\n"
            << "    step   mbt-vs-t32   t32-vs-t64   mbt-vs-t64    "
               "loss(mbt)-loss(t32)\n";
  for (int64_t s = 1; s <= c.steps; ++s) {
    const int64_t *indices = order.data() + (s - 1) * batch;
    trainer.runSteps(1);
    double lossRef = ref64.step(data.train, indices, batch);
    for (int j = 0; j < int(refs32.size()); ++j) {
      double loss = refs32[j]->step(data.train, indices, batch);
      if (j == 0)
        lossRef = loss;
    }
    double lossMbt = trainer.lastTrainOutputs()[0][0];
    result.worstLossDiff =
        std::max(result.worstLossDiff, std::fabs(lossMbt - lossRef));

    std::vector<double> row = trainer.modelParams(0);
    double a = 0, b = 0, d = 0;
    for (size_t k = 0; k < numParams; ++k) {
      std::vector<double> mbt = slice(manifest, row, k), t64 = ref64.values(k);
      std::vector<double> t32 = f64 ? t64 : refs32[0]->values(k);
      a = std::max(a, relativeDifference(mbt, t32));
      b = std::max(b, relativeDifference(t32, t64));
      d = std::max(d, relativeDifference(mbt, t64));
      if (s != c.steps)
        continue;
      result.mbtVsTorch32.push_back(relativeDifference(mbt, t32));
      result.torch32VsTorch64.push_back(relativeDifference(t32, t64));
      result.mbtVsTorch64.push_back(relativeDifference(mbt, t64));
      for (const auto &ref : refs32)
        result.membersVsTorch64[k].push_back(
            relativeDifference(ref->values(k), t64));
      result.moved.push_back(
          relativeDifference(slice(manifest, initial, k), mbt));
    }
    if (s <= 3 || s % 10 == 0 || std::getenv("MBT_REFERENCE_VERBOSE"))
      std::cout << "    " << std::setw(4) << s << std::scientific
                << std::setprecision(3) << "   " << a << "    " << b << "    "
                << d << "    " << lossMbt - lossRef << "\n"
                << std::defaultfloat;
  }
  std::string finalBytes = rowBytes();
  for (const ParamSpec &param : manifest.params)
    result.bytesUnchanged.push_back(
        finalBytes.compare(param.offset * elementBytes,
                           param.size * elementBytes, initialBytes,
                           param.offset * elementBytes,
                           param.size * elementBytes) == 0);
  if (!refs32.empty())
    result.clippedSteps = refs32[0]->clippedSteps;
  std::cout << "[ " << c.name << " ] after " << c.steps << " steps (largest "
            << "train-loss difference over the steps: " << result.worstLossDiff
            << "):\n";
  for (size_t k = 0; k < numParams; ++k) {
    std::cout << "    " << std::setw(3) << result.names[k] << std::scientific
              << std::setprecision(3) << "  mbt-vs-t32 "
              << result.mbtVsTorch32[k] << "  t32-vs-t64 "
              << result.torch32VsTorch64[k] << "  mbt-vs-t64 "
              << result.mbtVsTorch64[k] << "  moved " << result.moved[k];
    if (result.membersVsTorch64[k].size() > 1) {
      std::cout << "\n         float32 members vs t64:";
      for (double distance : result.membersVsTorch64[k])
        std::cout << " " << distance;
      std::cout << " (rms " << rootMeanSquare(result.membersVsTorch64[k])
                << ")";
    }
    std::cout << "\n" << std::defaultfloat;
  }
  return result;
}

/// The check: within 1e-5 of torch::optim in float32, and of the
/// float64 trajectory too.
void checkMatchesTorch(const std::string &name, const std::string &logits,
                       const std::string &optim, bool reluHead,
                       const std::string &extraSweep = "",
                       int64_t steps = kSteps, double dropout = 0.0) {
  Result r =
      trainBoth({name, logits, optim, reluHead, extraSweep, steps, dropout});
  ASSERT_EQ(r.mbtVsTorch32.size(), size_t(4));
  // With clipping on, it acted on most steps: the case tests it.
  if (extraSweep.find("clip") != std::string::npos) {
    EXPECT_GT(r.clippedSteps, steps / 2);
    std::cout << "[ " << name << " ] steps clipped: " << r.clippedSteps << "\n";
  }
  for (size_t k = 0; k < r.names.size(); ++k) {
    EXPECT_LE(r.mbtVsTorch32[k], 1e-5) << r.names[k];
    EXPECT_LE(r.mbtVsTorch64[k], 1e-5) << r.names[k];
    // Training moved every trainable parameter (the comparison is not
    // vacuous), and left every frozen one as it was, bit for bit.
    if (!r.trainable[k]) {
      EXPECT_TRUE(r.bytesUnchanged[k]) << r.names[k];
    } else {
      EXPECT_GT(r.moved[k], 1e-3) << r.names[k];
      EXPECT_FALSE(r.bytesUnchanged[k]) << r.names[k];
    }
  }
}

/// Where float32 itself cannot hold 1e-5 over 100 steps (see the top of the
/// file): mbt's float32 run ends as close to float64 as float32 runs that
/// differ only in summation order do (RoundingSpread.h).
void checkWithinFloat32Rounding(const std::string &name,
                                const std::string &logits,
                                const std::string &optim, bool reluHead) {
  Case c{name, logits, optim, reluHead};
  c.members = kRoundingMembers;
  Result r = trainBoth(c);
  ASSERT_EQ(r.mbtVsTorch32.size(), size_t(4));
  for (size_t k = 0; k < r.names.size(); ++k) {
    double bound = float32Bound(r.membersVsTorch64[k]);
    std::cout << "[ " << name << " ] " << r.names[k] << ": mbt-vs-t64 "
              << r.mbtVsTorch64[k] << " <= " << bound << "\n";
    EXPECT_LE(r.mbtVsTorch64[k], bound) << r.names[k];
    EXPECT_LE(r.mbtVsTorch64[k], kFloat32Cap) << r.names[k];
    EXPECT_GT(r.moved[k], 1e-3) << r.names[k];
  }
}

/// The same case compiled as an f64 model: mbt computes what torch float64
/// computes, to float64's rounding amplified over the run.
void checkF64MatchesTorchFloat64(const std::string &name,
                                 const std::string &logits,
                                 const std::string &optim, bool reluHead) {
  Case c{name, logits, optim, reluHead};
  c.type = "f64";
  Result r = trainBoth(c);
  ASSERT_EQ(r.mbtVsTorch64.size(), size_t(4));
  for (size_t k = 0; k < r.names.size(); ++k) {
    EXPECT_LE(r.mbtVsTorch64[k], kF64Tolerance) << r.names[k];
    EXPECT_GT(r.moved[k], 1e-3) << r.names[k];
  }
}

// SGD with momentum; a relu before the output bias (relu's gradient mask).
TEST(EquivalenceWithLibTorch, SgdLoneModelMatchesTorchOptim) {
  checkMatchesTorch("sgd_relu", "relu(h @ w2) + b2",
                    "sgd(lr = [0.05], momentum = 0.9)", true);
}

// Adam (torch's defaults but lr); a linear output layer.
TEST(EquivalenceWithLibTorch, AdamLoneModelMatchesTorchOptim) {
  checkMatchesTorch("adam_linear", "h @ w2 + b2", "adam(lr = [0.001])", false);
}

// Dropout on the hidden layer: given mbt's masks (the only thing shared),
// torch's forward and backward through h * mask end where mbt ends.
TEST(EquivalenceWithLibTorch, AdamWithDropoutMatchesTorchGivenTheSameMasks) {
  checkMatchesTorch("adam_dropout", "dropout(h, 0.3) @ w2 + b2",
                    "adam(lr = [0.001])", false, "", kSteps, 0.3);
}

// Gradient clipping by global norm (torch::nn::utils::clip_grad_norm_
// before each step), at bounds that clip most steps.
TEST(EquivalenceWithLibTorch, SgdWithGradientClippingMatchesTorch) {
  checkMatchesTorch("sgd_clip", "relu(h @ w2) + b2",
                    "sgd(lr = [0.05], momentum = 0.9)", true,
                    "  clip   = 0.25\n", kLongSteps);
}

TEST(EquivalenceWithLibTorch, AdamWithGradientClippingMatchesTorch) {
  checkMatchesTorch("adam_clip", "h @ w2 + b2", "adam(lr = [0.001])", false,
                    "  clip   = 0.1\n", kLongSteps);
}

// Learning-rate schedules (issue 4): the lr each gives, set on the torch
// optimizer before each step.
TEST(EquivalenceWithLibTorch, SgdWithStepScheduleMatchesTorch) {
  checkMatchesTorch(
      "sgd_step", "relu(h @ w2) + b2", "sgd(lr = [0.05], momentum = 0.9)", true,
      "  schedule = step(step_size = 30, gamma = 0.5)\n", kLongSteps);
}

TEST(EquivalenceWithLibTorch, SgdWithCosineWarmupMatchesTorch) {
  checkMatchesTorch("sgd_cosine", "relu(h @ w2) + b2",
                    "sgd(lr = [0.05], momentum = 0.9)", true,
                    "  schedule = cosine(total = 160, warmup = 10, "
                    "min_factor = 0.1)\n",
                    kLongSteps);
}

TEST(EquivalenceWithLibTorch, AdamWithLinearWarmupMatchesTorch) {
  checkMatchesTorch("adam_linear_sched", "h @ w2 + b2", "adam(lr = [0.001])",
                    false, "  schedule = linear(total = 200, warmup = 20)\n",
                    kLongSteps);
}

TEST(EquivalenceWithLibTorch, SgdWithExponentialScheduleMatchesTorch) {
  checkMatchesTorch("sgd_exp", "relu(h @ w2) + b2",
                    "sgd(lr = [0.05], momentum = 0.9)", true,
                    "  schedule = exponential(gamma = 0.98)\n", kLongSteps);
}

TEST(EquivalenceWithLibTorch, AdamWithOneCycleMatchesTorch) {
  checkMatchesTorch("adam_one_cycle", "h @ w2 + b2", "adam(lr = [0.003])",
                    false, "  schedule = one_cycle(total = 200)\n", kLongSteps);
}

// Weight decay on the weights only: no_decay puts the biases in a param
// group of their own without decay.
TEST(EquivalenceWithLibTorch, SgdWeightDecayExcludingBiasesMatchesTorch) {
  checkMatchesTorch("sgd_no_decay", "relu(h @ w2) + b2",
                    "sgd(lr = [0.05], momentum = 0.9, weight_decay = 0.05)",
                    true, "  no_decay = [\"b?\"]\n", kLongSteps);
}

TEST(EquivalenceWithLibTorch, AdamWeightDecayExcludingBiasesMatchesTorch) {
  checkMatchesTorch("adam_no_decay", "h @ w2 + b2",
                    "adam(lr = [0.001], weight_decay = 0.1)", false,
                    "  no_decay = \"b*\"\n", kLongSteps);
}

// Fine-tuning the head: the hidden layer frozen, as requires_grad_(False)
// (and left out of the optimizer) in torch, under weight decay and clipping,
// which must touch neither the frozen parameters nor count their
// (absent) gradients in the norm.
TEST(EquivalenceWithLibTorch, AdamFreezingTheHiddenLayerMatchesTorch) {
  checkMatchesTorch("adam_freeze", "h @ w2 + b2",
                    "adam(lr = [0.001], weight_decay = 0.1)", false,
                    "  freeze = [\"w1\", \"b1\"]\n  clip = 0.1\n");
}

TEST(EquivalenceWithLibTorch, SgdFreezingTheOutputWeightsMatchesTorch) {
  checkMatchesTorch("sgd_freeze", "relu(h @ w2) + b2",
                    "sgd(lr = [0.05], momentum = 0.9, weight_decay = 0.05)",
                    true, "  freeze = \"w2\"\n");
}

// The other two pairings, where float32 rounding alone exceeds 1e-5.
TEST(EquivalenceWithLibTorch, AdamReluHeadWithinFloat32Rounding) {
  checkWithinFloat32Rounding("adam_relu", "relu(h @ w2) + b2",
                             "adam(lr = [0.001])", true);
}

TEST(EquivalenceWithLibTorch, SgdLinearHeadWithinFloat32Rounding) {
  checkWithinFloat32Rounding("sgd_linear", "h @ w2 + b2",
                             "sgd(lr = [0.05], momentum = 0.9)", false);
}

// The same two as f64 models: what float32 cannot show, float64 does.
TEST(EquivalenceWithLibTorch, F64AdamReluHeadMatchesTorchFloat64) {
  checkF64MatchesTorchFloat64("adam_relu_f64", "relu(h @ w2) + b2",
                              "adam(lr = [0.001])", true);
}

TEST(EquivalenceWithLibTorch, F64SgdLinearHeadMatchesTorchFloat64) {
  checkF64MatchesTorchFloat64("sgd_linear_f64", "h @ w2 + b2",
                              "sgd(lr = [0.05], momentum = 0.9)", false);
}

} // namespace
