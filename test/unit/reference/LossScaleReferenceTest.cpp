//===- LossScaleReferenceTest.cpp - f16 with GradScaler against LibTorch --===//
//
// precision = f16: the products in f16 (mbt-autocast's rounding, as for
// bf16) and one dynamic loss scale per model. The reference is each model
// trained alone in LibTorch the way `torch.autocast(dtype=torch.float16)`
// plus `torch.amp.GradScaler` train it: the loss times the scale
// backpropagated through an MLP whose products round to f16 in both passes
// (so a scaled gradient beyond 65504 becomes infinite), the gradients
// unscaled by the scale's reciprocal, the optimizer step skipped when any
// is not finite (torch::optim::Adam counts only the steps it takes), and
// the scale backed off or grown as GradScaler.update does.
//
// This LibTorch (1.13 on Debian 12) has GradScaler's kernels
// (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_) for
// CUDA only, so the scaler is written out here from grad_scaler.py and the
// kernel's source: it is ten lines.
//
// Three models with different learning rates train together; their
// scaled gradients overflow at different steps, and each must end where
// its own run alone ends, having skipped the same steps.
//
//===----------------------------------------------------------------------===//
#include "AutocastEmulation.h"
#include "CompileWithMbtc.h"
#include "RelativeDifference.h"

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Workspace.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
using mbt::test::compileSpec;
using mbt::test::relativeDifference;

namespace {

constexpr int64_t kModels = 3, kBatch = 8, kFeatures = 16, kClasses = 4;
constexpr int64_t kSteps = 24;
constexpr double kLearningRates[kModels] = {0.003, 0.01, 0.03};
// Large enough that the first steps overflow f16, with a short growth
// interval so that the scale grows back into overflow again.
constexpr double kInitScale = 4194304.0; // 2^22
constexpr int64_t kGrowthInterval = 3;
const char *const kParamNames[] = {"w1", "b1", "w2", "b2"};

std::string spec() {
  return mbt::test::mlpModel() +
         "sweep {\n"
         "  models = 3\n"
         "  optim  = adam(lr = [0.003, 0.01, 0.03])\n"
         "  data   = fashion_mnist(batch = 8)\n"
         "  precision = f16\n"
         "  loss_scale = dynamic(init_scale = 4194304, growth_interval = 3)\n"
         "}\n";
}

torch::Tensor toF16AndBack(const torch::Tensor &t) {
  return mbt::test::roundedTo(t, torch::kHalf);
}

/// autocast's f16 cast, value and gradient (see AutocastEmulation.h); a
/// scaled gradient beyond 65504 becomes infinite there.
torch::Tensor roundF16(const torch::Tensor &t) {
  return mbt::test::RoundTo::apply(t, torch::kHalf, true);
}

/// One step's data: the same batch for every model.
struct Batch {
  std::vector<float> x;
  std::vector<int32_t> y;
};

/// One model trained alone with autocast(f16) and GradScaler.
class TorchAmpRun {
public:
  TorchAmpRun(const std::map<std::string, std::vector<float>> &init, double lr)
      : optimizer(makeParams(init), torch::optim::AdamOptions(lr)) {}

  /// GradScaler alone: the step, skipped on this model's own overflow.
  void step(const Batch &batch) { finish(backward(batch)); }

  /// scaler.scale(loss).backward() and unscale_: whether a gradient is not
  /// finite.
  bool backward(const Batch &batch) {
    optimizer.zero_grad();
    torch::Tensor x = torch::tensor(batch.x).reshape({kBatch, kFeatures});
    std::vector<int64_t> labels(batch.y.begin(), batch.y.end());
    torch::Tensor y = torch::tensor(labels, torch::kLong);
    auto product = [](const torch::Tensor &a, const torch::Tensor &b) {
      return roundF16(roundF16(a).matmul(roundF16(b)));
    };
    torch::Tensor h = torch::tanh(product(x, t["w1"]) + t["b1"]);
    torch::Tensor logits = product(h, t["w2"]) + t["b2"];
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
    // scaler.scale(loss).backward()
    (loss * torch::tensor(scale)).backward();
    // scaler.step(optimizer): unscale_ multiplies by the reciprocal taken
    // in double, then skips the step if any gradient is not finite.
    float inverse = static_cast<float>(1.0 / static_cast<double>(scale));
    bool foundInf = false;
    {
      torch::NoGradGuard noGrad;
      for (const char *name : kParamNames) {
        torch::Tensor g = t[name].grad();
        g.mul_(inverse);
        foundInf |= !torch::isfinite(g).all().item<bool>();
      }
    }
    return foundInf;
  }

