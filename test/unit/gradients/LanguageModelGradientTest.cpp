//===- LanguageModelGradientTest.cpp - gradients of next-token models -----===//
//
// A language model's target is the next token at every position
// (`target y: tokens[V]`): y is int32 [M, B, T] like x, and cross_entropy
// over the logits [?, V] of every position is the mean over the step's
// real targets (not the pad token 0). Through the whole compiler, for a
// causal transformer layer and a GRU:
//  - finite differences of the compiled gradient, in f32 and f64;
//  - padding: the gradient of a dynamic batch (as wide as its longest row)
//    equals that of the same samples in a padded fixed batch (wider);
//  - normalization per real token of the whole step: the loss of a batch
//    is the token-weighted mean of its halves' losses (a per-row or
//    per-sample mean would weigh a short sample's tokens more).
//
//===----------------------------------------------------------------------===//
#include "CompileWithMbtc.h"
#include "TokenModelChecks.h"

#include "mbt/runtime/ByteTokenizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <regex>
#include <string>
#include <vector>

using namespace mbt::runtime;

namespace {

using mbt::test::compileSpec;
using mbt::test::TokenBatch;
using mbt::test::TokenModel;

/// A one-model language model over the byte vocabulary, trained by SGD at
/// lr 1. `body` defines `logits` [?, 259] from x.
std::string languageModelSpec(const std::string &params,
                              const std::string &body) {
  return "model m {\n"
         "  input  x: tokens[259]\n"
         "  target y: tokens[259]\n" +
         params + body +
         "  loss   = cross_entropy(logits, y)\n"
         "  metric acc = accuracy(logits, y)\n"
         "}\n" +
         mbt::test::oneModelSgdSweep("fortunes");
}

// Token and position embeddings, causal two-head attention over
// position-wise projections, a residual, and a projection to the
// vocabulary at every position.
const char *kTransformerParams = "  param table: f32[259, 4] = zeros\n"
                                 "  param pos: f32[16, 4] = zeros\n"
                                 "  param wq: f32[4, 4] = zeros\n"
                                 "  param wk: f32[4, 4] = zeros\n"
                                 "  param wv: f32[4, 4] = zeros\n"
                                 "  param wo: f32[4, 4] = zeros\n"
                                 "  param out: f32[4, 259] = zeros\n";
const char *kTransformerBody =
    "  h      = tanh(embedding(x, table) + position_embedding(x, pos))\n"
    "  a      = attention(h @ wq, h @ wk, h @ wv, x, heads = 2, "
    "causal = true) @ wo\n"
    "  logits = (h + a) @ out\n";

// A GRU over embeddings, its state at every position projected to the
// vocabulary.
const char *kGruParams = "  param table: f32[259, 4] = zeros\n"
                         "  param w_ih: f32[4, 9] = zeros\n"
                         "  param b_ih: f32[9] = zeros\n"
                         "  param w_hh: f32[3, 9] = zeros\n"
                         "  param b_hh: f32[9] = zeros\n"
                         "  param out: f32[3, 259] = zeros\n";
const char *kGruBody =
    "  s      = gru_scan(tanh(embedding(x, table)) @ w_ih + b_ih, w_hh, "
    "b_hh, x)\n"
    "  logits = s @ out\n";

std::string compileModel(const std::string &name, bool f64,
                         const std::string &test) {
  std::string source =
      name == "gru" ? languageModelSpec(kGruParams, kGruBody)
                    : languageModelSpec(kTransformerParams, kTransformerBody);
  if (f64)
    source = std::regex_replace(source, std::regex("f32\\["), "f64[");
  return compileSpec("lm_" + test + "_" + name + (f64 ? "_f64" : ""), source);
}

/// `rows` framed samples [begin, 0 to 10 bytes, end], byte ids among the
/// first few (so the model sees repeats).
TokenBatch framedBatch(int64_t rows, uint32_t seed) {
  std::mt19937 rng(seed);
  TokenBatch batch;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int32_t> row{kBeginToken};
    for (int64_t n = rng() % 11; n > 0; --n)
      row.push_back(kFirstByteToken + static_cast<int32_t>(rng() % 9));
    row.push_back(kEndToken);
    batch.rows.push_back(row);
    batch.labels.push_back(0);
  }
  return batch;
}

