//===- StepRunner.cpp - Buffers, descriptors and the artifact's steps -----===//
//
// The buffers are allocated once, at the largest batch; a smaller batch (the
// last of an epoch, or of the test split) is passed with B as the
// descriptor's size and dense strides for that B, as docs/abi.md requires.
// Token batches change shape from step to step, so for them x, y and the
// workspace grow as the steps need.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/StepRunner.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/Init.h"
#include "mbt/runtime/InitCheckpoint.h"
#include "mbt/runtime/Kernels.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

namespace mbt {
namespace runtime {

int64_t checkedMul(int64_t a, int64_t b, const char *what) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    throw RuntimeError(std::string("size of ") + what + " overflows");
  return a * b;
}

StepRunner::StepRunner(const Artifact &artifact, const TrainOptions &options)
    : artifact(artifact), manifest(artifact.manifest()), m(manifest.models),
      p(manifest.paramCount), pt(manifest.trainableCount),
      q(manifest.bufferCount), s(manifest.numSlots()), h(manifest.numHyper()),
      k(manifest.numColumns()), f(manifest.features),
      batch(manifest.data.batch),
      tokens(manifest.inputKind == Manifest::InputKind::Tokens),
      nextTokens(manifest.targetKind == Manifest::TargetKind::NextTokens),
      valueTargets(manifest.targetKind == Manifest::TargetKind::Values),
      targetWidth(manifest.targetWidth), progress(options.progress) {
  allocate();
  initialize(options);
  idleModels.assign(m, 0);
  // Last: the device copies start from the initialized host buffers.
  if (manifest.device == Manifest::Device::CUDA) {
    if (tokens)
      throw RuntimeError("artifact '" + artifact.path() +
                         "' takes token ids, which --target=cuda does not "
                         "run yet; compile it for the CPU");
    mirrorOnDevice(options);
    const char *env = std::getenv("MBT_CUDA_GRAPHS");
    useGraphs = options.deviceGraphs && !(env && std::string(env) == "0");
  }
}

StepRunner::~StepRunner() {
  for (auto &[shape, step] : trainGraphs)
    if (step.graph)
      device->destroyGraph(step.graph);
}

void StepRunner::allocate() {
  int64_t mp = checkedMul(m, p, "params");
  DType dtype = manifest.dtype;
  paramsBuf = FloatBuffer(dtype, mp, "params");
  buffersBuf = FloatBuffer(dtype, checkedMul(m, q, "buffers"), "buffers");
  stateBuf = FloatBuffer(
      dtype, checkedMul(s, checkedMul(m, pt, "state"), "state"), "state");
  hyperBuf = AlignedBuffer<double>(checkedMul(m, h, "hyper"), "hyper");
  stepBuf = AlignedBuffer<double>(m, "step");
  outBuf = FloatBuffer(dtype, checkedMul(m, k, "out"), "out");
  // Token batches change shape from step to step: x, y and the workspace
  // grow as the steps need (tokenBlock, labels, reserveTokenWorkspace).
  if (!tokens) {
    int64_t mb = checkedMul(m, batch, "x");
    xBuf = FloatBuffer(dtype, checkedMul(mb, f, "x"), "x");
    if (valueTargets)
      yValuesBuf = FloatBuffer(dtype, checkedMul(mb, targetWidth, "y"), "y");
    else
      yBuf = AlignedBuffer<int32_t>(mb, "y");
    if (dtype == DType::F64)
      reserveWorkspace<double>();
    else
      reserveWorkspace<float>();
  }
}

void StepRunner::initialize(const TrainOptions &options) {
  // The initial values are drawn in f32 whatever the dtype (Init.h), so an
  // f64 model starts where its f32 twin does.
  if (manifest.dtype == DType::F32) {
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
  if (auto init = chosenInitCheckpoint(manifest, options.initFile))
    loadInitCheckpoint(manifest, *init, paramsBuf, buffersBuf,
                       manifestBesideCheckpoint);
  for (int64_t row = 0; row < m; ++row)
    for (int64_t col = 0; col < h; ++col)
      hyperBuf[row * h + col] = manifest.hyperValues[row][col];
}

FloatBuffer &StepRunner::grads() {
  if (gradsBuf.size() == 0) {
    gradsBuf = FloatBuffer(dtype(), checkedMul(m, pt, "grads"), "grads");
    if (device)
      onDevice.grads = device->allocate(gradsBuf.bytes());
  }
  return gradsBuf;
}

std::string StepRunner::deviceName() const {
  return device ? device->name() : "cpu";
}

void StepRunner::setState(const std::vector<uint8_t> &params,
                          const std::vector<uint8_t> &state,
                          const std::vector<uint8_t> &buffers) {
  std::memcpy(paramsBuf.raw(), params.data(), params.size());
  std::memcpy(stateBuf.raw(), state.data(), state.size());
  if (!buffers.empty())
    std::memcpy(buffersBuf.raw(), buffers.data(), buffers.size());
  if (device) {
    device->upload(onDevice.params, paramsBuf.raw(), paramsBuf.bytes());
    device->upload(onDevice.state, stateBuf.raw(), stateBuf.bytes());
    device->upload(onDevice.buffers, buffersBuf.raw(), buffersBuf.bytes());
  }
  hostStale = false;
}

int32_t *StepRunner::tokenBlock(int64_t b, int64_t width) {
  if (b * width > tokenBuf.size())
    tokenBuf = AlignedBuffer<int32_t>(b * width, "x");
  xWidth = width;
  return tokenBuf.data();
}

int32_t *StepRunner::labels(int64_t perModel) {
  if (m * perModel > yBuf.size())
    yBuf = AlignedBuffer<int32_t>(m * perModel, "y");
  return yBuf.data();
}

void StepRunner::runOnDevice(const std::function<void()> &issue, int64_t b) {
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
      if (progress)
        *progress << "mbt: warning: the train step could not be "
                     "captured as a graph ("
                  << why << "); its launches are issued one by one\n";
      issue();
    }
  }
  ++step.uses;
}

