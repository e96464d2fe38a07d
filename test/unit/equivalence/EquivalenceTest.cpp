//===- EquivalenceTest.cpp - batch of N vs alone, through the compiler ----===//
//
// The core promise (DESIGN.md): model i of a batch of N ends with the
// parameters that training it alone gives — same seed, data order and
// hyperparameters — within 1e-5 relative after 100 steps on the CPU. Each
// case compiles a batch spec and N one-model specs with mbtc, trains each
// 100 steps on Fashion-MNIST and compares every model's parameters.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/FashionMnist.h"
#include "mbt/runtime/Trainer.h"

#include "CompileWithMbtc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace mbt::runtime;

namespace {

using mbt::test::compileSpec;

constexpr int64_t kSteps = 100;
constexpr int kModels = 8;

std::string listOf(const std::vector<double> &values) {
  std::ostringstream os;
  os.precision(17);
  os << "[";
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i];
  os << "]";
  return os.str();
}

/// A model body, its loss and the imports it needs.
struct Network {
  std::string body;
  std::string loss = "cross_entropy(logits, y)";
  std::string imports = "";
  std::string input = "f32[784]";
  /// Extra sweep settings, such as "  precision = bf16\n".
  std::string sweep = "";
};

/// `network` as an f64 model: its input and parameters in f64.
Network asF64(Network network) {
  std::regex f32("f32\\[");
  network.body = std::regex_replace(network.body, f32, "f64[");
  network.input = std::regex_replace(network.input, f32, "f64[");
  return network;
}

/// The default network: tanh hidden layer, relu before the output bias.
const Network kTanhRelu{"  param  w1: f32[784, 32] = kaiming_uniform\n"
                        "  param  b1: f32[32] = uniform(-0.1, 0.1)\n"
                        "  param  w2: f32[32, 10] = normal(0.0, 0.1)\n"
                        "  param  b2: f32[10] = zeros\n"
                        "  h      = tanh(x @ w1 + b1)\n"
                        "  logits = relu(h @ w2) + b2\n"};

/// A gated hidden layer through silu, sigmoid, gelu and a division.
const Network kGated{"  param  w1: f32[784, 32] = kaiming_uniform\n"
                     "  param  b1: f32[32] = zeros\n"
                     "  param  w3: f32[784, 32] = xavier_uniform\n"
                     "  param  w2: f32[32, 10] = normal(0.0, 0.1)\n"
                     "  param  b2: f32[10] = zeros\n"
                     "  h      = silu(x @ w1 + b1) * sigmoid(x @ w3)\n"
                     "  logits = gelu(h @ w2) / 2 + b2\n"};

/// The reductions, softmax family, transpose and the stdlib losses over
/// one-hot targets, with a label-smoothed cross-entropy.
const Network kReductions{
    "  param  w1: f32[784, 32] = kaiming_uniform\n"
    "  param  w2: f32[10, 32] = normal(0.0, 0.1)\n"
    "  h      = softplus(x @ w1) - log(1 + exp(-max(x @ w1, axis = 0)))\n"
    "  logits = h @ transpose(w2)\n"
    "  t      = one_hot(y)\n",
    "cross_entropy(logits, y, label_smoothing = 0.1)"
    " + 0.5 * mse(softmax(logits), t) + 0.1 * bce_with_logits(logits, t)"
    " + 0.01 * mean(logsumexp(logits)) - 0.01 * sum(mean(log_softmax(logits),"
    " axis = 0)) / 32",
    "import \"losses\"\n"};

/// The image as a 28x28 matrix: row and column means beside the flat
/// pixels, a reshape to 7 strips of 4 rows, and the top and bottom halves
/// sliced and joined again.
const Network kImage{
    "  param  w1: f32[784, 32] = kaiming_uniform\n"
    "  param  wr: f32[56, 32] = kaiming_uniform\n"
    "  param  ws: f32[112, 32] = kaiming_uniform\n"
    "  param  w2: f32[32, 10] = normal(0.0, 0.1)\n"
    "  strips = reshape(x, [7, -1])\n"
    "  halves = concat(mean(slice(x, 0, 14, axis = 0), axis = 0),"
    " mean(slice(x, -14, 28, axis = 0), axis = 0))\n"
    "  h      = tanh(flatten(x) @ w1 + halves @ wr"
    " + max(strips, axis = 0) @ ws)\n"
    "  logits = h @ w2\n",
    "cross_entropy(logits, y)", "", "f32[28, 28]"};

