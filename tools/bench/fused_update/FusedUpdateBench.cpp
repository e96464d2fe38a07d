//===- FusedUpdateBench.cpp - one fused update vs per-parameter loops -----===//
//
// Times the optimizer step of an mbt artifact (its mbt_optimizer_step: one
// fused loop over every parameter of every model) against LibTorch's
// torch::optim stepping the same models the way a Python loop over models
// does: one optimizer per model, looping over that model's parameter
// tensors (the per-parameter, per-model loop), and, as the best such a loop
// can do, one optimizer per model over a single flat tensor of its
// parameters. Every run starts from the same parameters, gradients and
// per-model hyperparameters (the artifact's manifest) and takes the same
// number of steps; the bench checks that mbt and the per-parameter loop end
// at the same parameters (so the timed work is the same work) and prints
// the median time per step and the ratios against mbt. (The check needs a
// sweep without weight decay: with random gradients, a few of the 15M
// elements have grad + weight_decay * param cancel to a few ulps, where
// torch's fused multiply-add and mbt's separate multiply and add give
// different Adam steps, both correctly rounded float32.)
//
//   mbt-bench-fused-update ARTIFACT [--steps N] [--repeats R] [--threads T]
//
// The artifact's optimizer must be adam (the LibTorch peer is
// torch::optim::Adam); tools/bench/fused_update.sh builds one.
//
//===----------------------------------------------------------------------===//
#include "mbt/common/Abi.h"
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/Workspace.h"

#include <ATen/Parallel.h>
#include <torch/optim/adam.h>
#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;

namespace {

struct Options {
  std::string artifact;
  int steps = 20;
  int repeats = 5;
  int threads = 1;
};

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> int {
      if (i + 1 >= argc) {
        std::cerr << "error: " << a << " needs a value\n";
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (a == "--steps")
      o.steps = value();
    else if (a == "--repeats")
      o.repeats = value();
    else if (a == "--threads")
      o.threads = value();
    else if (a == "--help" || a == "-h") {
      std::cout << "usage: mbt-bench-fused-update ARTIFACT [--steps N] "
                   "[--repeats R] [--threads T]\n";
      std::exit(0);
    } else if (o.artifact.empty())
      o.artifact = a;
    else {
      std::cerr << "error: unexpected argument '" << a << "'\n";
      std::exit(2);
    }
  }
  if (o.artifact.empty() || o.steps < 1 || o.repeats < 1 || o.threads < 1) {
    std::cerr << "usage: mbt-bench-fused-update ARTIFACT [--steps N] "
                 "[--repeats R] [--threads T]\n";
    std::exit(2);
  }
  return o;
}

/// Median over `repeats` of the seconds per step of `steps` calls of
/// `step`, after `reset` (untimed) before each repeat.
double medianSecondsPerStep(int repeats, int steps,
                            const std::function<void()> &reset,
                            const std::function<void(int)> &step) {
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    reset();
    auto start = std::chrono::steady_clock::now();
    for (int s = 1; s <= steps; ++s)
      step(s);
    std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    times.push_back(took.count() / steps);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char **argv) try {
  Options opts = parseArgs(argc, argv);
  at::set_num_threads(opts.threads);
  Artifact artifact = Artifact::load(opts.artifact);
  const Manifest &man = artifact.manifest();
  OptimizerStepFn update = artifact.optimizerStep();
  if (!update)
    throw RuntimeError("the artifact has no mbt_optimizer_step; rebuild it "
                       "with this mbtc");
  if (man.optimizerRule != "adam")
    throw RuntimeError("the bench compares with torch::optim::Adam, but the "
                       "artifact's optimizer is '" +
                       man.optimizerRule + "'");
  if (man.trainableCount != man.paramCount)
    throw RuntimeError("the bench updates every parameter, as its "
                       "torch::optim::Adam does; compile the spec without "
                       "freeze");
  int64_t M = man.models, P = man.paramCount;
  int64_t S = static_cast<int64_t>(man.slots.size());
  int64_t H = static_cast<int64_t>(man.hyperNames.size());
  auto hyper = [&](int64_t m, const std::string &name) {
    for (int64_t h = 0; h < H; ++h)
      if (man.hyperNames[h] == name)
        return man.hyperValues[m][h];
    throw RuntimeError("no hyperparameter " + name);
  };

  // The same start for everyone: parameters ~ N(0, 0.05), gradients
  // ~ N(0, 0.01), zero state.
  std::mt19937 rng(2026);
  std::normal_distribution<float> paramDist(0, 0.05f), gradDist(0, 0.01f);
  std::vector<float> params0(M * P), grads(M * P);
  for (float &v : params0)
    v = paramDist(rng);
  for (float &v : grads)
    v = gradDist(rng);
  std::vector<double> hyperTable(M * H);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t h = 0; h < H; ++h)
      hyperTable[m * H + h] = man.hyperValues[m][h];

