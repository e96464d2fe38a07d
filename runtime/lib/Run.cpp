//===- Run.cpp - train a compiled artifact, the whole job -----------------===//
#include "mbt/runtime/Run.h"

#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/FashionMnist.h"
#include "mbt/runtime/Fortunes.h"
#include "mbt/runtime/StepPlan.h"
#include "mbt/runtime/Trainer.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>

namespace mbt {
namespace runtime {

int runArtifact(const RunRequest &request, const char *tool) noexcept {
  try {
    Artifact artifact = Artifact::load(request.artifact);
    const Manifest &manifest = artifact.manifest();
    TrainOptions options = request.train;
    options.quiet = options.quiet || options.reportJson;
    // The data: token sequences for a tokens input, else float features.
    DataSplits data;
    SequenceSplits sequences;
    std::unique_ptr<Trainer> trainer;
    auto makeTrainer = [&] {
      if (manifest.data.sequences() &&
          manifest.targetKind == Manifest::TargetKind::NextTokens) {
        // A language model cuts its framed samples itself (the cut keeps
        // the true next token of a cut text as its last target).
        sequences = loadSequenceSplits(manifest.data.name, 0);
        int64_t maxLength = manifest.data.batching.maxLength;
        sequences.train = frameForNextTokens(sequences.train, maxLength);
        sequences.test = frameForNextTokens(sequences.test, maxLength);
        trainer = std::make_unique<Trainer>(artifact, sequences.train,
                                            sequences.test, options);
      } else if (manifest.data.sequences()) {
        sequences = loadSequenceSplits(manifest.data.name,
                                       manifest.data.batching.maxLength);
        trainer = std::make_unique<Trainer>(artifact, sequences.train,
                                            sequences.test, options);
      } else {
        data = loadDataSplits(manifest.data.name, request.dataDir);
        trainer =
            std::make_unique<Trainer>(artifact, data.train, data.test, options);
      }
      if (!request.stepsFile.empty())
        trainer->useStepPlan(readStepPlan(request.stepsFile));
    };
    if (request.benchSteps > 0) {
      options.quiet = true;
      makeTrainer();
      constexpr int64_t kWarmup = 5;
      trainer->runSteps(kWarmup);
      int64_t samplesBefore = trainer->samplesTrained();
      auto start = std::chrono::steady_clock::now();
      trainer->runSteps(request.benchSteps);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      double samples = double(trainer->samplesTrained() - samplesBefore);
      std::printf("models %lld  batch %.1f  steps %lld  seconds %.3f  "
                  "ms/step %.3f  samples/s %.1f  model-samples/s %.1f\n",
                  (long long)manifest.models,
                  samples / double(request.benchSteps),
                  (long long)request.benchSteps, seconds,
                  1e3 * seconds / request.benchSteps, samples / seconds,
                  samples * manifest.models / seconds);
      return 0;
    }
    makeTrainer();
    int64_t trainCount =
        manifest.data.sequences() ? sequences.train.count() : data.train.count;
    if (!options.quiet)
      std::cerr << tool << ": " << (options.resume ? "resuming " : "")
                << manifest.models << " models of '" << manifest.model << "', "
                << trainCount << " training samples, results in "
                << options.outDir << "\n";
    trainer->run();
  } catch (const std::exception &error) {
    std::cerr << tool << ": error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

} // namespace runtime
} // namespace mbt
