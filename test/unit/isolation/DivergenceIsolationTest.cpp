//===- DivergenceIsolationTest.cpp - one diverging model in a batch -------===//
//
// A batch of 8 models in which model 3's learning rate (1e30) is far too large.
// Its loss or gradients become non-finite at some step s; the compiled
// train step must then leave it at its parameters of step s - 1 (and the
// runtime keep it there), report s, and leave the other 7 models exactly
// where a batch without the diverging rate leaves them. The optimizer step
// alone must likewise skip a model whose given gradients hold an inf or a
// NaN.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/FashionMnist.h"
#include "mbt/runtime/Trainer.h"

#include "CompileWithMbtc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;

namespace {

using mbt::test::compileSpec;

constexpr int kModels = 8;
constexpr int kDiverging = 3;
constexpr int64_t kSteps = 60;

std::string spec(const std::string &optim, double rate3) {
  std::ostringstream os;
  os.precision(17);
  os << "model mlp {\n"
        "  input  x: f32[784]\n"
        "  target y: class[10]\n"
        "  param  w1: f32[784, 32] = kaiming_uniform\n"
        "  param  b1: f32[32] = zeros\n"
        "  param  w2: f32[32, 10] = normal(0.0, 0.1)\n"
        "  param  b2: f32[10] = zeros\n"
        "  logits = relu(x @ w1 + b1) @ w2 + b2\n"
        "  loss   = cross_entropy(logits, y)\n"
        "  metric acc = accuracy(logits, y)\n"
        "}\n"
        "sweep {\n"
        "  models = 8\n"
        "  seed   = [1, 2, 3, 4, 5, 6, 7, 8]\n"
        "  optim  = "
     << optim << "(lr = [0.01, 0.02, 0.05, " << rate3
     << ", 0.1, 0.03, 0.005, 0.2])\n"
        "  data   = fashion_mnist(batch = 32)\n"
        "  epochs = 1\n"
        "}\n";
  return os.str();
}

TrainOptions quiet() {
  TrainOptions options;
  options.quiet = true;
  options.progress = nullptr;
  options.report = nullptr;
  return options;
}

bool allFinite(const std::vector<double> &values) {
  for (double v : values)
    if (!std::isfinite(v))
      return false;
  return true;
}

/// Model `model`'s rows of every optimizer state slot.
std::vector<float> stateOf(const Trainer &trainer, int64_t model,
                           int64_t slots) {
  std::vector<float> rows;
  int64_t m = trainer.numModels(), p = trainer.paramCount();
  for (int64_t s = 0; s < slots; ++s) {
    const float *row = trainer.state<float>() + (s * m + model) * p;
    rows.insert(rows.end(), row, row + p);
  }
  return rows;
}

class DivergenceIsolation : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    data = new DataSplits(loadDataSplits("fashion_mnist"));
  }
  static void TearDownTestSuite() {
    delete data;
    data = nullptr;
  }
  static DataSplits *data;
};
DataSplits *DivergenceIsolation::data = nullptr;

