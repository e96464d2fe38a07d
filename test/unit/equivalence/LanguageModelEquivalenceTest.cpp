//===- LanguageModelEquivalenceTest.cpp - next-token models in the Trainer ===//
//
// Language models (`target y: tokens[259]`) compiled with mbtc and trained
// through the Trainer's sequence path on synthetic texts framed by
// frameForNextTokens:
//  - model i of a batch of 4 (own seed and learning rate, Adam) ends where
//    model i trained alone ends, over dynamic steps whose B and T change,
//    for a causal transformer layer (also with precision = bf16) and a GRU;
//  - the test loss is the mean over every real target token of the split:
//    the token-weighted mean of each sample's own loss, and the same with
//    a fixed-shape plan (padding counts for nothing);
//  - a run checkpointed mid-epoch and resumed ends bit-identical to an
//    uninterrupted one (the running sums weigh tokens).
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Trainer.h"

#include "SequenceTraining.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace mbt::runtime;

namespace {

using mbt::test::compileSpec;
using mbt::test::listOf;

TrainOptions quiet(const std::string &path) {
  return mbt::test::quietOptions(path);
}

constexpr int64_t kSteps = 30;

/// A causal transformer layer predicting the next token at every position.
const char *kTransformer =
    "  h      = embed(x, dim(x), 8) + positional(x, 64, 8)\n"
    "  a      = h + self_attention(h, x, heads = 2, causal = true)\n"
    "  logits = linear(a + linear(relu(linear(a, 16)), 8), dim(y))\n";

/// A GRU language model.
const char *kGru =
    "  logits = linear(gru(embed(x, dim(x), 8), x, 12), dim(y))\n";

std::string spec(const std::vector<double> &lrs,
                 const std::vector<double> &seeds, const char *network,
                 const std::string &batching = "dynamic",
                 const std::string &extraSweep = "") {
  return mbt::test::tokenModelSpec("lm", "tokens[259]", network, lrs, seeds,
                                   batching, extraSweep);
}

/// `count` texts of 0 to 50 bytes, each counting up from a random byte
/// with a random stride (so the next byte is predictable), framed.
SequenceDataset syntheticTexts(const std::string &name, int64_t count,
                               uint32_t seed) {
  std::mt19937 rng(seed);
  SequenceDataset data;
  data.name = name;
  data.vocabSize = 259;
  for (int64_t i = 0; i < count; ++i) {
    int64_t length = rng() % 51;
    int32_t start = static_cast<int32_t>(rng() % 20), stride = 1 + rng() % 3;
    std::vector<int32_t> bytes(length);
    for (int64_t t = 0; t < length; ++t)
      bytes[t] = 3 + (start + stride * static_cast<int32_t>(t)) % 64;
    data.append(bytes.data(), length);
  }
  return frameForNextTokens(data, 48);
}

struct Splits {
  SequenceDataset train = syntheticTexts("synthetic/train", 400, 1);
  SequenceDataset test = syntheticTexts("synthetic/test", 60, 2);
};

void checkBatchEqualsAlone(const std::string &tag, const char *network,
                           const std::string &extraSweep = "") {
  Splits data;
  mbt::test::expectBatchEqualsAlone(
      tag,
      [&](const std::vector<double> &lrs, const std::vector<double> &seeds) {
        return spec(lrs, seeds, network, "dynamic", extraSweep);
      },
      data.train, data.test, kSteps);
}

TEST(LanguageModelEquivalence, TransformerBatchOfFourEqualsEachModelAlone) {
  checkBatchEqualsAlone("lm_transformer", kTransformer);
}

// Mixed precision: the projections' and attention's products in bf16.
TEST(LanguageModelEquivalence, Bf16TransformerBatchOfFourEqualsEachModelAlone) {
  checkBatchEqualsAlone("lm_bf16_transformer", kTransformer,
                        "  precision = bf16\n");
}

TEST(LanguageModelEquivalence, GruBatchOfFourEqualsEachModelAlone) {
  checkBatchEqualsAlone("lm_gru", kGru);
}

/// Sample i of `data` as a data set of its own.
SequenceDataset sampleAlone(const SequenceDataset &data, int64_t i) {
  SequenceDataset one;
  one.name = data.name + "#" + std::to_string(i);
  one.vocabSize = data.vocabSize;
  one.append(data.sample(i), data.length(i));
  return one;
}

TEST(LanguageModelEquivalence, TestLossIsTheMeanOverEveryRealTargetToken) {
  Splits data;
  std::vector<double> lrs{1e-2, 3e-2}, seeds{1, 2};
  std::string path = compileSpec("lm_eval", spec(lrs, seeds, kTransformer));
  std::string paddedPath = compileSpec(
      "lm_eval_padded", spec(lrs, seeds, kTransformer, "fixed_shape"));
  Artifact artifact = Artifact::load(path);
  Artifact paddedArtifact = Artifact::load(paddedPath);
  Trainer trainer(artifact, data.train, data.test, quiet(path));
  trainer.runSteps(10);
  auto means = trainer.evaluate(data.test);
  // Each sample alone: its loss is the mean over its own targets, which
  // weigh as many as they are in the split's mean.
  std::vector<double> weighted(2, 0.0);
  double tokens = 0;
  for (int64_t i = 0; i < data.test.count(); ++i) {
    auto alone = trainer.evaluate(sampleAlone(data.test, i));
    double n = double(data.test.length(i) - 1);
    for (int64_t m = 0; m < 2; ++m)
      weighted[m] += n * alone[m][0];
    tokens += n;
  }
  // The same parameters under a fixed-shape plan (every step padded to the
  // longest sample).
  Trainer padded(paddedArtifact, data.train, data.test, quiet(paddedPath));
  for (int64_t m = 0; m < 2; ++m) {
    std::vector<double> row = trainer.modelParams(m);
    for (size_t i = 0; i < row.size(); ++i)
      padded.params<float>()[m * padded.paramCount() + i] =
          static_cast<float>(row[i]);
  }
  auto paddedMeans = padded.evaluate(data.test);
  for (int64_t m = 0; m < 2; ++m) {
    double perToken = weighted[m] / tokens;
    std::printf("model %lld: split %.7f, per token %.7f, fixed shape %.7f\n",
                (long long)m, means[m][0], perToken, paddedMeans[m][0]);
    EXPECT_NEAR(means[m][0], perToken, 1e-5 * perToken) << "model " << m;
    EXPECT_NEAR(paddedMeans[m][0], means[m][0], 1e-6 * means[m][0])
        << "model " << m;
  }
}

TEST(LanguageModelEquivalence, ResumedRunEndsWhereAnUninterruptedOneEnds) {
  Splits data;
  std::string path = compileSpec("lm_resume", spec({1e-2, 2e-2}, {3, 5}, kGru));
  Artifact artifact = Artifact::load(path);
  Trainer straight(artifact, data.train, data.test, quiet(path));
  straight.runSteps(kSteps);
  Trainer first(artifact, data.train, data.test, quiet(path));
  first.runSteps(11); // mid-epoch
  RunCheckpoint saved = first.checkpoint();
  Trainer resumed(artifact, data.train, data.test, quiet(path));
  resumed.restore(saved);
  resumed.runSteps(kSteps - 11);
  for (int64_t m = 0; m < 2; ++m)
    EXPECT_EQ(resumed.modelParams(m), straight.modelParams(m)) << "model " << m;
  EXPECT_EQ(resumed.lastTrainOutputs(), straight.lastTrainOutputs());
}

} // namespace
