//===- mbt-gpu-check.cpp - a CUDA artifact against its CPU twin -----------===//
//
//   mbt-gpu-check CPU.so CUDA.so [--steps N] [--bench-steps N] [--tolerance T]
//                 [--alone ALONE.so]
//
// CPU.so and CUDA.so are the same f32 spec compiled by `mbtc` and
// `mbtc --target=cuda` (on any host; this tool needs no MLIR). Both start
// from the same initial parameters (the manifest's initializers) and train
// N steps (default 20) on the same synthetic batches (features uniform in
// [0, 1), labels uniform over the classes, drawn from a fixed seed, shared
// by every model as the trainer shares a batch); then every model's
// parameters are compared: ||gpu - cpu|| / ||cpu|| must stay within the
// tolerance (default 1e-4: the GPU sums in another order). Compare specs
// whose step is a smooth function of the parameters (tanh, not relu): a
// ReLU input within rounding of zero is active on one device and not on
// the other, and that discrete flip moves a model by far more than the
// rounding. With --updates the change of each model's parameters is
// compared instead (for an SGD step, its relative error is the gradient's).
// --steps 0 compares nothing. With
// --bench-steps it then times that many GPU steps (after 5 warm-up steps)
// and prints ms per step and model-samples/s. With --alone (a CUDA
// artifact of the same spec with models = 1) it also trains models 0, 1,
// N/2 and N-1 alone on the GPU, each from its own row of initial
// parameters and hyperparameters, and compares with that model's row of
// the batch (within 1e-5: cuBLAS picks its GEMM kernel by the batch count,
// so one model alone sums in another order than in the batch). Exit
// status: 0 when every
// comparison holds, 1 when one does not or on any error, 2 on bad usage.
// The options are CLI11's (mbt-gpu-check --help lists them).
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/Init.h"
#include "mbt/runtime/Kernels.h"
#include "mbt/runtime/Workspace.h"
#include "mbt/runtime/cuda/CudaContext.h"
#include "mbt/runtime/cuda/CudaKernels.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;

namespace {

struct Arguments {
  std::string cpuArtifact, cudaArtifact, aloneArtifact;
  int64_t steps = 20, benchSteps = 0;
  bool compareUpdates = false;
  double tolerance = 1e-4;
};

/// --tolerance: a positive number.
const CLI::Validator kPositive(
    [](std::string &value) -> std::string {
      char *end = nullptr;
      double x = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !(x > 0))
        return "expects a positive number, got '" + value + "'";
      return "";
    },
    "");

/// Declares mbt-gpu-check's options on `app`, each writing its field of
/// `args`.
void addOptions(CLI::App &app, Arguments &args) {
  app.add_option("cpu", args.cpuArtifact, "The spec compiled by mbtc")
      ->required()
      ->type_name("CPU.so");
  app.add_option("cuda", args.cudaArtifact,
                 "The same spec compiled by mbtc --target=cuda")
      ->required()
      ->type_name("CUDA.so");
  tools::addCount(app, "--steps", args.steps,
                  "Train N steps on both and compare (default 20; 0: compare "
                  "nothing, only time with --bench-steps)");
  tools::addCount(app, "--bench-steps", args.benchSteps,
                  "Then time N GPU steps (after 5 warm-up steps)");
  app.add_option("--tolerance", args.tolerance,
                 "Largest ||gpu - cpu|| / ||cpu|| of a model's parameters "
                 "(default 1e-4)")
      ->check(kPositive)
      ->type_name("T");
  app.add_flag("--updates", args.compareUpdates,
               "Compare what training changed, ||dgpu - dcpu|| / ||dcpu|| with "
               "d = params - initial params, instead of the parameters");
  app.add_option("--alone", args.aloneArtifact,
                 "The CUDA spec with models = 1: also train models 0, 1, "
                 "N/2 and N-1 alone and compare with the batch")
      ->type_name("ALONE.so");
}

/// The host buffers of one model batch, and their descriptors.
struct HostBatch {
  int64_t m, p, pt, q, s, h, k, b, f;
  std::vector<float> params, buffers, state, x, out;
  std::vector<double> hyper, step;
  std::vector<int32_t> y;