TEST_F(DivergenceIsolation, DivergingModelIsFrozenAndTheOthersAreUnchanged) {
  Artifact diverging =
      Artifact::load(compileSpec("isolation_diverging", spec("sgd", 1e30)));
  Artifact healthy =
      Artifact::load(compileSpec("isolation_healthy", spec("sgd", 0.05)));

  Trainer trainer(diverging, data->train, data->test, quiet());
  trainer.runSteps(kSteps);
  int64_t step = trainer.divergedSteps()[kDiverging];
  ASSERT_GT(step, 0) << "model 3 (lr 1e30) did not diverge in " << kSteps
                     << " steps: the test needs a larger rate";
  ASSERT_LT(step, kSteps) << "it must diverge early enough to stay frozen";
  for (int model = 0; model < kModels; ++model)
    if (model != kDiverging) {
      EXPECT_EQ(trainer.divergedSteps()[model], 0) << "model " << model;
      EXPECT_FALSE(trainer.diverged(model)) << "model " << model;
    }

  // Frozen at its parameters (and momentum) of step s - 1, all finite.
  Trainer before(diverging, data->train, data->test, quiet());
  before.runSteps(step - 1);
  EXPECT_TRUE(allFinite(trainer.modelParams(kDiverging)));
  EXPECT_EQ(trainer.modelParams(kDiverging), before.modelParams(kDiverging));
  int64_t slots = diverging.manifest().numSlots();
  EXPECT_EQ(stateOf(trainer, kDiverging, slots),
            stateOf(before, kDiverging, slots));
  // ... and not at its start: it trained until then.
  Trainer fresh(diverging, data->train, data->test, quiet());
  if (step > 1) {
    EXPECT_NE(fresh.modelParams(kDiverging), trainer.modelParams(kDiverging));
  }

  // Its last loss is NaN (the step did not apply); the others' are finite.
  std::vector<std::vector<double>> out = trainer.lastTrainOutputs();
  EXPECT_TRUE(std::isnan(out[kDiverging][0]));

  // The other seven end bit for bit where they end beside a healthy model 3.
  Trainer reference(healthy, data->train, data->test, quiet());
  reference.runSteps(kSteps);
  EXPECT_EQ(reference.divergedSteps()[kDiverging], 0);
  for (int model = 0; model < kModels; ++model) {
    if (model == kDiverging)
      continue;
    EXPECT_TRUE(std::isfinite(out[model][0])) << "model " << model;
    EXPECT_EQ(trainer.modelParams(model), reference.modelParams(model))
        << "model " << model;
  }

  // Evaluation of the frozen model uses its last finite parameters.
  std::vector<std::vector<double>> test = trainer.evaluate(data->test);
  EXPECT_TRUE(std::isfinite(test[kDiverging][1])) << "its test accuracy";
}

TEST_F(DivergenceIsolation, OptimizerStepSkipsModelsWithNonFiniteGradients) {
  Artifact artifact =
      Artifact::load(compileSpec("isolation_adam", spec("adam", 1e-3)));
  ASSERT_NE(artifact.optimizerStep<float>(), nullptr);
  const Manifest &manifest = artifact.manifest();
  int64_t m = manifest.models, p = manifest.paramCount, s = manifest.numSlots(),
          h = static_cast<int64_t>(manifest.hyperNames.size());
  std::vector<float> params(m * p), state(s * m * p, 0.0f), grads(m * p);
  for (int64_t i = 0; i < m * p; ++i) {
    params[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
    grads[i] = 0.001f * static_cast<float>(i % 89) - 0.04f;
  }
  // Model 1: one inf; model 2: one NaN; model 5: step 0 (frozen).
  float inf = std::numeric_limits<float>::infinity();
  grads[1 * p + p / 2] = inf;
  grads[2 * p + p - 1] = std::nanf("");
  std::vector<double> hyper;
  for (int64_t model = 0; model < m; ++model)
    hyper.insert(hyper.end(), manifest.hyperValues[model].begin(),
                 manifest.hyperValues[model].end());
  std::vector<double> steps(m, 1.0);
  steps[5] = 0.0;
  std::vector<float> original = params;

  auto pm = makeDenseMemRef<float, 2>(params.data(), {m, p});
  auto st = makeDenseMemRef<float, 3>(state.data(), {s, m, p});
  auto hy = makeDenseMemRef<double, 2>(hyper.data(), {m, h});
  auto sp = makeDenseMemRef<double, 1>(steps.data(), {m});
  auto gr = makeDenseMemRef<float, 2>(grads.data(), {m, p});
  int64_t bytes =
      artifact.optimizerStepWorkspace<float>()(&pm, &st, &hy, &sp, &gr);
  Workspace workspace;
  workspace.reserve(bytes);
  auto ws = workspace.descriptor();
  artifact.optimizerStep<float>()(&pm, &st, &hy, &sp, &gr, &ws);

  for (int64_t model = 0; model < m; ++model) {
    bool skipped = model == 1 || model == 2 || model == 5;
    std::vector<float> row(params.begin() + model * p,
                           params.begin() + (model + 1) * p);
    std::vector<float> was(original.begin() + model * p,
                           original.begin() + (model + 1) * p);
    if (skipped) {
      EXPECT_EQ(row, was) << "model " << model << " must not step";
      for (int64_t slot = 0; slot < s; ++slot)
        for (int64_t i = 0; i < p; ++i)
          ASSERT_EQ(state[(slot * m + model) * p + i], 0.0f)
              << "model " << model << " slot " << slot;
    } else {
      EXPECT_NE(row, was) << "model " << model << " must step";
    }
  }
}

} // namespace
