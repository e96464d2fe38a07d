//===- FortunesTest.cpp - The embedded default text task ------------------===//

#include "TestUtil.h"

#include "mbt/runtime/ByteTokenizer.h"
#include "mbt/runtime/Fortunes.h"
#include "mbt/runtime/SequenceSource.h"

#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

using namespace mbt::runtime;
using mbt::test::TempDir;
using ::testing::HasSubstr;

TEST(Fortunes, TextsEndAtLinesHoldingOnlyAPercentSign) {
  std::vector<std::string> texts =
      splitFortunes("first\nline two\n%\n100% sure\n%\n%\n  \n%\nlast");
  EXPECT_EQ(texts, (std::vector<std::string>{"first\nline two\n", "100% sure\n",
                                             "last"}));
}

TEST(Fortunes, EveryTenthTextOfACategoryIsATestSample) {
  TempDir dir;
  std::string zeta, alpha;
  for (int i = 0; i < 25; ++i)
    zeta += "z" + std::to_string(i) + "\n%\n";
  for (int i = 0; i < 3; ++i)
    alpha += "a" + std::to_string(i) + "\n%\n";
  std::ofstream(dir.file("zeta")) << zeta;
  std::ofstream(dir.file("alpha")) << alpha;
  std::ofstream(dir.file("zeta.dat")) << "index, not a category";
  ::symlink("zeta", dir.file("zeta.u8").c_str());

  SequenceSplits splits = loadFortunes(dir.path());
  EXPECT_EQ(splits.train.labelNames,
            (std::vector<std::string>{"alpha", "zeta"}));
  EXPECT_EQ(splits.train.count(), 3 + 23);
  ASSERT_EQ(splits.test.count(), 2); // z9 and z19
  EXPECT_EQ(decodeBytes(splits.test.sample(0), splits.test.length(0)), "z9\n");
  EXPECT_EQ(decodeBytes(splits.test.sample(1), splits.test.length(1)), "z19\n");
  EXPECT_EQ(splits.test.labels, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(splits.train.labels.front(), 0);
  EXPECT_EQ(splits.train.vocabSize, kByteVocabSize);
  splits.train.validate();

  SequenceDataset cut = loadSequenceSource("fortunes:test", {2}, dir.path());
  EXPECT_EQ(cut.lengths(), (std::vector<int64_t>{2, 2}));
}

TEST(Fortunes, MissingDirectoryNamesThePackage) {
  try {
    loadFortunes("/nonexistent/fortunes");
    FAIL() << "expected a RuntimeError";
  } catch (const RuntimeError &error) {
    EXPECT_THAT(error.what(), HasSubstr("'/nonexistent/fortunes'"));
    EXPECT_THAT(error.what(), HasSubstr("apt-get install fortunes"));
  }
  EXPECT_THROW(loadSequenceSource("fortunes:valid"), RuntimeError);
}

// The installed package (bootstrap installs it): 43 categories, ~15k texts.
TEST(Fortunes, InstalledPackageIsTheDocumentedTask) {
  struct stat info;
  if (::stat(defaultFortunesDir().c_str(), &info) != 0)
    GTEST_SKIP() << "fortunes not installed";
  SequenceSplits splits = loadFortunes();
  EXPECT_EQ(splits.train.labelNames.size(), 43u);
  int64_t total = splits.train.count() + splits.test.count();
  EXPECT_GT(total, 15000);
  EXPECT_LT(total, 15500);
  EXPECT_NEAR(double(splits.test.count()) / double(total), 0.1, 0.01);
}
