//===- mbt-data.cpp - Inspect, convert and batch sequence data ------------===//
//
//   mbt-data stats   SOURCE [--max-length N]
//   mbt-data lengths SOURCE [--max-length N]
//   mbt-data convert SOURCE OUT.mbtseq [--max-length N]
//   mbt-data batch   SOURCE [--strategy S] [--token-budget N] [--window W]
//                    [--batch-size B] [--step-cost C] [--seed S] [--epoch E]
//                    [--max-length N] [--steps-out FILE] [--json]
//   mbt-data images  fashion_mnist DIR [--per-class N] [--data-dir D]
//
// The options are CLI11's (mbt-data --help, mbt-data COMMAND --help list
// them). SOURCE is fortunes[:train|:test], a .jsonl or .mbtseq file, or
// (batch and stats only) a .lengths file holding one sample length per
// line. `images` writes the built-in Fashion-MNIST as PNG folders for
// image_folder data (DIR/train, DIR/test). Exit status 0 on success, 1 on an
// error (message on stderr), 2 on bad usage.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/FashionMnist.h"
#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/LengthBatching.h"
#include "mbt/runtime/SequenceSource.h"
#include "mbt/runtime/StepPlan.h"
#ifdef MBT_HAVE_IMAGES
#include "mbt/runtime/data/ImageFolder.h"
#endif

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

using namespace mbt::runtime;

