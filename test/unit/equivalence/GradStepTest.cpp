//===- GradStepTest.cpp - grad step then optimizer step = train step ------===//
//
// A run with its data across ranks (docs/distributed.md) splits each train
// step in two: the artifact's mbt_grad_step (mbtc --distribute=data) on a
// rank's share, the sum over the ranks, then mbt_optimizer_step. On one
// share (one rank), the two halves must be the train step itself: the same
// parameters, optimizer state, buffers and outputs, bit for bit, step after
// step, for a model with batch norm's running statistics, dropout (its
// draws keyed by the step), per-model clipping, a schedule, weight decay
// with no_decay, and a frozen model (step 0).
//
// Mutations it catches: a grad step that clips, schedules or guards (the
// optimizer step does, on the sum), one that draws dropout with another
// step number, buffers written for a frozen model or left unwritten, a
// loss reported for a model that did not step, an optimizer step that
// reads the gradients of another column range.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/StepRunner.h"

#include "CompileWithMbtc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

using namespace mbt;
using namespace mbt::runtime;

namespace {

constexpr int64_t kModels = 3;
constexpr int64_t kBatch = 16;
constexpr int64_t kSteps = 6;

const char *kSpec = R"(import "nn"

model mlp(width: int = 12) {
  input  x: f32[20]
  target y: class[5]
  h      = dropout(relu(batch_norm1d(linear(x, width))), rate = 0.25)
  logits = linear(h, dim(y))
  loss   = cross_entropy(logits, y)
  metric acc = accuracy(logits, y)
}

sweep {
  models   = 3
  seed     = [4, 5, 6]
  optim    = adam(lr = [0.01, 0.03, 0.1], weight_decay = 0.01)
  no_decay = ["*.b"]
  clip     = [0.5, 100.0, 2.0]
  schedule = cosine(total = 10, warmup = 2)
  data     = fashion_mnist(batch = 16)
  epochs   = 1
}
)";

/// Fills x (one batch every model shares) and each model's labels with
/// step `step`'s random batch.
void loadBatch(StepRunner &runner, int64_t step) {
  std::mt19937 gen(static_cast<uint32_t>(1000 + step));
  std::normal_distribution<float> feature(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> label(0, 4);
  std::vector<float> x(kBatch * 20);
  for (float &value : x)
    value = feature(gen);
  runner.setXShared(true);
  runner.x().store(0, x.data(), static_cast<int64_t>(x.size()));
  for (int64_t j = 0; j < kBatch; ++j) {
    int32_t y = label(gen);
    for (int64_t model = 0; model < kModels; ++model)
      runner.y()[model * kBatch + j] = y;
  }
}

/// Whether two buffers hold the same bytes (NaNs of the same bits equal).
bool sameBits(const FloatBuffer &a, const FloatBuffer &b) {
  return a.bytes() == b.bytes() &&
         std::memcmp(const_cast<FloatBuffer &>(a).raw(),
                     const_cast<FloatBuffer &>(b).raw(), a.bytes()) == 0;
}

TEST(GradStep, ThenTheOptimizerStepIsTheTrainStep) {
  std::string path =
      mbt::test::compileSpec("grad_step_mlp", kSpec, "--distribute=data");
  Artifact artifact = Artifact::load(path);
  ASSERT_TRUE(artifact.manifest().gradStep);
  ASSERT_GT(artifact.manifest().bufferCount, 0);
  StepRunner whole(artifact, TrainOptions{});
  StepRunner halves(artifact, TrainOptions{});
  for (int64_t step = 1; step <= kSteps; ++step) {
    for (StepRunner *runner : {&whole, &halves}) {
      loadBatch(*runner, step);
      for (int64_t model = 0; model < kModels; ++model)
        // Model 1 sits out steps 3 and 4, as a stopped model does.
        runner->stepNumbers()[model] =
            model == 1 && (step == 3 || step == 4) ? 0.0 : double(step);
    }
    whole.trainStep(kBatch);
    halves.gradStep(kBatch);
    halves.optimizerStep();
    EXPECT_TRUE(sameBits(whole.params(), halves.params())) << "step " << step;
    EXPECT_TRUE(sameBits(whole.state(), halves.state())) << "step " << step;
    EXPECT_TRUE(sameBits(whole.buffers(), halves.buffers())) << "step " << step;
    for (int64_t model = 0; model < kModels; ++model) {
      int64_t k = artifact.manifest().numColumns();
      for (int64_t col = 0; col < k; ++col) {
        double a = whole.outputs().get(model * k + col);
        double b = halves.outputs().get(model * k + col);
        EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b)))
            << "step " << step << ", model " << model << ", output " << col
            << ": " << a << " against " << b;
      }
    }
  }
  // The models moved (the comparison is not of two untouched buffers).
  StepRunner initial(artifact, TrainOptions{});
  EXPECT_FALSE(sameBits(initial.params(), halves.params()));
  EXPECT_FALSE(sameBits(initial.buffers(), halves.buffers()));
}

TEST(GradStep, AnArtifactWithoutItSaysHowToGetIt) {
  std::string path = mbt::test::compileSpec("grad_step_none", kSpec);
  Artifact artifact = Artifact::load(path);
  EXPECT_FALSE(artifact.manifest().gradStep);
  StepRunner runner(artifact, TrainOptions{});
  loadBatch(runner, 1);
  try {
    runner.gradStep(kBatch);
    FAIL() << "a grad step of an artifact without one";
  } catch (const RuntimeError &error) {
    EXPECT_NE(std::string(error.what()).find("mbtc --distribute=data"),
              std::string::npos)
        << error.what();
  }
}

} // namespace
