//===- SequenceReferenceTest.cpp - token models against LibTorch ----------===//
//
// The compiled loss and gradient of models over token ids against the same
// model written in LibTorch (float64, autograd), from the same parameters
// and batch:
//  - embeddings plus position embeddings, position-wise projections,
//    two-head attention (plain and causal) with the padding masked as a
//    key_padding_mask, a residual, the mean over the real tokens and a
//    cross-entropy. LibTorch's attention is written out (scores,
//    masked_fill with -inf, softmax, weighted values) as PyTorch 1.13 has
//    no scaled_dot_product_attention; it is a different computation of the
//    same function, so a wrong scale, head split or mask fails;
//  - a GRU (gru_scan) and an LSTM (lstm_scan) against torch::gru_cell and
//    torch::lstm_cell stepped over each sample's real tokens alone, so
//    PyTorch's gate order and equations, and the padding carrying the
//    state, are what is checked;
//  - language models (`target y: tokens[259]`): a causal transformer
//    layer against F::cross_entropy with ignore_index = 0 over the padded
//    step, and a GRU against torch::gru_cell over each framed sample's
//    real tokens alone, every position's cross-entropy averaged over all
//    the step's real targets: the per-token normalization itself.
//
//===----------------------------------------------------------------------===//
#include "CompileWithMbtc.h"
#include "RelativeDifference.h"
#include "TokenModel.h"

#include "mbt/runtime/ByteTokenizer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace mbt::runtime;
using mbt::test::compileSpec;
using mbt::test::TokenBatch;
using mbt::test::TokenModel;

namespace {

constexpr int64_t kHeads = 2;

/// The attention classifier; `positions` rows of position embeddings
/// (torchLoss reads one per padded position).
std::string spec(bool causal, int64_t positions = 16) {
  return "model m {\n"
         "  input  x: tokens[259]\n"
         "  target y: class[3]\n"
         "  param table: f64[259, 4] = zeros\n"
         "  param pos: f64[" +
         std::to_string(positions) +
         ", 4] = zeros\n"
         "  param wq: f64[4, 4] = zeros\n"
         "  param wk: f64[4, 4] = zeros\n"
         "  param wv: f64[4, 4] = zeros\n"
         "  param wo: f64[4, 4] = zeros\n"
         "  param w: f64[4, 3] = zeros\n"
         "  h      = tanh(embedding(x, table) + position_embedding(x, pos))\n"
         "  a      = attention(h @ wq, h @ wk, h @ wv, x, heads = 2, causal "
         "= " +
         (causal ? "true" : "false") +
         ") @ wo\n"
         "  logits = masked_mean(h + a, x) @ w\n"
         "  loss   = cross_entropy(logits, y)\n"
         "}\n" +
         mbt::test::oneModelSgdSweep("fortunes");
}

const std::string kGruSpec =
    "model m {\n"
    "  input  x: tokens[259]\n"
    "  target y: class[3]\n"
    "  param table: f64[259, 4] = zeros\n"
    "  param w_ih: f64[4, 9] = zeros\n"
    "  param b_ih: f64[9] = zeros\n"
    "  param w_hh: f64[3, 9] = zeros\n"
    "  param b_hh: f64[9] = zeros\n"
    "  param w: f64[3, 3] = zeros\n"
    "  s      = gru_scan(embedding(x, table) @ w_ih + b_ih, w_hh, b_hh, x)\n"
    "  logits = masked_mean(s, x) @ w\n"
    "  loss   = cross_entropy(logits, y)\n"
    "}\n" +
    mbt::test::oneModelSgdSweep("fortunes");

/// kGruSpec with an LSTM: 4 gates.
std::string lstmSpec() {
  std::string spec = kGruSpec;
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"[4, 9]", "[4, 12]"},
        {"[9]", "[12]"},
        {"[9]", "[12]"},
        {"[3, 9]", "[3, 12]"},
        {"gru_scan", "lstm_scan"}}) {
    size_t at = spec.find(from);
    spec.replace(at, from.size(), to);
  }
  return spec;
}

/// One sample's recurrence in LibTorch: called with each real token's
/// embedding [1, 4] in order, returns the state after it [1, 3].
using CellSteps = std::function<torch::Tensor(const torch::Tensor &)>;

