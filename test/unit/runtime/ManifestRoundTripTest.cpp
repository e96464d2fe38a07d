//===- ManifestRoundTripTest.cpp - writeManifest and readManifest agree ---===//
//
// The manifest has one schema (mbt/common/Manifest.h) that the compiler
// writes and the runtime reads. Two manifests that set every field to
// something other than its default (an image sweep with kfold, buffers, a
// loss scale, a schedule, clipping, no_decay, freeze; a language model of token
// sequences) go through writeManifest and readManifest and must come back
// equal, field by field: a field the writer forgets or the reader drops
// fails here. (ManifestTest checks that the ABI example keeps every key.)
//
//===----------------------------------------------------------------------===//

#include "mbt/common/Manifest.h"

#include <gtest/gtest.h>

using namespace mbt;

namespace {

ParamSpec param(std::string name, std::vector<int64_t> shape, int64_t offset,
                InitSpec init, bool decay = true) {
  ParamSpec p;
  p.name = std::move(name);
  p.shape = std::move(shape);
  p.offset = offset;
  p.size = 1;
  for (int64_t d : p.shape)
    p.size *= d;
  p.init = init;
  p.decay = decay;
  return p;
}

InitSpec init(InitSpec::Kind kind, double a = 0, double b = 0) {
  InitSpec s;
  s.kind = kind;
  if (kind == InitSpec::Kind::Normal) {
    s.mean = a;
    s.stddev = b;
  } else if (kind == InitSpec::Kind::Uniform) {
    s.low = a;
    s.high = b;
  } else if (kind == InitSpec::Kind::Constant) {
    s.value = a;
  }
  return s;
}

/// Two models of a CNN on images, with everything optional set.
Manifest imageSweep() {
  Manifest m;
  m.abiVersion = kAbiVersion;
  m.dtype = DType::F64;
  m.device = Manifest::Device::CUDA;
  m.model = "cnn";
  m.models = 2;
  using K = InitSpec::Kind;
  // The convolution is frozen: its columns follow the head's.
  m.params = {param("w", {1, 3, 3, 2}, 30, init(K::KaimingUniform)),
              param("b", {2}, 48, init(K::Uniform, -0.25, 0.125), false),
              param("head", {2, 10}, 0, init(K::XavierUniform)),
              param("bias", {10}, 20, init(K::Normal, 0.5, 0.1))};
  m.params[0].trainable = m.params[1].trainable = false;
  m.paramCount = 50;
  m.trainableCount = 30;
  m.buffers = {param("bn.mean", {2}, 0, init(K::Zeros)),
               param("bn.var", {2}, 2, init(K::Ones)),
               param("amp.loss_scale", {}, 4, init(K::Constant, 65536)),
               param("amp.good_steps", {}, 5, init(K::Zeros)),
               param("amp.skipped_steps", {}, 6, init(K::Zeros))};
  m.bufferCount = 7;
  m.inputName = "image";
  m.inputShape = {1, 28, 28};
  m.features = 784;
  m.targetName = "label";
  m.classes = 10;
  m.optimizerRule = "adamw";
  m.optimizerFlags = {{"amsgrad", true}, {"maximize", false}};
  m.slots = {"exp_avg", "exp_avg_sq"};
  m.hyperNames = {"lr", "weight_decay"};
  m.hyperValues = {{1e-3, 0.01}, {0.1 + 0.2, 0.0}};
  m.modelArgNames = {"hidden"};
  m.modelArgValues = {{32}, {64}};
  m.clipNorm = {1.0, 2.5};
  m.scheduleName = "cosine";
  m.scheduleParamNames = {"total", "warmup", "min_factor"};
  m.scheduleValues = {{100, 10, 0.0}, {200, 0, 0.1}};
  m.seeds = {7, UINT64_MAX};
  m.outputs = {"loss", "acc"};
  m.data.name = "fashion_mnist";
  m.data.batch = 64;
  m.data.shuffleSeed = 3;
  m.data.routing = DataSpec::Routing::KFold;
  m.data.folds = 5;
  m.data.fold = {0, 4};
  m.data.crop = 2;
  m.data.flip = true;
  m.epochs = 3;
  m.precision = "f16";
  LossScaleSpec scale;
  scale.initScale = 65536;
  scale.growthFactor = 2;
  scale.backoffFactor = 0.5;
  scale.growthInterval = 2000;
  scale.scaleBuffer = 2;
  scale.goodStepsBuffer = 3;
  scale.skippedStepsBuffer = 4;
  m.lossScale = scale;
  return m;
}

/// A character language model on token sequences, with a validation split
/// where the image sweep has none.
Manifest tokenSweep() {
  Manifest m;
  m.abiVersion = kAbiVersion;
  m.model = "lm";
  m.models = 1;
  m.params = {param("embed", {259, 16}, 0, init(InitSpec::Kind::Normal, 0, 1))};
  m.paramCount = m.trainableCount = 259 * 16;
  m.inputName = "text";
  m.inputKind = Manifest::InputKind::Tokens;
  m.vocab = 259;
  m.targetName = "next";
  m.targetKind = Manifest::TargetKind::NextTokens;
  m.classes = 259;
  m.optimizerRule = "sgd";
  m.slots = {};
  m.hyperNames = {"lr"};
  m.hyperValues = {{0.5}};
  m.modelArgValues = {{}};
  m.seeds = {1};
  m.outputs = {"loss"};
  m.data.name = "fortunes";
  m.data.batch = 0;
  m.data.batching = {"group-by-length", 4096, 512, 200};
  m.epochs = 1;
  m.precision = "bf16";
  return m;
}

void expectSameParams(const std::vector<ParamSpec> &a,
                      const std::vector<ParamSpec> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    SCOPED_TRACE(a[k].name);
    EXPECT_EQ(a[k].name, b[k].name);
    EXPECT_EQ(a[k].shape, b[k].shape);
    EXPECT_EQ(a[k].offset, b[k].offset);
    EXPECT_EQ(a[k].size, b[k].size);
    EXPECT_EQ(a[k].decay, b[k].decay);
    EXPECT_EQ(a[k].trainable, b[k].trainable);
    EXPECT_EQ(a[k].init.kind, b[k].init.kind);
    EXPECT_EQ(a[k].init.mean, b[k].init.mean);
    EXPECT_EQ(a[k].init.stddev, b[k].init.stddev);
    EXPECT_EQ(a[k].init.low, b[k].init.low);
    EXPECT_EQ(a[k].init.high, b[k].init.high);
    EXPECT_EQ(a[k].init.value, b[k].init.value);
  }
}

