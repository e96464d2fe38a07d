//===- StepPlan.cpp - an epoch's steps as a file --------------------------===//
#include "mbt/runtime/StepPlan.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"

#include <nlohmann/json.hpp>

#include <sstream>

namespace mbt {
namespace runtime {

std::string formatStepPlan(const std::vector<LengthGroup> &steps) {
  std::string text;
  for (const LengthGroup &step : steps) {
    text += "{\"samples\": [";
    for (size_t i = 0; i < step.samples.size(); ++i)
      text += (i ? ", " : "") + std::to_string(step.samples[i]);
    text +=
        "], \"padded_length\": " + std::to_string(step.paddedLength) + "}\n";
  }
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
      throw RuntimeError(path + ":" + std::to_string(number) + ": " + why);
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
        throw RuntimeError("step " + std::to_string(s) +
                           " of the plan takes "
                           "sample " +
                           std::to_string(sample) + ", but '" + dataName +
                           "' has " + std::to_string(lengths.size()) +
                           " samples");
      if (seen[sample]++)
        throw RuntimeError("the plan takes sample " + std::to_string(sample) +
                           " more than once");
      if (lengths[sample] > steps[s].paddedLength)
        throw RuntimeError("step " + std::to_string(s) +
                           " of the plan pads "
                           "to " +
                           std::to_string(steps[s].paddedLength) +
                           " tokens, but its sample " + std::to_string(sample) +
                           " has " + std::to_string(lengths[sample]));
    }
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (!seen[i])
      throw RuntimeError("the plan leaves out sample " + std::to_string(i) +
                         " of '" + dataName +
                         "': a plan is one epoch, every "
                         "sample once");
}

} // namespace runtime
} // namespace mbt
