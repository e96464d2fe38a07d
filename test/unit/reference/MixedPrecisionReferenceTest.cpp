//===- MixedPrecisionReferenceTest.cpp - autocast against LibTorch --------===//
//
// precision = bf16 (mbt-autocast) rounds the operands and the result of
// every matmul to bf16 and, through mbt.round_to's adjoint, the gradients
// that flow back through them. The reference is the same MLP in LibTorch
// with an autograd function that does what autocast's casts do: forward
// `x.to(bfloat16).to(float)` (c10's round to nearest even), backward the
// same on the gradient (autograd hands a bf16 tensor's gradient over in
// bf16). The compiled loss and gradient must match it; the f32 model's and
// a reference that rounds the forward pass only must not, so the rounding
// of both passes is what is checked. The rounding itself, to bf16 and to
// f16, has c10's bits value by value. (f16's loss scale:
// LossScaleReferenceTest.cpp.)
//
//===----------------------------------------------------------------------===//
#include "AutocastEmulation.h"
#include "CompileWithMbtc.h"
#include "RelativeDifference.h"
#include "TokenModel.h"

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Kernels.h"
#include "mbt/runtime/Workspace.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
using mbt::test::compileSpec;
using mbt::test::relativeDifference;

namespace {

constexpr int64_t kBatch = 8, kFeatures = 16, kClasses = 4;

std::string spec(bool bf16) {
  return mbt::test::mlpModel() +
         mbt::test::oneModelSgdSweep("fashion_mnist(batch = 8)",
                                     bf16 ? "  precision = bf16\n" : "");
}

/// The loss and gradient (one SGD step at lr 1) of a one-model artifact.
struct Result {
  float loss = 0;
  std::vector<double> gradient;
};

Result runCompiled(const std::string &path, const std::vector<float> &params,
                   std::vector<float> x, std::vector<int32_t> y) {
  Artifact artifact = Artifact::load(path);
  int64_t p = artifact.manifest().paramCount;
  EXPECT_EQ(p, static_cast<int64_t>(params.size()));
  std::vector<float> updated(params), state(p, 0.0f), buffers(1), out(1);
  std::vector<double> hyper{1.0, 0.0, 0.0}, step{1.0};
  auto pm = makeDenseMemRef<float, 2>(updated.data(), {1, p});
  auto bm = makeDenseMemRef<float, 2>(buffers.data(), {1, 0});
  auto sm = makeDenseMemRef<float, 3>(state.data(), {1, 1, p});
  auto hm = makeDenseMemRef<double, 2>(hyper.data(), {1, 3});
  auto tm = makeDenseMemRef<double, 1>(step.data(), {1});
  auto xm = makeDenseMemRef<float, 3>(x.data(), {1, kBatch, kFeatures});
  auto ym = makeDenseMemRef<int32_t, 2>(y.data(), {1, kBatch});
  auto om = makeDenseMemRef<float, 2>(out.data(), {1, 1});
  Workspace workspace;
  auto ws = workspace.descriptor(artifact.trainStepWorkspace<float>()(
      &pm, &bm, &sm, &hm, &tm, &xm, &ym, &om));
  artifact.trainStep<float>()(&pm, &bm, &sm, &hm, &tm, &xm, &ym, &om, &ws);
  Result result;
  result.loss = out[0];
  for (int64_t i = 0; i < p; ++i)
    result.gradient.push_back(double(params[i]) - double(updated[i]));
  return result;
}

torch::Tensor toBF16AndBack(const torch::Tensor &t) {
  return mbt::test::roundedTo(t, torch::kBFloat16);
}

/// autocast's bf16 cast (see AutocastEmulation.h).
torch::Tensor roundBF16(const torch::Tensor &v, bool roundGradient = true) {
  return mbt::test::RoundTo::apply(v, torch::kBFloat16, roundGradient);
}

enum class Rounding { None, ForwardOnly, Both };

/// The MLP in LibTorch, float32; its products rounded as `rounding` says.
Result runTorch(const std::map<std::string, std::vector<float>> &named,
                const std::vector<float> &xData,
                const std::vector<int32_t> &yData, Rounding rounding) {
  std::map<std::string, torch::Tensor> t;
  std::map<std::string, std::vector<int64_t>> shapes{
      {"w1", {16, 12}}, {"b1", {12}}, {"w2", {12, 4}}, {"b2", {4}}};
  for (const auto &[name, values] : named)
    t[name] = torch::tensor(values).reshape(shapes.at(name)).requires_grad_();
  torch::Tensor x = torch::tensor(xData).reshape({kBatch, kFeatures});
  std::vector<int64_t> labels(yData.begin(), yData.end());
  torch::Tensor y = torch::tensor(labels, torch::kLong);
  auto r = [&](const torch::Tensor &v) {
    if (rounding == Rounding::None)
      return v;
    return roundBF16(v, rounding == Rounding::Both);
  };
  auto product = [&](const torch::Tensor &a, const torch::Tensor &b) {
    return r(r(a).matmul(r(b)));
  };
  torch::Tensor h = torch::tanh(product(x, t["w1"]) + t["b1"]);
  torch::Tensor logits = product(h, t["w2"]) + t["b2"];
  torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
  loss.backward();
  Result result;
  result.loss = loss.item<float>();
  for (const char *name : {"w1", "b1", "w2", "b2"}) {
    torch::Tensor g = t[name].grad().contiguous();
    result.gradient.insert(result.gradient.end(), g.data_ptr<float>(),
                           g.data_ptr<float>() + g.numel());
  }
  return result;
}

TEST(MixedPrecisionVsLibTorch, Bf16MlpMatchesAutocastsRounding) {
  std::string bf16Path = compileSpec("bf16_mlp", spec(true));
  std::string f32Path = compileSpec("bf16_mlp_f32", spec(false));
  // Parameters and data with more bits than bf16 keeps.
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 0.7f);
  std::map<std::string, std::vector<float>> named{
      {"w1", std::vector<float>(16 * 12)},
      {"b1", std::vector<float>(12)},
      {"w2", std::vector<float>(12 * 4)},
      {"b2", std::vector<float>(4)}};
  std::vector<float> params; // in the manifest's order: w1, b1, w2, b2
  for (const char *name : {"w1", "b1", "w2", "b2"})
    for (float &v : named[name]) {
      v = normal(rng);
      params.push_back(v);
    }
  std::vector<float> x(kBatch * kFeatures);
  for (float &v : x)
    v = normal(rng);
  std::vector<int32_t> y(kBatch);
  for (int32_t &v : y)
    v = static_cast<int32_t>(rng() % kClasses);

