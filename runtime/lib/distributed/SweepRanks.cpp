//===- SweepRanks.cpp - A sweep's models split across ranks ---------------===//
#include "mbt/runtime/distributed/SweepRanks.h"

#include "mbt/common/ModelSlices.h"
#include "mbt/runtime/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

namespace mbt {
namespace runtime {

namespace {
/// Rows of doubles as bytes: rows, width, then the values row-major.
std::string rowsToBytes(const SweepRanks::Means &rows) {
  int64_t header[2] = {static_cast<int64_t>(rows.size()),
                       rows.empty() ? 0 : static_cast<int64_t>(rows[0].size())};
  std::string bytes(reinterpret_cast<const char *>(header), sizeof header);
  for (const std::vector<double> &row : rows)
    bytes.append(reinterpret_cast<const char *>(row.data()),
                 row.size() * sizeof(double));
  return bytes;
}

void appendRows(const std::string &bytes, SweepRanks::Means &rows) {
  int64_t header[2];
  if (bytes.size() < sizeof header)
    throw RuntimeError("the rows of another rank are cut short");
  std::memcpy(header, bytes.data(), sizeof header);
  size_t expected = sizeof header +
                    static_cast<size_t>(header[0] * header[1]) * sizeof(double);
  if (header[0] < 0 || header[1] < 0 || bytes.size() != expected)
    throw RuntimeError("the rows of another rank are malformed");
  const char *at = bytes.data() + sizeof header;
  for (int64_t r = 0; r < header[0]; ++r) {
    std::vector<double> row(header[1]);
    std::memcpy(row.data(), at, header[1] * sizeof(double));
    at += header[1] * sizeof(double);
    rows.push_back(std::move(row));
  }
}
} // namespace

SweepRanks::SweepRanks(const Manifest &manifest)
    : sweep(manifest), mine(manifest) {}

/// Why `mine` is not rank `rank` of `ranks`'s slice of `sweep`, or "".
static std::string sliceProblem(const Manifest &sweep, const Manifest &mine,
                                int64_t rank, int64_t ranks) {
  ModelSlice expected = modelSliceOf(sweep.models, ranks, rank);
  if (sweep.isSlice() || mine.totalModels() != sweep.models ||
      mine.firstModel != expected.first || mine.models != expected.count)
    return fmt::format(
        "rank {} of {} trains models [{}, {}) of the {} of the sweep, but its "
        "artifact holds models [{}, {}) of {}: compile it with mbtc --ranks {}",
        rank, ranks, expected.first, expected.first + expected.count,
        sweep.models, mine.firstModel, mine.firstModel + mine.models,
        mine.totalModels(), ranks);
  if (mine.paramCount != sweep.paramCount || mine.model != sweep.model)
    return fmt::format(
        "rank {}'s artifact is not a slice of the sweep's: its model '{}' has "
        "{} parameters, the sweep's '{}' {}",
        rank, mine.model, mine.paramCount, sweep.model, sweep.paramCount);
  // A slice left from another compile of the spec (other seeds or
  // hyperparameters) would train other models than the sweep reports.
  for (int64_t i = 0; i < mine.models; ++i) {
    int64_t model = mine.firstModel + i;
    if (mine.seeds[i] != sweep.seeds[model] ||
        mine.hyperValues[i] != sweep.hyperValues[model])
      return fmt::format(
          "rank {}'s artifact is not from the compile of the sweep's: its "
          "model {} (model {} of the sweep) has another seed or other "
          "hyperparameters; compile both again with mbtc --ranks {}",
          rank, i, model, ranks);
  }
  return "";
}

SweepRanks::SweepRanks(std::shared_ptr<RankGroup> group, const Manifest &sweep,
                       const Manifest &mine)
    : group(std::move(group)), sweep(sweep), mine(mine) {
  // Every rank learns every rank's problem, so that none waits at its
  // first gather for a rank that gave up.
  std::string problems;
  for (const std::string &problem : this->group->allGather(
           sliceProblem(sweep, mine, this->group->rank(), this->group->size()),
           "the check of the ranks' artifacts"))
    if (!problem.empty())
      problems += (problems.empty() ? "" : "; ") + problem;
  if (!problems.empty())
    throw RuntimeError(problems);
}

/// What every rank's artifact must agree on when each holds every model:
/// the models, their layout, seeds and hyperparameters.
static std::string artifactFingerprint(const Manifest &manifest) {
  std::string text =
      fmt::format("{} models of '{}', {} parameters", manifest.models,
                  manifest.model, manifest.paramCount);
  for (int64_t i = 0; i < manifest.models; ++i)
    text += fmt::format("; {}: {} {}", i, manifest.seeds[i],
                        fmt::join(manifest.hyperValues[i], " "));
  return text;
}

/// Why rank `rank`'s artifact `mine` cannot train every model on a share
/// of the data, or "".
static std::string dataArtifactProblem(const Manifest &mine, int64_t rank) {
  if (mine.isSlice())
    return fmt::format("rank {}'s artifact holds a slice of the models "
                       "(mbtc --ranks), but --distribute=data gives every "
                       "rank every model",
                       rank);
  if (!mine.gradStep)
    return fmt::format("rank {}'s artifact has no mbt_grad_step, which "
                       "--distribute=data calls: compile the spec with mbtc "
                       "--distribute=data",
                       rank);
  return "";
}

SweepRanks::SweepRanks(std::shared_ptr<RankGroup> group, const Manifest &sweep,
                       DataAcrossRanks)
    : group(std::move(group)), sweep(sweep), mine(sweep),
      dataAcrossRanks(true) {
  // Every rank learns every rank's problem, so that none waits at its
  // first collective for a rank that gave up.
  int64_t rank = this->group->rank();
  std::vector<std::string> parts = this->group->allGather(
      dataArtifactProblem(sweep, rank) + "\n" + artifactFingerprint(sweep),
      "the check of the ranks' artifacts");
  auto fingerprint = [](const std::string &part) {
    return part.substr(part.find('\n') + 1);
  };
  std::string problems;
  for (size_t r = 0; r < parts.size(); ++r) {
    std::string theirs = parts[r].substr(0, parts[r].find('\n'));
    if (theirs.empty() && fingerprint(parts[r]) != fingerprint(parts[0]))
      theirs = fmt::format("rank {} loaded another artifact than rank 0 "
                           "(other models, seeds or hyperparameters): every "
                           "rank must load the same",
                           r);
    if (!theirs.empty())
      problems += (problems.empty() ? "" : "; ") + theirs;
  }
  if (!problems.empty())
    throw RuntimeError(problems);
}

std::unique_ptr<DeviceCollectives>
SweepRanks::joinDeviceCollectives(std::string &why) {
  if (!group) {
    why = "one process";
    return nullptr;
  }
  return joinNccl(*group, static_cast<int>(readLaunchEnvironment().localRank),
                  why);
}

ModelSlice SweepRanks::shareOf(int64_t samples) const {
  if (!sharesData())
    return {0, samples};
  return modelSliceOf(samples, group->size(), group->rank());
}

void SweepRanks::sumAcrossRanks(float *data, size_t count,
                                const std::string &what) {
  if (group)
    group->allReduceSum(data, count, what);
}

void SweepRanks::sumAcrossRanks(double *data, size_t count,
                                const std::string &what) {
  if (group)
    group->allReduceSum(data, count, what);
}

std::vector<std::string> SweepRanks::allGather(const std::string &bytes,
                                               const std::string &what) {
  if (!group)
    return {bytes};
  return group->allGather(bytes, what);
}

SweepRanks::Means SweepRanks::gather(const Means &rows,
                                     const std::string &what) {
  if (!group || rows.empty() || dataAcrossRanks)
    return rows;
  Means all;
  for (const std::string &part : group->allGather(rowsToBytes(rows), what))
    appendRows(part, all);
  if (static_cast<int64_t>(all.size()) != sweep.models)
    throw RuntimeError(fmt::format("{}: the ranks hold {} models, not the "
                                   "sweep's {}",
                                   what, all.size(), sweep.models));
  return all;
}

ModelStatus SweepRanks::gather(const ModelStatus &status,
                               const std::string &what) {
  if (!group || dataAcrossRanks)
    return status;
  ModelStatus all(sweep.models);
  int64_t first = 0;
  for (const std::string &part : group->allGather(status.toBytes(), what)) {
    ModelStatus slice = ModelStatus::fromBytes(part);
    if (first + slice.size() > sweep.models)
      throw RuntimeError(what + ": the ranks hold more models than the sweep");
    all.assign(first, slice);
    first += slice.size();
  }
  return all;
}

std::vector<LossScaleReading>
SweepRanks::gather(const std::vector<LossScaleReading> &scales,
                   const std::string &what) {
  if (!group || scales.empty() || dataAcrossRanks)
    return scales;
  Means rows;
  for (const LossScaleReading &reading : scales)
    rows.push_back({reading.scale, static_cast<double>(reading.skippedSteps)});
  std::vector<LossScaleReading> all;
  for (const std::vector<double> &row : gather(rows, what))
    all.push_back({row[0], static_cast<int64_t>(row[1])});
  return all;
}

} // namespace runtime
} // namespace mbt
