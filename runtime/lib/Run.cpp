//===- Run.cpp - train a compiled artifact, the whole job -----------------===//
#include "mbt/runtime/Run.h"

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/FashionMnist.h"
#include "mbt/runtime/Trainer.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>

namespace mbt {
namespace runtime {

int runArtifact(const RunRequest &request, const char *tool) noexcept {
  try {
    Artifact artifact = Artifact::load(request.artifact);
    const Manifest &manifest = artifact.manifest();
    DataSplits data = loadDataSplits(manifest.data.name, request.dataDir);
    TrainOptions options = request.train;
    options.quiet = options.quiet || options.reportJson;
    if (request.benchSteps > 0) {
      options.quiet = true;
      Trainer trainer(artifact, data.train, data.test, options);
      constexpr int64_t kWarmup = 5;
      trainer.runSteps(kWarmup);
      auto start = std::chrono::steady_clock::now();
      trainer.runSteps(request.benchSteps);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      double samples = double(request.benchSteps) * manifest.data.batch;
      std::printf("models %lld  batch %lld  steps %lld  seconds %.3f  "
                  "ms/step %.3f  samples/s %.1f  model-samples/s %.1f\n",
                  (long long)manifest.models, (long long)manifest.data.batch,
                  (long long)request.benchSteps, seconds,
                  1e3 * seconds / request.benchSteps, samples / seconds,
                  samples * manifest.models / seconds);
      return 0;
    }
    Trainer trainer(artifact, data.train, data.test, options);
    if (!options.quiet)
      std::cerr << tool << ": " << (options.resume ? "resuming " : "")
                << manifest.models << " models of '" << manifest.model
                << "', " << data.train.count << " training samples, results in "
                << options.outDir << "\n";
    trainer.run();
  } catch (const std::exception &error) {
    std::cerr << tool << ": error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

} // namespace runtime
} // namespace mbt
