//===- CsvTest.cpp - CSV/TSV tables, their errors, standardization --------===//
//
// Every case writes its own small table into a temp dir, byte for byte (line
// ends, byte order marks and quotes matter), so each layout and each kind of
// damage is produced exactly. Error tests check the place the message names
// (line, or line:column), since finding the cell is the message's point.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/Csv.h"
#include "mbt/runtime/Error.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

void writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

SampleLayout classes(int64_t features, int64_t count) {
  SampleLayout layout;
  layout.inputShape = {features};
  layout.classes = count;
  return layout;
}

SampleLayout values(int64_t features, int64_t width = 1) {
  SampleLayout layout;
  layout.inputShape = {features};
  layout.target = SampleLayout::Target::Values;
  layout.targetWidth = width;
  return layout;
}

CsvOptions target(const std::string &column) {
  CsvOptions options;
  options.target = column;
  return options;
}

/// Reads `text` written as `name` in a fresh temp dir.
Dataset readText(const std::string &text, const CsvOptions &options,
                 const SampleLayout &layout, const std::string &name = "t.csv",
                 const std::vector<std::string> *trainNames = nullptr) {
  TempDir dir;
  writeText(dir.file(name), text);
  return readCsvDataset(dir.file(name), options, layout, trainNames, "test");
}

/// The error reading `text` as "t.csv", with the temp path replaced by
/// "PATH" so messages can be compared whole.
std::string errorReading(const std::string &text, const CsvOptions &options,
                         const SampleLayout &layout,
                         const std::vector<std::string> *trainNames = nullptr) {
  TempDir dir;
  writeText(dir.file("t.csv"), text);
  std::string error = errorOf([&] {
    readCsvDataset(dir.file("t.csv"), options, layout, trainNames, "test");
  });
  size_t at = error.find(dir.file("t.csv"));
  if (at != std::string::npos)
    error.replace(at, dir.file("t.csv").size(), "PATH");
  return error;
}

TEST(CsvTest, HeaderNamesTheTargetAndFeaturesInFileOrder) {
  Dataset data = readText("a,label,b\n1.5,2,-3\n4,0,5e-1\n", target("label"),
                          classes(2, 3));
  EXPECT_EQ(data.name, "test");
  EXPECT_EQ(data.count, 2);
  EXPECT_EQ(data.numFeatures, 2);
  EXPECT_EQ(data.numClasses, 3);
  EXPECT_THAT(data.x, ElementsAre(1.5f, -3.0f, 4.0f, 0.5f));
  EXPECT_THAT(data.y, ElementsAre(2, 0));
  EXPECT_TRUE(data.classNames.empty());
  EXPECT_FALSE(data.regression());
}

TEST(CsvTest, ColumnsChooseAndOrderTheFeatures) {
  CsvOptions options = target("2");
  options.columns = {"c", "0"};
  Dataset data = readText("a,b,y,c\n1,2,0,3\n", options, classes(2, 1));
  EXPECT_THAT(data.x, ElementsAre(3.0f, 1.0f));
  // A header name wins over the index it spells: "0" is column 1 here.
  Dataset named = readText("y,0\n2,1\n", target("0"), classes(1, 2));
  EXPECT_THAT(named.x, ElementsAre(2.0f));
  EXPECT_THAT(named.y, ElementsAre(1));
}

TEST(CsvTest, WithoutHeaderColumnsAreIndicesAndRowOneIsData) {
  CsvOptions options = target("2");
  options.header = false;
  Dataset data = readText("1,2,1\n3,4,0\n", options, classes(2, 2));
  EXPECT_EQ(data.count, 2);
  EXPECT_THAT(data.x, ElementsAre(1.0f, 2.0f, 3.0f, 4.0f));
  EXPECT_THAT(data.y, ElementsAre(1, 0));
  options.target = "label";
  EXPECT_EQ(errorReading("1,2,1\n", options, classes(2, 2)),
            "'PATH': the target column 'label' must be a 0-based index: the "
            "file has no header, so its columns have no names");
}

TEST(CsvTest, SkipRowsSkipsPhysicalLinesAndTheyStillCount) {
  CsvOptions options = target("y");
  options.skipRows = 2;
  // An unbalanced quote in a title must not swallow the header.
  std::string text = "title \"x\n# comment\nf,y\n1,0\nz,1\n";
  EXPECT_EQ(errorReading(text, options, classes(1, 2)),
            "'PATH':5:1: column 'f': 'z' is not a number");
}

