//===- mbt-run.cpp - Train with an already-compiled artifact --------------===//
//
//   mbt-run ARTIFACT.so [--out DIR] [--epochs N] [--data-dir D] [--quiet]
//           [--checkpoint-every N] [--resume] [--steps FILE] ...
//
// Runs a model batch that mbtc compiled elsewhere: this is how a host without
// MLIR (a GPU box with only a C++ toolchain) trains artifacts. Exit status 0
// on success, 1 on any error (message on stderr), 2 on bad usage.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/BlasKernels.h"
#include "mbt/runtime/Run.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

using namespace mbt::runtime;

namespace {
void printUsage(std::ostream &os) {
  os << "usage: mbt-run ARTIFACT.so [--out DIR] [--epochs N] [--data-dir D] "
        "[--quiet] [--json] [--bench-steps N]\n"
        "               [--checkpoint-every N] [--resume] [--log-every N] "
        "[--eval-every N]\n"
        "               [--early-stop N] [--halve-every N] [--steps FILE]\n"
        "  --out DIR       results directory (default: "
        "DIR_OF_ARTIFACT/results)\n"
        "  --epochs N      override the manifest's epoch count\n"
        "  --data-dir D    data directory (default: $MBT_DATA_DIR or "
        "/usr/share/datasets/fashion-mnist)\n"
        "  --quiet         no progress line\n"
        "  --json          print the leaderboard as JSON (no progress, no "
        "table)\n"
        "  --bench-steps N time N training steps (after 5 warm-up steps), "
        "print throughput, write nothing\n"
        "  --checkpoint-every N  also write DIR/checkpoint.mbtrun every N "
        "steps (always at the end of each epoch)\n"
        "  --resume        continue the run whose checkpoint is in DIR\n"
        "  --log-every N   log each model's running train means every N steps "
        "(default: ~20 times an epoch; 0: epoch ends only)\n"
        "  --eval-every N  also evaluate the test split every N steps "
        "(default: epoch ends only)\n"
        "  --early-stop N  stop a model whose validation loss has not improved "
        "in N evaluations\n"
        "  --halve-every N every N steps, stop the worse half of the models "
        "still training (by validation)\n"
        "  --steps FILE    token sequences: train every epoch on this plan of "
        "steps (JSONL, as\n"
        "                  mbt-data batch --steps-out writes) instead of the "
        "spec's batching\n";
}

/// Parses argv into `request`; returns false (after printing why) on bad
/// usage.
bool parseArguments(int argc, char **argv, RunRequest &request) {
  TrainOptions &train = request.train;
  // Every flag that takes a non-negative integer, and where it goes.
  const std::pair<const char *, int64_t *> integers[] = {
      {"--epochs", &train.epochs},
      {"--bench-steps", &request.benchSteps},
      {"--checkpoint-every", &train.checkpointEvery},
      {"--log-every", &train.logEvery},
      {"--eval-every", &train.evalEvery},
      {"--early-stop", &train.earlyStopPatience},
      {"--halve-every", &train.halveEvery}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc) {
        std::cerr << "mbt-run: error: " << flag << " needs a value\n";
        return nullptr;
      }
      return argv[++i];
    };
    auto integer = std::find_if(std::begin(integers), std::end(integers),
                                [&](const auto &f) { return arg == f.first; });
    if (integer != std::end(integers)) {
      const char *v = value(integer->first);
      if (!v)
        return false;
      char *end = nullptr;
      long long n = std::strtoll(v, &end, 10);
      if (*v == '\0' || *end != '\0' || n < 0) {
        std::cerr << "mbt-run: error: " << integer->first
                  << " expects a non-negative integer, got '" << v << "'\n";
        return false;
      }
      *integer->second = n;
    } else if (arg == "-h" || arg == "--help") {
      printUsage(std::cout);
      std::exit(0);
    } else if (arg == "--out" || arg == "--data-dir" || arg == "--steps") {
      const char *v = value(arg.c_str());
      if (!v)
        return false;
      (arg == "--out"        ? train.outDir
       : arg == "--data-dir" ? request.dataDir
                             : request.stepsFile) = v;
    } else if (arg == "--resume") {
      train.resume = true;
    } else if (arg == "--quiet") {
      train.quiet = true;
    } else if (arg == "--json") {
      train.reportJson = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "mbt-run: error: unknown option '" << arg << "'\n";
      return false;
    } else if (request.artifact.empty()) {
      request.artifact = arg;
    } else {
      std::cerr << "mbt-run: error: more than one artifact given ('"
                << request.artifact << "', '" << arg << "')\n";
      return false;
    }
  }
  if (request.artifact.empty()) {
    std::cerr << "mbt-run: error: no artifact given\n";
    return false;
  }
  return true;
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}
} // namespace

int main(int argc, char **argv) {
  mbt::runtime::useVectorBlasKernels(argv); // see BlasKernels.h
  RunRequest request;
  if (!parseArguments(argc, argv, request)) {
    printUsage(std::cerr);
    return 2;
  }
  if (request.train.outDir.empty())
    request.train.outDir = directoryOf(request.artifact) + "/results";
  return runArtifact(request, "mbt-run");
}
