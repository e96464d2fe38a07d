//===- mbt-run.cpp - Train with an already-compiled artifact --------------===//
//
//   mbt-run ARTIFACT.so [--out DIR] [--epochs N] [--data-dir D] [--quiet]
//           [--checkpoint-every N] [--resume] [--steps FILE] ...
//
// The options are CLI11's (mbt-run --help lists them).
//
// Runs a model batch that mbtc compiled elsewhere: this is how a host without
// MLIR (a GPU box with only a C++ toolchain) trains artifacts. Exit status 0
// on success, 1 on any error (message on stderr), 2 on bad usage.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/BlasKernels.h"
#include "mbt/runtime/Run.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <filesystem>
#include <iostream>
#include <string>

using namespace mbt::runtime;

namespace {

/// The counts (epochs, steps): a non-negative integer, said as plainly.
const CLI::Validator kCount(
    [](std::string &value) -> std::string {
      int64_t n = 0;
      const char *end = value.data() + value.size();
      auto [stop, error] = std::from_chars(value.data(), end, n);
      if (value.empty() || error != std::errc() || stop != end || n < 0)
        return "expects a non-negative integer, got '" + value + "'";
      return "";
    },
    "");

/// An option that takes a count N into `field`.
void addCount(CLI::App &app, const std::string &name, int64_t &field,
              const std::string &help) {
  app.add_option(name, field, help)->check(kCount)->type_name("N");
}

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
  addCount(app, "--epochs", train.epochs, "Override the manifest's epochs");
  app.add_option("--data-dir", request.dataDir,
                 "Data directory (default: $MBT_DATA_DIR or "
                 "/usr/share/datasets/fashion-mnist)")
      ->type_name("DIR");
  app.add_flag("--quiet", train.quiet, "No progress line");
  app.add_flag("--json", train.reportJson,
               "Print the leaderboard as JSON (no progress, no table)");
  addCount(app, "--bench-steps", request.benchSteps,
           "Time N training steps (after 5 warm-up steps), print the "
           "throughput, write nothing");
  addCount(app, "--checkpoint-every", train.checkpointEvery,
           "Also write DIR/checkpoint.mbtrun every N steps (always at "
           "the end of each epoch)");
  app.add_flag("--resume", train.resume,
               "Continue the run whose checkpoint is in DIR");
  addCount(app, "--log-every", train.logEvery,
           "Log each model's running train means every N steps "
           "(default: ~20 times an epoch; 0: epoch ends only)");
  addCount(app, "--eval-every", train.evalEvery,
           "Also evaluate the test split every N steps (default: "
           "epoch ends only)");
  addCount(app, "--early-stop", train.earlyStopPatience,
           "Stop a model whose validation loss has not improved in N "
           "evaluations");
  addCount(app, "--halve-every", train.halveEvery,
           "Every N steps, stop the worse half of the models still "
           "training (by validation)");
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success &help) {
    return app.exit(help);
  } catch (const CLI::ParseError &error) {
    std::cerr << "mbt-run: error: " << error.what() << "\n"
              << "Run with --help for more information.\n";
    return 2;
  }
  if (request.train.outDir.empty())
    request.train.outDir =
        (std::filesystem::path(request.artifact).parent_path() / "results")
            .string();
  return runArtifact(request, "mbt-run");
}