TEST(CsvTest, TsvByExtensionAndDelimiterByOption) {
  for (const char *name : {"t.tsv", "t.tab", "t.TSV"})
    EXPECT_THAT(readText("a\ty\n1.5\t1\n", target("y"), classes(1, 2), name).x,
                ElementsAre(1.5f))
        << name;
  // The same text in a .csv is one column, named "a<tab>y".
  EXPECT_EQ(errorReading("a\ty\n1.5\t1\n", target("y"), classes(1, 2)),
            "'PATH': no column named 'y' (the target column); the header "
            "names: 'a\\x09y'");
  CsvOptions options = target("y");
  options.delimiter = '\t';
  EXPECT_THAT(readText("a\ty\n2\t0\n", options, classes(1, 2)).x,
              ElementsAre(2.0f));
  options.delimiter = ';';
  EXPECT_EQ(errorReading("a;y\n1,5;1\n", options, classes(1, 2)),
            "'PATH':2:1: column 'a': '1,5' is not a number");
}

TEST(CsvTest, CrlfLineEndsAreNotPartOfTheLastField) {
  Dataset data =
      readText("a,y\r\n1,cat\r\n2,dog\r\n", target("y"), classes(1, 2));
  EXPECT_THAT(data.classNames, ElementsAre("cat", "dog"));
  Dataset numbers = readText("y,a\r\n1,2\r\n0,3", target("y"), classes(1, 2));
  EXPECT_THAT(numbers.x, ElementsAre(2.0f, 3.0f));
  EXPECT_THAT(numbers.y, ElementsAre(1, 0));
}

TEST(CsvTest, ByteOrderMarkIsSkipped) {
  Dataset data = readText("\xEF\xBB\xBF"
                          "y,a\n1,2\n",
                          target("y"), classes(1, 2));
  EXPECT_THAT(data.y, ElementsAre(1));
  EXPECT_THAT(data.x, ElementsAre(2.0f));
  // Nor does it count as a character of line 1.
  CsvOptions options = target("0");
  options.header = false;
  EXPECT_EQ(errorReading("\xEF\xBB\xBF"
                         "1,x\n",
                         options, classes(1, 2)),
            "'PATH':1:3: column 1: 'x' is not a number");
}

TEST(CsvTest, ColumnsCountCharactersNotBytes) {
  // U+00E9 is two bytes in UTF-8 and one character.
  EXPECT_EQ(errorReading("a,y,b\n1,\xC3\xA9,x\n", target("y"), classes(2, 2)),
            "'PATH':2:5: column 'b': 'x' is not a number");
}

TEST(CsvTest, QuotedFieldsHoldDelimitersQuotesAndNewlines) {
  std::string text = "\"a,1\",\"the \"\"class\"\"\"\n"
                     "\"1.5\",\"x, y\"\n"
                     "2,\"two\nlines\"\n"
                     "3,\"q\"\"\"\n";
  Dataset data = readText(text, target("the \"class\""), classes(1, 3));
  EXPECT_THAT(data.x, ElementsAre(1.5f, 2.0f, 3.0f));
  EXPECT_THAT(data.classNames, ElementsAre("q\"", "two\nlines", "x, y"));
  EXPECT_THAT(data.y, ElementsAre(2, 1, 0));
  // The newline inside quotes counts: the bad cell is on line 4.
  EXPECT_EQ(
      errorReading("a,y\n1,\"x\ny\"\nbad,\"z\"\n", target("y"), classes(1, 2)),
      "'PATH':4:1: column 'a': 'bad' is not a number");
  // A field after a quoted newline: its line and its column on that line.
  EXPECT_EQ(errorReading("a,y,b\n0,\"c\nd\",x\n", target("y"), classes(2, 2)),
            "'PATH':3:4: column 'b': 'x' is not a number");
}

TEST(CsvTest, BrokenQuotesAreErrorsWithTheirPlace) {
  EXPECT_EQ(errorReading("a,y\n1,\"open\n2,0\n", target("y"), classes(1, 2)),
            "'PATH':2:3: the quoted field never ends");
  EXPECT_EQ(errorReading("a,y\n1,\"x\"y\n", target("y"), classes(1, 2)),
            "'PATH':2:6: 'y' after the closing quote of a field (a quote "
            "inside quotes is written \"\")");
}

