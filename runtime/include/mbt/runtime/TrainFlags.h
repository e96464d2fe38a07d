//===- TrainFlags.h - the training flags of mbtc train and mbt-run -*- C++ -*-//
//
// `mbtc train` (llvm::cl) and `mbt-run` (CLI11) take the same training
// options. They are declared once, here, so that the two tools spell,
// explain and check them alike: each entry is a flag's name (without the
// dashes), its help and the TrainOptions field it sets. A flag that is not
// given leaves its field at TrainOptions' default.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_TRAINFLAGS_H
#define MBT_RUNTIME_TRAINFLAGS_H

#include "mbt/runtime/TrainOptions.h"

#include <cstdint>
#include <string>

namespace mbt {
namespace runtime {

/// A flag that takes a count N >= 0.
struct TrainCountFlag {
  const char *name;
  const char *help;
  int64_t TrainOptions::*field;
};

/// A flag that turns something on.
struct TrainSwitchFlag {
  const char *name;
  const char *help;
  bool TrainOptions::*field;
};

inline constexpr TrainCountFlag kTrainCountFlags[] = {
    {"epochs", "Override the sweep's epochs", &TrainOptions::epochs},
    {"max-steps",
     "Stop after N train steps in all, with the evaluation, results and "
     "checkpoint of an epoch's end (default 0: train every epoch)",
     &TrainOptions::maxSteps},
    {"log-every",
     "Log each model's running train means to metrics.jsonl every N steps "
     "(default: about 20 times an epoch; 0: epoch ends only)",
     &TrainOptions::logEvery},
    {"eval-every",
     "Also evaluate the test split every N steps (default: at epoch ends "
     "only)",
     &TrainOptions::evalEvery},
    {"early-stop",
     "Stop a model whose validation loss has not improved in N evaluations "
     "(needs a validation split)",
     &TrainOptions::earlyStopPatience},
    {"halve-every",
     "Every N steps, stop the worse half of the models still training, "
     "ranked on the validation split",
     &TrainOptions::halveEvery},
    {"checkpoint-every",
     "Also write DIR/checkpoint.mbtrun every N steps (it is always written "
     "at the end of each epoch)",
     &TrainOptions::checkpointEvery},
    {"rank-timeout",
     "Under torchrun: seconds a rank waits for the others before it stops "
     "with an error naming the ranks that are gone (default 1800)",
     &TrainOptions::rankTimeout},
};

inline constexpr TrainSwitchFlag kTrainSwitchFlags[] = {
    {"quiet", "No progress line", &TrainOptions::quiet},
    {"json",
     "Print the leaderboard as JSON on stdout (leaderboard.json's text), "
     "with no progress or table: for scripts",
     &TrainOptions::reportJson},
};

/// --distribute=models|data: what the ranks of a run under torchrun split.
inline constexpr const char *kDistributeFlag = "distribute";
inline constexpr const char *kDistributeHelp =
    "Under torchrun, what the ranks split: 'models' (default; each rank "
    "trains its slice of the models, compiled by mbtc --ranks K) or 'data' "
    "(each rank trains every model on its share of each step's samples, "
    "compiled by mbtc --distribute=data)";

/// The word --distribute takes for `mode`.
inline const char *distributeName(TrainOptions::Distribute mode) {
  return mode == TrainOptions::Distribute::Data ? "data" : "models";
}

/// The mode `word` names; false if it names none.
inline bool parseDistribute(const std::string &word,
                            TrainOptions::Distribute &mode) {
  for (auto candidate :
       {TrainOptions::Distribute::Models, TrainOptions::Distribute::Data})
    if (word == distributeName(candidate)) {
      mode = candidate;
      return true;
    }
  return false;
}

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_TRAINFLAGS_H