  Result mbt = runCompiled(bf16Path, params, x, y);
  Result reference = runTorch(named, x, y, Rounding::Both);
  double lossError = std::fabs(mbt.loss - reference.loss) / reference.loss;
  double gradError = relativeDifference(mbt.gradient, reference.gradient);
  std::printf("bf16: loss %.7f vs torch %.7f, gradient %.3g from torch's\n",
              mbt.loss, reference.loss, gradError);
  EXPECT_LT(lossError, 1e-6);
  EXPECT_LT(gradError, 1e-5);

  // The rounding matters, in both passes: f32, and a reference that rounds
  // the forward pass only, are far from it.
  Result f32 = runCompiled(f32Path, params, x, y);
  Result forwardOnly = runTorch(named, x, y, Rounding::ForwardOnly);
  double f32Error = relativeDifference(f32.gradient, reference.gradient);
  double forwardOnlyError =
      relativeDifference(forwardOnly.gradient, reference.gradient);
  std::printf("f32 gradient %.3g from the bf16 reference, forward-only "
              "rounding %.3g\n",
              f32Error, forwardOnlyError);
  EXPECT_GT(f32Error, 100 * gradError);
  EXPECT_GT(forwardOnlyError, 10 * gradError);
  // f32 against LibTorch without rounding: the reference itself is sound.
  Result plain = runTorch(named, x, y, Rounding::None);
  EXPECT_LT(relativeDifference(f32.gradient, plain.gradient), 1e-5);
}