namespace {

const char *kCommands = "stats, lengths, convert, batch, images";

const char *kSourceHelp =
    "SOURCE: fortunes[:train|:test] (Debian's fortunes, the default text "
    "task),\n"
    "        a .jsonl or .mbtseq file, or a .lengths file (one length per "
    "line;\n"
    "        stats and batch only)";

/// What the command line asked for.
struct Arguments {
  std::string source;
  std::string out; // convert: the .mbtseq file to write
  SequenceLoadOptions load;
  BatchingOptions batching;
  std::string strategy = "dynamic";
  int64_t seed = 0, epoch = 0;
  std::string stepsOut;
  bool json = false;
  // images
  std::string dataSet, imagesDir, dataDir;
  int64_t perClass = 0;
};

/// --strategy: a name parseBatchingStrategy knows.
const CLI::Validator kStrategy(
    [](std::string &value) -> std::string {
      BatchingStrategy strategy;
      if (!parseBatchingStrategy(value, strategy))
        return std::string("expects dynamic, fixed, fixed-shape or "
                           "group-by-length, got '") +
               value + "'";
      return "";
    },
    "");

/// Declares SOURCE and --max-length, which every command takes.
void addSource(CLI::App &command, Arguments &args) {
  command.add_option("source", args.source, "The sequence data (below)")
      ->required()
      ->type_name("SOURCE");
  tools::addCount(command, "--max-length", args.load.maxLength,
                  "Cut samples to N tokens");
  command.footer(kSourceHelp);
}

/// Declares batch's options.
void addBatchOptions(CLI::App &batch, Arguments &args) {
  BatchingOptions &batching = args.batching;
  batch
      .add_option("--strategy", args.strategy,
                  "dynamic (default), fixed, fixed-shape, group-by-length")
      ->check(kStrategy)
      ->type_name("S");
  tools::addCount(batch, "--token-budget", batching.tokenBudget,
                  "Padded tokens per step (default 8192)");
  tools::addCount(batch, "--window", batching.window,
                  "Samples grouped together (default 1024)")
      ->type_name("W");
  tools::addCount(batch, "--batch-size", batching.batchSize,
                  "fixed and group-by-length (default: budget // longest)")
      ->type_name("B");
  tools::addCount(batch, "--step-cost", batching.stepCost,
                  "dynamic: a step's cost in padded tokens, traded against "
                  "padding (default: budget / 8)")
      ->type_name("C");
  tools::addCount(batch, "--seed", args.seed,
                  "Data and step order seed (default 0)")
      ->type_name("S");
  tools::addCount(batch, "--epoch", args.epoch,
                  "Which epoch's order (default 0)")
      ->type_name("E");
  batch
      .add_option("--steps-out", args.stepsOut,
                  "Write the steps as JSONL ({\"samples\": [...], "
                  "\"padded_length\": L})")
      ->type_name("FILE");
  batch.add_flag("--json", args.json,
                 "Print the statistics as one JSON object");
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

int runStats(const Arguments &args) {
  const std::string &source = args.source;
  const SequenceLoadOptions &options = args.load;
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

int runBatch(const Arguments &args) {
  BatchingOptions batching = args.batching;
  parseBatchingStrategy(args.strategy, batching.strategy); // checked
  batching.seed = static_cast<uint64_t>(args.seed);
  std::vector<int64_t> lengths = sourceLengths(args.source, args.load);

  auto start = std::chrono::steady_clock::now();
  std::vector<LengthGroup> steps =
      planEpoch(lengths, batching, static_cast<uint32_t>(args.epoch));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  BatchingStats stats = summarizeSteps(steps);

  if (!args.stepsOut.empty())
    writeFileAtomically(args.stepsOut, formatStepPlan(steps));

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

/// Fashion-MNIST's class names, prefixed by their labels so that sorted
/// folder names give the labels back.
const std::vector<std::string> kFashionMnistClasses = {
    "0-tshirt-top", "1-trouser", "2-pullover", "3-dress", "4-coat",
    "5-sandal",     "6-shirt",   "7-sneaker",  "8-bag",   "9-ankle-boot"};

/// Writes the built-in Fashion-MNIST as DIR/train and DIR/test.
int runImages(const Arguments &args) {
#ifdef MBT_HAVE_IMAGES
  if (args.dataSet != "fashion_mnist")
    return tools::usageError("mbt-data", "images knows the data set "
                                         "fashion_mnist, got '" +
                                             args.dataSet + "'");
  for (Split split : {Split::Train, Split::Test}) {
    Dataset data = loadFashionMnist(split, args.dataDir);
    std::string dir =
        args.imagesDir + (split == Split::Train ? "/train" : "/test");
    int64_t written = writeImageFolder(data, 1, 28, 28, kFashionMnistClasses,
                                       dir, args.perClass);
    std::cout << "wrote " << written << " images of " << data.name << " to "
              << dir << "\n";
  }
  return 0;
#else
  throw RuntimeError("this mbt-data was built without PNG support "
                     "(MBT_WITH_IMAGES=OFF)");
#endif
}

/// Declares images' arguments.
void addImagesOptions(CLI::App &images, Arguments &args) {
  images.add_option("data", args.dataSet, "The data set: fashion_mnist")
      ->required()
      ->type_name("DATA");
  images.add_option("dir", args.imagesDir, "Where to write train/ and test/")
      ->required()
      ->type_name("DIR");
  tools::addCount(images, "--per-class", args.perClass,
                  "The first N images of each class of each split (default: "
                  "all)");
  images
      .add_option("--data-dir", args.dataDir,
                  "Where the idx files are (default $MBT_DATA_DIR, else "
                  "/usr/share/datasets/fashion-mnist)")
      ->type_name("D");
}

} // namespace

int main(int argc, char **argv) {
  Arguments args;
  CLI::App app("Inspects, converts and batches sequence data; writes image "
               "folders (docs/data.md)",
               "mbt-data");
  app.require_subcommand(1);
  app.footer(std::string(kSourceHelp) +
             "\n\nmbt-data COMMAND --help lists a command's options.");
  CLI::App *stats = app.add_subcommand(
      "stats", "Samples, tokens, length quantiles, vocabulary and classes");
  addSource(*stats, args);
  CLI::App *lengths =
      app.add_subcommand("lengths", "Print every sample's length, one a line");
  addSource(*lengths, args);
  CLI::App *convert =
      app.add_subcommand("convert", "Write SOURCE as a .mbtseq file");
  addSource(*convert, args);
  convert->add_option("out", args.out, "The file to write")
      ->required()
      ->type_name("OUT.mbtseq");
  CLI::App *batch = app.add_subcommand(
      "batch", "Plan one epoch's steps and print their statistics");
  addSource(*batch, args);
  addBatchOptions(*batch, args);
  CLI::App *images = app.add_subcommand(
      "images", "Write a built-in image data set as PNG class folders");
  addImagesOptions(*images, args);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success &help) {
    return app.exit(help);
  } catch (const CLI::ParseError &error) {
    // Without a command CLI11 says "A subcommand is required", or lists an
    // unknown one among the arguments it did not expect: say which.
    if (app.get_subcommands().empty()) {
      bool named = argc >= 2 && argv[1][0] != '-';
      return tools::usageError(
          "mbt-data", named
                          ? "unknown command '" + std::string(argv[1]) + "' (" +
                                kCommands + ")"
                          : std::string("missing command (") + kCommands + ")");
    }
    return tools::usageError("mbt-data", error.what());
  }

  try {
    if (app.got_subcommand(stats))
      return runStats(args);
    if (app.got_subcommand(batch))
      return runBatch(args);
    if (app.got_subcommand(images))
      return runImages(args);
    if (app.got_subcommand(lengths)) {
      for (int64_t length : sourceLengths(args.source, args.load))
        std::cout << length << "\n";
      return 0;
    }
    if (endsWith(args.source, ".lengths"))
      throw RuntimeError("a .lengths file holds no tokens to convert");
    if (!endsWith(args.out, ".mbtseq"))
      return tools::usageError("mbt-data",
                               "the output of convert must end in .mbtseq");
    SequenceDataset data = loadSequenceSource(args.source, args.load);
    writeSequenceFile(args.out, data);
    std::cout << "wrote " << args.out << ": " << data.count() << " samples, "
              << data.tokens.size() << " tokens\n";
    return 0;
  } catch (const RuntimeError &error) {
    std::cerr << "mbt-data: error: " << error.what() << "\n";
    return 1;
  }
}