void StepRunner::checkKernels(const char *stepName) {
  std::string error = takeKernelError();
  if (error.empty() && device)
    error = device->takeError();
  if (!error.empty())
    throw RuntimeError("artifact '" + artifact.path() + "' made a malformed " +
                       "kernel call in " + stepName + ": " + error);
}

template <typename T> MemRef<T, 3> StepRunner::xDescriptor(T *base, int64_t b) {
  auto x = makeDenseMemRef<T, 3>(base, {m, b, f});
  if (xShared)
    x.strides[0] = 0; // one batch, read by every model
  return x;
}

MemRef<int32_t, 3> StepRunner::tokenDescriptor(int32_t *base, int64_t b) {
  auto x = makeDenseMemRef<int32_t, 3>(base, {m, b, xWidth});
  x.strides[0] = 0; // one block, read by every model
  return x;
}

template <typename T> void StepRunner::reserveWorkspace() {
  // Only the descriptors' sizes are read: x's layout does not matter.
  auto params = makeDenseMemRef<T, 2>(paramsBuf.as<T>(), {m, p});
  auto buffers = makeDenseMemRef<T, 2>(buffersBuf.as<T>(), {m, q});
  auto state = makeDenseMemRef<T, 3>(stateBuf.as<T>(), {s, m, pt});
  auto hyper = makeDenseMemRef<double, 2>(hyperBuf.data(), {m, h});
  auto step = makeDenseMemRef<double, 1>(stepBuf.data(), {m});
  auto x = makeDenseMemRef<T, 3>(xBuf.as<T>(), {m, batch, f});
  auto out = makeDenseMemRef<T, 2>(outBuf.as<T>(), {m, k});
  // The gradients' descriptor for the sizes (the buffer comes later).
  auto grads = makeDenseMemRef<T, 2>(nullptr, {m, pt});
  int64_t bytes = 0;
  if (valueTargets) {
    auto y = yFor<3>(batch);
    bytes = std::max(
        artifact.trainStepWorkspace<T, T, 3>()(&params, &buffers, &state,
                                               &hyper, &step, &x, &y, &out),
        artifact.evalStepWorkspace<T, T, 3>()(&params, &buffers, &x, &y, &out));
    if (manifest.gradStep)
      bytes =
          std::max(bytes, artifact.gradStepWorkspace<T, T, 3>()(
                              &params, &buffers, &step, &grads, &x, &y, &out));
  } else {
    auto y = yFor<2>(batch);
    bytes = std::max(
        artifact.trainStepWorkspace<T>()(&params, &buffers, &state, &hyper,
                                         &step, &x, &y, &out),
        artifact.evalStepWorkspace<T>()(&params, &buffers, &x, &y, &out));
    if (manifest.gradStep)
      bytes =
          std::max(bytes, artifact.gradStepWorkspace<T>()(
                              &params, &buffers, &step, &grads, &x, &y, &out));
  }
  if (manifest.gradStep && artifact.optimizerStepWorkspace<T>())
    bytes = std::max(bytes, artifact.optimizerStepWorkspace<T>()(
                                &params, &state, &hyper, &step, &grads));
  if (manifest.device == Manifest::Device::CUDA) {
    if (bytes < 0)
      throw RuntimeError("artifact '" + artifact.path() +
                         "' asked for a negative workspace");
    onDevice.workspaceBytes = bytes;
  } else {
    workspace.reserve(bytes);
  }
}