/// A causal 2-head attention classifier over token ids, f32, with the
/// sweep's precision.
std::string attentionSpec(bool bf16) {
  return std::string(
             "model m {\n"
             "  input  x: tokens[259]\n"
             "  target y: class[3]\n"
             "  param table: f32[259, 4] = zeros\n"
             "  param wq: f32[4, 4] = zeros\n"
             "  param wk: f32[4, 4] = zeros\n"
             "  param wv: f32[4, 4] = zeros\n"
             "  param w: f32[4, 3] = zeros\n"
             "  h      = tanh(embedding(x, table))\n"
             "  a      = attention(h @ wq, h @ wk, h @ wv, x, heads = 2, "
             "causal = true)\n"
             "  logits = masked_mean(h + a, x) @ w\n"
             "  loss   = cross_entropy(logits, y)\n"
             "}\n") +
         mbt::test::oneModelSgdSweep("fortunes",
                                     bf16 ? "  precision = bf16\n" : "");
}

/// The attention classifier in LibTorch, f32, every product's operands
/// and result rounded (both passes) when `bf16`; with `insideToo` false,
/// the products inside attention are not (a reference wrong on purpose).
torch::Tensor torchAttentionLoss(std::map<std::string, torch::Tensor> &t,
                                 const mbt::test::TokenBatch &batch,
                                 int64_t width, bool bf16,
                                 bool insideToo = true) {
  auto r = [&](const torch::Tensor &v) { return bf16 ? roundBF16(v) : v; };
  auto product = [&](const torch::Tensor &a, const torch::Tensor &b) {
    return r(r(a).matmul(r(b)));
  };
  auto inner = [&](const torch::Tensor &a, const torch::Tensor &b) {
    return insideToo ? product(a, b) : a.matmul(b);
  };
  std::vector<int32_t> block = batch.block(width);
  int64_t b = static_cast<int64_t>(batch.rows.size());
  torch::Tensor x = torch::tensor(block).reshape({b, width}).to(torch::kLong);
  std::vector<int64_t> labels(batch.labels.begin(), batch.labels.end());
  torch::Tensor y = torch::tensor(labels, torch::kLong);
  torch::Tensor h = torch::tanh(torch::embedding(t["table"], x));
  auto heads = [&](torch::Tensor v) {
    return v.view({b, width, 2, 2}).transpose(1, 2); // [B, H, T, 2]
  };
  torch::Tensor q = heads(product(h, t["wq"])), k = heads(product(h, t["wk"])),
                v = heads(product(h, t["wv"]));
  torch::Tensor scores = inner(q, k.transpose(-1, -2)) / std::sqrt(2.0);
  torch::Tensor allowed = (x != 0).view({b, 1, 1, width}) &
                          torch::ones({width, width}, torch::kBool).tril();
  scores = scores.masked_fill(allowed.logical_not(),
                              -std::numeric_limits<float>::infinity());
  // A padded query still sees its row's real keys before it: no NaN rows.
  torch::Tensor a = inner(torch::softmax(scores, -1), v)
                        .transpose(1, 2)
                        .reshape({b, width, 4});
  torch::Tensor real = (x != 0).to(torch::kFloat).unsqueeze(-1);
  torch::Tensor pooled = ((h + a) * real).sum(1) / real.sum(1);
  return torch::nn::functional::cross_entropy(product(pooled, t["w"]), y);
}