/// A recurrent classifier in LibTorch: each sample's real tokens through
/// its own `startSample()` steps one at a time, the mean of the states,
/// the cross-entropy of their projection by `w`.
torch::Tensor
torchRecurrentLoss(const std::map<std::string, torch::Tensor> &named,
                   const TokenBatch &batch,
                   const std::function<CellSteps()> &startSample) {
  namespace F = torch::nn::functional;
  std::vector<torch::Tensor> pooled;
  for (const std::vector<int32_t> &row : batch.rows) {
    CellSteps step = startSample();
    torch::Tensor sum = torch::zeros({1, 3}, torch::kDouble);
    for (int32_t token : row)
      sum = sum + step(named.at("table")[token].unsqueeze(0));
    pooled.push_back(sum / static_cast<double>(row.size()));
  }
  std::vector<int64_t> labels(batch.labels.begin(), batch.labels.end());
  torch::Tensor y = torch::tensor(labels, torch::kLong);
  return F::cross_entropy(torch::cat(pooled).matmul(named.at("w")), y);
}

/// The LSTM model in LibTorch: torch::lstm_cell over each sample.
torch::Tensor torchLstmLoss(const std::map<std::string, torch::Tensor> &named,
                            const TokenBatch &batch) {
  return torchRecurrentLoss(named, batch, [&]() -> CellSteps {
    torch::Tensor h = torch::zeros({1, 3}, torch::kDouble), c = h;
    return [&named, h, c](const torch::Tensor &e) mutable {
      auto next = torch::lstm_cell(e, {h, c}, named.at("w_ih").t(),
                                   named.at("w_hh").t(), named.at("b_ih"),
                                   named.at("b_hh"));
      h = std::get<0>(next);
      c = std::get<1>(next);
      return h;
    };
  });
}

/// The GRU model in LibTorch: torch::gru_cell over each sample.
torch::Tensor torchGruLoss(const std::map<std::string, torch::Tensor> &named,
                           const TokenBatch &batch) {
  return torchRecurrentLoss(named, batch, [&]() -> CellSteps {
    torch::Tensor h = torch::zeros({1, 3}, torch::kDouble);
    return [&named, h](const torch::Tensor &e) mutable {
      h = torch::gru_cell(e, h, named.at("w_ih").t(), named.at("w_hh").t(),
                          named.at("b_ih"), named.at("b_hh"));
      return h;
    };
  });
}

/// The model in LibTorch: the loss of `batch` padded to `width`, with the
/// parameters `named` (requiring gradients).
torch::Tensor torchLoss(const std::map<std::string, torch::Tensor> &named,
                        const TokenBatch &batch, int64_t width, bool causal) {
  namespace F = torch::nn::functional;
  std::vector<int32_t> block = batch.block(width);
  int64_t b = static_cast<int64_t>(batch.rows.size());
  auto opts = torch::TensorOptions().dtype(torch::kInt32);
  torch::Tensor x =
      torch::from_blob(block.data(), {b, width}, opts).clone().to(torch::kLong);
  torch::Tensor y =
      torch::from_blob(const_cast<int32_t *>(batch.labels.data()), {b}, opts)
          .clone()
          .to(torch::kLong);
  torch::Tensor positions =
      torch::arange(width).unsqueeze(0).expand({b, width});
  torch::Tensor h = torch::tanh(torch::embedding(named.at("table"), x) +
                                torch::embedding(named.at("pos"), positions));
  int64_t d = h.size(2), dh = d / kHeads;
  auto heads = [&](torch::Tensor t) {
    return t.view({b, width, kHeads, dh}).transpose(1, 2); // [B, H, T, dh]
  };
  torch::Tensor q = heads(h.matmul(named.at("wq")));
  torch::Tensor k = heads(h.matmul(named.at("wk")));
  torch::Tensor v = heads(h.matmul(named.at("wv")));
  torch::Tensor scores = q.matmul(k.transpose(-1, -2)) / std::sqrt(double(dh));
  torch::Tensor allowed = (x != 0).view({b, 1, 1, width});
  if (causal)
    allowed = allowed & torch::ones({width, width}, torch::kBool).tril();
  scores = scores.masked_fill(allowed.logical_not(),
                              -std::numeric_limits<double>::infinity());
  torch::Tensor attended = torch::softmax(scores, -1).matmul(v);
  torch::Tensor a =
      attended.transpose(1, 2).reshape({b, width, d}).matmul(named.at("wo"));
  torch::Tensor real = (x != 0).to(torch::kDouble).unsqueeze(-1);
  torch::Tensor pooled = ((h + a) * real).sum(1) / real.sum(1);
  return F::cross_entropy(pooled.matmul(named.at("w")), y);
}