/// A network whose output scale and label smoothing come from the model
/// argument `gain`.
const Network kGain{"  param  w1: f32[784, 32] = kaiming_uniform\n"
                    "  param  w2: f32[32, 10] = normal(0.0, 0.1)\n"
                    "  logits = gain * (tanh(x @ w1) @ w2) + (1 - gain)\n",
                    "cross_entropy(logits, y, label_smoothing = gain / 4)"};

/// Dropout on the input (rate 0.2) and on the hidden layer at the model
/// argument `gain` as the rate: masks drawn from each model's seed.
const Network kDropout{"  param  w1: f32[784, 32] = kaiming_uniform\n"
                       "  param  b1: f32[32] = zeros\n"
                       "  param  w2: f32[32, 10] = normal(0.0, 0.1)\n"
                       "  h      = tanh(dropout(x, 0.2) @ w1 + b1)\n"
                       "  logits = dropout(h, rate = gain) @ w2\n"};

/// A small CNN on the 1x28x28 image: convolutions (padding, stride),
/// max and average pooling, and dropout2d (whole channels) and dropout at
/// the model argument `gain`.
const Network kCnn{
    "  c1     = dropout2d(max_pool2d(relu(conv(x, 4, 5, padding = 2)), 2), "
    "rate = gain)\n"
    "  c2     = avg_pool2d(relu(conv(c1, 8, 3, stride = 2)), 2)\n"
    "  h      = dropout(flatten(c2), rate = gain)\n"
    "  logits = linear(h, 10)\n",
    "cross_entropy(logits, y)", "import \"nn\"\n", "f32[1, 28, 28]"};

/// Batch normalization after a convolution (over the batch and the image's
/// positions) and after a dense layer: the train step normalizes with each
/// model's batch statistics and updates each model's running statistics,
/// which the comparison includes.
const Network kBatchNorm{
    "  c1     = max_pool2d(relu(batch_norm2d(conv(x, 4, 5, padding = 2, bias = "
    "false))), 2)\n"
    "  h      = relu(batch_norm1d(linear(flatten(c1), 32), momentum = 0.2))\n"
    "  logits = linear(h, 10)\n",
    "cross_entropy(logits, y)", "import \"nn\"\n", "f32[1, 28, 28]"};

// Each model's own embedding table (a label-conditioned network: the point
// is the batched lookup and scatter-add, not the task).
const Network kEmbedding{"  h      = tanh(linear(x, 32) + embed(y, 10, 32))\n"
                         "  logits = linear(h, 10)\n",
                         "cross_entropy(logits, y)", "import \"nn\"\n"};

/// Which data each model sees: extra arguments of fashion_mnist (such as
/// ", folds = 4" or ", bootstrap = 1") and, for k-fold, each model's fold;
/// and the values of the model argument `gain`, when the network has one.
struct Routing {
  std::string dataArgs;
  std::vector<double> folds;
  std::vector<double> gains;
  /// Each model's gradient-clipping bound (`clip`), if any.
  std::vector<double> clips;
  /// Each model's warmup of a cosine learning-rate schedule, if any.
  std::vector<double> warmups;
};