/// The bf16 attention classifier's gradient on `batch` against LibTorch's
/// with autocast's roundings, and not against the f32 model's or one that
/// leaves attention's own products unrounded.
void checkBf16Attention(const std::string &name,
                        const mbt::test::TokenBatch &batch) {
  mbt::test::TokenModel<float> bf16(compileSpec(name, attentionSpec(true)));
  mbt::test::TokenModel<float> f32(
      compileSpec(name + "_f32", attentionSpec(false)));
  f32.params = bf16.params;
  int64_t width = batch.longest() + 2;
  auto reference = [&](bool rounded, bool insideToo = true) {
    std::map<std::string, torch::Tensor> t;
    for (const ParamSpec &param : bf16.manifest().params)
      t[param.name] = torch::from_blob(bf16.params.data() + param.offset,
                                       param.shape, torch::kFloat)
                          .clone()
                          .requires_grad_(true);
    torch::Tensor loss =
        torchAttentionLoss(t, batch, width, rounded, insideToo);
    loss.backward();
    std::vector<double> g(bf16.params.size());
    for (const ParamSpec &param : bf16.manifest().params) {
      torch::Tensor grad = t[param.name].grad().contiguous();
      std::copy(grad.data_ptr<float>(), grad.data_ptr<float>() + param.size,
                g.begin() + param.offset);
    }
    return g;
  };
  std::vector<double> expected = reference(true);
  double error = relativeDifference(bf16.gradient(batch, width), expected);
  double f32Error = relativeDifference(f32.gradient(batch, width), expected);
  std::printf("bf16 attention gradient %.3g from torch's, f32 %.3g\n", error,
              f32Error);
  EXPECT_LT(error, 1e-5);
  EXPECT_GT(f32Error, 100 * error);
  // Rounding the projections alone is not it: attention's own products
  // are rounded too.
  double outsideOnly =
      relativeDifference(bf16.gradient(batch, width), reference(true, false));
  std::printf("against rounding outside attention only: %.3g\n", outsideOnly);
  EXPECT_GT(outsideOnly, 10 * error);
  EXPECT_LT(relativeDifference(f32.gradient(batch, width), reference(false)),
            1e-5);
}

TEST(MixedPrecisionVsLibTorch, Bf16AttentionMatchesAutocastsRounding) {
  checkBf16Attention("bf16_attention", mbt::test::randomBatch(6, 31, 12, 3));
}

// Sequences of 62 to 70 tokens: the CPU takes the causal attention's
// queries 32 at a time, and dkey and dvalue are sums over the blocks,
// rounded once, as autocast rounds the whole product's result.
TEST(MixedPrecisionVsLibTorch, Bf16AttentionOverSeveralQueryBlocks) {
  checkBf16Attention("bf16_attention_blocks",
                     mbt::test::randomBatch(4, 37, 12, 3, /*longest=*/70,
                                            /*shortest=*/62));
}

/// fortunes_transformer.mbt's model at width 8 with 2 heads, in bf16: a
/// pre-norm block (layer norms, attention over three projections, a
/// feed-forward layer, residuals) over token and position embeddings.
std::string transformerBlockSpec() {
  return std::string("import \"nn\"\n"
                     "model m {\n"
                     "  input  x: tokens[259]\n"
                     "  target y: class[3]\n"
                     "  h      = embed(x, dim(x), 8) + positional(x, 16, 8)\n"
                     "  a      = h + self_attention(layer_norm(h), x, "
                     "heads = 2, causal = true)\n"
                     "  f      = a + linear(relu(linear(layer_norm(a), 16)), "
                     "8)\n"
                     "  logits = linear(masked_mean(f, x), dim(y))\n"
                     "  loss   = cross_entropy(logits, y)\n"
                     "}\n") +
         mbt::test::oneModelSgdSweep("fortunes", "  precision = bf16\n");
}

// The attention kernels' adjoint reads its operands as they were when the
// forward read them. Compiled with the kernels, the block's bf16 gradient
// is the generics' (equal on an AVX-512 CPU; code of fewer lanes sums in
// another order, and an f32 sum that differs in its last bit may round to
// a neighbouring bf16, 2^-8 apart). Before mbt-split-shared-to-memref,
// One-Shot Bufferize let the rounding of the adjoint's incoming gradient
// write into the value projection's buffer, which the adjoint's kernel
// then read as the values: 0.156 apart.
TEST(MixedPrecisionVsLibTorch, Bf16TransformerBlockKernelsMatchTheGenerics) {
  mbt::test::TokenBatch batch = mbt::test::randomBatch(6, 31, 12, 3, 12);
  mbt::test::TokenModel<float> kernels(
      compileSpec("bf16_block_kernels", transformerBlockSpec()));
  mbt::test::TokenModel<float> generics(
      compileSpec("bf16_block_generics", transformerBlockSpec(),
                  "--attention-kernels=false"));
  generics.params = kernels.params;
  int64_t width = batch.longest() + 2;
  double difference = relativeDifference(kernels.gradient(batch, width),
                                         generics.gradient(batch, width));
  std::printf("bf16 block: kernels' gradient %.3g from the generics'\n",
              difference);
  EXPECT_LT(difference, 1e-2);
}