void writeGzip(const std::string &path, const std::string &text) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(file);
}

TEST(CsvTest, GzippedFileReadsLikePlain) {
  TempDir dir;
  std::string text = "a,b,y\n0.25,1e3,1\n-2,7,0\n";
  writeGzip(dir.file("t.csv.gz"), text);
  writeText(dir.file("t.csv"), text);
  Dataset gz = readCsvDataset(dir.file("t.csv.gz"), target("y"), classes(2, 2),
                              nullptr, "gz");
  Dataset plain = readCsvDataset(dir.file("t.csv"), target("y"), classes(2, 2),
                                 nullptr, "plain");
  EXPECT_THAT(gz.x, ElementsAre(0.25f, 1000.0f, -2.0f, 7.0f));
  EXPECT_EQ(gz.x, plain.x);
  EXPECT_EQ(gz.y, plain.y);
  writeGzip(dir.file("t.tsv.gz"), "a\tb\ty\n1\t2\t0\n");
  Dataset tsv = readCsvDataset(dir.file("t.tsv.gz"), target("y"), classes(2, 2),
                               nullptr, "tsv");
  EXPECT_THAT(tsv.x, ElementsAre(1.0f, 2.0f));
}

TEST(CsvTest, BlankLinesAreSkippedButCounted) {
  Dataset data =
      readText("a,y\n1,0\n\n\r\n2,1\n\n\n", target("y"), classes(1, 2));
  EXPECT_EQ(data.count, 2);
  EXPECT_EQ(errorReading("a,y\n\n1,0\n\nx,1\n", target("y"), classes(1, 2)),
            "'PATH':5:1: column 'a': 'x' is not a number");
}

TEST(CsvTest, RaggedRowNamesItsLineAndTheCounts) {
  EXPECT_EQ(errorReading("a,b,y\n1,2,0\n1,2\n", target("y"), classes(2, 2)),
            "'PATH': line 3: 2 fields, expected 3 (as many as the header)");
  CsvOptions options = target("0");
  options.header = false;
  EXPECT_EQ(errorReading("0,1\n1,2\n\n0,1,2\n", options, classes(1, 2)),
            "'PATH': line 4: 3 fields, expected 2 (as many as the first row)");
  // A trailing delimiter is one more (empty) field.
  EXPECT_THAT(errorReading("a,y\n1,0,\n", target("y"), classes(1, 2)),
              HasSubstr("line 2: 3 fields, expected 2"));
}

TEST(CsvTest, NonNumericCellNamesLineColumnAndName) {
  EXPECT_EQ(
      errorReading("a,bb,y\n1,2,0\n10,abc,1\n", target("y"), classes(2, 2)),
      "'PATH':3:4: column 'bb': 'abc' is not a number");
  EXPECT_EQ(errorReading("a,y\n,0\n", target("y"), classes(1, 2)),
            "'PATH':2:1: column 'a': '' is missing (set missing = \"mean\" or "
            "\"zero\" to fill missing features)");
  EXPECT_EQ(errorReading("a,y\n1e99,0\n", target("y"), classes(1, 2)),
            "'PATH':2:1: column 'a': '1e99' is out of float range");
  CsvOptions options = target("1");
  options.header = false;
  EXPECT_EQ(errorReading("1,0\n2 3,1\n", options, classes(1, 2)),
            "'PATH':2:1: column 0: '2 3' is not a number");
}

TEST(CsvTest, NumbersMayHaveSpacesAPlusAndUnderflowToZero) {
  Dataset data =
      readText("a,b,c,y\n  1.5 ,+2,\"-1e-60\",0\n", target("y"), classes(3, 1));
  EXPECT_THAT(data.x, ElementsAre(1.5f, 2.0f, 0.0f));
  EXPECT_TRUE(std::signbit(data.x[2]));
}