void expectSameData(const DataSpec &a, const DataSpec &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.batch, b.batch);
  EXPECT_EQ(a.shuffleSeed, b.shuffleSeed);
  EXPECT_EQ(a.routing, b.routing);
  EXPECT_EQ(a.folds, b.folds);
  EXPECT_EQ(a.fold, b.fold);
  EXPECT_EQ(a.validation, b.validation);
  EXPECT_EQ(a.crop, b.crop);
  EXPECT_EQ(a.flip, b.flip);
  EXPECT_EQ(a.batching.strategy, b.batching.strategy);
  EXPECT_EQ(a.batching.tokenBudget, b.batching.tokenBudget);
  EXPECT_EQ(a.batching.window, b.batching.window);
  EXPECT_EQ(a.batching.maxLength, b.batching.maxLength);
  EXPECT_TRUE(a.source == b.source);
}

void expectSameManifest(const Manifest &a, const Manifest &b) {
  EXPECT_EQ(a.abiVersion, b.abiVersion);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.models, b.models);
  EXPECT_EQ(a.firstModel, b.firstModel);
  EXPECT_EQ(a.gradStep, b.gradStep);
  EXPECT_EQ(a.cpuName, b.cpuName);
  EXPECT_EQ(a.cpuFeatures, b.cpuFeatures);
  EXPECT_EQ(a.totalModels(), b.totalModels());
  expectSameParams(a.params, b.params);
  EXPECT_EQ(a.paramCount, b.paramCount);
  EXPECT_EQ(a.trainableCount, b.trainableCount);
  expectSameParams(a.buffers, b.buffers);
  EXPECT_EQ(a.bufferCount, b.bufferCount);
  EXPECT_EQ(a.inputName, b.inputName);
  EXPECT_EQ(a.inputKind, b.inputKind);
  EXPECT_EQ(a.inputShape, b.inputShape);
  EXPECT_EQ(a.features, b.features);
  EXPECT_EQ(a.vocab, b.vocab);
  EXPECT_EQ(a.targetName, b.targetName);
  EXPECT_EQ(a.targetKind, b.targetKind);
  EXPECT_EQ(a.targetWidth, b.targetWidth);
  EXPECT_EQ(a.classes, b.classes);
  EXPECT_EQ(a.optimizerRule, b.optimizerRule);
  EXPECT_EQ(a.optimizerFlags, b.optimizerFlags);
  EXPECT_EQ(a.slots, b.slots);
  EXPECT_EQ(a.hyperNames, b.hyperNames);
  EXPECT_EQ(a.hyperValues, b.hyperValues); // exactly: 0.1 + 0.2 included
  EXPECT_EQ(a.modelArgNames, b.modelArgNames);
  EXPECT_EQ(a.modelArgValues, b.modelArgValues);
  EXPECT_EQ(a.clipNorm, b.clipNorm);
  EXPECT_EQ(a.scheduleName, b.scheduleName);
  EXPECT_EQ(a.scheduleParamNames, b.scheduleParamNames);
  EXPECT_EQ(a.scheduleValues, b.scheduleValues);
  EXPECT_EQ(a.seeds, b.seeds);
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_EQ(a.rankBy, b.rankBy);
  expectSameData(a.data, b.data);
  EXPECT_EQ(a.epochs, b.epochs);
  EXPECT_EQ(a.precision, b.precision);
  ASSERT_EQ(a.lossScale.has_value(), b.lossScale.has_value());
  if (a.lossScale) {
    EXPECT_EQ(a.lossScale->initScale, b.lossScale->initScale);
    EXPECT_EQ(a.lossScale->growthFactor, b.lossScale->growthFactor);
    EXPECT_EQ(a.lossScale->backoffFactor, b.lossScale->backoffFactor);
    EXPECT_EQ(a.lossScale->growthInterval, b.lossScale->growthInterval);
    EXPECT_EQ(a.lossScale->scaleBuffer, b.lossScale->scaleBuffer);
    EXPECT_EQ(a.lossScale->goodStepsBuffer, b.lossScale->goodStepsBuffer);
    EXPECT_EQ(a.lossScale->skippedStepsBuffer, b.lossScale->skippedStepsBuffer);
  }
}