std::string spec(const std::string &optim, const std::vector<double> &lrs,
                 const std::vector<double> &seeds,
                 const Network &network = kTanhRelu,
                 const Routing &routing = {}) {
  std::ostringstream os;
  os << network.imports << "model mlp"
     << (routing.gains.empty() ? "" : "(gain: float = 1.0)")
     << " {\n"
        "  input  x: "
     << network.input
     << "\n"
        "  target y: class[10]\n"
     << network.body << "  loss   = " << network.loss
     << "\n"
        "  metric acc = accuracy(logits, y)\n"
        "}\n"
        "sweep {\n"
        "  models = "
     << lrs.size()
     << "\n"
        "  model  = mlp"
     << (routing.gains.empty() ? "" : "(gain = " + listOf(routing.gains) + ")")
     << "\n"
        "  seed   = "
     << listOf(seeds)
     << "\n"
        "  optim  = "
     << optim << "(lr = " << listOf(lrs)
     << ")\n"
        "  data   = fashion_mnist(batch = 32"
     << routing.dataArgs << ")\n"
     << (routing.folds.empty() ? ""
                               : "  fold   = " + listOf(routing.folds) + "\n")
     << (routing.clips.empty() ? ""
                               : "  clip   = " + listOf(routing.clips) + "\n")
     << (routing.warmups.empty()
             ? ""
             : "  schedule = cosine(total = 120, warmup = " +
                   listOf(routing.warmups) + ", min_factor = 0.1)\n")
     << network.sweep
     << "  epochs = 1\n"
        "}\n";
  return os.str();
}

/// Trains `artifact` for kSteps steps; returns every model's parameters,
/// followed by its buffers (running statistics) if it has any.
std::vector<std::vector<double>> train(const std::string &artifactPath,
                                       const DataSplits &data,
                                       int64_t steps = kSteps) {
  Artifact artifact = Artifact::load(artifactPath);
  TrainOptions options;
  options.quiet = true;
  options.outDir = artifactPath + ".out";
  Trainer trainer(artifact, data.train, data.test, options);
  trainer.runSteps(steps);
  std::vector<std::vector<double>> params;
  for (int64_t m = 0; m < artifact.manifest().models; ++m) {
    params.push_back(trainer.modelParams(m));
    std::vector<double> buffers = trainer.modelBuffers(m);
    params.back().insert(params.back().end(), buffers.begin(), buffers.end());
  }
  return params;
}

/// max |a - b| / max |b|: the relative difference of two parameter vectors.
double relativeDifference(const std::vector<double> &a,
                          const std::vector<double> &b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return diff / scale;
}

/// Model m's routing when it trains alone: its own fold, if any.
Routing routingAlone(const Routing &routing, int m) {
  Routing one{routing.dataArgs, {}, {}, {}, {}};
  if (!routing.warmups.empty())
    one.warmups = {routing.warmups[m]};
  if (!routing.clips.empty())
    one.clips = {routing.clips[m]};
  if (!routing.folds.empty())
    one.folds = {routing.folds[m]};
  if (!routing.gains.empty())
    one.gains = {routing.gains[m]};
  return one;
}

/// `tag` names the case's files; `network` is the model's body.
void checkBatchEqualsAlone(const std::string &tag, const std::string &optim,
                           const std::vector<double> &lrs,
                           const Network &network = kTanhRelu,
                           const Routing &routing = {}) {
  DataSplits data = loadDataSplits("fashion_mnist");
  std::vector<double> seeds;
  for (int m = 0; m < kModels; ++m)
    seeds.push_back(100 + 7 * m);
  auto batch = train(
      compileSpec(tag + "_batch", spec(optim, lrs, seeds, network, routing)),
      data);
  ASSERT_EQ(batch.size(), size_t(kModels));
  for (int m = 0; m < kModels; ++m) {
    auto alone = train(compileSpec(tag + "_alone" + std::to_string(m),
                                   spec(optim, {lrs[m]}, {seeds[m]}, network,
                                        routingAlone(routing, m))),
                       data);
    ASSERT_EQ(alone[0].size(), batch[m].size());
    double rel = relativeDifference(batch[m], alone[0]);
    EXPECT_LE(rel, 1e-5) << "model " << m << " (lr " << lrs[m] << ")";
    // Training moved the parameters: the comparison is not vacuous.
    auto initial = train(compileSpec(tag + "_zero" + std::to_string(m),
                                     spec(optim, {0.0}, {seeds[m]}, network,
                                          routingAlone(routing, m))),
                         data);
    EXPECT_GT(relativeDifference(initial[0], alone[0]), 1e-3) << "model " << m;
  }
}

TEST(Equivalence, SgdBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("sgd", "sgd",
                        {0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.03});
}

