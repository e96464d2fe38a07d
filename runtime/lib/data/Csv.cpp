//===- Csv.cpp - CSV and TSV tables into a Dataset ------------------------===//
//
// Gives the scanner's fields (CsvScanner.h) their meaning: the header's
// names, the chosen columns, numbers, labels and class names. Every cell is
// checked where it is read, so an error names its line and column; only
// whether the training split's labels are integers or names waits for the
// last row, because one name among integers makes them all names.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/Csv.h"

#include "CsvScanner.h"
#include "mbt/runtime/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>

namespace mbt {
namespace runtime {

namespace {

using csv::columnOf;
using csv::Field;
using csv::fieldText;
using csv::Row;
using csv::shown;
using csv::trim;

/// The file being read and its columns, for resolving and messages.
struct Table {
  std::string path;
  bool header = true;
  std::vector<std::string> names; // the header's; empty without one
  size_t width = 0;               // fields per row

  std::string columnName(size_t i) const {
    return header ? fmt::format("column '{}'", shown(names[i]))
                  : fmt::format("column {}", i);
  }
  std::string where(const Field &field) const {
    return fmt::format("'{}':{}:{}", path, field.line,
                       columnOf(field.lineStart, field.start));
  }
};

/// A name as the user wrote it: unescaped, and without the spaces around
/// an unquoted one ("a, b" names "b").
std::string_view nameText(const Field &field, std::string &scratch) {
  std::string_view text = fieldText(field, scratch);
  return field.quoted ? text : trim(text);
}

Table makeTable(const std::string &path, bool header, const Row &first) {
  Table table;
  table.path = path;
  table.header = header;
  table.width = first.fields.size();
  std::string scratch;
  if (header)
    for (const Field &field : first.fields)
      table.names.emplace_back(nameText(field, scratch));
  return table;
}

/// Up to 20 names, quoted and comma-separated, with the total if cut.
std::string listNames(const std::vector<std::string> &names) {
  constexpr size_t kMax = 20;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kMax; ++i)
    out += fmt::format("{}'{}'", i ? ", " : "", shown(names[i]));
  if (names.size() > kMax)
    out += fmt::format(", ... ({} in all)", names.size());
  return out;
}

bool parseInteger(std::string_view text, int64_t &value) {
  text = trim(text);
  const char *last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, value);
  return ec == std::errc() && ptr == last && !text.empty();
}

/// The column `ref` names: a header name first, else a 0-based index.
size_t resolveColumn(const Table &table, const std::string &ref,
                     const char *role) {
  if (table.header) {
    std::vector<size_t> hits;
    for (size_t i = 0; i < table.names.size(); ++i)
      if (table.names[i] == ref)
        hits.push_back(i);
    if (hits.size() == 1)
      return hits[0];
    if (hits.size() > 1)
      throw RuntimeError(fmt::format(
          "'{}': the {} column '{}' is ambiguous: the header names {} "
          "columns so (indices {}); rename one or refer to it by index",
          table.path, role, ref, hits.size(), fmt::join(hits, ", ")));
  }
  int64_t index = 0;
  if (parseInteger(ref, index) && ref == trim(ref) && index >= 0) {
    if (static_cast<uint64_t>(index) < table.width)
      return static_cast<size_t>(index);
    throw RuntimeError(fmt::format(
        "'{}': the {} column index {} is out of range: the file has {} "
        "columns",
        table.path, role, index, table.width));
  }
  if (table.header)
    throw RuntimeError(fmt::format(
        "'{}': no column named '{}' (the {} column); the header names: {}",
        table.path, ref, role, listNames(table.names)));
  throw RuntimeError(fmt::format(
      "'{}': the {} column '{}' must be a 0-based index: the file has no "
      "header, so its columns have no names",
      table.path, role, ref));
}

struct Selection {
  size_t target = 0;
  std::vector<size_t> features;
};

Selection selectColumns(const Table &table, const CsvOptions &options,
                        const SampleLayout &layout) {
  if (options.target.empty())
    throw RuntimeError(fmt::format(
        "'{}': no target column given (a header name or a 0-based index)",
        table.path));
  Selection selection;
  selection.target = resolveColumn(table, options.target, "target");
  for (size_t i = 0; options.columns.empty() && i < table.width; ++i)
    if (i != selection.target)
      selection.features.push_back(i);
  for (const std::string &ref : options.columns) {
    size_t column = resolveColumn(table, ref, "feature");
    if (column == selection.target)
      throw RuntimeError(
          fmt::format("'{}': {} is the target; it cannot be a feature too",
                      table.path, table.columnName(column)));
    if (std::count(selection.features.begin(), selection.features.end(),
                   column))
      throw RuntimeError(fmt::format("'{}': {} is listed twice as a feature",
                                     table.path, table.columnName(column)));
    selection.features.push_back(column);
  }
  int64_t count = static_cast<int64_t>(selection.features.size());
  if (count != layout.features())
    throw RuntimeError(fmt::format(
        "'{}': {} feature column{} ({}), but the input takes {} values: "
        "choose the features with columns = [...], or declare an input of "
        "size {}",
        table.path, count, count == 1 ? "" : "s",
        options.columns.empty() ? "every column but the target" : "as listed",
        layout.features(), count));
  return selection;
}

enum class Parsed { Ok, NotNumber, OutOfRange };

/// `text` (spaces around it allowed, an optional '+') as the correctly
/// rounded float, locale-free. libstdc++'s from_chars reports a value that
/// rounds to zero or to infinity as out of range; double tells them apart,
/// and a value that rounds to zero is zero, as numpy reads it.
Parsed parseFloat(std::string_view text, float &value) {
  text = trim(text);
  const char *first = text.data(), *last = first + text.size();
  if (last - first > 1 && *first == '+' && first[1] != '+' && first[1] != '-')
    ++first;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::invalid_argument || ptr != last)
    return Parsed::NotNumber;
  if (ec == std::errc::result_out_of_range) {
    double wide = 0;
    auto again = std::from_chars(first, last, wide);
    if (again.ec != std::errc() || std::fabs(wide) >= 1)
      return Parsed::OutOfRange;
    value = std::signbit(wide) ? -0.0f : 0.0f;
  }
  return Parsed::Ok;
}

