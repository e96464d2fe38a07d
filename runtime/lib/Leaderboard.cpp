//===- Leaderboard.cpp - Ranking, text table and JSON ---------------------===//

#include "mbt/runtime/Leaderboard.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace mbt {
namespace runtime {

bool higherIsBetter(const std::string &output) {
  static const std::set<std::string> names = {"acc", "accuracy",  "r2",    "f1",
                                              "auc", "precision", "recall"};
  return names.count(output) > 0;
}

RankKey chooseRankKey(const std::vector<std::string> &outputs,
                      const std::string &rankBy) {
  auto named = std::find(outputs.begin(), outputs.end(), rankBy);
  if (!rankBy.empty() && named != outputs.end())
    return {size_t(named - outputs.begin()), higherIsBetter(rankBy)};
  for (size_t k = outputs.size(); k > 1; --k)
    if (outputs[k - 1] == "acc" || outputs[k - 1] == "accuracy")
      return {k - 1, true};
  return {0, false};
}

const char *splitName(Leaderboard::Split split) {
  switch (split) {
  case Leaderboard::Split::Validation:
    return "validation";
  case Leaderboard::Split::Train:
    return "train";
  case Leaderboard::Split::Test:
    break;
  }
  return "test";
}

const std::vector<double> &rankedMeans(const Leaderboard &board,
                                       const ModelResult &row) {
  switch (board.ranked) {
  case Leaderboard::Split::Validation:
    return row.validation;
  case Leaderboard::Split::Train:
    return row.train;
  case Leaderboard::Split::Test:
    break;
  }
  return row.test;
}

void rankModels(Leaderboard &board) {
  RankKey key = chooseRankKey(board.outputs, board.rankBy);
  auto score = [&](const ModelResult &row) {
    const std::vector<double> &means = rankedMeans(board, row);
    return key.output < means.size() ? means[key.output]
                                     : std::numeric_limits<double>::quiet_NaN();
  };
  auto group = [&](const ModelResult &row) {
    if (row.diverged)
      return 2;
    return std::isfinite(score(row)) ? 0 : 1;
  };
  std::stable_sort(board.rows.begin(), board.rows.end(),
                   [&](const ModelResult &a, const ModelResult &b) {
                     int ga = group(a), gb = group(b);
                     if (ga != gb)
                       return ga < gb;
                     if (ga == 0 && score(a) != score(b))
                       return key.descending ? score(a) > score(b)
                                             : score(a) < score(b);
                     return a.model < b.model;
                   });
  for (size_t i = 0; i < board.rows.size(); ++i)
    board.rows[i].rank = static_cast<int64_t>(i) + 1;
}

std::string statusOf(const ModelResult &row) {
  if (row.diverged)
    return row.divergedStep
               ? fmt::format("diverged at step {}", row.divergedStep)
               : "diverged";
  if (row.stoppedStep)
    return fmt::format("stopped at step {} ({})", row.stoppedStep,
                       row.stopReason.rfind("early", 0) == 0 ? "early stopping"
                                                             : "halving");
  return "ok";
}

namespace {
std::string formatNumber(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", value);
}

std::string padLeft(const std::string &text, size_t width) {
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
}
} // namespace

bool sameForEveryModel(const Leaderboard &board, size_t h) {
  if (board.rows.size() < 2)
    return false;
  const ModelResult &first = board.rows.front();
  for (const ModelResult &row : board.rows)
    if (h >= row.hyper.size() || h >= first.hyper.size() ||
        !(row.hyper[h] == first.hyper[h] ||
          (std::isnan(row.hyper[h]) && std::isnan(first.hyper[h]))))
      return false;
  return true;
}

bool hasHyperColumn(const Leaderboard &board, size_t h) {
  return board.hyperNames[h] == "lr" || !sameForEveryModel(board, h);
}

std::string formatLeaderboard(const Leaderboard &board) {
  // A hyperparameter with the same value for every model is listed once
  // under the table instead of as a column (the learning rate always gets
  // a column; leaderboard.json keeps every value of every model).
  std::vector<size_t> columns;
  std::vector<std::string> constants;
  for (size_t h = 0; h < board.hyperNames.size(); ++h) {
    if (hasHyperColumn(board, h))
      columns.push_back(h);
    else
      constants.push_back(board.hyperNames[h] + " " +
                          formatNumber(board.rows.front().hyper[h]));
  }

  std::vector<std::string> header = {"rank", "model"};
  for (size_t h : columns)
    header.push_back(board.hyperNames[h]);
  header.push_back("seed");
  for (const std::string &output : board.outputs)
    header.push_back(std::string(splitName(board.ranked)) + "_" + output);
  // precision f16: how many steps each model skipped on overflow.
  bool scaled = hasLossScale(board);
  if (scaled)
    header.push_back("skipped");
  header.push_back("status");

  std::vector<std::vector<std::string>> cells;
  for (const ModelResult &row : board.rows) {
    std::vector<std::string> line = {std::to_string(row.rank),
                                     std::to_string(row.model)};
    for (size_t h : columns)
      line.push_back(h < row.hyper.size() ? formatNumber(row.hyper[h]) : "");
    line.push_back(std::to_string(row.seed));
    const std::vector<double> &means = rankedMeans(board, row);
    for (size_t k = 0; k < board.outputs.size(); ++k)
      line.push_back(k < means.size() ? formatNumber(means[k]) : "");
    if (scaled)
      line.push_back(std::to_string(row.skippedSteps));
    line.push_back(statusOf(row));
    cells.push_back(std::move(line));
  }

  std::vector<size_t> widths(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    widths[c] = header[c].size();
    for (const auto &line : cells)
      widths[c] = std::max(widths[c], line[c].size());
  }
  // Numbers right-aligned for comparison; the last (status) column is text.
  // (Padded by bytes, not by fmt's display width: the same table for any
  // name.)
  std::string table;
  auto emit = [&](const std::vector<std::string> &line) {
    for (size_t c = 0; c < line.size(); ++c) {
      if (c)
        table += "  ";
      bool last = c + 1 == line.size();
      table += last ? line[c] : padLeft(line[c], widths[c]);
    }
    table += '\n';
  };
  emit(header);
  size_t total = 0;
  for (size_t w : widths)
    total += w + 2;
  table += std::string(total - 2, '-') + '\n';
  for (const auto &line : cells)
    emit(line);
  if (!constants.empty())
    table +=
        fmt::format("same for every model: {}\n", fmt::join(constants, ", "));
  return table;
}

bool hasLossScale(const Leaderboard &board) {
  return !board.rows.empty() && board.rows[0].lossScale.has_value();
}

std::string leaderboardToJson(const Leaderboard &board) {
  static const std::set<std::string> reserved = {"rank",
                                                 "model",
                                                 "seed",
                                                 "diverged",
                                                 "diverged_at_step",
                                                 "stopped_at_step",
                                                 "stop_reason",
                                                 "loss_scale",
                                                 "skipped_steps"};
  auto finiteOrNull = [](double value) {
    return std::isfinite(value) ? nlohmann::ordered_json(value)
                                : nlohmann::ordered_json();
  };
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const ModelResult &row : board.rows) {
    nlohmann::ordered_json object;
    object["rank"] = row.rank;
    object["model"] = row.model;
    object["seed"] = row.seed;
    for (size_t h = 0; h < board.hyperNames.size() && h < row.hyper.size();
         ++h) {
      const std::string &name = board.hyperNames[h];
      // A hyperparameter called e.g. "seed" must not overwrite the seed.
      object[reserved.count(name) ? "hyper_" + name : name] = row.hyper[h];
    }
    for (size_t k = 0; k < board.outputs.size(); ++k) {
      if (k < row.test.size())
        object["test_" + board.outputs[k]] = finiteOrNull(row.test[k]);
      if (k < row.train.size())
        object["train_" + board.outputs[k]] = finiteOrNull(row.train[k]);
      if (k < row.validation.size())
        object["validation_" + board.outputs[k]] =
            finiteOrNull(row.validation[k]);
    }
    object["diverged"] = row.diverged;
    object["diverged_at_step"] = row.divergedStep
                                     ? nlohmann::ordered_json(row.divergedStep)
                                     : nlohmann::ordered_json();
    object["stopped_at_step"] = row.stoppedStep
                                    ? nlohmann::ordered_json(row.stoppedStep)
                                    : nlohmann::ordered_json();
    if (row.stoppedStep)
      object["stop_reason"] = row.stopReason;
    if (row.lossScale) {
      object["loss_scale"] = finiteOrNull(*row.lossScale);
      object["skipped_steps"] = row.skippedSteps;
    }
    rows.push_back(std::move(object));
  }
  return rows.dump(2) + "\n";
}

} // namespace runtime
} // namespace mbt
