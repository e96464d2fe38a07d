//===- Csv.h - CSV and TSV tables (plain or gzipped) ------------*- C++ -*-===//
//
// A CSV file is a table of text: one row per line, fields split by a
// delimiter (',' or, for .tsv/.tab files, a tab), optionally a header row
// naming the columns. Fields follow RFC 4180: a field in double quotes may
// hold the delimiter, newlines and "" for a quote. The reader takes one
// column as the target and some (by default all other) columns as the
// features, and converts them to the Dataset the spec's layout asks for.
//
// The whole file is read into one buffer (through zlib, so .csv.gz works
// and a plain file reads the same) and scanned in place: fields are views
// into that buffer, so a 60,000 x 785 table costs no string per cell.
// Numbers are parsed with std::from_chars straight into float, which is
// locale-free and correctly rounded: "%.9g" text comes back bit-exact.
// Every error names the file and the line (and column, for a cell), because
// a table is edited by hand and the user must find the cell.
//
// Standardization (sklearn's StandardScaler) and the filling of missing
// cells (SimpleImputer) live here too because only tables need them:
// images and arrays usually come complete and scaled already.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DATA_CSV_H
#define MBT_RUNTIME_DATA_CSV_H

#include "mbt/runtime/Dataset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// How to read a table: which columns, and how the text is laid out.
struct CsvOptions {
  /// The target column: a header name, or a 0-based index written in
  /// decimal ("0"). A header name wins over an index that spells the same.
  std::string target;
  /// The feature columns, by name or index, in the order the input takes
  /// them; empty: every column but the target, in file order.
  std::vector<std::string> columns;
  /// Whether the first row (after skipRows) names the columns. Without a
  /// header, `target` and `columns` must be indices.
  bool header = true;
  /// Physical lines skipped before the header or data (titles, comments),
  /// counted before any quote is interpreted.
  int64_t skipRows = 0;
  /// 0: '\t' for .tsv, .tsv.gz, .tab and .tab.gz files, else ','.
  char delimiter = 0;
  /// A missing feature cell: empty, or one of pandas' default NA strings
  /// (NA, N/A, NaN, nan, null, NULL, None, #N/A, ...). Error: an error
  /// naming the cell; Zero and Mean: read as NaN, which fillMissing then
  /// replaces. Infinity is always an error, and so is a missing target.
  enum class Missing { Error, Zero, Mean } missing = Missing::Error;
};

/// Reads one split of a table at `path` (plain or gzipped) as `layout`
/// asks; `name` names the Dataset. For layout.target == Classes, the
/// target cells are integer labels in [0, layout.classes) when every cell
/// of the training split is an integer, else class names: the training
/// split's sorted distinct names are the classes (Dataset::classNames).
/// `trainClassNames` is null for the training split; for a test split it
/// is the training split's classNames (empty: integer labels), and a name
/// the training split never had is an error. For Values, layout.targetWidth
/// must be 1 and the target parses as a float. Throws RuntimeError naming
/// the file and the line (and 1-based character column of a bad cell).
Dataset readCsvDataset(const std::string &path, const CsvOptions &options,
                       const SampleLayout &layout,
                       const std::vector<std::string> *trainClassNames,
                       const std::string &name);

/// What fills a split's missing features (NaN after readCsvDataset): per
/// feature, 0 (Missing::Zero) or the training split's mean of its present
/// values (Missing::Mean, sklearn's SimpleImputer(strategy="mean")),
/// rounded to float.
struct Imputation {
  std::vector<float> fill;
};

/// The fill values of `train`. Throws RuntimeError naming the feature when
/// Mean finds a feature with no value in the training split.
Imputation fitImputation(const Dataset &train, CsvOptions::Missing missing);

/// Replaces every NaN feature of `data` by its feature's fill value.
void fillMissing(const Imputation &imputation, Dataset &data);

/// Per-feature statistics of a (training) split, as sklearn's
/// StandardScaler computes them: the mean and the population standard
/// deviation (ddof 0), accumulated in double; a constant feature (by
/// sklearn's test, which tolerates rounding) gets scale 1.
struct Standardization {
  std::vector<double> mean, scale;
};

/// The statistics of `train`'s features. Throws RuntimeError for a split
/// with no samples.
Standardization fitStandardization(const Dataset &train);

/// x = (x - float(mean)) / float(scale) for every sample, computed in
/// float, the same for the training and the test split (so a sample scales
/// the same whichever split it is in). Throws RuntimeError when `data` has
/// another feature count than the statistics.
void applyStandardization(const Standardization &s, Dataset &data);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DATA_CSV_H
