//===- JsonlSequencesTest.cpp - JSONL sequence data sets ------------------===//

#include "TestUtil.h"

#include "mbt/runtime/ByteTokenizer.h"
#include "mbt/runtime/SequenceSource.h"

#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace mbt::runtime;
using mbt::test::TempDir;
using ::testing::HasSubstr;

namespace {
std::string writeFile(const TempDir &dir, const std::string &name,
                      const std::string &contents) {
  std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

/// The message of the RuntimeError that loading `contents` throws.
std::string loadError(const std::string &contents,
                      const SequenceLoadOptions &options = {}) {
  TempDir dir;
  std::string path = writeFile(dir, "data.jsonl", contents);
  try {
    loadJsonlSequences(path, options);
  } catch (const RuntimeError &error) {
    std::string message = error.what();
    return message.substr(message.find("data.jsonl"));
  }
  return "no error";
}
} // namespace

TEST(JsonlSequences, TextBecomesByteTokensWithClassNamesSorted) {
  TempDir dir;
  std::string path = writeFile(dir, "data.jsonl",
                               "{\"text\": \"hi\", \"label\": \"spam\"}\n"
                               "\n"
                               "{\"text\": \"abc\", \"label\": \"ham\"}\n");
  SequenceDataset data = loadJsonlSequences(path);
  ASSERT_EQ(data.count(), 2);
  EXPECT_EQ(data.vocabSize, kByteVocabSize);
  EXPECT_EQ(data.length(0), 2);
  EXPECT_EQ(data.length(1), 3);
  EXPECT_EQ(decodeBytes(data.sample(1), 3), "abc");
  EXPECT_EQ(data.labelNames, (std::vector<std::string>{"ham", "spam"}));
  EXPECT_EQ(data.labels, (std::vector<int32_t>{1, 0}));
}

TEST(JsonlSequences, TokenArraysKeepTheirIdsAndSizeTheVocabulary) {
  TempDir dir;
  std::string path = writeFile(dir, "data.jsonl",
                               "{\"tokens\": [5, 0, 41], \"label\": 2}\n"
                               "{\"tokens\": [7], \"label\": 0}");
  SequenceDataset data = loadJsonlSequences(path);
  ASSERT_EQ(data.count(), 2);
  EXPECT_EQ(data.vocabSize, 42);
  EXPECT_EQ(std::vector<int32_t>(data.sample(0), data.sample(0) + 3),
            (std::vector<int32_t>{5, 0, 41}));
  EXPECT_EQ(data.labels, (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(data.numClasses(), 3);
}

TEST(JsonlSequences, UnlabelledDataHasNoLabels) {
  TempDir dir;
  std::string path = writeFile(dir, "lm.jsonl", "{\"text\": \"a b c\"}\n");
  SequenceDataset data = loadJsonlSequences(path);
  EXPECT_FALSE(data.hasLabels());
  EXPECT_EQ(data.length(0), 5);
}

TEST(JsonlSequences, MaxLengthCutsLongSamples) {
  TempDir dir;
  std::string path = writeFile(
      dir, "data.jsonl", "{\"text\": \"abcdefgh\"}\n{\"text\": \"ab\"}\n");
  SequenceLoadOptions options;
  options.maxLength = 4;
  SequenceDataset data = loadJsonlSequences(path, options);
  EXPECT_EQ(data.lengths(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(decodeBytes(data.sample(0), 4), "abcd");
}

TEST(JsonlSequences, TestSplitUsesTheTrainingClassNames) {
  TempDir dir;
  std::string path =
      writeFile(dir, "test.jsonl", "{\"text\": \"x\", \"label\": \"b\"}\n");
  SequenceLoadOptions options;
  options.labelNames = {"a", "b", "c"};
  SequenceDataset data = loadJsonlSequences(path, options);
  EXPECT_EQ(data.labels, (std::vector<int32_t>{1}));
  EXPECT_EQ(data.labelNames.size(), 3u);
  EXPECT_EQ(loadError("{\"text\": \"x\", \"label\": \"d\"}\n", options),
            "data.jsonl:1:1: unknown class name \"d\" (the training data "
            "names 3 classes)");
}

TEST(JsonlSequences, MalformedLinesNameFileLineAndColumn) {
  EXPECT_THAT(loadError("{\"text\": \"a\"}\n{\"text\": \"b\",, }\n"),
              HasSubstr("data.jsonl:2:"));
  EXPECT_THAT(loadError("{\"text\": \"a\"}\n{\"text\": \"b\",, }\n"),
              HasSubstr("invalid JSON"));
  EXPECT_EQ(loadError("[1, 2]\n"),
            "data.jsonl:1:1: each line must be a JSON object");
  // A number too large for a double is JSON's out_of_range, not a
  // parse_error (found by the data fuzzer).
  EXPECT_EQ(loadError("{\"text\": \"a\", \"label\": 4e444}\n"),
            "data.jsonl:1:1: invalid JSON: number overflow parsing '4e444'");
  EXPECT_EQ(loadError("{\"label\": 1}\n"),
            "data.jsonl:1:1: a sample needs a \"text\" string or a "
            "\"tokens\" array");
  EXPECT_EQ(loadError("{\"text\": \"a\", \"tokens\": [1]}\n"),
            "data.jsonl:1:1: a sample has either \"text\" or \"tokens\", not "
            "both");
  EXPECT_EQ(loadError("{\"text\": 3}\n"),
            "data.jsonl:1:1: \"text\" must be a string");
  EXPECT_EQ(loadError("{\"tokens\": [1, -2]}\n"),
            "data.jsonl:1:1: token 1 is -2, not an integer in [0, 2^31)");
  EXPECT_EQ(loadError("{\"text\": \"a\", \"label\": 1.5}\n"),
            "data.jsonl:1:1: \"label\" is 1.5, not a class number (>= 0) or "
            "a class name");
}

TEST(JsonlSequences, LabelsAreAllOrNoneAndOfOneKind) {
  EXPECT_EQ(loadError("{\"text\": \"a\", \"label\": 0}\n{\"text\": \"b\"}\n"),
            "data.jsonl:2:1: this sample has no \"label\" but line 1 has "
            "one: label every sample or none");
  EXPECT_EQ(loadError("{\"text\": \"a\"}\n\n{\"text\": \"b\", \"label\": 0}\n"),
            "data.jsonl:3:1: this sample has a \"label\" but line 1 has "
            "none: label every sample or none");
  EXPECT_EQ(
      loadError("{\"text\": \"a\", \"label\": 0}\n{\"text\": \"b\", "
                "\"label\": \"x\"}\n"),
      "data.jsonl:2:1: \"label\" mixes class names and class numbers (line 1 "
      "has a number)");
}

TEST(JsonlSequences, EmptyAndMissingFilesAreErrors) {
  EXPECT_EQ(loadError("\n\n"),
            "data.jsonl: no samples (an empty file, or only blank lines)");
  TempDir dir;
  try {
    loadJsonlSequences(dir.file("missing.jsonl"));
    FAIL() << "expected a RuntimeError";
  } catch (const RuntimeError &error) {
    EXPECT_THAT(error.what(), HasSubstr("cannot open '"));
    EXPECT_THAT(error.what(),
                HasSubstr("missing.jsonl': No such file or directory"));
  }
  EXPECT_THROW(loadSequenceFile(dir.file("data.csv")), RuntimeError);
}
