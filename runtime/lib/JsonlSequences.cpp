//===- JsonlSequences.cpp - JSONL token data sets -------------------------===//

#include "mbt/runtime/ByteTokenizer.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/FileUtil.h"
#include "mbt/runtime/SequenceFiles.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace mbt {
namespace runtime {

namespace {

/// One parsed line before labels are numbered (string labels are numbered
/// once the whole file has been read).
struct PendingLabel {
  bool present = false;
  bool isName = false;
  int64_t number = 0;
  std::string name;
  int64_t line = 0;
};

[[noreturn]] void failAt(const std::string &path, int64_t line, int64_t column,
                         const std::string &message) {
  throw RuntimeError(fmt::format("{}:{}:{}: {}", path, line, column, message));
}

/// The tokens of one object: its "text" as bytes or its "tokens" array.
std::vector<int32_t> tokensOf(const nlohmann::json &object,
                              const std::string &path, int64_t line) {
  bool hasText = object.contains("text"), hasTokens = object.contains("tokens");
  if (hasText == hasTokens)
    failAt(path, line, 1,
           hasText ? "a sample has either \"text\" or \"tokens\", not both"
                   : "a sample needs a \"text\" string or a \"tokens\" array");
  if (hasText) {
    const nlohmann::json &text = object["text"];
    if (!text.is_string())
      failAt(path, line, 1, "\"text\" must be a string");
    return encodeBytes(text.get_ref<const std::string &>());
  }
  const nlohmann::json &array = object["tokens"];
  if (!array.is_array())
    failAt(path, line, 1, "\"tokens\" must be an array of integers");
  std::vector<int32_t> tokens;
  tokens.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) {
    const nlohmann::json &token = array[i];
    if (!token.is_number_integer() || token.get<int64_t>() < 0 ||
        token.get<int64_t>() > std::numeric_limits<int32_t>::max())
      failAt(path, line, 1,
             fmt::format("token {} is {}, not an integer in [0, 2^31)", i,
                         token.dump()));
    tokens.push_back(static_cast<int32_t>(token.get<int64_t>()));
  }
  return tokens;
}

PendingLabel labelOf(const nlohmann::json &object, const std::string &path,
                     int64_t line) {
  PendingLabel label;
  label.line = line;
  auto found = object.find("label");
  if (found == object.end())
    return label;
  label.present = true;
  if (found->is_string()) {
    label.isName = true;
    label.name = found->get<std::string>();
  } else if (found->is_number_integer() && found->get<int64_t>() >= 0 &&
             found->get<int64_t>() <= std::numeric_limits<int32_t>::max()) {
    label.number = found->get<int64_t>();
  } else {
    failAt(path, line, 1,
           "\"label\" is " + found->dump() +
               ", not a class number (>= 0) or a class name");
  }
  return label;
}

} // namespace

SequenceDataset loadJsonlSequences(const std::string &path,
                                   const SequenceLoadOptions &options) {
  std::string contents = readInputFile(path);
  SequenceDataset dataset;
  dataset.name = path;
  std::vector<PendingLabel> labels;
  bool anyText = false;
  int32_t maxToken = -1;

  size_t start = 0;
  int64_t line = 0;
  while (start < contents.size()) {
    size_t end = contents.find('\n', start);
    if (end == std::string::npos)
      end = contents.size();
    ++line;
    std::string_view text(contents.data() + start, end - start);
    start = end + 1;
    if (text.find_first_not_of(" \t\r") == std::string_view::npos)
      continue; // blank lines (a trailing newline) carry no sample

    nlohmann::json object;
    try {
      object = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error &error) {
      // error.byte is 1-based within the line: the column.
      std::string what = error.what();
      size_t colon = what.rfind(": ");
      failAt(path, line, static_cast<int64_t>(error.byte),
             "invalid JSON: " +
                 (colon == std::string::npos ? what : what.substr(colon + 2)));
    } catch (const nlohmann::json::exception &error) {
      // A number that does not fit a double (out_of_range 406) is not a
      // parse_error and carries no position.
      std::string what = error.what();
      size_t bracket = what.find("] ");
      failAt(path, line, 1,
             "invalid JSON: " + (bracket == std::string::npos
                                     ? what
                                     : what.substr(bracket + 2)));
    }
    if (!object.is_object())
      failAt(path, line, 1, "each line must be a JSON object");
    anyText |= object.contains("text");
    std::vector<int32_t> tokens = tokensOf(object, path, line);
    if (options.maxLength > 0 &&
        static_cast<int64_t>(tokens.size()) > options.maxLength)
      tokens.resize(static_cast<size_t>(options.maxLength));
    for (int32_t token : tokens)
      maxToken = std::max(maxToken, token);
    dataset.append(tokens.data(), static_cast<int64_t>(tokens.size()));
    labels.push_back(labelOf(object, path, line));
  }
  if (dataset.count() == 0)
    throw RuntimeError(path + ": no samples (an empty file, or only blank "
                              "lines)");

  // A text sample's tokens are bytes; token arrays bring their own ids. A
  // file mixing both uses the larger vocabulary.
  dataset.vocabSize = std::max(anyText ? kByteVocabSize : 0, maxToken + 1);

  // Labels: all or none, all numbers or all names.
  const PendingLabel &first = labels.front();
  for (const PendingLabel &label : labels) {
    if (label.present != first.present)
      failAt(path, label.line, 1,
             fmt::format("this sample has {} \"label\" but line {} has {}: "
                         "label every sample or none",
                         label.present ? "a" : "no", first.line,
                         first.present ? "one" : "none"));
    if (label.isName != first.isName)
      failAt(path, label.line, 1,
             fmt::format("\"label\" mixes class names and class numbers (line "
                         "{} has a {})",
                         first.line, first.isName ? "name" : "number"));
  }
  if (!first.present)
    return dataset;
  if (!first.isName) {
    for (const PendingLabel &label : labels)
      dataset.labels.push_back(static_cast<int32_t>(label.number));
    dataset.labelNames = options.labelNames;
    return dataset;
  }
  std::vector<std::string> names = options.labelNames;
  if (names.empty()) {
    std::set<std::string> found;
    for (const PendingLabel &label : labels)
      found.insert(label.name);
    names.assign(found.begin(), found.end());
  }
  std::map<std::string, int32_t> index;
  for (size_t i = 0; i < names.size(); ++i)
    index.emplace(names[i], static_cast<int32_t>(i));
  for (const PendingLabel &label : labels) {
    auto it = index.find(label.name);
    if (it == index.end())
      failAt(path, label.line, 1,
             fmt::format("unknown class name \"{}\" (the training data names "
                         "{} classes)",
                         label.name, names.size()));
    dataset.labels.push_back(it->second);
  }
  dataset.labelNames = std::move(names);
  return dataset;
}

} // namespace runtime
} // namespace mbt