TEST(CsvTest, UnknownColumnNameListsTheHeader) {
  EXPECT_EQ(errorReading("a,b,y\n1,2,0\n", target("label"), classes(2, 2)),
            "'PATH': no column named 'label' (the target column); the header "
            "names: 'a', 'b', 'y'");
  CsvOptions options = target("y");
  options.columns = {"a", "c"};
  EXPECT_THAT(errorReading("a,b,y\n1,2,0\n", options, classes(2, 2)),
              HasSubstr("no column named 'c' (the feature column)"));
  EXPECT_EQ(errorReading("a,b,y\n1,2,0\n", target("3"), classes(2, 2)),
            "'PATH': the target column index 3 is out of range: the file has "
            "3 columns");
}

TEST(CsvTest, ColumnListMistakesAreErrors) {
  CsvOptions options = target("y");
  options.columns = {"a", "y"};
  EXPECT_EQ(errorReading("a,y\n1,0\n", options, classes(2, 2)),
            "'PATH': column 'y' is the target; it cannot be a feature too");
  options.columns = {"a", "0"};
  EXPECT_EQ(errorReading("a,y\n1,0\n", options, classes(2, 2)),
            "'PATH': column 'a' is listed twice as a feature");
  EXPECT_EQ(errorReading("a,y\n1,0\n", target(""), classes(1, 2)),
            "'PATH': no target column given (a header name or a 0-based "
            "index)");
}

TEST(CsvTest, DuplicateHeaderNameIsAnErrorOnlyWhenUsed) {
  Dataset data = readText("a,a,y\n1,2,0\n", target("y"), classes(2, 1));
  EXPECT_THAT(data.x, ElementsAre(1.0f, 2.0f));
  CsvOptions options = target("y");
  options.columns = {"a"};
  EXPECT_EQ(errorReading("a,a,y\n1,2,0\n", options, classes(1, 1)),
            "'PATH': the feature column 'a' is ambiguous: the header names 2 "
            "columns so (indices 0, 1); rename one or refer to it by index");
  options.columns = {"1"};
  EXPECT_THAT(readText("a,a,y\n1,2,0\n", options, classes(1, 1)).x,
              ElementsAre(2.0f));
}

TEST(CsvTest, FeatureCountMustMatchTheInput) {
  EXPECT_EQ(errorReading("a,b,y\n1,2,0\n", target("y"), classes(3, 2)),
            "'PATH': 2 feature columns (every column but the target), but the "
            "input takes 3 values: choose the features with columns = [...], "
            "or declare an input of size 2");
}

TEST(CsvTest, StringClassesAreTheSortedDistinctNames) {
  Dataset data = readText("a,y\n1,dog\n2,cat\n3, bird \n4,dog\n5,3\n",
                          target("y"), classes(1, 4));
  EXPECT_THAT(data.classNames, ElementsAre("3", "bird", "cat", "dog"));
  EXPECT_THAT(data.y, ElementsAre(3, 2, 1, 3, 0));
  EXPECT_EQ(data.numClasses, 4);
  EXPECT_EQ(
      errorReading("a,y\n1,dog\n2,cat\n3,bird\n", target("y"), classes(1, 2)),
      "'PATH': column 'y' holds 3 class names ('bird', 'cat', 'dog') but "
      "the target declares 2 classes");
}

TEST(CsvTest, TestSplitMapsNamesThroughTheTrainingSplit) {
  std::vector<std::string> trainNames = {"bird", "cat", "dog"};
  Dataset test = readText("a,y\n1,dog\n2,bird\n", target("y"), classes(1, 3),
                          "t.csv", &trainNames);
  EXPECT_THAT(test.y, ElementsAre(2, 0));
  EXPECT_THAT(test.classNames, ElementsAre());
  EXPECT_EQ(
      errorReading("a,y\n1,dog\n2,cow\n", target("y"), classes(1, 3),
                   &trainNames),
      "'PATH':3:3: column 'y': class 'cow' does not occur in the training "
      "split (its classes: 'bird', 'cat', 'dog')");
  // Integer labels in training: the test split must be integers too.
  std::vector<std::string> none;
  EXPECT_THAT(
      readText("a,y\n1,2\n", target("y"), classes(1, 3), "t.csv", &none).y,
      ElementsAre(2));
  EXPECT_EQ(errorReading("a,y\n1,dog\n", target("y"), classes(1, 3), &none),
            "'PATH':2:3: column 'y': 'dog' is not an integer label (the "
            "training split's labels are integers)");
}