  /// The rest of scaler.step(optimizer) and scaler.update(), skipping the
  /// step if `foundInf`.
  void finish(bool foundInf) {
    if (!foundInf)
      optimizer.step();
    else
      ++skipped;
    // scaler.update(): _amp_update_scale_'s kernel.
    if (foundInf) {
      scale *= 0.5f;
      goodSteps = 0;
    } else if (++goodSteps == kGrowthInterval) {
      float grown = scale * 2.0f;
      if (std::isfinite(grown))
        scale = grown;
      goodSteps = 0;
    }
  }

  /// The parameters in the manifest's order.
  std::vector<double> params() {
    std::vector<double> flat;
    for (const char *name : kParamNames) {
      torch::Tensor p = t[name].contiguous();
      flat.insert(flat.end(), p.data_ptr<float>(),
                  p.data_ptr<float>() + p.numel());
    }
    return flat;
  }

  float scale = static_cast<float>(kInitScale);
  int64_t goodSteps = 0, skipped = 0;

private:
  std::vector<torch::Tensor>
  makeParams(const std::map<std::string, std::vector<float>> &init) {
    std::map<std::string, std::vector<int64_t>> shapes{
        {"w1", {16, 12}}, {"b1", {12}}, {"w2", {12, 4}}, {"b2", {4}}};
    std::vector<torch::Tensor> list;
    for (const char *name : kParamNames) {
      t[name] = torch::tensor(init.at(name))
                    .reshape(shapes.at(name))
                    .requires_grad_();
      list.push_back(t[name]);
    }
    return list;
  }