[[noreturn]] void cellError(const Table &table, const Field &field,
                            size_t column, std::string_view text,
                            const std::string &problem) {
  throw RuntimeError(fmt::format("{}: {}: '{}' {}", table.where(field),
                                 table.columnName(column), shown(text),
                                 problem));
}

/// Whether a cell says "no value": empty, or one of pandas.read_csv's
/// default na_values.
bool isMissingText(std::string_view text) {
  static constexpr std::string_view kMissing[] = {
      "",     "#N/A",   "#N/A N/A", "#NA",  "-1.#IND", "-1.#QNAN", "-NaN",
      "-nan", "1.#IND", "1.#QNAN",  "<NA>", "N/A",     "NA",       "NULL",
      "NaN",  "None",   "n/a",      "nan",  "null"};
  text = trim(text);
  return std::find(std::begin(kMissing), std::end(kMissing), text) !=
         std::end(kMissing);
}

/// What a missing cell in a column gets: an error (for a feature, with how
/// to fill it instead), or NaN for fillMissing.
enum class MissingCell { Error, FeatureError, NaN };

/// A feature or regression target cell as a float, checked.
float readNumber(const Table &table, const Field &field, size_t column,
                 std::string &scratch, MissingCell missing) {
  std::string_view text = fieldText(field, scratch);
  if (isMissingText(text)) {
    if (missing == MissingCell::NaN)
      return std::numeric_limits<float>::quiet_NaN();
    cellError(table, field, column, text,
              missing == MissingCell::FeatureError
                  ? "is missing (set missing = \"mean\" or \"zero\" to fill "
                    "missing features)"
                  : "is missing (every target needs a value)");
  }
  float value = 0;
  Parsed parsed = parseFloat(text, value);
  if (parsed == Parsed::NotNumber)
    cellError(table, field, column, text, "is not a number");
  if (parsed == Parsed::OutOfRange)
    cellError(table, field, column, text, "is out of float range");
  if (!std::isfinite(value))
    cellError(table, field, column, text,
              "is not finite (NaN and infinity are refused)");
  return value;
}

