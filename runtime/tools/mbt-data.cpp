//===- mbt-data.cpp - Inspect, convert and batch sequence data ------------===//
//
//   mbt-data stats   SOURCE [--max-length N]
//   mbt-data lengths SOURCE [--max-length N]
//   mbt-data convert SOURCE OUT.mbtseq [--max-length N]
//   mbt-data batch   SOURCE [--strategy S] [--token-budget N] [--window W]
//                    [--batch-size B] [--step-cost C] [--seed S] [--epoch E]
//                    [--max-length N] [--steps-out FILE] [--json]
//
// SOURCE is fortunes[:train|:test], a .jsonl or .mbtseq file, or (batch and
// stats only) a .lengths file holding one sample length per line. Exit
// status 0 on success, 1 on an error (message on stderr), 2 on bad usage.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/LengthBatching.h"
#include "mbt/runtime/SequenceSource.h"
#include "mbt/runtime/StepPlan.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

using namespace mbt::runtime;

namespace {

const char *kUsage =
    "usage: mbt-data stats   SOURCE [--max-length N]\n"
    "       mbt-data lengths SOURCE [--max-length N]\n"
    "       mbt-data convert SOURCE OUT.mbtseq [--max-length N]\n"
    "       mbt-data batch   SOURCE [--strategy S] [--token-budget N] "
    "[--window W]\n"
    "                        [--batch-size B] [--step-cost C] [--seed S] "
    "[--epoch E]\n"
    "                        [--max-length N] [--steps-out FILE] [--json]\n"
    "SOURCE: fortunes[:train|:test] (Debian's fortunes, the default text "
    "task),\n"
    "        a .jsonl or .mbtseq file, or a .lengths file (one length per "
    "line;\n"
    "        stats and batch only)\n"
    "  --strategy S      dynamic (default), fixed, fixed-shape, "
    "group-by-length\n"
    "  --token-budget N  padded tokens per step (default 8192)\n"
    "  --window W        samples grouped together (default 1024)\n"
    "  --batch-size B    fixed and group-by-length (default: budget // "
    "longest)\n"
    "  --step-cost C     dynamic: a step's cost in padded tokens, traded "
    "against\n"
    "                    padding (default: budget / 8)\n"
    "  --seed S          data and step order seed (default 0)\n"
    "  --epoch E         which epoch's order (default 0)\n"
    "  --max-length N    cut samples to N tokens\n"
    "  --steps-out FILE  write the steps as JSONL ({\"samples\": [...], "
    "\"padded_length\": L})\n"
    "  --json            print the statistics as one JSON object\n";

struct Arguments {
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;
  bool json = false;
};

int usageError(const std::string &message) {
  std::cerr << "mbt-data: error: " << message << "\n" << kUsage;
  return 2;
}

/// A non-negative integer flag; false (after printing why) if malformed.
bool integerFlag(const Arguments &args, const std::string &flag, int64_t &out) {
  auto it = args.flags.find(flag);
  if (it == args.flags.end())
    return true;
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end || errno || value < 0) {
    std::cerr << "mbt-data: error: " << flag
              << " needs a non-negative integer, got '" << it->second << "'\n";
    return false;
  }
  out = value;
  return true;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// One sample length per line; blank lines are skipped.
std::vector<int64_t> readLengths(const std::string &path) {
  std::istringstream in(readInputFile(path));
  std::vector<int64_t> lengths;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    char *end = nullptr;
    long long value = std::strtoll(line.c_str(), &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\r')
      ++end;
    if (end == line.c_str() || *end || value < 0)
      throw RuntimeError(path + ":" + std::to_string(number) +
                         ":1: expected a sample length, got '" + line + "'");
    lengths.push_back(value);
  }
  return lengths;
}

std::vector<int64_t> sourceLengths(const std::string &source,
                                   const SequenceLoadOptions &options) {
  if (!endsWith(source, ".lengths"))
    return loadSequenceSource(source, options).lengths();
  std::vector<int64_t> lengths = readLengths(source);
  if (options.maxLength > 0)
    for (int64_t &length : lengths)
      length = std::min(length, options.maxLength);
  return lengths;
}

int runStats(const Arguments &args, const SequenceLoadOptions &options) {
  const std::string &source = args.positional[0];
  // A data set is loaded once: its lengths, then its vocabulary and classes.
  bool lengthsOnly = endsWith(source, ".lengths");
  SequenceDataset data;
  if (!lengthsOnly)
    data = loadSequenceSource(source, options);
  std::vector<int64_t> lengths =
      lengthsOnly ? sourceLengths(source, options) : data.lengths();
  std::vector<int64_t> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  int64_t total = 0;
  for (int64_t length : lengths)
    total += length;
  auto quantile = [&](double q) {
    return sorted.empty()
               ? 0
               : sorted[static_cast<size_t>(q * (sorted.size() - 1))];
  };
  std::cout << source << ": " << lengths.size() << " samples, " << total
            << " tokens\n"
            << "length: min " << quantile(0) << ", median " << quantile(0.5)
            << ", p95 " << quantile(0.95) << ", max " << quantile(1) << "\n";
  if (!lengthsOnly) {
    std::cout << "vocabulary: " << data.vocabSize << " tokens\n";
    if (data.hasLabels())
      std::cout << "classes: " << data.numClasses() << "\n";
  }
  return 0;
}

int runBatch(const Arguments &args, const SequenceLoadOptions &options) {
  BatchingOptions batching;
  auto strategy = args.flags.find("--strategy");
  if (strategy != args.flags.end() &&
      !parseBatchingStrategy(strategy->second, batching.strategy))
    return usageError("unknown strategy '" + strategy->second +
                      "' (dynamic, fixed, fixed-shape, group-by-length)");
  int64_t seed = 0, epoch = 0;
  if (!integerFlag(args, "--token-budget", batching.tokenBudget) ||
      !integerFlag(args, "--window", batching.window) ||
      !integerFlag(args, "--batch-size", batching.batchSize) ||
      !integerFlag(args, "--step-cost", batching.stepCost) ||
      !integerFlag(args, "--seed", seed) ||
      !integerFlag(args, "--epoch", epoch))
    return 2;
  batching.seed = static_cast<uint64_t>(seed);
  std::vector<int64_t> lengths = sourceLengths(args.positional[0], options);

  auto start = std::chrono::steady_clock::now();
  std::vector<LengthGroup> steps =
      planEpoch(lengths, batching, static_cast<uint32_t>(epoch));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  BatchingStats stats = summarizeSteps(steps);

  auto out = args.flags.find("--steps-out");
  if (out != args.flags.end()) {
    writeFileAtomically(out->second, formatStepPlan(steps));
  }

  const char *name = batchingStrategyName(batching.strategy);
  double samplesPerSecond = seconds > 0 ? stats.samples / seconds : 0;
  if (args.json) {
    std::printf("{\"strategy\": \"%s\", \"token_budget\": %lld, \"window\": "
                "%lld, \"steps\": %lld, \"samples\": %lld, \"real_tokens\": "
                "%lld, \"padded_tokens\": %lld, \"padding_ratio\": %.6f, "
                "\"max_step_tokens\": %lld, \"min_step_samples\": %lld, "
                "\"max_step_samples\": %lld, \"plan_seconds\": %.6f, "
                "\"plan_samples_per_second\": %.0f}\n",
                name, (long long)batching.tokenBudget,
                (long long)batching.window, (long long)stats.steps,
                (long long)stats.samples, (long long)stats.realTokens,
                (long long)stats.paddedTokens, stats.paddingRatio(),
                (long long)stats.maxStepTokens, (long long)stats.minStepSamples,
                (long long)stats.maxStepSamples, seconds, samplesPerSecond);
    return 0;
  }
  std::printf("%s: %lld steps, %lld samples (%lld to %lld a step), padding "
              "%.2f%% (%lld real of %lld padded tokens), largest step %lld "
              "tokens of %lld; planned at %.3g samples/s\n",
              name, (long long)stats.steps, (long long)stats.samples,
              (long long)stats.minStepSamples, (long long)stats.maxStepSamples,
              100 * stats.paddingRatio(), (long long)stats.realTokens,
              (long long)stats.paddedTokens, (long long)stats.maxStepTokens,
              (long long)batching.tokenBudget, samplesPerSecond);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Arguments args;
  if (argc < 2)
    return usageError("missing command");
  args.command = argv[1];
  if (args.command == "--help" || args.command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  const char *valued[] = {"--strategy",   "--token-budget", "--window",
                          "--batch-size", "--step-cost",    "--seed",
                          "--epoch",      "--max-length",   "--steps-out"};
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json") {
      args.json = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (arg.rfind("--", 0) != 0) {
      args.positional.push_back(arg);
      continue;
    }
    std::string flag = arg.substr(0, arg.find('='));
    if (std::find(std::begin(valued), std::end(valued), flag) ==
        std::end(valued))
      return usageError("unknown option '" + flag + "'");
    if (flag.size() < arg.size()) {
      args.flags[flag] = arg.substr(flag.size() + 1);
    } else if (i + 1 < argc) {
      args.flags[flag] = argv[++i];
    } else {
      return usageError(flag + " needs a value");
    }
  }

  size_t wanted = args.command == "convert" ? 2 : 1;
  if (args.command != "stats" && args.command != "lengths" &&
      args.command != "convert" && args.command != "batch")
    return usageError("unknown command '" + args.command +
                      "' (stats, lengths, convert, batch)");
  if (args.positional.size() != wanted)
    return usageError(args.command + " takes " +
                      (wanted == 1 ? "one SOURCE" : "SOURCE and OUT.mbtseq"));

  SequenceLoadOptions options;
  if (!integerFlag(args, "--max-length", options.maxLength))
    return 2;
  try {
    if (args.command == "stats")
      return runStats(args, options);
    if (args.command == "batch")
      return runBatch(args, options);
    if (args.command == "lengths") {
      for (int64_t length : sourceLengths(args.positional[0], options))
        std::cout << length << "\n";
      return 0;
    }
    if (endsWith(args.positional[0], ".lengths"))
      throw RuntimeError("a .lengths file holds no tokens to convert");
    if (!endsWith(args.positional[1], ".mbtseq"))
      return usageError("the output of convert must end in .mbtseq");
    SequenceDataset data = loadSequenceSource(args.positional[0], options);
    writeSequenceFile(args.positional[1], data);
    std::cout << "wrote " << args.positional[1] << ": " << data.count()
              << " samples, " << data.tokens.size() << " tokens\n";
    return 0;
  } catch (const RuntimeError &error) {
    std::cerr << "mbt-data: error: " << error.what() << "\n";
    return 1;
  }
}
