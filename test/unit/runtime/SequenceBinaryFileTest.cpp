//===- SequenceBinaryFileTest.cpp - The .mbtseq format --------------------===//

#include "TestUtil.h"

#include "mbt/runtime/SequenceSource.h"

#include <cstring>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace mbt::runtime;
using mbt::test::readWholeFile;
using mbt::test::TempDir;
using ::testing::HasSubstr;

namespace {
SequenceDataset makeDataset() {
  SequenceDataset data;
  data.name = "small";
  data.vocabSize = 50;
  int32_t a[] = {1, 2, 3}, b[] = {49}, c[] = {0, 0};
  data.append(a, 3, 2);
  data.append(b, 1, 0);
  data.append(c, 2, 1);
  data.labelNames = {"x", "y", "z"};
  return data;
}

std::string errorOf(const std::string &path) {
  try {
    readSequenceFile(path);
  } catch (const RuntimeError &error) {
    return error.what();
  }
  return "no error";
}

void overwrite(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}
} // namespace

TEST(SequenceBinaryFile, RoundTripsTokensLabelsAndClassNames) {
  TempDir dir;
  SequenceDataset data = makeDataset();
  writeSequenceFile(dir.file("d.mbtseq"), data);
  SequenceDataset back = readSequenceFile(dir.file("d.mbtseq"));
  EXPECT_EQ(back.vocabSize, 50);
  EXPECT_EQ(back.tokens, data.tokens);
  EXPECT_EQ(back.offsets, data.offsets);
  EXPECT_EQ(back.labels, data.labels);
  EXPECT_EQ(back.labelNames, data.labelNames);
  // The size is the documented layout: header, offsets, tokens, labels,
  // names.
  EXPECT_EQ(readWholeFile(dir.file("d.mbtseq")).size(),
            32u + 8 * 4 + 4 * 6 + 4 * 3 + 4 + 3 * 5);
}

TEST(SequenceBinaryFile, UnlabelledDataRoundTrips) {
  TempDir dir;
  SequenceDataset data;
  data.vocabSize = 10;
  int32_t a[] = {9, 8};
  data.append(a, 2);
  writeSequenceFile(dir.file("u.mbtseq"), data);
  SequenceDataset back = loadSequenceFile(dir.file("u.mbtseq"));
  EXPECT_FALSE(back.hasLabels());
  EXPECT_EQ(back.tokens, data.tokens);
}

// No tokens at all (two empty samples): empty arrays on both sides (the
// data fuzzer found the reader copying into a null empty vector).
TEST(SequenceBinaryFile, EmptySamplesRoundTrip) {
  TempDir dir;
  SequenceDataset data;
  data.vocabSize = 3;
  data.append(nullptr, 0, 1);
  data.append(nullptr, 0, 0);
  writeSequenceFile(dir.file("e.mbtseq"), data);
  SequenceDataset back = readSequenceFile(dir.file("e.mbtseq"));
  EXPECT_EQ(back.count(), 2);
  EXPECT_TRUE(back.tokens.empty());
  EXPECT_EQ(back.labels, (std::vector<int32_t>{1, 0}));
}

TEST(SequenceBinaryFile, EveryTruncationIsAnErrorNamingTheByte) {
  TempDir dir;
  writeSequenceFile(dir.file("d.mbtseq"), makeDataset());
  std::string bytes = readWholeFile(dir.file("d.mbtseq"));
  for (size_t size = 0; size < bytes.size(); ++size) {
    overwrite(dir.file("cut.mbtseq"), bytes.substr(0, size));
    std::string message = errorOf(dir.file("cut.mbtseq"));
    EXPECT_THAT(message, HasSubstr("cut.mbtseq")) << "size " << size;
    EXPECT_THAT(message, HasSubstr("(byte ")) << "size " << size;
  }
}

TEST(SequenceBinaryFile, CorruptFieldsAreErrors) {
  TempDir dir;
  writeSequenceFile(dir.file("d.mbtseq"), makeDataset());
  std::string good = readWholeFile(dir.file("d.mbtseq"));
  std::string path = dir.file("bad.mbtseq");

  std::string bytes = good;
  bytes[0] = 'X';
  overwrite(path, bytes);
  EXPECT_THAT(errorOf(path), HasSubstr("not an .mbtseq file"));

  overwrite(path, good + "junk");
  EXPECT_THAT(errorOf(path),
              HasSubstr("4 unexpected bytes after the data (byte 119)"));

  bytes = good;
  uint64_t offset = 7; // offsets[1] beyond the 6 tokens
  std::memcpy(&bytes[40], &offset, 8);
  overwrite(path, bytes);
  EXPECT_THAT(errorOf(path), HasSubstr("offset 1 (7) is not within"));

  bytes = good;
  int32_t token = 50; // first token outside the vocabulary of 50
  std::memcpy(&bytes[64], &token, 4);
  overwrite(path, bytes);
  EXPECT_THAT(
      errorOf(path),
      HasSubstr("token 50 is outside the vocabulary [0, 50) (byte 64)"));

  bytes = good;
  int32_t label = -1;
  std::memcpy(&bytes[88], &label, 4);
  overwrite(path, bytes);
  EXPECT_THAT(errorOf(path), HasSubstr("sample 0 has negative label -1"));
}

TEST(SequenceBinaryFile, MaxLengthCutsOnLoad) {
  TempDir dir;
  writeSequenceFile(dir.file("d.mbtseq"), makeDataset());
  SequenceLoadOptions options;
  options.maxLength = 2;
  SequenceDataset data = readSequenceFile(dir.file("d.mbtseq"), options);
  EXPECT_EQ(data.lengths(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(data.labels, (std::vector<int32_t>{2, 0, 1}));
}