void StepRunner::mirrorOnDevice(const TrainOptions &options) {
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
  onDevice.y = device->allocate(valueTargets ? yValuesBuf.bytes()
                                             : sizeof(int32_t) * yBuf.size());
  onDevice.out = device->allocate(outBuf.bytes());
  onDevice.workspace =
      device->allocate(static_cast<size_t>(onDevice.workspaceBytes));
}

void StepRunner::uploadStepInputs(int64_t b, bool train) {
  size_t element = static_cast<size_t>(dtypeBytes(dtype()));
  // A shared batch is model 0's slice only (x has stride 0 along models).
  size_t xBytes = element * static_cast<size_t>((xShared ? 1 : m) * b * f);
  device->upload(onDevice.x, xBuf.raw(), xBytes);
  if (valueTargets)
    device->upload(onDevice.y, yValuesBuf.raw(),
                   element * static_cast<size_t>(m * b * targetWidth));
  else
    device->upload(onDevice.y, yBuf.data(),
                   sizeof(int32_t) * static_cast<size_t>(m * b));
  if (train)
    device->upload(onDevice.step, stepBuf.data(),
                   sizeof(double) * static_cast<size_t>(m));
}

void StepRunner::syncFromDevice() const {
  if (!device || !hostStale)
    return;
  device->download(paramsBuf.raw(), onDevice.params, paramsBuf.bytes());
  device->download(buffersBuf.raw(), onDevice.buffers, buffersBuf.bytes());
  device->download(stateBuf.raw(), onDevice.state, stateBuf.bytes());
  hostStale = false;
}

WorkspaceRef StepRunner::stepWorkspace() {
  if (!device)
    return workspace.descriptor();
  return makeDenseMemRef<uint8_t, 1>(
      static_cast<uint8_t *>(onDevice.workspace),
      {std::max<int64_t>(onDevice.workspaceBytes, 1)});
}

namespace {
/// `device` when there is one, else `host`, as T*.
template <typename T, typename H> T *pick(void *device, H *host) {
  return device ? static_cast<T *>(device) : reinterpret_cast<T *>(host);
}
} // namespace

/// The descriptors of the step buffers, over the device's copies where
/// the artifact runs on one, else the host's.
template <typename T> struct StepRunner::Descriptors {
  MemRef<T, 2> params, buffers, grads, out;
  MemRef<T, 3> state;
  MemRef2D hyper;
  MemRef1D step;
};

template <typename T> StepRunner::Descriptors<T> StepRunner::descriptors() {
  const DevicePointers &d = onDevice;
  T *gradsHost = gradsBuf.size() ? gradsBuf.as<T>() : nullptr;
  return {
      makeDenseMemRef<T, 2>(pick<T>(d.params, paramsBuf.as<T>()), {m, p}),
      makeDenseMemRef<T, 2>(pick<T>(d.buffers, buffersBuf.as<T>()), {m, q}),
      makeDenseMemRef<T, 2>(pick<T>(d.grads, gradsHost), {m, pt}),
      makeDenseMemRef<T, 2>(pick<T>(d.out, outBuf.as<T>()), {m, k}),
      makeDenseMemRef<T, 3>(pick<T>(d.state, stateBuf.as<T>()), {s, m, pt}),
      makeDenseMemRef<double, 2>(pick<double>(d.hyper, hyperBuf.data()),
                                 {m, h}),
      makeDenseMemRef<double, 1>(pick<double>(d.step, stepBuf.data()), {m})};
}

