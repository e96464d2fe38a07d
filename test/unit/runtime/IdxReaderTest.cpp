//===- IdxReaderTest.cpp - idx files: good, gzipped and broken ------------===//
//
// Every case writes its own tiny idx file into a temp dir, so the tests need
// no data set and can produce each kind of damage exactly.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/IdxReader.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/FashionMnist.h"

#include "IdxTestFiles.h"
#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

TEST(IdxReaderTest, ReadsPlainFile) {
  TempDir dir;
  writePlain(dir.file("images"), twoImages());
  IdxArray array = readIdxFile(dir.file("images"), kIdxImagesMagic);
  EXPECT_EQ(array.dims, (std::vector<uint32_t>{2, 2, 3}));
  ASSERT_EQ(array.data.size(), 12u);
  EXPECT_EQ(array.data[11], 220);
}

TEST(IdxReaderTest, ReadsGzippedFileLikePlain) {
  TempDir dir;
  writeGzip(dir.file("images.gz"), twoImages());
  writePlain(dir.file("images"), twoImages());
  IdxArray gz = readIdxFile(dir.file("images.gz"), kIdxImagesMagic);
  IdxArray plain = readIdxFile(dir.file("images"), kIdxImagesMagic);
  EXPECT_EQ(gz.dims, plain.dims);
  EXPECT_EQ(gz.data, plain.data);
}

TEST(IdxReaderTest, TruncatedFileNamesPathAndEndOffset) {
  TempDir dir;
  Bytes bytes = twoImages();
  bytes.resize(bytes.size() - 5); // header 16 bytes + 7 of 12 pixels
  writeGzip(dir.file("short.gz"), bytes);
  std::string error =
      errorOf([&] { readIdxFile(dir.file("short.gz"), kIdxImagesMagic); });
  EXPECT_THAT(error,
              AllOf(HasSubstr(dir.file("short.gz")), HasSubstr("truncated"),
                    HasSubstr("ended at byte offset 23")));
}

TEST(IdxReaderTest, TruncatedHeaderIsReported) {
  TempDir dir;
  writePlain(dir.file("tiny"), {0, 0, 8});
  EXPECT_THAT(
      errorOf([&] { readIdxFile(dir.file("tiny"), kIdxLabelsMagic); }),
      AllOf(HasSubstr(dir.file("tiny")), HasSubstr("ended at byte offset 3")));
}

TEST(IdxReaderTest, TrailingBytesAreRejected) {
  TempDir dir;
  Bytes bytes = twoLabels();
  bytes.push_back(0);
  writePlain(dir.file("long"), bytes);
  EXPECT_THAT(errorOf([&] { readIdxFile(dir.file("long"), kIdxLabelsMagic); }),
              AllOf(HasSubstr(dir.file("long")), HasSubstr("more bytes"),
                    HasSubstr("byte offset 10")));
}

TEST(IdxReaderTest, BadMagicNamesBothValues) {
  TempDir dir;
  writePlain(dir.file("labels"), twoLabels());
  EXPECT_THAT(
      errorOf([&] { readIdxFile(dir.file("labels"), kIdxImagesMagic); }),
      AllOf(HasSubstr(dir.file("labels")), HasSubstr("0x00000801"),
            HasSubstr("expected 0x00000803")));
}

TEST(IdxReaderTest, MissingFileReportsStrerror) {
  TempDir dir;
  std::string path = dir.file("nope.gz");
  EXPECT_EQ(errorOf([&] { readIdxFile(path, kIdxLabelsMagic); }),
            "cannot open '" + path + "': No such file or directory");
}

TEST(IdxReaderTest, ImplausibleHeaderIsRejectedWithoutAllocating) {
  TempDir dir;
  writePlain(dir.file("huge"),
             idxBytes(kIdxImagesMagic, {0xffffffff, 0xffffffff, 2}, {}));
  EXPECT_THAT(errorOf([&] { readIdxFile(dir.file("huge"), kIdxImagesMagic); }),
              HasSubstr("implausible"));
}

// A header under the size cap that claims far more than the file holds (a
// fuzzer finding: the reader used to allocate the claimed 4 GiB first). It
// is reported as truncated, after reading only what is there
// (test/fuzz/data-corpus/regression-labels-claim-4g keeps the memory side
// under the fuzzer's 2 GiB limit).
TEST(IdxReaderTest, HeaderClaimingMoreThanTheFileIsTruncated) {
  TempDir dir;
  writePlain(dir.file("claims"),
             idxBytes(kIdxLabelsMagic, {0xffffffff}, {1, 2, 3}));
  EXPECT_THAT(
      errorOf([&] { readIdxFile(dir.file("claims"), kIdxLabelsMagic); }),
      AllOf(HasSubstr(dir.file("claims")), HasSubstr("truncated"),
            HasSubstr("expected 4294967295 bytes of idx data at byte offset 8"),
            HasSubstr("ended at byte offset 11")));
}

TEST(IdxReaderTest, ClassificationPairScalesPixelsAndKeepsLabels) {
  TempDir dir;
  writeGzip(dir.file("i.gz"), twoImages());
  writeGzip(dir.file("l.gz"), twoLabels());
  Dataset data = loadIdxClassification(dir.file("i.gz"), dir.file("l.gz"), "t");
  EXPECT_EQ(data.count, 2);
  EXPECT_EQ(data.numFeatures, 6);
  EXPECT_EQ(data.y, (std::vector<int32_t>{3, 9}));
  EXPECT_FLOAT_EQ(data.x[0], 0.0f);
  EXPECT_FLOAT_EQ(data.x[11], 220.0f / 255.0f);
}

TEST(IdxReaderTest, LabelOutOfRangeNamesLabelsFile) {
  TempDir dir;
  writePlain(dir.file("i"), twoImages());
  writePlain(dir.file("l"), twoLabels(3, 10));
  EXPECT_THAT(errorOf([&] {
                loadIdxClassification(dir.file("i"), dir.file("l"), "t");
              }),
              AllOf(HasSubstr(dir.file("l")), HasSubstr("label 10"),
                    HasSubstr("sample 1")));
}

TEST(IdxReaderTest, ImageAndLabelCountsMustAgree) {
  TempDir dir;
  writePlain(dir.file("i"), twoImages());
  writePlain(dir.file("l"), idxBytes(kIdxLabelsMagic, {3}, {1, 2, 3}));
  EXPECT_THAT(errorOf([&] {
                loadIdxClassification(dir.file("i"), dir.file("l"), "t");
              }),
              AllOf(HasSubstr("2 images"), HasSubstr("3 labels")));
}

} // namespace
