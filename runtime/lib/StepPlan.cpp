//===- StepPlan.cpp - an epoch's steps as a file --------------------------===//
#include "mbt/runtime/StepPlan.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <iterator>
#include <sstream>

namespace mbt {
namespace runtime {

std::string formatStepPlan(const std::vector<LengthGroup> &steps) {
  std::string text;
  for (const LengthGroup &step : steps)
    fmt::format_to(std::back_inserter(text),
                   "{{\"samples\": [{}], \"padded_length\": {}}}\n",
                   fmt::join(step.samples, ", "), step.paddedLength);
  return text;
}

std::vector<LengthGroup> readStepPlan(const std::string &path) {
  std::istringstream lines(readInputFile(path));
  std::vector<LengthGroup> steps;
  std::string line;
  for (int64_t number = 1; std::getline(lines, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    auto fail = [&](const std::string &why) {
      throw RuntimeError(fmt::format("{}:{}: {}", path, number, why));
    };
    nlohmann::json step = nlohmann::json::parse(line, nullptr,
                                                /*allow_exceptions=*/false);
    if (!step.is_object())
      fail("expected a JSON object {\"samples\": [...], \"padded_length\": "
           "N}");
    const auto samples = step.find("samples");
    const auto padded = step.find("padded_length");
    if (samples == step.end() || !samples->is_array() || samples->empty())
      fail("\"samples\" must be a non-empty array of sample indices");
    if (padded == step.end() || !padded->is_number_integer() ||
        padded->get<int64_t>() < 1)
      fail("\"padded_length\" must be a positive integer");
    LengthGroup group;
    for (const auto &sample : *samples) {
      if (!sample.is_number_integer() || sample.get<int64_t>() < 0)
        fail("sample indices must be non-negative integers");
      group.samples.push_back(sample.get<int64_t>());
    }
    group.paddedLength = padded->get<int64_t>();
    steps.push_back(std::move(group));
  }
  if (steps.empty())
    throw RuntimeError(path + ": the plan has no steps");
  return steps;
}

void checkStepPlan(const std::vector<LengthGroup> &steps,
                   const std::vector<int64_t> &lengths,
                   const std::string &dataName) {
  std::vector<uint8_t> seen(lengths.size(), 0);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (int64_t sample : steps[s].samples) {
      if (sample < 0 || sample >= static_cast<int64_t>(lengths.size()))
        throw RuntimeError(fmt::format(
            "step {} of the plan takes sample {}, but '{}' has {} samples", s,
            sample, dataName, lengths.size()));
      if (seen[sample]++)
        throw RuntimeError(
            fmt::format("the plan takes sample {} more than once", sample));
      if (lengths[sample] > steps[s].paddedLength)
        throw RuntimeError(fmt::format(
            "step {} of the plan pads to {} tokens, but its sample {} has {}",
            s, steps[s].paddedLength, sample, lengths[sample]));
    }
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (!seen[i])
      throw RuntimeError(fmt::format("the plan leaves out sample {} of '{}': a "
                                     "plan is one epoch, every sample once",
                                     i, dataName));
}

} // namespace runtime
} // namespace mbt