const uint8_t *StepRunner::idleModelsOfStep() {
  bool anyIdle = false;
  for (int64_t model = 0; model < m; ++model)
    anyIdle |= (idleModels[model] = stepBuf[model] == 0.0);
  return anyIdle && !device ? idleModels.data() : nullptr;
}

void StepRunner::reserveStepWorkspace(int64_t bytes, const char *stepName) {
  // A device's workspace was sized at the start for every step.
  if (device && bytes > onDevice.workspaceBytes)
    throw RuntimeError("artifact '" + artifact.path() +
                       "' asked for a larger workspace in " + stepName +
                       " than its train step's");
  if (!device)
    workspace.reserve(bytes);
}

template <typename T, typename X> MemRef<X, 3> StepRunner::xFor(int64_t b) {
  if constexpr (std::is_same<X, int32_t>::value)
    return tokenDescriptor(tokenBuf.data(), b);
  else
    return xDescriptor<T>(pick<T>(onDevice.x, xBuf.as<T>()), b);
}

template <int YRank> MemRef<int32_t, YRank> StepRunner::yFor(int64_t b) {
  if constexpr (YRank == 3) {
    if (valueTargets) {
      // Values [M, b, K] of the float type. The step's y descriptor has
      // the layout of every memref of rank 3 (sizes and strides count
      // elements), so it is passed typed as the ABI's int32 one.
      auto *values = reinterpret_cast<int32_t *>(
          pick<uint8_t>(onDevice.y, static_cast<uint8_t *>(yValuesBuf.raw())));
      return makeDenseMemRef<int32_t, 3>(values, {m, b, targetWidth});
    }
    return makeDenseMemRef<int32_t, 3>(pick<int32_t>(onDevice.y, yBuf.data()),
                                       {m, b, xWidth});
  } else {
    return makeDenseMemRef<int32_t, 2>(pick<int32_t>(onDevice.y, yBuf.data()),
                                       {m, b});
  }
}