/// The compiled loss and gradient of `source` against `reference` (the
/// same model in LibTorch) on a random batch padded by 3 tokens.
void checkAgainstTorch(
    const std::string &name, const std::string &source,
    const std::function<
        torch::Tensor(const std::map<std::string, torch::Tensor> &,
                      const TokenBatch &, int64_t)> &reference,
    const TokenBatch &batch = mbt::test::randomBatch(6, 21, 12, 3)) {
  TokenModel<double> model(compileSpec(name, source));
  int64_t width = model.longest(batch) + 3; // some padding on every row
  // The same parameters in LibTorch, by the manifest's layout.
  std::map<std::string, torch::Tensor> named;
  for (const ParamSpec &param : model.manifest().params) {
    torch::Tensor t = torch::from_blob(model.params.data() + param.offset,
                                       param.shape, torch::kDouble)
                          .clone()
                          .requires_grad_(true);
    named[param.name] = t;
  }
  torch::Tensor loss = reference(named, batch, width);
  loss.backward();
  double compiled = model.loss(model.params, batch, width);
  EXPECT_NEAR(compiled, loss.item<double>(), 1e-12 * std::fabs(compiled));

  std::vector<double> gradient = model.gradient(batch, width);
  std::vector<double> expected(gradient.size());
  for (const ParamSpec &param : model.manifest().params) {
    torch::Tensor g = named[param.name].grad().contiguous();
    std::copy(g.data_ptr<double>(), g.data_ptr<double>() + param.size,
              expected.begin() + param.offset);
  }
  double error = mbt::test::relativeDifference(gradient, expected);
  std::printf("relative difference of the gradient from LibTorch's: %.3g\n",
              error);
  EXPECT_LT(error, 1e-10);
  // The check can fail: a 1e-6 perturbation of the reference does.
  std::vector<double> off(expected);
  for (double &g : off)
    g *= 1 + 1e-6;
  EXPECT_GT(mbt::test::relativeDifference(gradient, off), 1e-10);
}

TEST(SequenceVsLibTorch, AttentionWithPaddingMask) {
  checkAgainstTorch(
      "ref_attention", spec(false),
      [](const auto &named, const TokenBatch &batch, int64_t width) {
        return torchLoss(named, batch, width, false);
      });
}

TEST(SequenceVsLibTorch, CausalAttentionWithPaddingMask) {
  checkAgainstTorch(
      "ref_causal_attention", spec(true),
      [](const auto &named, const TokenBatch &batch, int64_t width) {
        return torchLoss(named, batch, width, true);
      });
}

// Sequences of 62 to 70 tokens, padded to 65 to 73: the CPU lowering
// takes a causal attention's queries 32 at a time, so this runs two whole
// blocks and a partial one, each reading only the keys up to its end, and
// sums dkey and dvalue over them. Catches a block whose causal mask
// forgets its first query's position (it would hide the earlier blocks'
// keys) and a block that overwrites the dkey and dvalue of the blocks
// before instead of adding to them.
TEST(SequenceVsLibTorch, CausalAttentionOverSeveralQueryBlocks) {
  checkAgainstTorch(
      "ref_causal_blocks", spec(true, 80),
      [](const auto &named, const TokenBatch &batch, int64_t width) {
        EXPECT_GT(width, 64);
        return torchLoss(named, batch, width, true);
      },
      mbt::test::randomBatch(4, 29, 12, 3, /*longest=*/70, /*shortest=*/62));
}

TEST(SequenceVsLibTorch, LstmMatchesLstmCellOverEachSamplesRealTokens) {
  checkAgainstTorch("ref_lstm", lstmSpec(),
                    [](const auto &named, const TokenBatch &batch, int64_t) {
                      return torchLstmLoss(named, batch);
                    });
}

TEST(SequenceVsLibTorch, GruMatchesGruCellOverEachSamplesRealTokens) {
  checkAgainstTorch("ref_gru", kGruSpec,
                    [](const auto &named, const TokenBatch &batch, int64_t) {
                      return torchGruLoss(named, batch);
                    });
}

/// A language model's spec: `params` and `body` (defining `logits`
/// [?, 259]) with a next-token target.
std::string languageModelSpec(const std::string &params,
                              const std::string &body) {
  return "model m {\n"
         "  input  x: tokens[259]\n"
         "  target y: tokens[259]\n" +
         params + body +
         "  loss   = cross_entropy(logits, y)\n"
         "}\n" +
         mbt::test::oneModelSgdSweep("fortunes");
}

/// 6 framed samples [begin, 0 to 9 bytes, end].
TokenBatch framedBatch() {
  TokenBatch batch = mbt::test::randomBatch(6, 23, 9, 1);
  for (std::vector<int32_t> &row : batch.rows) {
    for (int32_t &token : row)
      token += kFirstByteToken - 1; // bytes, not reserved ids
    row.insert(row.begin(), kBeginToken);
    row.push_back(kEndToken);
  }
  batch.rows[2] = {kBeginToken, kEndToken}; // an empty text
  return batch;
}