template <typename T>
void checkFiniteDifferences(const std::string &name, T eps, double tolerance) {
  TokenModel<T> model(compileModel(name, sizeof(T) == 8, "fd"));
  ASSERT_TRUE(model.nextTokens());
  mbt::test::expectFiniteDifferences(model, framedBatch(5, 3), eps, tolerance);
}

// f32 central differences of a softmax over 259 tokens are noisy (most of
// the gradient is many small entries of the output projection beside a
// loss of ~5.6 rounded to f32): a wider step and a 5e-3 tolerance; the f64
// cases are the tight checks.
TEST(LanguageModelGradient, TransformerFiniteDifferencesF32) {
  checkFiniteDifferences<float>("transformer", 1e-2f, 5e-3);
}

TEST(LanguageModelGradient, TransformerFiniteDifferencesF64) {
  checkFiniteDifferences<double>("transformer", 1e-5, 1e-7);
}

TEST(LanguageModelGradient, GruFiniteDifferencesF32) {
  checkFiniteDifferences<float>("gru", 1e-2f, 5e-3);
}

TEST(LanguageModelGradient, GruFiniteDifferencesF64) {
  checkFiniteDifferences<double>("gru", 1e-5, 1e-7);
}

/// A dynamic batch and the same samples padded wider: the same gradient.
template <typename T> void checkPaddingInvariance(const std::string &name) {
  TokenModel<T> model(compileModel(name, sizeof(T) == 8, "padding"));
  TokenBatch batch = framedBatch(7, 5);
  int64_t tight = model.longest(batch);
  mbt::test::expectPaddingInvariance(model, batch, framedBatch(7, 6),
                                     {1, 9, 2 * tight});
}

TEST(LanguageModelGradient, TransformerPaddedBatchGivesTheDynamicGradientF32) {
  checkPaddingInvariance<float>("transformer");
}

TEST(LanguageModelGradient, TransformerPaddedBatchGivesTheDynamicGradientF64) {
  checkPaddingInvariance<double>("transformer");
}

TEST(LanguageModelGradient, GruPaddedBatchGivesTheDynamicGradientF32) {
  checkPaddingInvariance<float>("gru");
}

TEST(LanguageModelGradient, GruPaddedBatchGivesTheDynamicGradientF64) {
  checkPaddingInvariance<double>("gru");
}

/// The targets of a framed row: all its tokens but the first.
int64_t targetsOf(const TokenBatch &batch) {
  int64_t n = 0;
  for (const auto &row : batch.rows)
    n += static_cast<int64_t>(row.size()) - 1;
  return n;
}

// One long sample and several short ones: per-token and per-sample means
// differ by far more than the tolerance.
TEST(LanguageModelGradient, LossIsTheMeanOverTheRealTokensOfTheWholeStep) {
  TokenModel<double> model(compileModel("transformer", true, "mean"));
  TokenBatch a = framedBatch(1, 7), b = framedBatch(4, 8);
  a.rows[0].insert(a.rows[0].begin() + 1, 12, kFirstByteToken + 4);
  TokenBatch both = a;
  both.rows.insert(both.rows.end(), b.rows.begin(), b.rows.end());
  both.labels.insert(both.labels.end(), b.labels.begin(), b.labels.end());
  auto lossOf = [&](const TokenBatch &batch) {
    // Padded wider than needed: padding must not count either.
    return model.loss(model.params, batch, model.longest(batch) + 3);
  };
  double na = double(targetsOf(a)), nb = double(targetsOf(b));
  double perToken = (na * lossOf(a) + nb * lossOf(b)) / (na + nb);
  double perSample = (1 * lossOf(a) + 4 * lossOf(b)) / 5;
  std::printf("step %.9f, per token %.9f, per sample %.9f\n", lossOf(both),
              perToken, perSample);
  EXPECT_NEAR(lossOf(both), perToken, 1e-12);
  EXPECT_GT(std::abs(perSample - perToken), 1e-3);
}

} // namespace