/// The f32 whose bits are `bits`.
float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// The artifact's rounding of one value to the sweep's precision: the
/// metric of a one-sample batch of it through x @ [[1]], rounded once as
/// an operand and once as the product, round(round(x) * 1) = round(x).
class ArtifactRounding {
public:
  explicit ArtifactRounding(const std::string &precision)
      : artifact(Artifact::load(compileSpec(
            precision + "_rounding", "model m {\n"
                                     "  input  x: f32[1]\n"
                                     "  target y: class[1]\n"
                                     "  param  w: f32[1, 1] = ones\n"
                                     "  p      = x @ w\n"
                                     "  loss   = cross_entropy(p, y)\n"
                                     "  metric rounded = mean(p)\n"
                                     "}\n"
                                     "sweep {\n"
                                     "  models = 1\n"
                                     "  optim  = sgd(lr = 0.0)\n"
                                     "  data   = fashion_mnist(batch = 1)\n"
                                     "  precision = " +
                                         precision +
                                         "\n"
                                         "}\n"))),
        buffers(std::max<int64_t>(1, artifact.manifest().bufferCount)) {}

  float operator()(float value) {
    std::vector<float> x{value};
    auto pm = makeDenseMemRef<float, 2>(params.data(), {1, 1});
    auto bm = makeDenseMemRef<float, 2>(buffers.data(),
                                        {1, artifact.manifest().bufferCount});
    auto xm = makeDenseMemRef<float, 3>(x.data(), {1, 1, 1});
    auto ym = makeDenseMemRef<int32_t, 2>(y.data(), {1, 1});
    auto om = makeDenseMemRef<float, 2>(out.data(), {1, 2});
    auto ws = workspace.descriptor(
        artifact.evalStepWorkspace<float>()(&pm, &bm, &xm, &ym, &om));
    artifact.evalStep<float>()(&pm, &bm, &xm, &ym, &om, &ws);
    return out[1];
  }

private:
  Artifact artifact;
  std::vector<float> params{1.0f}, buffers, out = std::vector<float>(2);
  std::vector<int32_t> y{0};
  Workspace workspace;
};

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// Expects the artifact's rounding of every value to have the bits of
/// `reference`'s (c10's conversion); -0 compares as +0, since the metric's
/// mean starts its sum at +0.
void expectSameRounding(ArtifactRounding &rounded,
                        const std::vector<float> &values,
                        float (*reference)(float)) {
  for (float value : values) {
    float expected = reference(value) + 0.0f;
    EXPECT_EQ(bitsOf(rounded(value)), bitsOf(expected))
        << "x = " << value << " (bits " << std::hex << bitsOf(value) << ")";
  }
  // NaN stays NaN.
  EXPECT_TRUE(std::isnan(rounded(std::numeric_limits<float>::quiet_NaN())));
}

/// Runs a test on the bf16 product kernel's sgemm engine, which computes
/// the rounded operands' products exactly, subnormals included.
class Bf16ProductsOnSgemm {
public:
  Bf16ProductsOnSgemm() { setenv("MBT_BF16_MATMUL", "f32", 1); }
  ~Bf16ProductsOnSgemm() { unsetenv("MBT_BF16_MATMUL"); }
};

