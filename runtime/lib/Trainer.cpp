//===- Trainer.cpp - Buffers, train steps and evaluation ------------------===//
//
// The buffers are allocated once, at the largest batch; a smaller batch (the
// last of an epoch, or of the test split) is passed with B as the
// descriptor's size and dense strides for that B, as docs/abi.md requires.
// The epoch loop, metrics and leaderboard live in TrainLoop.cpp.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Trainer.h"
#include "mbt/runtime/Augment.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Init.h"
#include "mbt/runtime/Kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

namespace mbt {
namespace runtime {

namespace {
/// a * b, or a RuntimeError when the buffer size would overflow.
int64_t checkedMul(int64_t a, int64_t b, const char *what) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    throw RuntimeError(std::string("size of ") + what + " overflows");
  return a * b;
}

void checkData(const Dataset &data, const Manifest &manifest,
               const std::string &artifactPath) {
  if (data.numFeatures != manifest.features)
    throw RuntimeError("data set '" + data.name + "' has " +
                       std::to_string(data.numFeatures) +
                       " features per sample but artifact '" + artifactPath +
                       "' expects " + std::to_string(manifest.features) +
                       " for input '" + manifest.inputName + "'");
  if (static_cast<int64_t>(data.y.size()) != data.count ||
      static_cast<int64_t>(data.x.size()) !=
          checkedMul(data.count, data.numFeatures, "data set"))
    throw RuntimeError("data set '" + data.name +
                       "' is inconsistent: its arrays do not hold " +
                       std::to_string(data.count) + " samples");
  for (int64_t i = 0; i < data.count; ++i)
    if (data.y[i] < 0 || data.y[i] >= manifest.classes)
      throw RuntimeError("data set '" + data.name + "': label " +
                         std::to_string(data.y[i]) + " of sample " +
                         std::to_string(i) + " is outside the " +
                         std::to_string(manifest.classes) +
                         " classes of target '" + manifest.targetName + "'");
}
} // namespace

Trainer::Trainer(const Artifact &artifact, const Dataset &train,
                 const Dataset &test, TrainOptions options)
    : artifact(artifact), manifest(artifact.manifest()), trainData(&train),
      testData(&test), options(std::move(options)),
      routing(artifact.manifest(), train.count) {
  if (manifest.inputKind == Manifest::InputKind::Tokens)
    throw RuntimeError("artifact '" + artifact.path() +
                       "' takes token ids: train it on token sequences, not "
                       "on data set '" +
                       train.name + "'");
  checkData(train, manifest, artifact.path());
  checkData(test, manifest, artifact.path());
  if (train.count < 1)
    throw RuntimeError("training set '" + train.name + "' is empty");
  setUp();
}

void Trainer::setUp() {
  m = manifest.models;
  p = manifest.paramCount;
  q = manifest.bufferCount;
  s = manifest.numSlots();
  h = manifest.numHyper();
  k = manifest.numOutputs();
  f = manifest.features;
  batch = manifest.data.batch;

  int64_t mp = checkedMul(m, p, "params");
  DType dtype = manifest.dtype;
  paramsBuf = FloatBuffer(dtype, mp, "params");
  buffersBuf = FloatBuffer(dtype, checkedMul(m, q, "buffers"), "buffers");
  stateBuf = FloatBuffer(dtype, checkedMul(s, mp, "state"), "state");
  hyperBuf = AlignedBuffer<double>(checkedMul(m, h, "hyper"), "hyper");
  stepBuf = AlignedBuffer<double>(m, "step");
  outBuf = FloatBuffer(dtype, checkedMul(m, k, "out"), "out");
  // Token batches change shape from step to step: x, y and the workspace
  // grow as the steps need (loadTokenBatch, reserveTokenWorkspace).
  if (!trainSeq) {
    int64_t mb = checkedMul(m, batch, "x");
    xBuf = FloatBuffer(dtype, checkedMul(mb, f, "x"), "x");
    yBuf = AlignedBuffer<int32_t>(mb, "y");
    if (dtype == DType::F64)
      reserveWorkspace<double>();
    else
      reserveWorkspace<float>();
  }

  // The initial values are drawn in f32 whatever the dtype (Init.h), so an
  // f64 model starts where its f32 twin does.
  if (dtype == DType::F32) {
    initAllParams(manifest, paramsBuf.as<float>());
  } else {
    std::vector<float> row(p);
    for (int64_t model = 0; model < m; ++model) {
      initModelParams(manifest, manifest.seeds[model], row.data());
      paramsBuf.store(model * p, row.data(), p);
    }
  }
  std::vector<float> bufferRow(q);
  for (int64_t model = 0; model < m && q > 0; ++model) {
    initModelBuffers(manifest, manifest.seeds[model], bufferRow.data());
    buffersBuf.store(model * q, bufferRow.data(), q);
  }
  for (int64_t row = 0; row < m; ++row)
    for (int64_t col = 0; col < h; ++col)
      hyperBuf[row * h + col] = manifest.hyperValues[row][col];
  idleModels.assign(m, 0);
  batchSamples.assign(trainSeq ? 0 : batch, 0);
  runningSums.assign(m * k, 0.0);
  lastTrainOut.assign(m * k, std::numeric_limits<double>::quiet_NaN());
  status = ModelStatus(m);
  // Last: the device copies start from the initialized host buffers.
  if (manifest.device == Manifest::Device::CUDA) {
    if (trainSeq)
      throw RuntimeError("artifact '" + artifact.path() +
                         "' takes token ids, which --target=cuda does not "
                         "run yet; compile it for the CPU");
    mirrorOnDevice();
    const char *env = std::getenv("MBT_CUDA_GRAPHS");
    useGraphs = this->options.deviceGraphs && !(env && std::string(env) == "0");
  }
}

Trainer::~Trainer() {
  for (auto &[shape, step] : trainGraphs)
    if (step.graph)
      device->destroyGraph(step.graph);
}

void Trainer::runOnDevice(const std::function<void()> &issue, int64_t b) {
  if (!useGraphs)
    return issue();
  StepGraph &step = trainGraphs[{b, xShared}];
  if (step.graph) {
    device->launchGraph(step.graph);
  } else if (step.uses == 0) {
    issue();
  } else {
    std::string why;
    step.graph = device->captureGraph(issue, why);
    if (step.graph) {
      device->launchGraph(step.graph);
    } else {
      useGraphs = false;
      if (options.progress)
        *options.progress << "mbt: warning: the train step could not be "
                             "captured as a graph ("
                          << why << "); its launches are issued one by one\n";
      issue();
    }
  }
  ++step.uses;
}

void Trainer::loadBatch(const Dataset &data, const int64_t *indices,
                        int64_t b) {
  // Gather model 0's slice from the data; every model sees the same batch,
  // so x is passed with stride 0 along the model dimension (docs/abi.md)
  // and only y, which is small, is replicated.
  int32_t *y0 = yBuf.data();
  for (int64_t j = 0; j < b; ++j) {
    xBuf.store(j * f, data.sample(indices[j]), f);
    y0[j] = data.y[indices[j]];
  }
  for (int64_t model = 1; model < m; ++model)
    std::memcpy(y0 + model * b, y0, sizeof(int32_t) * b);
  xShared = true;
  loadedWeight = b;
}

template <typename SampleOf>
void Trainer::loadRoutedBatch(const Dataset &data, const int64_t *positions,
                              int64_t b, SampleOf sampleOf) {
  for (int64_t model = 0; model < m; ++model) {
    int32_t *y = yBuf.data() + model * b;
    for (int64_t j = 0; j < b; ++j) {
      int64_t sample = sampleOf(model, positions[j]);
      xBuf.store((model * b + j) * f, data.sample(sample), f);
      y[j] = data.y[sample];
    }
  }
  xShared = false;
  loadedWeight = b;
}

void Trainer::loadAugmentedBatch(const Dataset &data, const int64_t *positions,
                                 int64_t b, int64_t first) {
  const std::vector<int64_t> &shape = manifest.inputShape;
  int64_t channels = shape.size() == 3 ? shape[0] : 1;
  int64_t height = shape[shape.size() - 2], width = shape.back();
  augmentScratch.resize(f);
  for (int64_t model = 0; model < m; ++model) {
    int32_t *y = yBuf.data() + model * b;
    for (int64_t j = 0; j < b; ++j) {
      int64_t sample = routing.trainSample(model, positions[j]);
      AugmentDraw draw =
          drawAugment(manifest.seeds[model], epochIndex, first + j,
                      manifest.data.crop, manifest.data.flip);
      augmentImage(data.sample(sample), augmentScratch.data(), channels, height,
                   width, manifest.data.crop, draw);
      xBuf.store((model * b + j) * f, augmentScratch.data(), f);
      y[j] = data.y[sample];
    }
  }
  xShared = false;
  loadedWeight = b;
}

void Trainer::checkKernels(const char *stepName) {
  std::string error = takeKernelError();
  if (error.empty() && device)
    error = device->takeError();
  if (!error.empty())
    throw RuntimeError("artifact '" + artifact.path() + "' made a malformed " +
                       "kernel call in " + stepName + ": " + error);
}

template <typename T> MemRef<T, 3> Trainer::xDescriptor(T *base, int64_t b) {
  auto x = makeDenseMemRef<T, 3>(base, {m, b, f});
  if (xShared)
    x.strides[0] = 0; // one batch, read by every model
  return x;
}

template <typename T> void Trainer::reserveWorkspace() {
  // Only the descriptors' sizes are read: x's layout does not matter.
  auto params = makeDenseMemRef<T, 2>(paramsBuf.as<T>(), {m, p});
  auto buffers = makeDenseMemRef<T, 2>(buffersBuf.as<T>(), {m, q});
  auto state = makeDenseMemRef<T, 3>(stateBuf.as<T>(), {s, m, p});
  auto hyper = makeDenseMemRef<double, 2>(hyperBuf.data(), {m, h});
  auto step = makeDenseMemRef<double, 1>(stepBuf.data(), {m});
  auto x = makeDenseMemRef<T, 3>(xBuf.as<T>(), {m, batch, f});
  auto y = makeDenseMemRef<int32_t, 2>(yBuf.data(), {m, batch});
  auto out = makeDenseMemRef<T, 2>(outBuf.as<T>(), {m, k});
  int64_t bytes = std::max(
      artifact.trainStepWorkspace<T>()(&params, &buffers, &state, &hyper, &step,
                                       &x, &y, &out),
      artifact.evalStepWorkspace<T>()(&params, &buffers, &x, &y, &out));
  if (manifest.device == Manifest::Device::CUDA) {
    if (bytes < 0)
      throw RuntimeError("artifact '" + artifact.path() +
                         "' asked for a negative workspace");
    onDevice.workspaceBytes = bytes;
  } else {
    workspace.reserve(bytes);
  }
}

void Trainer::mirrorOnDevice() {
  device = options.openDevice ? options.openDevice() : openCudaDeviceMemory();
  auto mirror = [&](void *host, size_t bytes) {
    void *copy = device->allocate(bytes);
    device->upload(copy, host, bytes);
    return copy;
  };
  onDevice.params = mirror(paramsBuf.raw(), paramsBuf.bytes());
  onDevice.buffers = mirror(buffersBuf.raw(), buffersBuf.bytes());
  onDevice.state = mirror(stateBuf.raw(), stateBuf.bytes());
  onDevice.hyper = mirror(hyperBuf.data(), sizeof(double) * hyperBuf.size());
  onDevice.step = device->allocate(sizeof(double) * stepBuf.size());
  onDevice.x = device->allocate(xBuf.bytes());
  onDevice.y = device->allocate(sizeof(int32_t) * yBuf.size());
  onDevice.out = device->allocate(outBuf.bytes());
  onDevice.workspace =
      device->allocate(static_cast<size_t>(onDevice.workspaceBytes));
}

void Trainer::uploadStepInputs(int64_t b, bool train) {
  size_t element = dtype() == DType::F64 ? sizeof(double) : sizeof(float);
  // A shared batch is model 0's slice only (x has stride 0 along models).
  size_t xBytes = element * static_cast<size_t>((xShared ? 1 : m) * b * f);
  device->upload(onDevice.x, xBuf.raw(), xBytes);
  device->upload(onDevice.y, yBuf.data(),
                 sizeof(int32_t) * static_cast<size_t>(m * b));
  if (train)
    device->upload(onDevice.step, stepBuf.data(),
                   sizeof(double) * static_cast<size_t>(m));
}

void Trainer::syncFromDevice() const {
  if (!device || !hostStale)
    return;
  device->download(paramsBuf.raw(), onDevice.params, paramsBuf.bytes());
  device->download(buffersBuf.raw(), onDevice.buffers, buffersBuf.bytes());
  device->download(stateBuf.raw(), onDevice.state, stateBuf.bytes());
  hostStale = false;
}

WorkspaceRef Trainer::stepWorkspace() {
  if (!device)
    return workspace.descriptor();
  return makeDenseMemRef<uint8_t, 1>(
      static_cast<uint8_t *>(onDevice.workspace),
      {std::max<int64_t>(onDevice.workspaceBytes, 1)});
}

std::string Trainer::deviceName() const {
  return device ? device->name() : "cpu";
}

namespace {
/// `device` when there is one, else `host`, as T*.
template <typename T, typename H> T *pick(void *device, H *host) {
  return device ? static_cast<T *>(device) : reinterpret_cast<T *>(host);
}
} // namespace

template <typename T, typename X> MemRef<X, 3> Trainer::xFor(int64_t b) {
  if constexpr (std::is_same<X, int32_t>::value)
    return tokenDescriptor(tokenBuf.data(), b);
  else
    return xDescriptor<T>(pick<T>(onDevice.x, xBuf.as<T>()), b);
}

template <int YRank> MemRef<int32_t, YRank> Trainer::yFor(int64_t b) {
  int32_t *base = pick<int32_t>(onDevice.y, yBuf.data());
  if constexpr (YRank == 3)
    return makeDenseMemRef<int32_t, 3>(base, {m, b, xWidth});
  else
    return makeDenseMemRef<int32_t, 2>(base, {m, b});
}

template <typename T, int YRank>
void Trainer::reserveTokenWorkspace(MemRef<int32_t, 3> &x, int64_t b,
                                    bool train) {
  // Only the descriptors' sizes are read.
  auto params = makeDenseMemRef<T, 2>(paramsBuf.as<T>(), {m, p});
  auto buffers = makeDenseMemRef<T, 2>(buffersBuf.as<T>(), {m, q});
  auto state = makeDenseMemRef<T, 3>(stateBuf.as<T>(), {s, m, p});
  auto hyper = makeDenseMemRef<double, 2>(hyperBuf.data(), {m, h});
  auto step = makeDenseMemRef<double, 1>(stepBuf.data(), {m});
  auto y = yFor<YRank>(b);
  auto out = makeDenseMemRef<T, 2>(outBuf.as<T>(), {m, k});
  workspace.reserve(
      train ? artifact.trainStepWorkspace<T, int32_t, YRank>()(
                  &params, &buffers, &state, &hyper, &step, &x, &y, &out)
            : artifact.evalStepWorkspace<T, int32_t, YRank>()(&params, &buffers,
                                                              &x, &y, &out));
}

template <typename T, typename X, int YRank>
void Trainer::callTrainStep(int64_t b) {
  if (device) {
    uploadStepInputs(b, /*train=*/true);
    // Captured by value: a graph device may keep it to replay the step.
    runOnDevice([this, b] { issueTrainStep<T, X, YRank>(b); }, b);
    device->download(outBuf.raw(), onDevice.out, outBuf.bytes());
    hostStale = true;
    return;
  }
  issueTrainStep<T, X, YRank>(b);
}

template <typename T, typename X, int YRank>
void Trainer::issueTrainStep(int64_t b) {
  const DevicePointers &d = onDevice;
  auto params =
      makeDenseMemRef<T, 2>(pick<T>(d.params, paramsBuf.as<T>()), {m, p});
  auto buffers =
      makeDenseMemRef<T, 2>(pick<T>(d.buffers, buffersBuf.as<T>()), {m, q});
  auto state =
      makeDenseMemRef<T, 3>(pick<T>(d.state, stateBuf.as<T>()), {s, m, p});
  auto hyper = makeDenseMemRef<double, 2>(
      pick<double>(d.hyper, hyperBuf.data()), {m, h});
  auto step =
      makeDenseMemRef<double, 1>(pick<double>(d.step, stepBuf.data()), {m});
  auto x = xFor<T, X>(b);
  if constexpr (std::is_same<X, int32_t>::value)
    reserveTokenWorkspace<T, YRank>(x, b, /*train=*/true);
  auto y = yFor<YRank>(b);
  auto out = makeDenseMemRef<T, 2>(pick<T>(d.out, outBuf.as<T>()), {m, k});
  auto ws = stepWorkspace();
  // Frozen models' matmuls are skipped on the CPU (Kernels.h).
  bool anyIdle = false;
  for (int64_t model = 0; model < m; ++model)
    anyIdle |= (idleModels[model] = stepBuf[model] == 0.0);
  IdleModelsGuard guard(anyIdle && !device ? idleModels.data() : nullptr, m);
  artifact.trainStep<T, X, YRank>()(&params, &buffers, &state, &hyper, &step,
                                    &x, &y, &out, &ws);
}

template <typename T, typename X, int YRank>
void Trainer::callEvalStep(int64_t b) {
  if (device)
    uploadStepInputs(b, /*train=*/false);
  const DevicePointers &d = onDevice;
  auto params =
      makeDenseMemRef<T, 2>(pick<T>(d.params, paramsBuf.as<T>()), {m, p});
  auto buffers =
      makeDenseMemRef<T, 2>(pick<T>(d.buffers, buffersBuf.as<T>()), {m, q});
  auto x = xFor<T, X>(b);
  if constexpr (std::is_same<X, int32_t>::value)
    reserveTokenWorkspace<T, YRank>(x, b, /*train=*/false);
  auto y = yFor<YRank>(b);
  auto out = makeDenseMemRef<T, 2>(pick<T>(d.out, outBuf.as<T>()), {m, k});
  auto ws = stepWorkspace();
  artifact.evalStep<T, X, YRank>()(&params, &buffers, &x, &y, &out, &ws);
  if (device)
    device->download(outBuf.raw(), d.out, outBuf.bytes());
}

namespace {
/// The element types of a step's buffers: float type T, x's elements X,
/// y's rank YRank.
template <typename T, typename X, int YRank> struct StepTypes {
  using Float = T;
  using Input = X;
  static constexpr int yRank = YRank;
};

/// Calls `call(StepTypes<...>{})` with the types of this artifact's steps.
template <typename Call>
void withStepTypes(DType dtype, bool tokens, bool nextTokens, Call &&call) {
  auto forFloat = [&](auto zero) {
    using T = decltype(zero);
    if (!tokens)
      call(StepTypes<T, T, 2>{});
    else if (nextTokens)
      call(StepTypes<T, int32_t, 3>{});
    else
      call(StepTypes<T, int32_t, 2>{});
  };
  if (dtype == DType::F64)
    forFloat(0.0);
  else
    forFloat(0.0f);
}
} // namespace

void Trainer::dispatchTrainStep(int64_t b) {
  withStepTypes(dtype(), trainSeq != nullptr, nextTokens(), [&](auto types) {
    using S = decltype(types);
    callTrainStep<typename S::Float, typename S::Input, S::yRank>(b);
  });
}

void Trainer::dispatchEvalStep(int64_t b) {
  withStepTypes(dtype(), trainSeq != nullptr, nextTokens(), [&](auto types) {
    using S = decltype(types);
    callEvalStep<typename S::Float, typename S::Input, S::yRank>(b);
  });
}

void Trainer::trainOnLoadedBatch(int64_t b) {
  ++stepCount;
  // A frozen model gets step 0: the step leaves it as it is.
  for (int64_t model = 0; model < m; ++model)
    stepBuf[model] = training(model) ? static_cast<double>(stepCount) : 0.0;
  dispatchTrainStep(b);
  checkKernels("train_step");

  newlyDiverged.clear();
  for (int64_t model = 0; model < m; ++model) {
    // A NaN loss says the model did not step: its loss or gradients were
    // not finite (or it was frozen already: diverged or stopped).
    if (stepBuf[model] != 0.0 && !std::isfinite(outBuf.get(model * k))) {
      status.markDiverged(model, stepCount);
      newlyDiverged.push_back(model);
    }
    for (int64_t col = 0; col < k; ++col) {
      // A frozen model's outputs are not its own (its matmuls were
      // skipped): none are reported.
      double value = stepBuf[model] != 0.0
                         ? outBuf.get(model * k + col)
                         : std::numeric_limits<double>::quiet_NaN();
      lastTrainOut[model * k + col] = value;
      runningSums[model * k + col] += value * static_cast<double>(loadedWeight);
    }
  }
  runningWeight += loadedWeight;
  totalSamples += b;
}

void Trainer::startEpochIfDue() {
  if (!atEpochBoundary())
    return;
  if (epochBatches)
    ++epochIndex;
  epochBatches = makeEpochBatches(epochIndex);
  batchIndex = 0;
  std::fill(runningSums.begin(), runningSums.end(), 0.0);
  runningWeight = 0;
}

void Trainer::trainNextBatch() {
  startEpochIfDue();
  int64_t b = epochBatches->batchLength(batchIndex);
  if (trainSeq) {
    loadTokenBatch(*trainSeq, epochBatches->batch(batchIndex), b,
                   epochBatches->batchWidth(batchIndex));
  } else if (manifest.data.augments()) {
    loadAugmentedBatch(*trainData, epochBatches->batch(batchIndex), b,
                       batchIndex * batch);
  } else if (routing.shared()) {
    // Positions are samples, unless a validation split was carved out.
    const int64_t *positions = epochBatches->batch(batchIndex);
    for (int64_t j = 0; j < b; ++j)
      batchSamples[j] = routing.sharedSample(positions[j]);
    loadBatch(*trainData, batchSamples.data(), b);
  } else
    loadRoutedBatch(*trainData, epochBatches->batch(batchIndex), b,
                    [&](int64_t model, int64_t pos) {
                      return routing.trainSample(model, pos);
                    });
  ++batchIndex;
  trainOnLoadedBatch(b);
}

void Trainer::runSteps(int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    trainNextBatch();
}

std::vector<std::vector<double>> Trainer::evaluateBatches(
    const EpochBatches &plan,
    const std::function<void(const int64_t *, int64_t)> &load) {
  std::vector<double> sums(m * k, 0.0);
  int64_t n = 0;
  for (int64_t step = 0; step < plan.numBatches(); ++step) {
    int64_t b = plan.batchLength(step);
    load(plan.batch(step), b);
    n += loadedWeight;
    dispatchEvalStep(b);
    checkKernels("eval_step");
    for (int64_t i = 0; i < m * k; ++i)
      sums[i] += outBuf.get(i) * static_cast<double>(loadedWeight);
  }
  std::vector<std::vector<double>> means(m, std::vector<double>(k));
  for (int64_t model = 0; model < m; ++model)
    for (int64_t col = 0; col < k; ++col)
      means[model][col] = n ? sums[model * k + col] / static_cast<double>(n)
                            : std::numeric_limits<double>::quiet_NaN();
  return means;
}

/// Positions 0, 1, ..., n - 1 in batches of `batch`: the evaluation order.
static EpochBatches inOrder(int64_t n, int64_t batch) {
  std::vector<int64_t> order(n), offsets;
  for (int64_t i = 0; i < n; ++i)
    order[i] = i;
  for (int64_t start = 0; start < n; start += batch)
    offsets.push_back(start);
  offsets.push_back(n);
  return EpochBatches(std::move(order), std::move(offsets));
}

std::vector<std::vector<double>> Trainer::evaluate(const Dataset &data) {
  if (trainSeq)
    throw RuntimeError("artifact '" + artifact.path() +
                       "' takes token ids; it cannot evaluate data set '" +
                       data.name + "'");
  checkData(data, manifest, artifact.path());
  return evaluateBatches(
      inOrder(data.count, batch),
      [&](const int64_t *indices, int64_t b) { loadBatch(data, indices, b); });
}

std::vector<std::vector<double>> Trainer::evaluateValidation() {
  if (!routing.hasValidation())
    return {};
  return evaluateBatches(inOrder(routing.validationSize(), batch),
                         [&](const int64_t *positions, int64_t b) {
                           loadRoutedBatch(*trainData, positions, b,
                                           [&](int64_t model, int64_t pos) {
                                             return routing.validationSample(
                                                 model, pos);
                                           });
                         });
}

std::vector<std::vector<double>> Trainer::runningMeans() const {
  std::vector<std::vector<double>> means(m, std::vector<double>(k));
  for (int64_t model = 0; model < m; ++model)
    for (int64_t col = 0; col < k; ++col)
      means[model][col] = runningWeight
                              ? runningSums[model * k + col] /
                                    static_cast<double>(runningWeight)
                              : std::numeric_limits<double>::quiet_NaN();
  return means;
}

namespace {
/// Row `model` of a [M, width] buffer, widened to double.
std::vector<double> rowOf(const FloatBuffer &buffer, int64_t model,
                          int64_t models, int64_t width) {
  if (model < 0 || model >= models)
    throw RuntimeError("model index " + std::to_string(model) +
                       " out of range [0, " + std::to_string(models) + ")");
  std::vector<double> row(width);
  for (int64_t i = 0; i < width; ++i)
    row[i] = buffer.get(model * width + i);
  return row;
}
} // namespace

std::vector<double> Trainer::modelParams(int64_t model) const {
  syncFromDevice();
  return rowOf(paramsBuf, model, m, p);
}

std::vector<double> Trainer::modelBuffers(int64_t model) const {
  syncFromDevice();
  return rowOf(buffersBuf, model, m, q);
}

std::vector<std::vector<double>> Trainer::lastTrainOutputs() const {
  std::vector<std::vector<double>> result(m, std::vector<double>(k));
  for (int64_t model = 0; model < m; ++model)
    for (int64_t col = 0; col < k; ++col)
      result[model][col] = lastTrainOut[model * k + col];
  return result;
}

} // namespace runtime
} // namespace mbt