/// x and y [B, width] (long) of a language model's framed batch.
std::pair<torch::Tensor, torch::Tensor> torchBlocks(const TokenBatch &batch,
                                                    int64_t width) {
  mbt::test::NextTokenBlocks blocks = mbt::test::nextTokenBlocks(batch, width);
  int64_t b = static_cast<int64_t>(batch.rows.size());
  auto opts = torch::TensorOptions().dtype(torch::kInt32);
  return {torch::from_blob(blocks.x.data(), {b, width}, opts).to(torch::kLong),
          torch::from_blob(blocks.y.data(), {b, width}, opts).to(torch::kLong)};
}

const char *kLmParams = "  param table: f64[259, 4] = zeros\n"
                        "  param pos: f64[16, 4] = zeros\n"
                        "  param wq: f64[4, 4] = zeros\n"
                        "  param wk: f64[4, 4] = zeros\n"
                        "  param wv: f64[4, 4] = zeros\n"
                        "  param out: f64[4, 259] = zeros\n";
const char *kLmBody =
    "  h      = tanh(embedding(x, table) + position_embedding(x, pos))\n"
    "  a      = attention(h @ wq, h @ wk, h @ wv, x, heads = 2, "
    "causal = true)\n"
    "  logits = (h + a) @ out\n";

TEST(SequenceVsLibTorch, CausalLanguageModelMatchesCrossEntropyIgnoringPad) {
  checkAgainstTorch(
      "ref_lm_transformer", languageModelSpec(kLmParams, kLmBody),
      [](const auto &named, const TokenBatch &batch, int64_t width) {
        namespace F = torch::nn::functional;
        auto [x, y] = torchBlocks(batch, width);
        int64_t b = x.size(0);
        torch::Tensor positions =
            torch::arange(width).unsqueeze(0).expand({b, width});
        torch::Tensor h =
            torch::tanh(torch::embedding(named.at("table"), x) +
                        torch::embedding(named.at("pos"), positions));
        auto heads = [&](torch::Tensor t) {
          return t.view({b, width, kHeads, 2}).transpose(1, 2);
        };
        torch::Tensor q = heads(h.matmul(named.at("wq")));
        torch::Tensor k = heads(h.matmul(named.at("wk")));
        torch::Tensor v = heads(h.matmul(named.at("wv")));
        torch::Tensor scores = q.matmul(k.transpose(-1, -2)) / std::sqrt(2.0);
        torch::Tensor allowed =
            (x != 0).view({b, 1, 1, width}) &
            torch::ones({width, width}, torch::kBool).tril();
        scores = scores.masked_fill(allowed.logical_not(),
                                    -std::numeric_limits<double>::infinity());
        // Every row has its begin token, so every query sees a key.
        torch::Tensor weights = torch::softmax(scores, -1);
        torch::Tensor a =
            weights.matmul(v).transpose(1, 2).reshape({b, width, 4});
        torch::Tensor logits = (h + a).matmul(named.at("out"));
        return F::cross_entropy(logits.view({-1, 259}), y.view({-1}),
                                F::CrossEntropyFuncOptions().ignore_index(0));
      },
      framedBatch());
}

TEST(SequenceVsLibTorch, GruLanguageModelMatchesGruCellPerRealToken) {
  const char *params = "  param table: f64[259, 4] = zeros\n"
                       "  param w_ih: f64[4, 9] = zeros\n"
                       "  param b_ih: f64[9] = zeros\n"
                       "  param w_hh: f64[3, 9] = zeros\n"
                       "  param b_hh: f64[9] = zeros\n"
                       "  param out: f64[3, 259] = zeros\n";
  const char *body = "  s      = gru_scan(embedding(x, table) @ w_ih + b_ih, "
                     "w_hh, b_hh, x)\n"
                     "  logits = s @ out\n";
  checkAgainstTorch(
      "ref_lm_gru", languageModelSpec(params, body),
      [](const auto &named, const TokenBatch &batch, int64_t) {
        namespace F = torch::nn::functional;
        // Every real position of every sample, then one mean over all.
        std::vector<torch::Tensor> logits;
        std::vector<int64_t> targets;
        for (const std::vector<int32_t> &row : batch.rows) {
          torch::Tensor h = torch::zeros({1, 3}, torch::kDouble);
          for (size_t t = 0; t + 1 < row.size(); ++t) {
            torch::Tensor e = named.at("table")[row[t]].unsqueeze(0);
            h = torch::gru_cell(e, h, named.at("w_ih").t(),
                                named.at("w_hh").t(), named.at("b_ih"),
                                named.at("b_hh"));
            logits.push_back(h.matmul(named.at("out")));
            targets.push_back(row[t + 1]);
          }
        }
        return F::cross_entropy(torch::cat(logits),
                                torch::tensor(targets, torch::kLong));
      },
      framedBatch());
}

} // namespace
