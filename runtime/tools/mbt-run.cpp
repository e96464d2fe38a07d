//===- mbt-run.cpp - Train with an already-compiled artifact --------------===//
//
//   mbt-run ARTIFACT.so [--out DIR] [--epochs N] [--data-dir D] [--quiet]
//           [--init FILE] [--checkpoint-every N] [--resume] [--steps FILE] ...
//
// The options are CLI11's (mbt-run --help lists them).
//
// Runs a model batch that mbtc compiled elsewhere: this is how a host without
// MLIR (a GPU box with only a C++ toolchain) trains artifacts. Exit status 0
// on success, 1 on any error (message on stderr), 2 on bad usage.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"

#include "mbt/runtime/BlasKernels.h"
#include "mbt/runtime/Run.h"
#include "mbt/runtime/TrainFlags.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <optional>
#include <string>

using namespace mbt::runtime;

namespace {

/// Declares mbt-run's options on `app`, each writing its field of
/// `request`.
void addOptions(CLI::App &app, RunRequest &request) {
  TrainOptions &train = request.train;
  app.add_option("artifact", request.artifact, "The compiled sweep (mbtc -o)")
      ->required()
      ->type_name("ARTIFACT.so");
  app.add_option("--out", train.outDir,
                 "Results directory (default: DIR_OF_ARTIFACT/results)")
      ->type_name("DIR");
  app.add_option("--data-dir", request.dataDir,
                 "Data directory (default: $MBT_DATA_DIR or "
                 "/usr/share/datasets/fashion-mnist)")
      ->type_name("DIR");
  tools::addCount(app, "--bench-steps", request.benchSteps,
                  "Time N training steps (after 5 warm-up steps), print the "
                  "throughput, write nothing");
  app.add_flag("--check-data", request.checkData,
               "Load the data as training would, print what each split "
               "holds and the time it took, write nothing");
  app.add_flag("--resume", train.resume,
               "Continue the run whose checkpoint is in DIR");
  app.add_option(
         "--init", train.initFile,
         "Start every model from the tensors of this .safetensors or .pt file "
         "instead of the sweep's initializers or checkpoint files")
      ->type_name("FILE");
  // The training flags mbtc train takes too.
  for (const TrainCountFlag &flag : kTrainCountFlags)
    tools::addCount(app, std::string("--") + flag.name, train.*flag.field,
                    flag.help);
  for (const TrainSwitchFlag &flag : kTrainSwitchFlags)
    app.add_flag(std::string("--") + flag.name, train.*flag.field, flag.help);
  app.add_option_function<std::string>(
         std::string("--") + kDistributeFlag,
         [&train](const std::string &word) {
           parseDistribute(word, train.distribute);
         },
         kDistributeHelp)
      ->check(CLI::IsMember({"models", "data"}))
      ->type_name("MODE");
  app.add_option("--steps", request.stepsFile,
                 "Token sequences: train every epoch on this plan of steps "
                 "(JSONL, as mbt-data batch --steps-out writes) instead of "
                 "the spec's batching")
      ->type_name("FILE");
}

} // namespace

int main(int argc, char **argv) {
  mbt::runtime::useVectorBlasKernels(argv); // see BlasKernels.h
  RunRequest request;
  CLI::App app("Trains a sweep that mbtc compiled (mbtc -o ARTIFACT.so)",
               "mbt-run");
  addOptions(app, request);
  app.footer("Under torchrun (WORLD_SIZE > 1) each rank trains its slice of "
             "the models with ARTIFACT.rank<r>-of-<K>.so (mbtc --ranks K), or "
             "with --distribute=data every model on its share of each step's "
             "samples (mbtc --distribute=data); rank 0 writes the results: "
             "docs/distributed.md");
  if (std::optional<int> status =
          tools::parseCommandLine(app, argc, argv, "mbt-run"))
    return *status;
  if (request.train.outDir.empty())
    request.train.outDir =
        (std::filesystem::path(request.artifact).parent_path() / "results")
            .string();
  return runArtifact(request, "mbt-run");
}
