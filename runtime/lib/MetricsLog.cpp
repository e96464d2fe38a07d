//===- MetricsLog.cpp - JSON-lines metrics file ---------------------------===//

#include "mbt/runtime/MetricsLog.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace mbt {
namespace runtime {

std::string formatMetricsLine(int64_t epoch, int64_t step, int64_t model,
                              const std::string &split,
                              const std::vector<std::string> &outputs,
                              const std::vector<double> &values) {
  nlohmann::ordered_json line;
  line["epoch"] = epoch;
  line["step"] = step;
  line["model"] = model;
  line["split"] = split;
  for (size_t k = 0; k < outputs.size() && k < values.size(); ++k) {
    // An output named like a record field must not overwrite that field.
    bool reserved = outputs[k] == "epoch" || outputs[k] == "step" ||
                    outputs[k] == "model" || outputs[k] == "split";
    line[reserved ? "metric_" + outputs[k] : outputs[k]] =
        std::isfinite(values[k]) ? nlohmann::ordered_json(values[k])
                                 : nlohmann::ordered_json();
  }
  return line.dump() + "\n";
}

MetricsLog::MetricsLog(const std::string &dir)
    : filePath(dir.empty() ? "" : dir + "/metrics.jsonl") {}

void MetricsLog::reset() {
  if (!filePath.empty())
    writeFileAtomically(filePath, "");
}

void MetricsLog::truncate(int64_t bytes) {
  if (filePath.empty())
    return;
  struct stat info;
  if (::stat(filePath.c_str(), &info) != 0) {
    if (bytes == 0)
      return reset();
    throw RuntimeError(fmt::format("cannot resume: '{}' is missing (the "
                                   "checkpoint counts {} bytes of it)",
                                   filePath, bytes));
  }
  if (info.st_size < bytes)
    throw RuntimeError(fmt::format("cannot resume: '{}' has {} bytes, fewer "
                                   "than the {} the checkpoint counts",
                                   filePath, info.st_size, bytes));
  if (::truncate(filePath.c_str(), bytes) != 0)
    throw RuntimeError("cannot truncate '" + filePath +
                       "': " + std::strerror(errno));
}

void MetricsLog::append(const std::string &lines) {
  if (!filePath.empty())
    appendToFile(filePath, lines);
}

} // namespace runtime
} // namespace mbt