/// Turns one split's target cells into labels or values.
class TargetReader {
public:
  TargetReader(const Table &table, size_t column, const SampleLayout &layout,
               const std::vector<std::string> *trainNames)
      : table(table), column(column), layout(layout), trainNames(trainNames) {}

  void read(const Field &field, Dataset &data) {
    if (layout.target == SampleLayout::Target::Values)
      data.targets.push_back(
          readNumber(table, field, column, scratch, MissingCell::Error));
    else if (!trainNames)
      collect(field);
    else if (trainNames->empty())
      data.y.push_back(integerLabel(field));
    else
      data.y.push_back(namedLabel(field));
  }

  /// The training split's labels, once every cell is known.
  void finish(Dataset &data) {
    if (layout.target == SampleLayout::Target::Values || trainNames)
      return;
    if (allIntegers) {
      for (const Field &field : integerFields)
        data.y.push_back(integerLabel(field));
      return;
    }
    if (static_cast<int64_t>(nameIds.size()) > layout.classes) {
      std::vector<std::string> names;
      for (const auto &entry : nameIds)
        names.push_back(entry.first);
      throw RuntimeError(fmt::format(
          "'{}': {} holds {} class names ({}) but the target declares {} "
          "classes",
          table.path, table.columnName(column), names.size(), listNames(names),
          layout.classes));
    }
    std::vector<int32_t> rank(nameIds.size());
    for (const auto &[name, id] : nameIds) {
      rank[id] = static_cast<int32_t>(data.classNames.size());
      data.classNames.push_back(name);
    }
    for (int32_t id : ids)
      data.y.push_back(rank[id]);
  }

private:
  /// Training split: every cell's name, and while every cell is an
  /// integer, the cells themselves (checked in finish: a cell that is not
  /// an integer makes them all names, and then no range applies).
  void collect(const Field &field) {
    std::string_view name = nameText(field, scratch);
    if (name.empty())
      cellError(table, field, column, name, "is an empty target");
    int64_t unused = 0;
    allIntegers = allIntegers && parseInteger(name, unused);
    if (allIntegers)
      integerFields.push_back(field);
    auto found = nameIds.find(name);
    if (found == nameIds.end())
      found =
          nameIds
              .emplace(std::string(name), static_cast<int32_t>(nameIds.size()))
              .first;
    ids.push_back(found->second);
  }

  int32_t integerLabel(const Field &field) {
    std::string_view text = fieldText(field, scratch);
    int64_t label = 0;
    if (!parseInteger(text, label))
      cellError(table, field, column, text,
                "is not an integer label (the training split's labels are "
                "integers)");
    if (label < 0 || label >= layout.classes)
      throw RuntimeError(fmt::format(
          "{}: {}: label {} is out of range [0, {}): the target declares {} "
          "classes",
          table.where(field), table.columnName(column), label, layout.classes,
          layout.classes));
    return static_cast<int32_t>(label);
  }

  int32_t namedLabel(const Field &field) {
    std::string_view name = nameText(field, scratch);
    auto found = std::lower_bound(trainNames->begin(), trainNames->end(), name);
    if (found == trainNames->end() || *found != name)
      throw RuntimeError(fmt::format(
          "{}: {}: class '{}' does not occur in the training split (its "
          "classes: {})",
          table.where(field), table.columnName(column), shown(name),
          listNames(*trainNames)));
    return static_cast<int32_t>(found - trainNames->begin());
  }

