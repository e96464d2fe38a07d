//===- mbt-run.cpp - Train with an already-compiled artifact --------------===//
//
//   mbt-run ARTIFACT.so [--out DIR] [--epochs N] [--data-dir D] [--quiet]
//           [--checkpoint-every N] [--resume]
//
// Runs a model batch that mbtc compiled elsewhere: this is how a host without
// MLIR (a GPU box with only a C++ toolchain) trains artifacts. Exit status 0
// on success, 1 on any error (message on stderr), 2 on bad usage.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/BlasKernels.h"
#include "mbt/runtime/Run.h"

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
        "               [--early-stop N] [--halve-every N]\n"
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
        "still training (by validation)\n";
}

struct Arguments {
  std::string artifact, outDir, dataDir;
  int64_t epochs = -1;
  int64_t benchSteps = 0;
  int64_t checkpointEvery = 0;
  int64_t logEvery = -1;
  int64_t evalEvery = 0;
  int64_t earlyStop = 0;
  int64_t halveEvery = 0;
  bool quiet = false;
  bool json = false;
  bool resume = false;
};

/// Parses argv; returns false (after printing why) on bad usage.
bool parseArguments(int argc, char **argv, Arguments &args) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc) {
        std::cerr << "mbt-run: error: " << flag << " needs a value\n";
        return nullptr;
      }
      return argv[++i];
    };
    // The value of `flag` as a non-negative integer, into `out`.
    auto nonNegative = [&](const char *flag, int64_t &out) {
      const char *v = value(flag);
      if (!v)
        return false;
      char *end = nullptr;
      long long n = std::strtoll(v, &end, 10);
      if (*v == '\0' || *end != '\0' || n < 0) {
        std::cerr << "mbt-run: error: " << flag
                  << " expects a non-negative integer, got '" << v << "'\n";
        return false;
      }
      out = n;
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      printUsage(std::cout);
      std::exit(0);
    } else if (arg == "--out") {
      const char *v = value("--out");
      if (!v)
        return false;
      args.outDir = v;
    } else if (arg == "--data-dir") {
      const char *v = value("--data-dir");
      if (!v)
        return false;
      args.dataDir = v;
    } else if (arg == "--epochs") {
      if (!nonNegative("--epochs", args.epochs))
        return false;
    } else if (arg == "--bench-steps") {
      if (!nonNegative("--bench-steps", args.benchSteps))
        return false;
    } else if (arg == "--checkpoint-every") {
      if (!nonNegative("--checkpoint-every", args.checkpointEvery))
        return false;
    } else if (arg == "--log-every") {
      if (!nonNegative("--log-every", args.logEvery))
        return false;
    } else if (arg == "--eval-every") {
      if (!nonNegative("--eval-every", args.evalEvery))
        return false;
    } else if (arg == "--early-stop") {
      if (!nonNegative("--early-stop", args.earlyStop))
        return false;
    } else if (arg == "--halve-every") {
      if (!nonNegative("--halve-every", args.halveEvery))
        return false;
    } else if (arg == "--resume") {
      args.resume = true;
    } else if (arg == "--quiet") {
      args.quiet = true;
    } else if (arg == "--json") {
      args.json = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "mbt-run: error: unknown option '" << arg << "'\n";
      return false;
    } else if (args.artifact.empty()) {
      args.artifact = arg;
    } else {
      std::cerr << "mbt-run: error: more than one artifact given ('"
                << args.artifact << "', '" << arg << "')\n";
      return false;
    }
  }
  if (args.artifact.empty()) {
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
  Arguments args;
  if (!parseArguments(argc, argv, args)) {
    printUsage(std::cerr);
    return 2;
  }
  RunRequest request;
  request.artifact = args.artifact;
  request.outDir = args.outDir.empty() ? directoryOf(args.artifact) + "/results"
                                       : args.outDir;
  request.dataDir = args.dataDir;
  request.epochs = args.epochs;
  request.quiet = args.quiet;
  request.benchSteps = args.benchSteps;
  request.checkpointEvery = args.checkpointEvery;
  request.resume = args.resume;
  request.json = args.json;
  request.logEvery = args.logEvery;
  request.evalEvery = args.evalEvery;
  request.earlyStop = args.earlyStop;
  request.halveEvery = args.halveEvery;
  return runArtifact(request, "mbt-run");
}