TEST(CsvTest, IntegerLabelOutOfRangeNamesLineLabelAndClassCount) {
  EXPECT_EQ(errorReading("a,y\n1,0\n2,3\n", target("y"), classes(1, 3)),
            "'PATH':3:3: column 'y': label 3 is out of range [0, 3): the "
            "target declares 3 classes");
  EXPECT_THAT(errorReading("a,y\n1,-1\n", target("y"), classes(1, 3)),
              HasSubstr("label -1 is out of range [0, 3)"));
  std::vector<std::string> none;
  EXPECT_THAT(errorReading("a,y\n1,7\n", target("y"), classes(1, 3), &none),
              HasSubstr("'PATH':2:3: column 'y': label 7 is out of range"));
  EXPECT_EQ(errorReading("a,y\n1, \n", target("y"), classes(1, 3)),
            "'PATH':2:3: column 'y': '' is an empty target");
}

TEST(CsvTest, RegressionTargetIsOneFloatColumn) {
  Dataset data = readText("a,y,b\n1,0.5,2\n3,-7e2,4\n", target("y"), values(2));
  EXPECT_TRUE(data.regression());
  EXPECT_EQ(data.targetWidth, 1);
  EXPECT_THAT(data.targets, ElementsAre(0.5f, -700.0f));
  EXPECT_TRUE(data.y.empty());
  EXPECT_THAT(data.x, ElementsAre(1.0f, 2.0f, 3.0f, 4.0f));
  EXPECT_EQ(errorReading("a,y\n1,2\n", target("y"), values(1, 2)),
            "'PATH': a CSV file has one target column, but the target "
            "declares 2 values per sample");
  EXPECT_EQ(errorReading("a,y\n1,x\n", target("y"), values(1)),
            "'PATH':2:3: column 'y': 'x' is not a number");
}

TEST(CsvTest, MissingAndNonFiniteCellsAreErrorsByDefault) {
  std::string text = "a,b,y\n1,2,0\n3,nan,1\n";
  EXPECT_EQ(errorReading(text, target("y"), classes(2, 2)),
            "'PATH':3:3: column 'b': 'nan' is missing (set missing = \"mean\" "
            "or \"zero\" to fill missing features)");
  EXPECT_THAT(errorReading("a,b,y\n1,,0\n", target("y"), classes(2, 2)),
              HasSubstr("'PATH':2:3: column 'b': '' is missing"));
  EXPECT_THAT(errorReading("a,y\n1,-inf\n", target("y"), values(1)),
              HasSubstr("'PATH':2:3: column 'y': '-inf' is not finite"));
  EXPECT_THAT(errorReading("a,b,y\n1,inf,0\n", target("y"), classes(2, 2)),
              HasSubstr("column 'b': 'inf' is not finite (NaN and infinity "
                        "are refused)"));
  // Filling features never fills a target, nor an infinite feature.
  CsvOptions filled = target("y");
  filled.missing = CsvOptions::Missing::Mean;
  EXPECT_THAT(errorReading("a,y\n1,NA\n", filled, values(1)),
              HasSubstr("column 'y': 'NA' is missing (every target needs a "
                        "value)"));
  EXPECT_THAT(errorReading("a,b,y\n1,-inf,0\n", filled, classes(2, 2)),
              HasSubstr("'-inf' is not finite"));
}

// Mutations caught: a test split filled with its own means (a leak), a
// mean that counts the missing cells as 0, an NA string not recognized, and
// filling after standardization rather than before (DataSources.cpp).
TEST(CsvTest, MissingFeaturesFilledWithTheTrainingMeanOrZero) {
  std::string train = "a,b,y\n1,,0\n3,NA,1\n5,4,0\nN/A,8,1\n";
  std::string test = "a,b,y\nnull,None,0\n7, nan ,1\n";
  CsvOptions options = target("y");
  options.missing = CsvOptions::Missing::Mean;
  Dataset trainData = readText(train, options, classes(2, 2));
  Dataset testData = readText(test, options, classes(2, 2));
  EXPECT_TRUE(std::isnan(trainData.x[1]) && std::isnan(trainData.x[6]));
  Imputation mean = fitImputation(trainData, options.missing);
  EXPECT_EQ(mean.fill, (std::vector<float>{3.0f, 6.0f}));
  fillMissing(mean, trainData);
  fillMissing(mean, testData);
  EXPECT_EQ(trainData.x, (std::vector<float>{1, 6, 3, 6, 5, 4, 3, 8}));
  EXPECT_EQ(testData.x, (std::vector<float>{3, 6, 7, 6}));
  Imputation zero = fitImputation(readText(train, options, classes(2, 2)),
                                  CsvOptions::Missing::Zero);
  EXPECT_EQ(zero.fill, (std::vector<float>{0.0f, 0.0f}));

  Dataset empty = readText("a,b,y\n1,,0\n2,NA,1\n", options, classes(2, 2));
  EXPECT_THAT(errorOf([&] { fitImputation(empty, options.missing); }),
              HasSubstr("feature 1 has no value in the training split"));
}