template <typename T, int YRank>
void StepRunner::reserveTokenWorkspace(MemRef<int32_t, 3> &x, int64_t b,
                                       bool train) {
  // Only the descriptors' sizes are read.
  auto params = makeDenseMemRef<T, 2>(paramsBuf.as<T>(), {m, p});
  auto buffers = makeDenseMemRef<T, 2>(buffersBuf.as<T>(), {m, q});
  auto state = makeDenseMemRef<T, 3>(stateBuf.as<T>(), {s, m, pt});
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
void StepRunner::callTrainStep(int64_t b) {
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
void StepRunner::issueTrainStep(int64_t b) {
  Descriptors<T> d = descriptors<T>();
  auto x = xFor<T, X>(b);
  if constexpr (std::is_same<X, int32_t>::value)
    reserveTokenWorkspace<T, YRank>(x, b, /*train=*/true);
  auto y = yFor<YRank>(b);
  auto ws = stepWorkspace();
  // Frozen models' matmuls are skipped on the CPU (Kernels.h).
  IdleModelsGuard guard(idleModelsOfStep(), m);
  artifact.trainStep<T, X, YRank>()(&d.params, &d.buffers, &d.state, &d.hyper,
                                    &d.step, &x, &y, &d.out, &ws);
}

template <typename T, typename X, int YRank>
void StepRunner::callGradStep(int64_t b) {
  Descriptors<T> d = descriptors<T>();
  auto x = xFor<T, X>(b);
  auto y = yFor<YRank>(b);
  int64_t bytes = artifact.gradStepWorkspace<T, X, YRank>()(
      &d.params, &d.buffers, &d.step, &d.grads, &x, &y, &d.out);
  reserveStepWorkspace(bytes, "grad_step");
  auto ws = stepWorkspace();
  IdleModelsGuard guard(idleModelsOfStep(), m);
  artifact.gradStep<T, X, YRank>()(&d.params, &d.buffers, &d.step, &d.grads, &x,
                                   &y, &d.out, &ws);
}

template <typename T> void StepRunner::callOptimizerStep() {
  Descriptors<T> d = descriptors<T>();
  int64_t bytes = artifact.optimizerStepWorkspace<T>()(
      &d.params, &d.state, &d.hyper, &d.step, &d.grads);
  reserveStepWorkspace(bytes, "optimizer_step");
  auto ws = stepWorkspace();
  artifact.optimizerStep<T>()(&d.params, &d.state, &d.hyper, &d.step, &d.grads,
                              &ws);
}

template <typename T, typename X, int YRank>
void StepRunner::callEvalStep(int64_t b) {
  if (device)
    uploadStepInputs(b, /*train=*/false);
  Descriptors<T> d = descriptors<T>();
  auto x = xFor<T, X>(b);
  if constexpr (std::is_same<X, int32_t>::value)
    reserveTokenWorkspace<T, YRank>(x, b, /*train=*/false);
  auto y = yFor<YRank>(b);
  auto ws = stepWorkspace();
  artifact.evalStep<T, X, YRank>()(&d.params, &d.buffers, &x, &y, &d.out, &ws);
  if (device)
    device->download(outBuf.raw(), onDevice.out, outBuf.bytes());
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
void withStepTypes(DType dtype, bool tokens, bool nextTokens, bool valueTargets,
                   Call &&call) {
  auto forFloat = [&](auto zero) {
    using T = decltype(zero);
    if (!tokens && valueTargets)
      call(StepTypes<T, T, 3>{});
    else if (!tokens)
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

void StepRunner::trainStep(int64_t b) {
  withStepTypes(dtype(), tokens, nextTokens, valueTargets, [&](auto types) {
    using S = decltype(types);
    callTrainStep<typename S::Float, typename S::Input, S::yRank>(b);
  });
  checkKernels("train_step");
}

void StepRunner::gradStep(int64_t b) {
  grads(); // allocated, on the device too
  if (device)
    uploadStepInputs(b, /*train=*/true);
  withStepTypes(dtype(), tokens, nextTokens, valueTargets, [&](auto types) {
    using S = decltype(types);
    callGradStep<typename S::Float, typename S::Input, S::yRank>(b);
  });
  // On a device, what the caller reads and changes comes back: the
  // outputs, and unless they are summed there, the gradients and the
  // buffers (params and state did not change).
  if (device) {
    device->download(outBuf.raw(), onDevice.out, outBuf.bytes());
    if (!collectives) {
      device->download(gradsBuf.raw(), onDevice.grads, gradsBuf.bytes());
      device->download(buffersBuf.raw(), onDevice.buffers, buffersBuf.bytes());
    }
  }
  checkKernels("grad_step");
}

void StepRunner::sumOnDevice(double fraction, const std::string &what) {
  if (!device || !collectives)
    throw RuntimeError("internal error: sumOnDevice without a device's sums");
  if (fraction == 0) {
    // The gradients of a share that added nothing may be anything.
    std::vector<uint8_t> zeros(gradsBuf.bytes(), 0);
    device->upload(onDevice.grads, zeros.data(), zeros.size());
  }
  collectives->scaledSum(onDevice.grads, static_cast<size_t>(m * pt), dtype(),
                         fraction, what);
  if (q > 0) {
    collectives->broadcastFromRank0(onDevice.buffers,
                                    static_cast<size_t>(m * q), dtype(), what);
    device->download(buffersBuf.raw(), onDevice.buffers, buffersBuf.bytes());
  }
}

void StepRunner::optimizerStep() {
  if (device) {
    if (!collectives)
      device->upload(onDevice.grads, gradsBuf.raw(), gradsBuf.bytes());
    device->upload(onDevice.buffers, buffersBuf.raw(), buffersBuf.bytes());
    device->upload(onDevice.step, stepBuf.data(),
                   sizeof(double) * static_cast<size_t>(m));
  }
  if (dtype() == DType::F64)
    callOptimizerStep<double>();
  else
    callOptimizerStep<float>();
  if (device)
    hostStale = true;
  checkKernels("optimizer_step");
}

void StepRunner::evalStep(int64_t b) {
  withStepTypes(dtype(), tokens, nextTokens, valueTargets, [&](auto types) {
    using S = decltype(types);
    callEvalStep<typename S::Float, typename S::Input, S::yRank>(b);
  });
  checkKernels("eval_step");
}

} // namespace runtime
} // namespace mbt