// The operand x is rounded by the product's kernel as it packs it
// (mbt_rt_batch_matmul_f32_bf16), the result by the compiled mbt.round_to.
TEST(MixedPrecisionVsLibTorch, RoundingToBf16IsC10sValueByValue) {
  Bf16ProductsOnSgemm sgemm;
  ArtifactRounding rounded("bf16");
  float inf = std::numeric_limits<float>::infinity();
  expectSameRounding(
      rounded,
      {1.0f, fromBits(0x3F808000), // 1 + 2^-8: a tie, kept even (down)
       fromBits(0x3F818000),       // a tie rounded up to even
       fromBits(0x3F808001),       // just above a tie: up
       fromBits(0x3F807FFF),       // just below: down
       fromBits(0x3FFFFFFF),       // carries into the exponent: 2
       fromBits(0x7F7FFFFF),       // the largest f32: rounds to infinity
       fromBits(0x7F7F7FFF),       // the largest bf16's neighbourhood: down
       fromBits(0x00000001),       // the smallest subnormal: 0
       fromBits(0x00018000),       // a subnormal tie
       fromBits(0x807FFFFF),       // the largest negative subnormal
       0.0f, -3.14159265f, 1e-30f, 65504.0f, inf, -inf},
      [](float v) { return toBF16AndBack(torch::tensor({v})).item<float>(); });
}

// The CPU's bf16 products (AVX512-BF16, AMX) take a bf16 subnormal for
// 0, as PyTorch's bf16 matmul on the same CPU does; every normal value is
// rounded as c10 rounds it.
TEST(MixedPrecisionVsLibTorch, HardwareBf16ProductsFlushOnlySubnormals) {
  if (bf16MatmulEngine().rfind("oneDNN", 0) != 0)
    GTEST_SKIP() << "no bf16 products on this CPU: " << bf16MatmulEngine();
  ArtifactRounding rounded("bf16");
  for (uint32_t bits : {0x00018000u, 0x807F0000u, 0x00400000u})
    EXPECT_EQ(rounded(fromBits(bits)), 0.0f) << std::hex << bits;
  // 0x007FFFFF, the largest subnormal f32, rounds up to 2^-126, a normal
  // bf16: kept.
  for (float value :
       {fromBits(0x3F808000), fromBits(0x3F818000), fromBits(0x007FFFFF),
        fromBits(0x00800000), -3.14159265f, 1e-30f})
    EXPECT_EQ(bitsOf(rounded(value)),
              bitsOf(toBF16AndBack(torch::tensor({value})).item<float>()))
        << value;
}

TEST(MixedPrecisionVsLibTorch, RoundingToF16IsC10sValueByValue) {
  ArtifactRounding rounded("f16");
  float inf = std::numeric_limits<float>::infinity();
  std::vector<float> values{
      1.0f,
      fromBits(0x3F801000), // 1 + 2^-11: a tie, kept even (down)
      fromBits(0x3F803000), // a tie rounded up to even
      fromBits(0x3F801001), // just above a tie: up
      fromBits(0x3F800FFF), // just below: down
      fromBits(0x3FFFF000), // carries into the exponent: 2
      65504.0f,             // the largest f16
      65519.99f,            // below the tie with infinity: 65504
      65520.0f,             // the tie: infinity (65504 is odd)
      -65520.0f,
      1e6f,
      3e38f,               // beyond: infinity
      0x1p-14f,            // the smallest normal
      0x1p-14f - 0x1p-26f, // just below it: rounds up to it
      0x1p-24f,            // the smallest subnormal
      0x1p-25f,            // half of it: a tie, to 0 (even)
      0x1.8p-24f,          // 1.5 quanta: a tie, up to 2 (even)
      0x1.4p-23f,          // 2.5 quanta: a tie, down to 2 (even)
      0x1.000002p-25f,     // just above half a quantum: up
      -0x1.8p-24f,
      3e-6f,
      -7.7e-7f,
      1e-9f,
      1e-30f,
      fromBits(0x00000001),
      -3.14159265f,
      0.0f,
      inf,
      -inf};
  // And a spread of values across f16's range and beyond it.
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> mantissa(0, (1u << 23) - 1);
  std::uniform_int_distribution<uint32_t> exponent(127 - 30, 127 + 18);
  for (int i = 0; i < 4000; ++i)
    values.push_back(fromBits((rng() & 0x80000000u) | (exponent(rng) << 23) |
                              mantissa(rng)));
  expectSameRounding(rounded, values, [](float v) {
    return mbt::test::roundedTo(torch::tensor({v}), torch::kHalf).item<float>();
  });
}

} // namespace