  const Table &table;
  size_t column;
  const SampleLayout &layout;
  const std::vector<std::string> *trainNames;
  std::string scratch;
  bool allIntegers = true;
  std::vector<Field> integerFields;
  std::map<std::string, int32_t, std::less<>> nameIds; // name -> first seen
  std::vector<int32_t> ids;
};

void checkLayout(const std::string &path, const SampleLayout &layout) {
  if (layout.target == SampleLayout::Target::Values && layout.targetWidth != 1)
    throw RuntimeError(fmt::format(
        "'{}': a CSV file has one target column, but the target declares {} "
        "values per sample",
        path, layout.targetWidth));
}

/// An empty Dataset shaped as `layout`, with room for the rows the text
/// can hold: a row of `width` fields takes at least `width` bytes, so the
/// reservation is bounded by the file, whatever its line count says.
Dataset startDataset(const std::string &name, const SampleLayout &layout,
                     const std::string &text, size_t width) {
  Dataset data;
  data.name = name;
  data.numFeatures = layout.features();
  size_t lines =
      static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  size_t rows =
      std::min(lines + 1, text.size() / std::max<size_t>(width, 1) + 1);
  data.x.reserve(rows * static_cast<size_t>(data.numFeatures));
  if (layout.target == SampleLayout::Target::Values) {
    data.targetWidth = 1;
    data.targets.reserve(rows);
  } else {
    data.numClasses = layout.classes;
    data.y.reserve(rows);
  }
  return data;
}

/// Statistics and data must agree on the shape before any row is touched.
void checkShape(const Dataset &data) {
  if (data.count < 0 || data.numFeatures < 0 ||
      data.x.size() != static_cast<size_t>(data.count * data.numFeatures))
    throw RuntimeError(
        fmt::format("'{}': {} samples of {} features do not fill {} values",
                    data.name, data.count, data.numFeatures, data.x.size()));
}

} // namespace

Dataset readCsvDataset(const std::string &path, const CsvOptions &options,
                       const SampleLayout &layout,
                       const std::vector<std::string> *trainClassNames,
                       const std::string &name) {
  checkLayout(path, layout);
  if (options.skipRows < 0)
    throw RuntimeError(
        fmt::format("'{}': cannot skip {} rows", path, options.skipRows));
  char delimiter = csv::delimiterFor(path, options.delimiter);
  std::string text = csv::readText(path);
  csv::Scanner scanner(path, text, delimiter);
  scanner.skipLines(options.skipRows);
  Row row;
  if (!scanner.next(row))
    throw RuntimeError(fmt::format("'{}': no {} (the file has {} lines)", path,
                                   options.header ? "header row" : "rows",
                                   scanner.currentLine() - 1));
  Table table = makeTable(path, options.header, row);
  Selection selection = selectColumns(table, options, layout);
  Dataset data = startDataset(name, layout, text, table.width);
  TargetReader targets(table, selection.target, layout, trainClassNames);
  MissingCell missing = options.missing == CsvOptions::Missing::Error
                            ? MissingCell::FeatureError
                            : MissingCell::NaN;
  std::string scratch;
  auto consume = [&](const Row &row) {
    if (row.fields.size() != table.width)
      throw RuntimeError(fmt::format(
          "'{}': line {}: {} fields, expected {} (as many as the {})", path,
          row.line, row.fields.size(), table.width,
          options.header ? "header" : "first row"));
    for (size_t column : selection.features)
      data.x.push_back(
          readNumber(table, row.fields[column], column, scratch, missing));
    targets.read(row.fields[selection.target], data);
    ++data.count;
  };
  if (!options.header)
    consume(row);
  while (scanner.next(row))
    consume(row);
  if (data.count == 0)
    throw RuntimeError(
        fmt::format("'{}': no data rows after the header", path));
  targets.finish(data);
  return data;
}