TEST(Equivalence, AdamBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("adam", "adam",
                        {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 2e-3, 5e-4, 7e-3});
}

TEST(Equivalence, GatedSiluSigmoidGeluBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("gated", "adam",
                        {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 2e-3, 5e-4, 7e-3},
                        kGated);
}

TEST(Equivalence, ReductionsSoftmaxAndLossesBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("reductions", "adam",
                        {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 2e-3, 5e-4, 7e-3},
                        kReductions);
}

// f64 models: the same program in double precision, with dgemm for the
// matmuls, keeps the promise as f32 does.
TEST(Equivalence, F64GatedBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("gated_f64", "sgd",
                        {0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.03},
                        asF64(kGated));
}

TEST(Equivalence,
     F64ReductionsSoftmaxAndLossesBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("reductions_f64", "adam",
                        {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 2e-3, 5e-4, 7e-3},
                        asF64(kReductions));
}

// Mixed precision: the convolution's and the linear layers' operands and
// results rounded to bf16 (and so their adjoints), the rest in f32.
const Network kBf16Cnn{
    "  c1     = max_pool2d(relu(conv(x, 4, 5, padding = 2)), 2)\n"
    "  logits = linear(relu(linear(flatten(c1), 32)), 10)\n",
    "cross_entropy(logits, y)", "import \"nn\"\n", "f32[1, 28, 28]",
    "  precision = bf16\n"};

TEST(Equivalence, Bf16CnnBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("bf16_cnn", "adam",
                        {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 2e-3, 5e-4, 7e-3},
                        kBf16Cnn);
}

// On the CPU with BLAS, bf16's rounding of the products' operands is the
// runtime kernels' (mbt_rt_batch_matmul_f32_bf16 and the convolution's
// mbt_rt_conv2d_*_f32_bf16, on oneDNN's bf16 kernels where the CPU has
// them); with --blas=false the compiled code rounds them (mbt.round_to)
// and multiplies in loops (the convolution as im2col and a loop GEMM). Both sum
// the same exact products, in other orders: the trained models agree to f32's
// rounding of those sums, where bf16 against f32 differs in the third digit.
TEST(Equivalence, Bf16CnnOnTheRoundingKernelEqualsExplicitRounding) {
  DataSplits data = loadDataSplits("fashion_mnist");
  // SGD, whose step is the gradient (Adam's first is about its sign).
  std::vector<double> lrs{0.1, 0.3}, seeds{3, 4};
  std::string bf16 = spec("sgd", lrs, seeds, kBf16Cnn);
  Network f32Cnn = kBf16Cnn;
  f32Cnn.sweep = "";
  const int64_t steps = 3;
  auto kernel = train(compileSpec("bf16_cnn_kernel", bf16), data, steps);
  auto loops =
      train(compileSpec("bf16_cnn_loops", bf16, "--blas=false"), data, steps);
  auto f32 = train(compileSpec("bf16_cnn_f32", spec("sgd", lrs, seeds, f32Cnn)),
                   data, steps);
  for (size_t m = 0; m < lrs.size(); ++m) {
    double rel = relativeDifference(kernel[m], loops[m]);
    double bf16VsF32 = relativeDifference(kernel[m], f32[m]);
    std::printf("model %zu: kernel vs loops %.3g, bf16 vs f32 %.3g\n", m, rel,
                bf16VsF32);
    EXPECT_LE(rel, 1e-5) << "model " << m;
    EXPECT_GT(bf16VsF32, 100 * std::max(rel, 1e-7)) << "model " << m;
  }
}

// f16: the same rounding to f16, and each model's own dynamic loss scale,
// started high and grown often, so that the models overflow (and skip) at
// steps of their own: alone, a model skips the same steps.
const Network kF16Cnn{
    "  c1     = max_pool2d(relu(conv(x, 4, 5, padding = 2)), 2)\n"
    "  logits = linear(relu(linear(flatten(c1), 32)), 10)\n",
    "cross_entropy(logits, y)", "import \"nn\"\n", "f32[1, 28, 28]",
    "  precision = f16\n"
    "  loss_scale = dynamic(init_scale = 16777216, growth_interval = 4)\n"};

