//===- Leaderboard.h - Rank the models of a batch ---------------*- C++ -*-===//
//
// The end product of a sweep: every model with its hyperparameters, seed and
// final metrics, best first. Ranking uses the last output named "acc" or
// "accuracy" (higher is better) when there is one, else the loss (lower is
// better). Diverged models and non-finite scores go last, so a NaN never
// poisons the order of the healthy models.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_LEADERBOARD_H
#define MBT_RUNTIME_LEADERBOARD_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// Final numbers of one model.
struct ModelResult {
  int64_t model = 0; // index in the batch
  uint64_t seed = 0;
  std::vector<double> hyper;      // one per hyperparameter name
  std::vector<double> train;      // last epoch's running means, one per output
  std::vector<double> test;       // test-split means, one per output
  std::vector<double> validation; // k-fold: held-out fold means, or empty
  bool diverged = false;          // loss went NaN/inf at some point
  /// The train step whose loss or gradients were not finite (the model is
  /// frozen at its parameters of the step before); 0 when none or unknown.
  int64_t divergedStep = 0;
  /// The step at which early stopping or successive halving stopped it
  /// (0: it trained to the end), and why.
  int64_t stoppedStep = 0;
  std::string stopReason;
  /// Under a loss scale (precision f16): the model's scale at the end, and
  /// the steps it skipped because its scaled gradients overflowed.
  std::optional<double> lossScale;
  int64_t skippedSteps = 0;
  int64_t rank = 0; // 1-based, set by rankModels
};

struct Leaderboard {
  std::vector<std::string> hyperNames;
  std::vector<std::string> outputs; // outputs[0] is the loss
  std::vector<ModelResult> rows;    // in rank order once ranked
  /// The split the models are ranked on and shown by: the test split, or
  /// where a data set has none, the validation split, else the running
  /// train means.
  enum class Split { Test, Validation, Train } ranked = Split::Test;
  /// The output to rank by ("": chooseRankKey's default).
  std::string rankBy;
};

/// "test", "validation" or "train": the prefix of the split's columns.
const char *splitName(Leaderboard::Split split);

/// A row's means on the board's ranked split (empty if it has none).
const std::vector<double> &rankedMeans(const Leaderboard &board,
                                       const ModelResult &row);

/// Which output ranks the models, and in which direction.
struct RankKey {
  size_t output = 0;
  bool descending = false;
};
/// `rankBy` when given (higher first for an accuracy-like output: acc,
/// accuracy, r2, f1, auc, precision, recall; lower first for the others,
/// which are losses and errors), else the last output named acc or
/// accuracy, higher first, else the loss.
RankKey chooseRankKey(const std::vector<std::string> &outputs,
                      const std::string &rankBy = "");

/// Whether an output is better high: acc, accuracy, r2, f1, auc, precision
/// and recall are; the others are losses and errors.
bool higherIsBetter(const std::string &output);

/// Whether hyperparameter `h` has one value for every model (NaN counting
/// as equal to NaN).
bool sameForEveryModel(const Leaderboard &board, size_t h);

/// Whether the tables (the console's, report.html's) give hyperparameter
/// `h` a column: it differs between the models, or it is the learning
/// rate. The others are listed once, beside the table.
bool hasHyperColumn(const Leaderboard &board, size_t h);

/// Whether the models trained under a loss scale (precision f16): the
/// table, the report and the JSON then show each model's skipped steps.
bool hasLossScale(const Leaderboard &board);

/// "ok", "diverged at step N", "stopped at step N (early stopping)" or
/// "(halving)": the status column of the table and the report.
std::string statusOf(const ModelResult &row);

/// Sorts `board.rows` best first by the test value of chooseRankKey's output
/// and numbers them from 1. Order: healthy models with a finite score, then
/// healthy ones with a non-finite score, then diverged ones; ties by model
/// index, so the order is deterministic.
void rankModels(Leaderboard &board);

/// An aligned text table: rank, model, each hyperparameter whose value
/// differs between the models (and `lr`), seed, each test output, and a
/// status column flagging diverged models; then a line "same for every
/// model: NAME VALUE, ..." with the other hyperparameters.
std::string formatLeaderboard(const Leaderboard &board);

/// JSON array, one object per row: "rank", "model", "seed", each
/// hyperparameter by name, "test_<output>" and "train_<output>" for each
/// output (null when not finite), "diverged" and "diverged_at_step" (null
/// when it did not, or when no train step was to blame).
std::string leaderboardToJson(const Leaderboard &board);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LEADERBOARD_H