  // mbt: one call per step for every parameter of every model.
  std::vector<float> params(M * P), state(S * M * P);
  std::vector<double> steps(M);
  Workspace workspace;
  {
    auto p = makeDenseMemRef<float, 2>(params.data(), {M, P});
    auto st = makeDenseMemRef<float, 3>(state.data(), {S, M, P});
    auto hy = makeDenseMemRef<double, 2>(hyperTable.data(), {M, H});
    auto sp = makeDenseMemRef<double, 1>(steps.data(), {M});
    auto g = makeDenseMemRef<float, 2>(grads.data(), {M, P});
    workspace.reserve(artifact.optimizerStepWorkspace()(&p, &st, &hy, &sp, &g));
  }
  double mbtSeconds = medianSecondsPerStep(
      opts.repeats, opts.steps,
      [&] {
        params = params0;
        std::fill(state.begin(), state.end(), 0.0f);
      },
      [&](int s) {
        std::fill(steps.begin(), steps.end(), double(s));
        auto p = makeDenseMemRef<float, 2>(params.data(), {M, P});
        auto st = makeDenseMemRef<float, 3>(state.data(), {S, M, P});
        auto hy = makeDenseMemRef<double, 2>(hyperTable.data(), {M, H});
        auto sp = makeDenseMemRef<double, 1>(steps.data(), {M});
        auto g = makeDenseMemRef<float, 2>(grads.data(), {M, P});
        auto ws = workspace.descriptor();
        update(&p, &st, &hy, &sp, &g, &ws);
      });

  // LibTorch: one Adam per model, as a loop over models writes it.
  auto adamFor = [&](int64_t m, std::vector<torch::Tensor> tensors) {
    return std::make_unique<torch::optim::Adam>(
        std::move(tensors), torch::optim::AdamOptions(hyper(m, "lr"))
                                .betas({hyper(m, "beta1"), hyper(m, "beta2")})
                                .eps(hyper(m, "eps"))
                                .weight_decay(hyper(m, "weight_decay")));
  };
  auto torchRun = [&](bool perParameter, std::vector<torch::Tensor> &all) {
    std::vector<std::unique_ptr<torch::optim::Adam>> optimizers;
    return medianSecondsPerStep(
        opts.repeats, opts.steps,
        [&] {
          optimizers.clear();
          all.clear();
          for (int64_t m = 0; m < M; ++m) {
            std::vector<torch::Tensor> tensors;
            auto add = [&](int64_t offset, int64_t size,
                           torch::IntArrayRef shape) {
              torch::Tensor t =
                  torch::from_blob(params0.data() + m * P + offset, {size})
                      .reshape(shape)
                      .clone();
              t.mutable_grad() =
                  torch::from_blob(grads.data() + m * P + offset, {size})
                      .reshape(shape)
                      .clone();
              tensors.push_back(t);
            };
            if (perParameter)
              for (const ParamSpec &param : man.params)
                add(param.offset, param.size, param.shape);
            else
              add(0, P, {P});
            all.insert(all.end(), tensors.begin(), tensors.end());
            optimizers.push_back(adamFor(m, std::move(tensors)));
          }
        },
        [&](int) {
          for (auto &optimizer : optimizers)
            optimizer->step();
        });
  };
  std::vector<torch::Tensor> perParamTensors, flatTensors;
  double perParamSeconds = torchRun(true, perParamTensors);
  double flatSeconds = torchRun(false, flatTensors);

  // The same work: after the last repeat, mbt's parameters equal the
  // per-parameter loop's (both took `steps` steps from the same start).
  double diff = 0, scale = 0;
  for (int64_t m = 0; m < M; ++m)
    for (size_t k = 0; k < man.params.size(); ++k) {
      torch::Tensor t = perParamTensors[m * man.params.size() + k].flatten();
      const float *ref = t.data_ptr<float>();
      const float *mine = params.data() + m * P + man.params[k].offset;
      for (int64_t i = 0; i < man.params[k].size; ++i) {
        diff = std::max(diff, double(std::fabs(mine[i] - ref[i])));
        scale = std::max(scale, double(std::fabs(ref[i])));
      }
    }
  double relative = diff / scale;

  double bytes = double(M) * P * sizeof(float) * (2 + 2 * S + 1);
  std::printf("models %lld, parameters per model %lld (%zu tensors), adam, "
              "%d steps x %d repeats, %d thread(s)\n",
              (long long)M, (long long)P, man.params.size(), opts.steps,
              opts.repeats, opts.threads);
  std::printf("mbt vs per-parameter loop after the last repeat: max "
              "relative difference %.2e\n",
              relative);
  std::printf("%-44s %12s %10s %12s\n", "optimizer step", "ms/step", "vs mbt",
              "GB/s moved");
  auto row = [&](const char *name, double seconds) {
    std::printf("%-44s %12.3f %9.2fx %12.2f\n", name, seconds * 1e3,
                seconds / mbtSeconds, bytes / seconds / 1e9);
  };
  row("mbt fused update (one loop, all models)", mbtSeconds);
  row("LibTorch Adam per model, per parameter", perParamSeconds);
  row("LibTorch Adam per model, one flat tensor", flatSeconds);
  std::printf("(GB/s: the bytes a single pass must move, params + grads + "
              "state read, params + state written)\n");
  if (!(relative <= 1e-5)) {
    std::fprintf(stderr, "error: mbt and LibTorch disagree (%.2e)\n", relative);
    return 1;
  }
  return 0;
} catch (const std::exception &e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
