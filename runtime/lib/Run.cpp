//===- Run.cpp - train a compiled artifact, the whole job -----------------===//
#include "mbt/runtime/Run.h"

#include "mbt/common/ModelSlices.h"
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Checkpoint.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/Fortunes.h"
#include "mbt/runtime/StepPlan.h"
#include "mbt/runtime/Trainer.h"
#include "mbt/runtime/data/DataSources.h"
#include "mbt/runtime/distributed/RankGroup.h"
#include "mbt/runtime/distributed/SweepRanks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace mbt {
namespace runtime {

namespace {
/// One line about a split: "train: train.csv, 60000 samples of 784
/// features, 10 classes (a, b, ...)".
void describeSplit(const char *split, const Dataset &data) {
  std::string target = data.regression()
                           ? fmt::format("{} targets", data.targetWidth)
                           : fmt::format("{} classes", data.numClasses);
  if (!data.classNames.empty()) {
    size_t shown = std::min<size_t>(data.classNames.size(), 8);
    std::vector<std::string> names(data.classNames.begin(),
                                   data.classNames.begin() + shown);
    target += fmt::format(" ({}{})", fmt::join(names, ", "),
                          shown < data.classNames.size() ? ", ..." : "");
  }
  fmt::print("{}: {}, {} samples of {} features, {}\n", split, data.name,
             data.count, data.numFeatures, target);
}

/// The class names of the user's own data (CSV class names, image
/// folders) as DIR/classes.json, ["name of class 0", ...]: the results'
/// class indices mean nothing without them.
void writeClassNames(const Dataset &train, const std::string &outDir) {
  if (train.classNames.empty() || outDir.empty())
    return;
  createDirectories(outDir);
  writeFileAtomically((std::filesystem::path(outDir) / "classes.json").string(),
                      nlohmann::json(train.classNames).dump(2) + "\n");
}

/// --check-data: loads the splits of fixed-size samples and reports them.
void checkData(const Manifest &manifest, const RunRequest &request) {
  if (manifest.data.sequences())
    throw RuntimeError("--check-data reads data sets of fixed-size samples; "
                       "use mbt-data stats for token sequences");
  auto start = std::chrono::steady_clock::now();
  DataSplits data = loadDataSource(manifest, request.dataDir);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  describeSplit("train", data.train);
  describeSplit("test", data.test);
  fmt::print("loaded in {:.3f} s\n", seconds);
}

/// The number of processes the run in `dir` checkpointed on (its files
/// checkpoint.rank<r>-of-<K>.mbtrun; 1: checkpoint.mbtrun), 0 if none.
int64_t checkpointedRanks(const std::string &dir) {
  std::error_code error;
  if (std::filesystem::exists(dir + "/" + kCheckpointFile, error))
    return 1;
  for (const auto &entry : std::filesystem::directory_iterator(dir, error))
    if (int64_t ranks = ranksOfCheckpointFile(entry.path().filename().string()))
      return ranks;
  return 0;
}

/// A resume on another number of processes than the run had is an error
/// that says how many it had.
void checkResumeRanks(const TrainOptions &options,
                      const LaunchEnvironment &launch) {
  if (!options.resume)
    return;
  int64_t had = checkpointedRanks(options.outDir);
  if (had == 0 || had == launch.worldSize)
    return;
  throw RuntimeError(fmt::format(
      "the run in '{}' was checkpointed on {} process{}, not {}: resume it "
      "on {} (mbtc train --resume {} --nproc {}, or torchrun "
      "--nproc-per-node {})",
      options.outDir, had, had > 1 ? "es" : "", launch.worldSize, had,
      options.outDir, had, had));
}

/// Under torchrun: the artifact of this rank's models, which mbtc --ranks
/// wrote beside the whole sweep's.
std::string rankArtifact(const RunRequest &request,
                         const LaunchEnvironment &launch) {
  if (request.benchSteps > 0 || request.checkData)
    throw RuntimeError("--bench-steps and --check-data run in one process, "
                       "not under torchrun");
  std::string path =
      rankArtifactPath(request.artifact, launch.rank, launch.worldSize);
  if (!std::filesystem::exists(path))
    throw RuntimeError(fmt::format(
        "rank {} of {} trains its share of the models with '{}', which does "
        "not exist: compile the spec with mbtc --ranks {} -o {} (or, to "
        "spread each step's samples instead, compile it with mbtc "
        "--distribute=data and run with --distribute=data)",
        launch.rank, launch.worldSize, path, launch.worldSize,
        request.artifact));
  return path;
}

/// The places of this rank and the others: its slice of the models (its
/// own artifact beside the whole sweep's), or every model on a share of
/// the data (the sweep's artifact itself).
std::shared_ptr<SweepRanks> joinSweep(const TrainOptions &options,
                                      const LaunchEnvironment &launch,
                                      const Artifact &sweep,
                                      const Artifact &mine) {
  if (options.rankTimeout < 1)
    throw RuntimeError("--rank-timeout must be at least 1 second");
  std::shared_ptr<RankGroup> group =
      joinRankGroup(launch, std::chrono::seconds(options.rankTimeout));
  if (options.distribute == TrainOptions::Distribute::Data)
    return std::make_shared<SweepRanks>(group, sweep.manifest(),
                                        SweepRanks::DataAcrossRanks{});
  return std::make_shared<SweepRanks>(group, sweep.manifest(), mine.manifest());
}
} // namespace

int runArtifact(const RunRequest &request, const char *tool) noexcept {
  try {
    LaunchEnvironment launch = readLaunchEnvironment();
    checkResumeRanks(request.train, launch);
    // Across ranks of models: the whole sweep's artifact (its manifest
    // names every model in the results) and this rank's.
    bool modelSlices =
        launch.distributed() &&
        request.train.distribute == TrainOptions::Distribute::Models;
    std::optional<Artifact> sweepArtifact;
    if (modelSlices)
      sweepArtifact.emplace(Artifact::load(request.artifact));
    Artifact artifact = Artifact::load(
        modelSlices ? rankArtifact(request, launch) : request.artifact);
    const Manifest &manifest = artifact.manifest();
    TrainOptions options = request.train;
    options.quiet = options.quiet || options.reportJson;
    if (launch.distributed())
      options.ranks = joinSweep(
          options, launch, sweepArtifact ? *sweepArtifact : artifact, artifact);
    bool leader = !options.ranks || options.ranks->leader();
    if (options.resume && !options.initFile.empty())
      throw RuntimeError("--init starts the models from a file and --resume "
                         "continues them from the run's checkpoint: give one "
                         "of them");
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
        data = loadDataSource(manifest, request.dataDir);
        trainer =
            std::make_unique<Trainer>(artifact, data.train, data.test, options);
      }
      if (!request.stepsFile.empty())
        trainer->useStepPlan(readStepPlan(request.stepsFile));
    };
    if (request.checkData) {
      checkData(manifest, request);
      return 0;
    }
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
      if (leader)
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
    writeClassNames(data.train, options.outDir);
    int64_t trainCount =
        manifest.data.sequences() ? sequences.train.count() : data.train.count;
    if (!options.quiet && leader) {
      const Manifest &sweep =
          sweepArtifact ? sweepArtifact->manifest() : manifest;
      std::cerr << tool << ": " << (options.resume ? "resuming " : "")
                << sweep.models << " models of '" << sweep.model << "'"
                << (launch.distributed()
                        ? fmt::format(" on {} ranks ({} across them)",
                                      launch.worldSize,
                                      modelSlices ? "models" : "data")
                        : std::string())
                << ", " << trainCount << " training samples, results in "
                << options.outDir << "\n";
    }
    auto start = std::chrono::steady_clock::now();
    trainer->run();
    if (options.ranks && leader && !options.quiet) {
      const RankGroup &group = *options.ranks->rankGroup();
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      std::cerr << fmt::format(
          "{}: rank 0 spent {:.3f} s of {:.2f} s ({:.1f}%) in {} "
          "collectives with the other {} ranks\n",
          tool, group.collectiveSeconds(), seconds,
          100.0 * group.collectiveSeconds() / seconds, group.collectives(),
          group.size() - 1);
    }
  } catch (const std::exception &error) {
    std::cerr << tool << ": error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

} // namespace runtime
} // namespace mbt
