//===- SequenceEquivalenceTest.cpp - token models: batch, padding, resume -===//
//
// Models over token ids, compiled with mbtc and trained through the
// Trainer's sequence path on synthetic sequences of 1 to 60 tokens:
//  - model i of a batch of 4 (own seed and learning rate, Adam) ends where
//    model i trained alone ends, over dynamic steps whose B and T change,
//    for a bag of embeddings, a causal transformer layer, a GRU and an
//    LSTM;
//  - evaluating with a fixed-shape plan (every step padded to the longest
//    sample) gives the means of dynamic steps: padding changes nothing;
//  - a run checkpointed mid-epoch and restored ends where an uninterrupted
//    run ends (the epoch's plan is found again from seed and epoch).
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

constexpr int64_t kSteps = 40;

/// A bag-of-tokens classifier with a hidden layer.
const char *kBag = "  h      = tanh(embed(x, dim(x), 12))\n"
                   "  logits = linear(relu(linear(masked_mean(h, x), 16)), "
                   "dim(y))\n";
/// A transformer layer: position embeddings, causal self-attention with
/// two heads, a position-wise feed-forward layer, residuals.
const char *kTransformer =
    "  h      = embed(x, dim(x), 8) + positional(x, 64, 8)\n"
    "  a      = h + self_attention(h, x, heads = 2, causal = true)\n"
    "  f      = a + linear(relu(linear(a, 16)), 8)\n"
    "  logits = linear(masked_mean(f, x), dim(y))\n";

/// A GRU over byte embeddings, its states pooled over the real tokens.
const char *kGru = "  h      = gru(embed(x, dim(x), 8), x, 12)\n"
                   "  logits = linear(masked_mean(h, x), dim(y))\n";

/// The same with an LSTM, which ModelBatch cannot batch (torch.vmap has
/// no rule for it).
const char *kLstm = "  h      = lstm(embed(x, dim(x), 8), x, 12)\n"
                    "  logits = linear(masked_mean(h, x), dim(y))\n";

/// `network` as a sweep of `lrs.size()` models.
std::string spec(const std::vector<double> &lrs,
                 const std::vector<double> &seeds,
                 const std::string &batching = "dynamic",
                 const char *network = kBag) {
  return mbt::test::tokenModelSpec("bag", "class[5]", network, lrs, seeds,
                                   batching);
}

/// `count` sequences of 1 to 60 byte tokens whose label depends on which
/// tokens they hold (so that there is something to learn).
SequenceDataset syntheticSequences(const std::string &name, int64_t count,
                                   uint32_t seed) {
  std::mt19937 rng(seed);
  SequenceDataset data;
  data.name = name;
  data.vocabSize = 259;
  for (int64_t i = 0; i < count; ++i) {
    int32_t label = static_cast<int32_t>(rng() % 5);
    int64_t length = 1 + rng() % 60;
    std::vector<int32_t> tokens(length);
    for (int32_t &t : tokens)
      t = rng() % 3 == 0 ? 3 + 40 * label + static_cast<int32_t>(rng() % 40)
                         : 3 + static_cast<int32_t>(rng() % 256);
    data.append(tokens.data(), length, label);
  }
  return data;
}

struct Splits {
  SequenceDataset train = syntheticSequences("synthetic/train", 600, 1);
  SequenceDataset test = syntheticSequences("synthetic/test", 150, 2);
};

void checkBatchEqualsAlone(const std::string &tag, const char *network) {
  Splits data;
  mbt::test::expectBatchEqualsAlone(
      tag,
      [&](const std::vector<double> &lrs, const std::vector<double> &seeds) {
        return spec(lrs, seeds, "dynamic", network);
      },
      data.train, data.test, kSteps);
}

TEST(SequenceEquivalence, BatchOfFourEqualsEachModelAlone) {
  checkBatchEqualsAlone("seq", kBag);
}

TEST(SequenceEquivalence, TransformerBatchOfFourEqualsEachModelAlone) {
  checkBatchEqualsAlone("seq_transformer", kTransformer);
}

TEST(SequenceEquivalence, GruBatchOfFourEqualsEachModelAlone) {
  checkBatchEqualsAlone("seq_gru", kGru);
}

TEST(SequenceEquivalence, LstmBatchOfFourEqualsEachModelAlone) {
  checkBatchEqualsAlone("seq_lstm", kLstm);
}

TEST(SequenceEquivalence, FixedShapeEvaluationGivesTheDynamicMeans) {
  Splits data;
  std::vector<double> lrs{1e-2, 3e-2}, seeds{1, 2};
  std::string dynamicPath = compileSpec("seq_eval_dynamic", spec(lrs, seeds));
  std::string paddedPath =
      compileSpec("seq_eval_padded", spec(lrs, seeds, "fixed_shape"));
  Artifact dynamicArtifact = Artifact::load(dynamicPath);
  Artifact paddedArtifact = Artifact::load(paddedPath);
  Trainer dynamic(dynamicArtifact, data.train, data.test, quiet(dynamicPath));
  Trainer padded(paddedArtifact, data.train, data.test, quiet(paddedPath));
  // The same parameters in both (trained dynamically a little first).
  dynamic.runSteps(10);
  for (int64_t m = 0; m < 2; ++m) {
    std::vector<double> row = dynamic.modelParams(m);
    for (size_t i = 0; i < row.size(); ++i)
      padded.params<float>()[m * padded.paramCount() + i] =
          static_cast<float>(row[i]);
  }
  auto a = dynamic.evaluate(data.test), b = padded.evaluate(data.test);
  for (int64_t m = 0; m < 2; ++m) {
    EXPECT_NEAR(a[m][0], b[m][0], 1e-6 * std::fabs(a[m][0])) << "loss " << m;
    // Accuracy is an f32 mean per step, weighed by its samples.
    EXPECT_NEAR(a[m][1], b[m][1], 1e-6) << "accuracy " << m;
  }
}

TEST(SequenceEquivalence, ResumedRunEndsWhereAnUninterruptedOneEnds) {
  Splits data;
  std::string path = compileSpec("seq_resume", spec({1e-2, 2e-2}, {3, 5}));
  Artifact artifact = Artifact::load(path);
  Trainer straight(artifact, data.train, data.test, quiet(path));
  straight.runSteps(kSteps);
  Trainer first(artifact, data.train, data.test, quiet(path));
  first.runSteps(17); // mid-epoch
  RunCheckpoint saved = first.checkpoint();
  Trainer resumed(artifact, data.train, data.test, quiet(path));
  resumed.restore(saved);
  resumed.runSteps(kSteps - 17);
  for (int64_t m = 0; m < 2; ++m)
    EXPECT_EQ(resumed.modelParams(m), straight.modelParams(m)) << "model " << m;
}

} // namespace
