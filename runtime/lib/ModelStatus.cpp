//===- ModelStatus.cpp - Which models of a batch still train --------------===//

#include "mbt/runtime/ModelStatus.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mbt {
namespace runtime {

ModelStatus::ModelStatus(int64_t models)
    : divergedAt(models, 0), stoppedAt(models, 0), stopReason(models),
      bestValidationLoss(models, std::numeric_limits<double>::infinity()),
      evaluationsSinceBest(models, 0) {}

void ModelStatus::stop(int64_t model, int64_t step, std::string reason,
                       std::vector<StoppedModel> &stopped) {
  stoppedAt[model] = step;
  stopReason[model] = reason;
  stopped.push_back({model, std::move(reason)});
}

bool ModelStatus::stopModel(int64_t model, int64_t step,
                            const std::string &reason) {
  if (!training(model))
    return false;
  std::vector<StoppedModel> stopped;
  stop(model, step, reason, stopped);
  return true;
}

std::vector<StoppedModel>
ModelStatus::applyStopping(const std::vector<std::vector<double>> &held,
                           int64_t patience, bool halve,
                           const std::vector<std::string> &outputs,
                           const std::string &rankBy, int64_t step) {
  std::vector<StoppedModel> stopped;
  int64_t models = static_cast<int64_t>(divergedAt.size());
  // Early stopping watches the output the sweep ranks by, else the loss;
  // the best score is kept as lower-is-better (a negated accuracy).
  RankKey watched =
      rankBy.empty() ? RankKey{0, false} : chooseRankKey(outputs, rankBy);
  std::string notBetter =
      watched.output == 0
          ? std::string("no lower validation loss")
          : fmt::format("no better validation {}", outputs[watched.output]);
  if (patience > 0)
    for (int64_t model = 0; model < models; ++model) {
      if (!training(model))
        continue;
      double score = held[model][watched.output];
      if (watched.descending)
        score = -score;
      if (score < bestValidationLoss[model]) {
        bestValidationLoss[model] = score;
        evaluationsSinceBest[model] = 0;
      } else if (++evaluationsSinceBest[model] >= patience) {
        stop(model, step,
             fmt::format("early stopping: {} in {} evaluations", notBetter,
                         patience),
             stopped);
      }
    }
  if (!halve)
    return stopped;
  // The models still training, best first by the leaderboard's key on the
  // validation split (a NaN score last); the worse half stops.
  RankKey key = chooseRankKey(outputs, rankBy);
  std::vector<int64_t> active;
  for (int64_t model = 0; model < models; ++model)
    if (training(model))
      active.push_back(model);
  auto score = [&](int64_t model) { return held[model][key.output]; };
  std::stable_sort(active.begin(), active.end(), [&](int64_t a, int64_t b) {
    double sa = score(a), sb = score(b);
    if (std::isnan(sa) != std::isnan(sb))
      return std::isnan(sb);
    return key.descending ? sa > sb : sa < sb;
  });
  size_t keep = (active.size() + 1) / 2;
  for (size_t i = keep; i < active.size(); ++i)
    stop(active[i], step,
         fmt::format("successive halving: in the worse half of {} on "
                     "validation {}",
                     active.size(), outputs[key.output]),
         stopped);
  return stopped;
}

ModelStatus ModelStatus::slice(int64_t first, int64_t count) const {
  ModelStatus part(count);
  for (int64_t i = 0; i < count; ++i) {
    part.divergedAt[i] = divergedAt[first + i];
    part.stoppedAt[i] = stoppedAt[first + i];
    part.stopReason[i] = stopReason[first + i];
    part.bestValidationLoss[i] = bestValidationLoss[first + i];
    part.evaluationsSinceBest[i] = evaluationsSinceBest[first + i];
  }
  return part;
}

void ModelStatus::assign(int64_t first, const ModelStatus &part) {
  for (int64_t i = 0; i < part.size(); ++i) {
    divergedAt[first + i] = part.divergedAt[i];
    stoppedAt[first + i] = part.stoppedAt[i];
    stopReason[first + i] = part.stopReason[i];
    bestValidationLoss[first + i] = part.bestValidationLoss[i];
    evaluationsSinceBest[first + i] = part.evaluationsSinceBest[i];
  }
}

namespace {
template <typename T> void put(std::string &bytes, T value) {
  bytes.append(reinterpret_cast<const char *>(&value), sizeof value);
}

template <typename T> T take(const std::string &bytes, size_t &at) {
  if (at + sizeof(T) > bytes.size())
    throw RuntimeError("a model status of another rank is cut short");
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  at += sizeof value;
  return value;
}
} // namespace

std::string ModelStatus::toBytes() const {
  std::string bytes;
  put<int64_t>(bytes, size());
  for (int64_t i = 0; i < size(); ++i) {
    put(bytes, divergedAt[i]);
    put(bytes, stoppedAt[i]);
    put(bytes, bestValidationLoss[i]);
    put(bytes, evaluationsSinceBest[i]);
    put<int64_t>(bytes, static_cast<int64_t>(stopReason[i].size()));
    bytes += stopReason[i];
  }
  return bytes;
}

ModelStatus ModelStatus::fromBytes(const std::string &bytes) {
  size_t at = 0;
  auto models = take<int64_t>(bytes, at);
  if (models < 0 || static_cast<size_t>(models) > bytes.size())
    throw RuntimeError("a model status of another rank is malformed");
  ModelStatus status(models);
  for (int64_t i = 0; i < models; ++i) {
    status.divergedAt[i] = take<int64_t>(bytes, at);
    status.stoppedAt[i] = take<int64_t>(bytes, at);
    status.bestValidationLoss[i] = take<double>(bytes, at);
    status.evaluationsSinceBest[i] = take<int64_t>(bytes, at);
    auto length = take<int64_t>(bytes, at);
    if (length < 0 || at + static_cast<size_t>(length) > bytes.size())
      throw RuntimeError("a model status of another rank is cut short");
    status.stopReason[i] = bytes.substr(at, length);
    at += length;
  }
  return status;
}

void ModelStatus::saveTo(RunCheckpoint &c) const {
  c.divergedStep = divergedAt;
  c.stoppedStep = stoppedAt;
  c.stopReason = stopReason;
  c.bestValidationLoss = bestValidationLoss;
  c.evaluationsSinceBest = evaluationsSinceBest;
}

void ModelStatus::restoreFrom(const RunCheckpoint &c) {
  divergedAt = c.divergedStep;
  stoppedAt = c.stoppedStep;
  stopReason = c.stopReason;
  bestValidationLoss = c.bestValidationLoss;
  evaluationsSinceBest = c.evaluationsSinceBest;
}

} // namespace runtime
} // namespace mbt