TEST(ManifestRoundTrip, ImageSweepWithEveryOptionalPart) {
  Manifest written = imageSweep();
  Manifest read = readManifest(writeManifest(written), "image.so");
  expectSameManifest(written, read);
}

TEST(ManifestRoundTrip, TokenSequencesAndAValidationSplit) {
  Manifest written = tokenSweep();
  written.data.validation = 0.0; // token sequences take no split
  Manifest read = readManifest(writeManifest(written), "lm.so");
  expectSameManifest(written, read);

  Manifest images = imageSweep();
  images.data.routing = DataSpec::Routing::Shared;
  images.data.folds = 0;
  images.data.fold.clear();
  images.data.validation = 0.1;
  expectSameManifest(images, readManifest(writeManifest(images), "v.so"));
}

TEST(ManifestRoundTrip, TheUsersOwnFilesWithEverySetting) {
  // Each kind with every setting it takes away from its default: a
  // setting the writer forgot or the reader dropped fails the comparison.
  Manifest csv = imageSweep();
  csv.data.name = "csv";
  csv.data.source.train = "/data/train.csv";
  csv.data.source.test = "/data/test.csv";
  csv.data.source.target = "label";
  csv.data.source.columns = {"a", "3"};
  csv.data.source.header = false;
  csv.data.source.skipRows = 2;
  csv.data.source.delimiter = ";";
  csv.data.source.standardize = true;
  csv.rankBy = csv.outputs.back();
  expectSameManifest(csv, readManifest(writeManifest(csv), "csv.so"));

  Manifest npy = imageSweep();
  npy.data.name = "npy";
  npy.data.source.trainX = "/x.npy";
  npy.data.source.trainY = "/y.npy";
  npy.data.source.testX = "/tx.npy";
  npy.data.source.testY = "/ty.npy";
  expectSameManifest(npy, readManifest(writeManifest(npy), "npy.so"));

  Manifest npz = imageSweep();
  npz.data.name = "npz";
  npz.data.source.train = "/train.npz";
  npz.data.source.x = "images";
  npz.data.source.y = "labels";
  expectSameManifest(npz, readManifest(writeManifest(npz), "npz.so"));

  Manifest images = imageSweep(); // input [1, 28, 28]
  images.data.name = "image_folder";
  images.data.source.train = "/photos/train";
  images.data.source.mean = {0.5};
  images.data.source.stddev = {0.25};
  expectSameManifest(images, readManifest(writeManifest(images), "i.so"));
}

