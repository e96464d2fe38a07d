//===- SequenceReferenceTest.cpp - token models against LibTorch ----------===//
//
// The compiled loss and gradient of models over token ids against the same
// model written in LibTorch (float64, autograd), from the same parameters
// and batch: embeddings plus position embeddings, position-wise
// projections, two-head attention (plain and causal) with the padding
// masked as a key_padding_mask, a residual, the mean over the real tokens
// and a cross-entropy. LibTorch's attention is written out (scores,
// masked_fill with -inf, softmax, weighted values) as PyTorch 1.13 has no
// scaled_dot_product_attention; it is a different computation of the same
// function, so a wrong scale, head split or mask fails.
//
//===----------------------------------------------------------------------===//
#include "CompileWithMbtc.h"
#include "RelativeDifference.h"
#include "TokenModel.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace mbt::runtime;
using mbt::test::compileSpec;
using mbt::test::TokenBatch;
using mbt::test::TokenModel;

namespace {

constexpr int64_t kHeads = 2;

std::string spec(bool causal) {
  return std::string(
             "model m {\n"
             "  input  x: tokens[259]\n"
             "  target y: class[3]\n"
             "  param table: f64[259, 4] = zeros\n"
             "  param pos: f64[16, 4] = zeros\n"
             "  param wq: f64[4, 4] = zeros\n"
             "  param wk: f64[4, 4] = zeros\n"
             "  param wv: f64[4, 4] = zeros\n"
             "  param wo: f64[4, 4] = zeros\n"
             "  param w: f64[4, 3] = zeros\n"
             "  h      = tanh(embedding(x, table) + position_embedding(x, pos))\n"
             "  a      = attention(h @ wq, h @ wk, h @ wv, x, heads = 2, "
             "causal = ") +
         (causal ? "true" : "false") +
         ") @ wo\n"
         "  logits = masked_mean(h + a, x) @ w\n"
         "  loss   = cross_entropy(logits, y)\n"
         "}\n"
         "sweep {\n"
         "  models = 1\n"
         "  optim  = sgd(lr = 1.0)\n"
         "  data   = fortunes\n"
         "}\n";
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
  torch::Tensor y = torch::from_blob(const_cast<int32_t *>(batch.labels.data()),
                                     {b}, opts)
                        .clone()
                        .to(torch::kLong);
  torch::Tensor positions = torch::arange(width).unsqueeze(0).expand({b, width});
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

void checkAgainstTorch(bool causal) {
  TokenModel<double> model(
      compileSpec(causal ? "ref_causal_attention" : "ref_attention",
                  spec(causal)));
  TokenBatch batch = mbt::test::randomBatch(6, 21, 12, 3);
  int64_t width = batch.longest() + 3; // some padding on every row
  // The same parameters in LibTorch, by the manifest's layout.
  std::map<std::string, torch::Tensor> named;
  for (const ParamSpec &param : model.manifest().params) {
    torch::Tensor t = torch::from_blob(model.params.data() + param.offset,
                                       param.shape, torch::kDouble)
                          .clone()
                          .requires_grad_(true);
    named[param.name] = t;
  }
  torch::Tensor loss = torchLoss(named, batch, width, causal);
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

TEST(SequenceVsLibTorch, AttentionWithPaddingMask) { checkAgainstTorch(false); }

TEST(SequenceVsLibTorch, CausalAttentionWithPaddingMask) {
  checkAgainstTorch(true);
}

} // namespace