  std::map<std::string, torch::Tensor> t;
  torch::optim::Adam optimizer;
};

TEST(LossScaleVsLibTorch, EachModelSkipsItsOwnOverflowsAsGradScalerAlone) {
  Artifact artifact = Artifact::load(compileSpec("f16_loss_scale", spec()));
  const Manifest &manifest = artifact.manifest();
  ASSERT_TRUE(manifest.lossScale.has_value());
  ASSERT_EQ(manifest.bufferCount, 3);
  const LossScaleSpec &scaleSpec = *manifest.lossScale;
  int64_t p = manifest.paramCount;

  // Each model's own initial parameters, with more bits than f16 keeps.
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::vector<float> params(kModels * p);
  std::vector<TorchAmpRun> references;
  std::vector<std::map<std::string, std::vector<float>>> initial(kModels);
  for (int64_t m = 0; m < kModels; ++m) {
    for (const ParamSpec &param : manifest.params)
      for (int64_t i = 0; i < param.size; ++i) {
        float v = normal(rng);
        params[m * p + param.offset + i] = v;
        initial[m][param.name].push_back(v);
      }
    references.emplace_back(initial[m], kLearningRates[m]);
  }

  // The artifact's state: Adam's two slots, the loss scale's buffers as
  // the manifest initializes them.
  std::vector<float> state(2 * kModels * p, 0.0f), buffers(kModels * 3, 0.0f);
  for (int64_t m = 0; m < kModels; ++m)
    buffers[m * 3 + manifest.buffers[scaleSpec.scaleBuffer].offset] =
        static_cast<float>(manifest.buffers[scaleSpec.scaleBuffer].init.value);
  std::vector<double> hyper;
  for (int64_t m = 0; m < kModels; ++m)
    hyper.insert(hyper.end(), manifest.hyperValues[m].begin(),
                 manifest.hyperValues[m].end());
  int64_t h = manifest.numHyper();
  std::vector<float> out(kModels);
  Workspace workspace;
  std::vector<std::vector<int64_t>> skippedAt(kModels);
  std::vector<Batch> batches;

  for (int64_t s = 1; s <= kSteps; ++s) {
    Batch batch;
    batch.x.resize(kBatch * kFeatures);
    for (float &v : batch.x)
      v = 2.0f * normal(rng);
    for (int64_t i = 0; i < kBatch; ++i)
      batch.y.push_back(static_cast<int32_t>(rng() % kClasses));
    batches.push_back(batch);
    std::vector<float> x;
    std::vector<int32_t> y;
    for (int64_t m = 0; m < kModels; ++m) {
      x.insert(x.end(), batch.x.begin(), batch.x.end());
      y.insert(y.end(), batch.y.begin(), batch.y.end());
    }
    std::vector<double> step(kModels, static_cast<double>(s));
    auto pm = makeDenseMemRef<float, 2>(params.data(), {kModels, p});
    auto bm = makeDenseMemRef<float, 2>(buffers.data(), {kModels, 3});
    auto sm = makeDenseMemRef<float, 3>(state.data(), {2, kModels, p});
    auto hm = makeDenseMemRef<double, 2>(hyper.data(), {kModels, h});
    auto tm = makeDenseMemRef<double, 1>(step.data(), {kModels});
    auto xm = makeDenseMemRef<float, 3>(x.data(), {kModels, kBatch, kFeatures});
    auto ym = makeDenseMemRef<int32_t, 2>(y.data(), {kModels, kBatch});
    auto om = makeDenseMemRef<float, 2>(out.data(), {kModels, 1});
    auto ws = workspace.descriptor(artifact.trainStepWorkspace<float>()(
        &pm, &bm, &sm, &hm, &tm, &xm, &ym, &om));
    artifact.trainStep<float>()(&pm, &bm, &sm, &hm, &tm, &xm, &ym, &om, &ws);
    for (int64_t m = 0; m < kModels; ++m) {
      int64_t before = references[m].skipped;
      references[m].step(batch);
      if (references[m].skipped != before)
        skippedAt[m].push_back(s);
      // A skipped step is not a divergence: the loss is reported.
      EXPECT_TRUE(std::isfinite(out[m])) << "model " << m << " step " << s;
    }
  }

  auto bufferOf = [&](int64_t m, int64_t k) {
    return buffers[m * 3 + manifest.buffers[k].offset];
  };
  for (int64_t m = 0; m < kModels; ++m) {
    std::vector<double> mine(params.begin() + m * p,
                             params.begin() + (m + 1) * p);
    double error = relativeDifference(mine, references[m].params());
    std::string skipped;
    for (int64_t s : skippedAt[m])
      skipped += " " + std::to_string(s);
    std::printf("model %lld (lr %g): skipped steps%s; scale %g (torch %g); "
                "parameters %.3g from torch's\n",
                static_cast<long long>(m), kLearningRates[m], skipped.c_str(),
                bufferOf(m, scaleSpec.scaleBuffer), references[m].scale, error);
    EXPECT_EQ(bufferOf(m, scaleSpec.skippedStepsBuffer),
              static_cast<float>(references[m].skipped));
    EXPECT_EQ(bufferOf(m, scaleSpec.scaleBuffer), references[m].scale);
    EXPECT_EQ(bufferOf(m, scaleSpec.goodStepsBuffer),
              static_cast<float>(references[m].goodSteps));
    EXPECT_LT(error, 1e-5) << "model " << m;
    // The test means something only if the scale overflowed and grew.
    EXPECT_GE(references[m].skipped, 2) << "model " << m;
    EXPECT_LT(references[m].skipped, kSteps - 4) << "model " << m;
  }
  // The models overflow at steps of their own, so a scale shared by the
  // batch (one GradScaler over all of them, every model skipping when any
  // overflows) trains them differently: the per-model scale is what the
  // comparison above checks.
  EXPECT_TRUE(skippedAt[0] != skippedAt[1] || skippedAt[1] != skippedAt[2]);
  std::vector<TorchAmpRun> shared;
  for (int64_t m = 0; m < kModels; ++m)
    shared.emplace_back(initial[m], kLearningRates[m]);
  for (const Batch &batch : batches) {
    bool anyInf = false;
    for (TorchAmpRun &run : shared)
      anyInf |= run.backward(batch);
    for (TorchAmpRun &run : shared)
      run.finish(anyInf);
  }
  double worst = 0;
  for (int64_t m = 0; m < kModels; ++m) {
    std::vector<double> mine(params.begin() + m * p,
                             params.begin() + (m + 1) * p);
    worst = std::max(worst, relativeDifference(mine, shared[m].params()));
  }
  std::printf("one scaler shared by the batch: parameters up to %.3g away\n",
              worst);
  EXPECT_GT(worst, 1e-3);
}

/// The offset of buffer `name` in a buffers row.
int64_t bufferOffset(const Manifest &manifest, const std::string &name) {
  for (const ParamSpec &buffer : manifest.buffers)
    if (buffer.name == name)
      return buffer.offset;
  ADD_FAILURE() << "no buffer " << name;
  return 0;
}

TEST(LossScaleVsLibTorch, AnOverflowSkipsTheStepButNotTheRunningStatistics) {
  // A scale so large that every scaled gradient overflows f16: both models
  // skip their first step. As in PyTorch, where the forward pass ran
  // before GradScaler skipped optimizer.step(), batch norm's running
  // statistics take the batch's all the same.
  Artifact artifact = Artifact::load(compileSpec(
      "f16_batch_norm", "import \"nn\"\n"
                        "model m {\n"
                        "  input  x: f32[16]\n"
                        "  target y: class[4]\n"
                        "  param  w: f32[16, 4] = zeros\n"
                        "  logits = batch_norm1d(x @ w, affine = false)\n"
                        "  loss   = cross_entropy(logits, y)\n"
                        "}\n"
                        "sweep {\n"
                        "  models = 2\n"
                        "  optim  = sgd(lr = [0.1, 0.2])\n"
                        "  data   = fashion_mnist(batch = 8)\n"
                        "  precision = f16\n"
                        "  loss_scale = dynamic(init_scale = 1099511627776)\n"
                        "}\n"));
  const Manifest &manifest = artifact.manifest();
  int64_t p = manifest.paramCount, q = manifest.bufferCount;
  ASSERT_EQ(p, 64);
  ASSERT_EQ(q, 4 + 4 + 3);
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> params(2 * p), x(2 * kBatch * kFeatures);
  for (float &v : params)
    v = normal(rng);
  for (int64_t i = 0; i < kBatch * kFeatures; ++i)
    x[i] = x[kBatch * kFeatures + i] = normal(rng);
  std::vector<int32_t> y(2 * kBatch);
  for (int64_t i = 0; i < kBatch; ++i)
    y[i] = y[kBatch + i] = static_cast<int32_t>(rng() % kClasses);
  int64_t mean = bufferOffset(manifest, "logits.running_mean");
  int64_t var = bufferOffset(manifest, "logits.running_var");
  int64_t scale = bufferOffset(manifest, "amp.loss_scale");
  int64_t skipped = bufferOffset(manifest, "amp.skipped_steps");
  std::vector<float> buffers(2 * q, 0.0f);
  for (int64_t m = 0; m < 2; ++m) {
    for (int64_t c = 0; c < 4; ++c)
      buffers[m * q + var + c] = 1.0f;
    buffers[m * q + scale] = 1099511627776.0f;
  }
  std::vector<float> before(params), state(2 * p, 0.0f), out(2);
  std::vector<double> hyper{0.1, 0.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0},
      step{1.0, 1.0};
  ASSERT_EQ(manifest.numHyper(), 4);
  auto pm = makeDenseMemRef<float, 2>(params.data(), {2, p});
  auto bm = makeDenseMemRef<float, 2>(buffers.data(), {2, q});
  auto sm = makeDenseMemRef<float, 3>(state.data(), {1, 2, p});
  auto hm = makeDenseMemRef<double, 2>(hyper.data(), {2, 4});
  auto tm = makeDenseMemRef<double, 1>(step.data(), {2});
  auto xm = makeDenseMemRef<float, 3>(x.data(), {2, kBatch, kFeatures});
  auto ym = makeDenseMemRef<int32_t, 2>(y.data(), {2, kBatch});
  auto om = makeDenseMemRef<float, 2>(out.data(), {2, 1});
  Workspace workspace;
  auto ws = workspace.descriptor(artifact.trainStepWorkspace<float>()(
      &pm, &bm, &sm, &hm, &tm, &xm, &ym, &om));
  artifact.trainStep<float>()(&pm, &bm, &sm, &hm, &tm, &xm, &ym, &om, &ws);

  for (int64_t m = 0; m < 2; ++m) {
    // The step was skipped: same parameters, one skipped step, half the
    // scale, a finite loss reported.
    EXPECT_EQ(std::vector<float>(params.begin() + m * p,
                                 params.begin() + (m + 1) * p),
              std::vector<float>(before.begin() + m * p,
                                 before.begin() + (m + 1) * p));
    EXPECT_EQ(buffers[m * q + skipped], 1.0f);
    EXPECT_EQ(buffers[m * q + scale], 549755813888.0f);
    EXPECT_TRUE(std::isfinite(out[m]));
    // The running statistics: BatchNorm1d's update with the batch of the
    // f16 product.
    torch::Tensor w =
        torch::from_blob(before.data() + m * p, {16, 4}, torch::kFloat);
    torch::Tensor input =
        torch::from_blob(x.data(), {kBatch, kFeatures}, torch::kFloat);
    torch::Tensor h = toF16AndBack(toF16AndBack(input).matmul(toF16AndBack(w)));
    torch::Tensor runningMean = torch::zeros({4}),
                  runningVar = torch::ones({4});
    torch::batch_norm(h, {}, {}, runningMean, runningVar, /*training=*/true,
                      0.1, 1e-5, /*cudnn_enabled=*/false);
    for (int64_t c = 0; c < 4; ++c) {
      EXPECT_NEAR(buffers[m * q + mean + c], runningMean[c].item<float>(), 1e-6)
          << "model " << m << " feature " << c;
      EXPECT_NEAR(buffers[m * q + var + c], runningVar[c].item<float>(), 1e-5)
          << "model " << m << " feature " << c;
    }
    EXPECT_NE(buffers[m * q + mean], 0.0f);
  }
}

} // namespace