Imputation fitImputation(const Dataset &train, CsvOptions::Missing missing) {
  checkShape(train);
  size_t features = static_cast<size_t>(train.numFeatures);
  Imputation imputation;
  imputation.fill.assign(features, 0.0f);
  if (missing != CsvOptions::Missing::Mean)
    return imputation;
  std::vector<double> sums(features, 0.0);
  std::vector<int64_t> present(features, 0);
  for (int64_t i = 0; i < train.count; ++i)
    for (size_t j = 0; j < features; ++j)
      if (!std::isnan(train.sample(i)[j])) {
        sums[j] += train.sample(i)[j];
        ++present[j];
      }
  for (size_t j = 0; j < features; ++j) {
    if (present[j] == 0)
      throw RuntimeError(
          fmt::format("'{}': feature {} has no value in the training split, so "
                      "missing = \"mean\" has nothing to fill it with",
                      train.name, j));
    imputation.fill[j] =
        static_cast<float>(sums[j] / static_cast<double>(present[j]));
  }
  return imputation;
}

void fillMissing(const Imputation &imputation, Dataset &data) {
  checkShape(data);
  if (imputation.fill.size() != static_cast<size_t>(data.numFeatures))
    throw RuntimeError(
        fmt::format("'{}': cannot fill {} features with values for {}",
                    data.name, data.numFeatures, imputation.fill.size()));
  for (int64_t i = 0; i < data.count; ++i) {
    float *row = data.x.data() + i * data.numFeatures;
    for (size_t j = 0; j < imputation.fill.size(); ++j)
      if (std::isnan(row[j]))
        row[j] = imputation.fill[j];
  }
}

Standardization fitStandardization(const Dataset &train) {
  checkShape(train);
  if (train.count <= 0)
    throw RuntimeError(fmt::format(
        "'{}': cannot standardize the features of an empty split", train.name));
  size_t features = static_cast<size_t>(train.numFeatures);
  double n = static_cast<double>(train.count);
  Standardization s;
  s.mean.assign(features, 0.0);
  std::vector<double> squares(features, 0.0);
  for (int64_t i = 0; i < train.count; ++i)
    for (size_t j = 0; j < features; ++j)
      s.mean[j] += train.sample(i)[j];
  for (double &mean : s.mean)
    mean /= n;
  // Two passes: the squared deviations from the mean, not E[x^2] - E[x]^2,
  // which cancels badly for large means.
  for (int64_t i = 0; i < train.count; ++i)
    for (size_t j = 0; j < features; ++j) {
      double d = train.sample(i)[j] - s.mean[j];
      squares[j] += d * d;
    }
  s.scale.resize(features);
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  for (size_t j = 0; j < features; ++j) {
    double variance = squares[j] / n;
    // sklearn's _is_constant_feature: a variance within rounding error of
    // zero is a constant feature, which keeps scale 1 (no division by ~0).
    double bound = n * kEps * variance + std::pow(n * s.mean[j] * kEps, 2);
    s.scale[j] = variance <= bound ? 1.0 : std::sqrt(variance);
  }
  return s;
}

void applyStandardization(const Standardization &s, Dataset &data) {
  checkShape(data);
  size_t features = static_cast<size_t>(data.numFeatures);
  if (s.mean.size() != features || s.scale.size() != features)
    throw RuntimeError(fmt::format(
        "'{}': cannot standardize {} features with statistics of {}", data.name,
        features, s.mean.size()));
  std::vector<float> mean(s.mean.begin(), s.mean.end());
  std::vector<float> scale(s.scale.begin(), s.scale.end());
  for (int64_t i = 0; i < data.count; ++i) {
    float *row = data.x.data() + i * data.numFeatures;
    for (size_t j = 0; j < features; ++j)
      row[j] = (row[j] - mean[j]) / scale[j];
  }
}

} // namespace runtime
} // namespace mbt
