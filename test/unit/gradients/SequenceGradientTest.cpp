//===- SequenceGradientTest.cpp - gradients of models over token ids ------===//
//
// A model whose input is token ids (tokens[V]) takes x as int32 [M, B, T],
// T set by each call. Two checks, through the whole compiler, for a bag of
// embeddings (embedding, masked_mean, a linear layer), for attention
// models (position embeddings, position-wise projections, multi-head
// attention, plain, causal and after a layer normalization, a residual),
// a GRU (gru_scan) and an LSTM (lstm_scan):
//  - finite differences: the compiled gradient (SGD at lr 1 makes one train
//    step move the parameters by minus the gradient), in f32 and f64;
//  - padding: the gradient of a batch of samples is the same whether its
//    block is as wide as its longest sample (a dynamic batch) or padded
//    wider (the same samples in a fixed, padded batch), within 1e-6.
//
//===----------------------------------------------------------------------===//
#include "CompileWithMbtc.h"
#include "TokenModelChecks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <regex>
#include <string>
#include <vector>

using namespace mbt::runtime;

namespace {

using mbt::test::compileSpec;

// The byte tokenizer's vocabulary, which the spec's data set (fortunes)
// needs; the batches use the first 12 ids.
constexpr int64_t kVocab = 259;
constexpr int32_t kUsedIds = 12;
constexpr int64_t kClasses = 3;

/// A one-model spec over token ids, trained by SGD at lr 1. `body` defines
/// `logits` from x.
std::string tokenSpec(const std::string &params, const std::string &body) {
  return "model m {\n"
         "  input  x: tokens[" +
         std::to_string(kVocab) +
         "]\n"
         "  target y: class[" +
         std::to_string(kClasses) + "]\n" + params + body +
         "  loss   = cross_entropy(logits, y)\n"
         "  metric acc = accuracy(logits, y)\n"
         "}\n" +
         mbt::test::oneModelSgdSweep("fortunes");
}

// Embedding rows through a nonlinearity, pooled over the real tokens, then
// a linear layer: every op on the sequence path, and a bias broadcast over
// the positions.
const char *kBagParams = "  param table: f32[259, 5] = zeros\n"
                         "  param pos: f32[5] = zeros\n"
                         "  param w: f32[5, 3] = zeros\n"
                         "  param b: f32[3] = zeros\n";
const char *kBagBody = "  h      = tanh(embedding(x, table) + pos)\n"
                       "  logits = masked_mean(h * h + h, x) @ w + b\n";

// Two heads of attention over position-wise projections of embeddings
// plus position embeddings, a residual, pooled.
const char *kAttentionParams = "  param table: f32[259, 4] = zeros\n"
                               "  param pos: f32[16, 4] = zeros\n"
                               "  param wq: f32[4, 4] = zeros\n"
                               "  param wk: f32[4, 4] = zeros\n"
                               "  param wv: f32[4, 4] = zeros\n"
                               "  param wo: f32[4, 4] = zeros\n"
                               "  param w: f32[4, 3] = zeros\n";
std::string attentionBody(bool causal, bool prenorm = false) {
  return std::string("  h      = tanh(embedding(x, table) + "
                     "position_embedding(x, pos))\n") +
         (prenorm ? "  n      = normalize(h) * 2 + 1\n" : "  n      = h\n") +
         "  a      = attention(n @ wq, n @ wk, n @ wv, x, heads = 2, "
         "causal = " +
         (causal ? "true" : "false") +
         ") @ wo\n"
         "  logits = masked_mean(h + a, x) @ w\n";
}

using mbt::test::TokenBatch;
using mbt::test::TokenModel;

TokenBatch randomBatch(int64_t rows, uint32_t seed) {
  return mbt::test::randomBatch(rows, seed, kUsedIds, kClasses);
}

// A GRU over embeddings: position-wise input projections, the recurrence,
// the mean of its states over the real tokens.
const char *kGruParams = "  param table: f32[259, 4] = zeros\n"
                         "  param w_ih: f32[4, 9] = zeros\n"
                         "  param b_ih: f32[9] = zeros\n"
                         "  param w_hh: f32[3, 9] = zeros\n"
                         "  param b_hh: f32[9] = zeros\n"
                         "  param w: f32[3, 3] = zeros\n";
const char *kGruBody = "  h      = tanh(embedding(x, table))\n"
                       "  s      = gru_scan(h @ w_ih + b_ih, w_hh, b_hh, x)\n"
                       "  logits = masked_mean(s, x) @ w\n";

// The same with an LSTM (lstm_scan: 4 gates, a cell state).
const char *kLstmParams = "  param table: f32[259, 4] = zeros\n"
                          "  param w_ih: f32[4, 12] = zeros\n"
                          "  param b_ih: f32[12] = zeros\n"
                          "  param w_hh: f32[3, 12] = zeros\n"
                          "  param b_hh: f32[12] = zeros\n"
                          "  param w: f32[3, 3] = zeros\n";
const char *kLstmBody = "  h      = tanh(embedding(x, table))\n"
                        "  s      = lstm_scan(h @ w_ih + b_ih, w_hh, b_hh, x)\n"
                        "  logits = masked_mean(s, x) @ w\n";

/// The models of the cases, by name.
std::string sourceOf(const std::string &name) {
  if (name == "bag")
    return tokenSpec(kBagParams, kBagBody);
  if (name == "gru")
    return tokenSpec(kGruParams, kGruBody);
  if (name == "lstm")
    return tokenSpec(kLstmParams, kLstmBody);
  if (name == "prenorm")
    return tokenSpec(kAttentionParams, attentionBody(true, true));
  return tokenSpec(kAttentionParams, attentionBody(name == "causal"));
}

/// `name`'s model compiled as an f32 or an f64 model, into files named
/// after `test` too (ctest runs the tests in parallel).
std::string compileModel(const std::string &name, bool f64,
                         const std::string &test) {
  std::string source = sourceOf(name);
  if (f64)
    source = std::regex_replace(source, std::regex("f32\\["), "f64[");
  return compileSpec("sequence_" + test + "_" + name + (f64 ? "_f64" : ""),
                     source);
}

template <typename T>
void checkFiniteDifferences(const std::string &name, T eps, double tolerance) {
  TokenModel<T> model(compileModel(name, sizeof(T) == 8, "fd"));
  mbt::test::expectFiniteDifferences(model, randomBatch(6, 3), eps, tolerance);
}

TEST(SequenceGradient, EmbeddingMaskedMeanFiniteDifferencesF32) {
  checkFiniteDifferences<float>("bag", 2e-3f, 2e-3);
}

TEST(SequenceGradient, EmbeddingMaskedMeanFiniteDifferencesF64) {
  checkFiniteDifferences<double>("bag", 1e-5, 1e-7);
}

TEST(SequenceGradient, AttentionFiniteDifferencesF32) {
  checkFiniteDifferences<float>("attention", 2e-3f, 2e-3);
}

TEST(SequenceGradient, AttentionFiniteDifferencesF64) {
  checkFiniteDifferences<double>("attention", 1e-5, 1e-7);
}

TEST(SequenceGradient, GruFiniteDifferencesF32) {
  checkFiniteDifferences<float>("gru", 2e-3f, 2e-3);
}

TEST(SequenceGradient, GruFiniteDifferencesF64) {
  checkFiniteDifferences<double>("gru", 1e-5, 1e-7);
}

// f32 central differences of the LSTM's loss are noisier (3e-3 here: its
// gradients are smaller beside the loss's f32 rounding); the f64 case and
// the LibTorch reference are the tight checks.
TEST(SequenceGradient, LstmFiniteDifferencesF32) {
  checkFiniteDifferences<float>("lstm", 2e-3f, 5e-3);
}

TEST(SequenceGradient, LstmFiniteDifferencesF64) {
  checkFiniteDifferences<double>("lstm", 1e-5, 1e-7);
}

// Layer normalization over each position's features (normalize, as nn's
// layer_norm) before causal attention: a pre-norm transformer block.
TEST(SequenceGradient, PrenormAttentionFiniteDifferencesF64) {
  checkFiniteDifferences<double>("prenorm", 1e-5, 1e-7);
}

TEST(SequenceGradient, CausalAttentionFiniteDifferencesF64) {
  checkFiniteDifferences<double>("causal", 1e-5, 1e-7);
}

/// The same samples, as a dynamic batch (as wide as the longest) and in a
/// padded fixed batch (wider): the same gradient.
template <typename T> void checkPaddingInvariance(const std::string &name) {
  TokenModel<T> model(compileModel(name, sizeof(T) == 8, "padding"));
  TokenBatch batch = randomBatch(7, 5);
  int64_t tight = model.longest(batch);
  mbt::test::expectPaddingInvariance(model, batch, randomBatch(7, 6),
                                     {1, 13, 3 * tight});
}

TEST(SequenceGradient, PaddedBatchGivesTheDynamicBatchsGradientF32) {
  checkPaddingInvariance<float>("bag");
}

TEST(SequenceGradient, PaddedBatchGivesTheDynamicBatchsGradientF64) {
  checkPaddingInvariance<double>("bag");
}

TEST(SequenceGradient, AttentionPaddedBatchGivesTheDynamicBatchsGradientF32) {
  checkPaddingInvariance<float>("attention");
}

TEST(SequenceGradient, AttentionPaddedBatchGivesTheDynamicBatchsGradientF64) {
  checkPaddingInvariance<double>("attention");
}

TEST(SequenceGradient, GruPaddedBatchGivesTheDynamicBatchsGradientF32) {
  checkPaddingInvariance<float>("gru");
}

TEST(SequenceGradient, GruPaddedBatchGivesTheDynamicBatchsGradientF64) {
  checkPaddingInvariance<double>("gru");
}

TEST(SequenceGradient, LstmPaddedBatchGivesTheDynamicBatchsGradientF64) {
  checkPaddingInvariance<double>("lstm");
}

TEST(SequenceGradient, PrenormPaddedBatchGivesTheDynamicBatchsGradientF64) {
  checkPaddingInvariance<double>("prenorm");
}

TEST(SequenceGradient, CausalPaddedBatchGivesTheDynamicBatchsGradientF64) {
  checkPaddingInvariance<double>("causal");
}

} // namespace