  explicit HostBatch(const Manifest &man)
      : m(man.models), p(man.paramCount), pt(man.trainableCount),
        q(man.bufferCount), s(man.numSlots()), h(man.numHyper()),
        k(man.numColumns()), b(man.data.batch), f(man.features), params(m * p),
        buffers(m * q), state(s * m * pt, 0.0f), x(b * f), out(m * k),
        hyper(m * h), step(m), y(m * b) {
    initAllParams(man, params.data());
    for (int64_t i = 0; i < m; ++i)
      initModelBuffers(man, man.seeds[i], buffers.data() + i * q);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < h; ++j)
        hyper[i * h + j] = man.hyperValues[i][j];
  }

  /// Batch `index`: the same samples for every model.
  void drawBatch(int64_t index, int64_t classes) {
    std::mt19937 rng(static_cast<uint32_t>(1000 + index));
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (float &v : x)
      v = unit(rng);
    for (int64_t j = 0; j < b; ++j)
      y[j] = static_cast<int32_t>(rng() % classes);
    for (int64_t i = 1; i < m; ++i)
      std::memcpy(&y[i * b], &y[0], sizeof(int32_t) * b);
  }
};

/// Descriptors of the train step's arguments over buffers at these
/// addresses (host or device), x shared by every model (stride 0).
struct StepArgs {
  MemRef2F params;
  MemRef2F buffers;
  MemRef3F state;
  MemRef2D hyper;
  MemRef1D step;
  MemRef3F x;
  MemRef2I y;
  MemRef2F out;

  StepArgs(const HostBatch &hb, float *params, float *buffers, float *state,
           double *hyper, double *step, float *x, int32_t *y, float *out)
      : params(makeDenseMemRef<float, 2>(params, {hb.m, hb.p})),
        buffers(makeDenseMemRef<float, 2>(buffers, {hb.m, hb.q})),
        state(makeDenseMemRef<float, 3>(state, {hb.s, hb.m, hb.pt})),
        hyper(makeDenseMemRef<double, 2>(hyper, {hb.m, hb.h})),
        step(makeDenseMemRef<double, 1>(step, {hb.m})),
        x(makeDenseMemRef<float, 3>(x, {hb.m, hb.b, hb.f})),
        y(makeDenseMemRef<int32_t, 2>(y, {hb.m, hb.b})),
        out(makeDenseMemRef<float, 2>(out, {hb.m, hb.k})) {
    this->x.strides[0] = 0;
  }

  int64_t workspaceBytes(const Artifact &artifact) {
    return artifact.trainStepWorkspace()(&params, &buffers, &state, &hyper,
                                         &step, &x, &y, &out);
  }
  void train(const Artifact &artifact, WorkspaceRef *workspace) {
    artifact.trainStep()(&params, &buffers, &state, &hyper, &step, &x, &y, &out,
                         workspace);
  }
};

/// The device copy of a HostBatch.
struct DeviceBatch {
  cuda::DeviceBuffer params, buffers, state, hyper, step, x, y, out, workspace;

  explicit DeviceBatch(const HostBatch &hb)
      : params(sizeof(float) * hb.params.size()),
        buffers(sizeof(float) * std::max<size_t>(hb.buffers.size(), 1)),
        state(sizeof(float) * hb.state.size()),
        hyper(sizeof(double) * hb.hyper.size()),
        step(sizeof(double) * hb.step.size()), x(sizeof(float) * hb.x.size()),
        y(sizeof(int32_t) * hb.y.size()), out(sizeof(float) * hb.out.size()) {
    params.upload(hb.params.data(), params.size());
    buffers.upload(hb.buffers.data(), sizeof(float) * hb.buffers.size());
    state.upload(hb.state.data(), state.size());
    hyper.upload(hb.hyper.data(), hyper.size());
  }

  /// Sizes the device workspace for `artifact`'s train step; returns its
  /// descriptor.
  WorkspaceRef reserveWorkspace(StepArgs &stepArgs, const Artifact &artifact) {
    workspace = cuda::DeviceBuffer(static_cast<size_t>(
        std::max<int64_t>(stepArgs.workspaceBytes(artifact), 1)));
    return makeDenseMemRef<uint8_t, 1>(
        static_cast<uint8_t *>(workspace.data()),
        {static_cast<int64_t>(workspace.size())});
  }

  /// Uploads `hb`'s batch and step numbers, then runs one train step.
  void train(const HostBatch &hb, StepArgs &stepArgs, const Artifact &artifact,
             WorkspaceRef *ws) {
    x.upload(hb.x.data(), x.size());
    y.upload(hb.y.data(), y.size());
    step.upload(hb.step.data(), step.size());
    stepArgs.train(artifact, ws);
  }

  StepArgs args(const HostBatch &hb) {
    return StepArgs(
        hb, static_cast<float *>(params.data()),
        static_cast<float *>(buffers.data()),
        static_cast<float *>(state.data()), static_cast<double *>(hyper.data()),
        static_cast<double *>(step.data()), static_cast<float *>(x.data()),
        static_cast<int32_t *>(y.data()), static_cast<float *>(out.data()));
  }
};