TEST(CsvTest, FloatsParseBitExactFromNineDigitText) {
  std::mt19937 random(1234);
  std::vector<float> expected;
  std::string text = "x,y\n";
  char cell[64];
  for (int i = 0; i < 4000; ++i) {
    uint32_t bits = random();
    if (i % 4 == 1)
      bits &= 0x807fffffu; // subnormals
    float value;
    std::memcpy(&value, &bits, 4);
    if (!std::isfinite(value))
      continue;
    std::snprintf(cell, sizeof cell, "%.9g", value);
    text += std::string(cell) + ",0\n";
    expected.push_back(value);
  }
  // Just above the midpoint of 1 and the next float: a float. Through
  // double it would round to the midpoint, then to even (1.0f).
  text += "1.0000000596046447753906250001,0\n";
  expected.push_back(std::nextafter(1.0f, 2.0f));
  Dataset data = readText(text, target("y"), classes(1, 1));
  ASSERT_EQ(data.x.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    uint32_t got, want;
    std::memcpy(&got, &data.x[i], 4);
    std::memcpy(&want, &expected[i], 4);
    ASSERT_EQ(got, want) << "row " << i << ": " << expected[i];
  }
}

TEST(CsvTest, NoRowsIsAnError) {
  EXPECT_EQ(errorReading("", target("y"), classes(1, 2)),
            "'PATH': no header row (the file has 0 lines)");
  EXPECT_EQ(errorReading("a,y\n\n", target("y"), classes(1, 2)),
            "'PATH': no data rows after the header");
  EXPECT_THAT(errorOf([] {
                readCsvDataset("/nonexistent/t.csv", target("y"), classes(1, 2),
                               nullptr, "t");
              }),
              HasSubstr("cannot open '/nonexistent/t.csv'"));
}

TEST(CsvStandardizationTest, MatchesAHandComputation) {
  Dataset train;
  train.name = "train";
  train.count = 4;
  train.numFeatures = 2;
  // Feature 0: 1, 2, 3, 6 (mean 3, population variance 3.5); feature 1 is
  // constant, so its scale stays 1.
  train.x = {1, 5, 2, 5, 3, 5, 6, 5};
  Standardization s = fitStandardization(train);
  ASSERT_THAT(s.mean, ElementsAre(3.0, 5.0));
  EXPECT_DOUBLE_EQ(s.scale[0], std::sqrt(3.5));
  EXPECT_EQ(s.scale[1], 1.0);
  Dataset test = train;
  test.count = 1;
  test.x = {10, 7};
  applyStandardization(s, train);
  applyStandardization(s, test);
  float scale = static_cast<float>(std::sqrt(3.5));
  EXPECT_EQ(train.x[0], (1.0f - 3.0f) / scale);
  EXPECT_EQ(train.x[6], (6.0f - 3.0f) / scale);
  EXPECT_EQ(train.x[1], 0.0f);
  // The test split is scaled by the training split's statistics.
  EXPECT_EQ(test.x[0], (10.0f - 3.0f) / scale);
  EXPECT_EQ(test.x[1], 2.0f);
}

TEST(CsvStandardizationTest, ShapesMustAgree) {
  Dataset empty;
  empty.name = "e";
  empty.numFeatures = 2;
  EXPECT_THAT(errorOf([&] { fitStandardization(empty); }),
              HasSubstr("'e': cannot standardize the features of an empty"));
  Standardization s{{0.0}, {1.0}};
  Dataset data = empty;
  EXPECT_THAT(errorOf([&] { applyStandardization(s, data); }),
              HasSubstr("cannot standardize 2 features with statistics of 1"));
}

} // namespace
