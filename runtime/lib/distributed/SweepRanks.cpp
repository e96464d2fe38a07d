//===- SweepRanks.cpp - A sweep's models split across ranks ---------------===//
#include "mbt/runtime/distributed/SweepRanks.h"

#include "mbt/common/ModelSlices.h"
#include "mbt/runtime/Error.h"

#include <fmt/format.h>

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

SweepRanks::SweepRanks(std::shared_ptr<RankGroup> group, const Manifest &sweep,
                       const Manifest &mine)
    : group(std::move(group)), sweep(sweep), mine(mine) {
  ModelSlice expected =
      modelSliceOf(sweep.models, this->group->size(), this->group->rank());
  if (sweep.isSlice() || mine.totalModels() != sweep.models ||
      mine.firstModel != expected.first || mine.models != expected.count)
    throw RuntimeError(fmt::format(
        "rank {} of {} trains models [{}, {}) of the {} of the sweep, but its "
        "artifact holds models [{}, {}) of {}: compile it with mbtc --ranks {}",
        this->group->rank(), this->group->size(), expected.first,
        expected.first + expected.count, sweep.models, mine.firstModel,
        mine.firstModel + mine.models, mine.totalModels(),
        this->group->size()));
  if (mine.paramCount != sweep.paramCount || mine.model != sweep.model)
    throw RuntimeError(fmt::format(
        "rank {}'s artifact is not a slice of the sweep's: its model '{}' has "
        "{} parameters, the sweep's '{}' {}",
        this->group->rank(), mine.model, mine.paramCount, sweep.model,
        sweep.paramCount));
}

std::vector<std::string> SweepRanks::allGather(const std::string &bytes,
                                               const std::string &what) {
  if (!group)
    return {bytes};
  return group->allGather(bytes, what);
}

SweepRanks::Means SweepRanks::gather(const Means &rows,
                                     const std::string &what) {
  if (!group || rows.empty())
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
  if (!group)
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
  if (!group || scales.empty())
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