TEST(ManifestRoundTrip, ATargetOfValues) {
  Manifest written = imageSweep();
  written.targetKind = Manifest::TargetKind::Values;
  written.targetName = "price";
  written.targetWidth = 2;
  written.classes = 0;
  expectSameManifest(written, readManifest(writeManifest(written), "r.so"));
}

TEST(ManifestRoundTrip, ASliceOfASweep) {
  // One rank's artifact (mbtc --ranks): its models are models [3, 3 + M)
  // of a sweep of 10.
  Manifest slice = imageSweep();
  slice.firstModel = 3;
  slice.sweepModels = 10;
  Manifest read = readManifest(writeManifest(slice), "rank.so");
  expectSameManifest(slice, read);
  EXPECT_TRUE(read.isSlice());

  std::string text = writeManifest(slice);
  size_t at = text.find("\"sweep_models\":10");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 18, "\"sweep_models\":2");
  EXPECT_THROW(readManifest(text, "bad.so"), ManifestError);
}

TEST(ManifestRoundTrip, AnArtifactWithAGradStep) {
  // mbtc --distribute=data: the manifest says the artifact has
  // mbt_grad_step; without it, the field is left out.
  Manifest withGrad = imageSweep();
  withGrad.gradStep = true;
  std::string text = writeManifest(withGrad);
  EXPECT_NE(text.find("\"grad_step\":true"), std::string::npos);
  EXPECT_TRUE(readManifest(text, "data.so").gradStep);
  EXPECT_EQ(writeManifest(imageSweep()).find("grad_step"), std::string::npos);
  text.replace(text.find("\"grad_step\":true"), 16, "\"grad_step\":1   ");
  EXPECT_THROW(readManifest(text, "bad.so"), ManifestError);
}

TEST(ManifestRoundTrip, AnArtifactForACpu) {
  // The CPU the compiler generated code for and the features it may use
  // (mbtc --mcpu); a manifest without them (a hand-made one) reads back
  // with none, and the field is left out.
  Manifest forCpu = imageSweep();
  forCpu.cpuName = "haswell";
  forCpu.cpuFeatures = {"avx", "avx2", "fma"};
  std::string text = writeManifest(forCpu);
  Manifest read = readManifest(text, "haswell.so");
  expectSameManifest(forCpu, read);
  EXPECT_EQ(writeManifest(imageSweep()).find("\"cpu\""), std::string::npos);
  EXPECT_TRUE(
      readManifest(writeManifest(imageSweep()), "a.so").cpuFeatures.empty());

  size_t at = text.find("\"fma\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 5, "7    ");
  try {
    readManifest(text, "bad.so");
    ADD_FAILURE() << "a feature that is not a string was read";
  } catch (const ManifestError &e) {
    EXPECT_NE(std::string(e.what()).find("cpu.features[2]"), std::string::npos)
        << e.what();
  }
}

TEST(ManifestRoundTrip, WritingTwiceGivesTheSameText) {
  std::string once = writeManifest(imageSweep());
  EXPECT_EQ(writeManifest(readManifest(once, "a.so")), once);
}

} // namespace