/// ||a - b|| / ||b|| over `count` values.
double relativeDifference(const float *a, const float *b, int64_t count) {
  double diff = 0, norm = 0;
  for (int64_t j = 0; j < count; ++j) {
    double x = a[j], y = b[j];
    diff += (x - y) * (x - y);
    norm += y * y;
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

void checkCuda(const char *when) {
  cuda::synchronize();
  std::string error = takeKernelError();
  if (!error.empty())
    throw RuntimeError(std::string(when) + ": " + error);
}

/// How far a model trained alone on the GPU may end from its row of the
/// batch, relatively: the two differ only in summation order (cuBLAS
/// chooses its kernel by the batch count), whose f32 error stayed below
/// 1.1e-6 after 10 Adam steps on the H200 (docs/benchmarks.md).
constexpr double kAloneTolerance = 1e-5;

/// Trains models of the batch alone with the one-model artifact, from their
/// rows of the batch's initial parameters and hyperparameters, on the same
/// batches, and compares with their rows of `batchParams` (after training).
bool checkAlone(const Arguments &args, const Manifest &batchManifest,
                const std::vector<float> &batchParams, int64_t models) {
  Artifact alone = Artifact::load(args.aloneArtifact);
  const Manifest &man = alone.manifest();
  if (man.models != 1 || man.paramCount != batchManifest.paramCount ||
      man.numSlots() != batchManifest.numSlots() ||
      man.numHyper() != batchManifest.numHyper())
    throw RuntimeError("--alone wants the same spec compiled with models = 1");
  HostBatch initial(batchManifest);
  bool agree = true;
  std::vector<int64_t> picks{0, 1, models / 2, models - 1};
  std::printf("%-6s %14s %14s   (alone on the GPU against its row of the "
              "batch)\n",
              "model", "rel. diff", "verdict");
  for (size_t n = 0; n < picks.size(); ++n) {
    int64_t i = picks[n];
    if (i >= models || (n > 0 && i == picks[n - 1]))
      continue;
    HostBatch one(man);
    std::copy_n(&initial.params[i * one.p], one.p, one.params.begin());
    std::copy_n(&initial.hyper[i * one.h], one.h, one.hyper.begin());
    DeviceBatch dev(one);
    StepArgs stepArgs = dev.args(one);
    WorkspaceRef ws = dev.reserveWorkspace(stepArgs, alone);
    for (int64_t t = 1; t <= args.steps; ++t) {
      one.drawBatch(t, man.classes);
      std::fill(one.step.begin(), one.step.end(), double(t));
      dev.train(one, stepArgs, alone, &ws);
      checkCuda(("alone step " + std::to_string(t)).c_str());
    }
    dev.params.download(one.params.data(), dev.params.size());
    double rel =
        relativeDifference(&batchParams[i * one.p], one.params.data(), one.p);
    bool ok = rel <= kAloneTolerance;
    agree = agree && ok;
    std::printf("%-6lld %14.3e %14s\n", static_cast<long long>(i), rel,
                ok ? "ok" : "DIFFERS");
  }
  std::printf("batch against alone: %s (tolerance %.1e)\n",
              agree ? "every model matches" : "A MODEL DIFFERS",
              kAloneTolerance);
  return agree;
}

/// Compares every model's parameters (or, with --updates, their change
/// from the initial ones) after training on the GPU (`device`) with the
/// CPU's (`host`) and prints the first models, the last and every
/// one beyond the tolerance. True when all are within it.
bool compareModels(const Arguments &args, const Manifest &man,
                   const HostBatch &host, const HostBatch &device) {
  std::vector<float> cpu = host.params, gpu = device.params;
  if (args.compareUpdates) {
    HostBatch initial(man);
    for (size_t j = 0; j < cpu.size(); ++j) {
      cpu[j] -= initial.params[j];
      gpu[j] -= initial.params[j];
    }
  }
  bool agree = true;
  std::printf("%-6s %14s %14s\n", "model",
              args.compareUpdates ? "rel. diff of d" : "rel. diff", "verdict");
  for (int64_t i = 0; i < host.m; ++i) {
    double rel = relativeDifference(&gpu[i * host.p], &cpu[i * host.p], host.p);
    bool ok = rel <= args.tolerance;
    agree = agree && ok;
    if (!ok || i < 4 || i == host.m - 1)
      std::printf("%-6lld %14.3e %14s\n", static_cast<long long>(i), rel,
                  ok ? "ok" : "DIFFERS");
  }
  std::printf(
      "%lld models, %lld steps: %s (tolerance %.1e)\n",
      static_cast<long long>(host.m), static_cast<long long>(args.steps),
      agree ? "GPU matches CPU" : "GPU DIFFERS FROM CPU", args.tolerance);
  return agree;
}

/// The two artifacts must come from one spec: their manifests may differ
/// only in the device each was compiled for.
void checkSameSpec(const Artifact &cpu, const Artifact &gpu) {
  if (cpu.manifest().device != Manifest::Device::CPU)
    throw RuntimeError("the first artifact must be compiled for the CPU "
                       "(without --target=cuda)");
  if (gpu.manifest().device != Manifest::Device::CUDA)
    throw RuntimeError("the second artifact must be compiled with "
                       "--target=cuda");
  nlohmann::json cpuSpec = nlohmann::json::parse(cpu.manifestJson());
  nlohmann::json gpuSpec = nlohmann::json::parse(gpu.manifestJson());
  cpuSpec.erase("device");
  gpuSpec.erase("device");
  if (cpuSpec != gpuSpec)
    throw RuntimeError("the two artifacts have different manifests: compile "
                       "the same spec with and without --target=cuda");
}

int run(const Arguments &args) {
  if (!cuda::deviceAvailable())
    throw RuntimeError("no CUDA device (or no driver) on this host");
  Artifact cpu = Artifact::load(args.cpuArtifact);
  Artifact gpu = Artifact::load(args.cudaArtifact);
  const Manifest &man = cpu.manifest();
  checkSameSpec(cpu, gpu);
  if (man.dtype != DType::F32)
    throw RuntimeError("mbt-gpu-check compares f32 models");

  HostBatch host(man), device(man);
  DeviceBatch dev(device);
  StepArgs cpuArgs(host, host.params.data(), host.buffers.data(),
                   host.state.data(), host.hyper.data(), host.step.data(),
                   host.x.data(), host.y.data(), host.out.data());
  StepArgs gpuArgs = dev.args(device);
  Workspace cpuWorkspace;
  cpuWorkspace.reserve(cpuArgs.workspaceBytes(cpu));
  WorkspaceRef gpuWorkspace = dev.reserveWorkspace(gpuArgs, gpu);

  for (int64_t t = 1; t <= args.steps; ++t) {
    host.drawBatch(t, man.classes);
    std::fill(host.step.begin(), host.step.end(), double(t));
    WorkspaceRef cpuWs = cpuWorkspace.descriptor();
    cpuArgs.train(cpu, &cpuWs);
    std::string kernelError = takeKernelError();
    if (!kernelError.empty())
      throw RuntimeError("CPU step " + std::to_string(t) + ": " + kernelError);

    dev.train(host, gpuArgs, gpu, &gpuWorkspace);
    checkCuda(("GPU step " + std::to_string(t)).c_str());
  }
  dev.params.download(device.params.data(), dev.params.size());

  bool agree = args.steps == 0 || compareModels(args, man, host, device);
  if (args.steps > 0 && !args.aloneArtifact.empty() &&
      !checkAlone(args, man, device.params, host.m))
    agree = false;

  if (args.benchSteps > 0) {
    for (int t = 0; t < 5; ++t)
      gpuArgs.train(gpu, &gpuWorkspace);
    checkCuda("GPU warm-up");
    auto start = std::chrono::steady_clock::now();
    for (int64_t t = 0; t < args.benchSteps; ++t)
      gpuArgs.train(gpu, &gpuWorkspace);
    checkCuda("GPU bench");
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::printf("gpu models %lld batch %lld steps %lld ms/step %.4f "
                "model-samples/s %.1f\n",
                static_cast<long long>(host.m), static_cast<long long>(host.b),
                static_cast<long long>(args.benchSteps),
                1e3 * seconds / args.benchSteps,
                double(host.m * host.b * args.benchSteps) / seconds);
  }
  return agree ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  // One line at a time, also into a pipe: what was printed before a crash
  // stays.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Arguments args;
  CLI::App app("Trains a CUDA artifact and its CPU twin from the same start "
               "and compares them",
               "mbt-gpu-check");
  addOptions(app, args);
  if (std::optional<int> status =
          tools::parseCommandLine(app, argc, argv, "mbt-gpu-check"))
    return *status;
  try {
    return run(args);
  } catch (const RuntimeError &error) {
    std::cerr << "mbt-gpu-check: error: " << error.what() << "\n";
    return 1;
  }
}