TEST(Equivalence, F16CnnWithLossScalesBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("f16_cnn", "adam",
                        {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 2e-3, 5e-4, 7e-3},
                        kF16Cnn);
}

TEST(Equivalence, MatrixInputBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("image", "sgd",
                        {0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.03}, kImage);
}

// A model argument that differs per model (one compiled model, the value a
// constant along the model dimension) against each model compiled alone
// with its value as a plain constant.
TEST(Equivalence, PerModelArgumentBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("gain", "adam",
                        {1e-3, 1e-3, 1e-3, 1e-3, 3e-3, 3e-3, 3e-3, 3e-3}, kGain,
                        {"", {}, {0.25, 0.5, 1.0, 2.0, 0.25, 0.5, 1.0, 2.0}});
}

// Dropout: model m's masks are keyed by its seed, the call site, the step
// and the element, never by m or the number of models, so model m of the
// batch draws what it draws alone (the case torch.vmap's batching of
// ModelBatch fails). Each model has its own hidden-layer rate.
TEST(Equivalence, DropoutBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone(
      "dropout", "adam", {1e-3, 1e-3, 1e-3, 1e-3, 3e-3, 3e-3, 3e-3, 3e-3},
      kDropout, {"", {}, {0.1, 0.2, 0.3, 0.5, 0.1, 0.2, 0.3, 0.5}});
}

// Convolution and pooling batch along the model dimension (one GEMM over
// models for each convolution), with per-model dropout after them.
TEST(Equivalence, CnnWithDropoutBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("cnn", "sgd",
                        {0.01, 0.02, 0.05, 0.1, 0.01, 0.02, 0.05, 0.1}, kCnn,
                        {"", {}, {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.1, 0.2}});
}

// Batch normalization: each model normalizes with its own batch statistics
// and keeps its own running statistics (compared with the parameters).
TEST(Equivalence, BatchNormBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("batch_norm", "sgd",
                        {0.01, 0.02, 0.05, 0.1, 0.01, 0.02, 0.05, 0.1},
                        kBatchNorm);
}

TEST(Equivalence, EmbeddingBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("embedding", "adam",
                        {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 2e-3, 5e-4, 7e-3},
                        kEmbedding);
}

// Each model clips its own gradient's global norm at its own bound; the
// bounds straddle the gradient norms, so some models clip and some do not.
TEST(Equivalence, PerModelGradientClippingBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone(
      "clip", "sgd", {0.05, 0.05, 0.05, 0.05, 0.2, 0.2, 0.2, 0.2}, kTanhRelu,
      {"", {}, {}, {0.05, 0.2, 1.0, 100.0, 0.05, 0.2, 1.0, 100.0}});
}

// Each model's learning rate follows a cosine schedule with its own warmup.
TEST(Equivalence, PerModelScheduleBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone(
      "schedule", "adam", {1e-3, 1e-3, 1e-3, 1e-3, 3e-3, 3e-3, 3e-3, 3e-3},
      kTanhRelu, {"", {}, {}, {}, {0, 10, 30, 60, 0, 10, 30, 60}});
}

// Each model holds out its own fold: model m alone with fold[m] trains on
// exactly the samples it trains on in the batch.
TEST(Equivalence, KFoldBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("kfold", "sgd",
                        {0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.03}, kTanhRelu,
                        {", folds = 4", {0, 1, 2, 3, 3, 2, 1, 0}});
}

// Random crops (padding 2) and horizontal flips of the 28x28 images, drawn
// per model from its seed: model m's augmented batches are the same in the
// batch as alone.
TEST(Equivalence, AugmentedImagesBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("augment", "sgd",
                        {0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.03}, kImage,
                        {", crop = 2, flip = true", {}});
}

// Each model trains on a bootstrap resample keyed by its seed.
TEST(Equivalence, BootstrapBatchOfEightEqualsEachModelAlone) {
  checkBatchEqualsAlone("bootstrap", "adam",
                        {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 2e-3, 5e-4, 7e-3},
                        kTanhRelu, {", bootstrap = 1", {}});
}

} // namespace
