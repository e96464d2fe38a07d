//===- FashionMnistTest.cpp - The real data set, when installed -----------===//
//
// Skipped where Debian's dataset-fashion-mnist is not installed; elsewhere it
// checks the facts every run relies on (sizes, value ranges).
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/FashionMnist.h"

#include "IdxTestFiles.h"
#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sys/stat.h>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

constexpr const char *kDir = "/usr/share/datasets/fashion-mnist";

bool installed() {
  struct stat info;
  return ::stat((std::string(kDir) + "/t10k-labels-idx1-ubyte.gz").c_str(),
                &info) == 0;
}

TEST(FashionMnistTest, TestSplitHasTenThousandImagesOf784PixelsInUnitRange) {
  if (!installed())
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  Dataset test = loadFashionMnist(Split::Test, kDir);
  EXPECT_EQ(test.count, 10000);
  EXPECT_EQ(test.numFeatures, 784);
  EXPECT_EQ(test.x.size(), 10000u * 784u);
  auto [lo, hi] = std::minmax_element(test.x.begin(), test.x.end());
  EXPECT_EQ(*lo, 0.0f);
  EXPECT_EQ(*hi, 1.0f);
  // Fashion-MNIST's test split is balanced: 1000 of each class.
  for (int32_t c = 0; c < 10; ++c)
    EXPECT_EQ(std::count(test.y.begin(), test.y.end(), c), 1000);
}

TEST(FashionMnistTest, TrainSplitHasSixtyThousandSamples) {
  if (!installed())
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  Dataset train = loadFashionMnist(Split::Train, kDir);
  EXPECT_EQ(train.count, 60000);
  EXPECT_EQ(train.y.size(), 60000u);
}

TEST(FashionMnistTest, FashionMnistLoaderFindsGzipOrPlainNames) {
  TempDir dir;
  writeGzip(dir.file("t10k-images-idx3-ubyte.gz"), twoImages());
  writePlain(dir.file("t10k-labels-idx1-ubyte"), twoLabels());
  Dataset data = loadFashionMnist(Split::Test, dir.path());
  EXPECT_EQ(data.count, 2);
  EXPECT_EQ(data.name, "fashion_mnist/test");
}

TEST(FashionMnistTest, FashionMnistMissingFileHintsAtThePackage) {
  TempDir dir;
  std::string error =
      errorOf([&] { loadFashionMnist(Split::Train, dir.path()); });
  EXPECT_THAT(error, AllOf(HasSubstr("cannot open '" +
                                     dir.file("train-images-idx3-ubyte.gz") +
                                     "': No such file or directory"),
                           HasSubstr("dataset-fashion-mnist")));
}

TEST(FashionMnistTest, DataDirComesFromEnvironmentWhenSet) {
  ::setenv("MBT_DATA_DIR", "/some/where", 1);
  EXPECT_EQ(defaultFashionMnistDir(), "/some/where");
  ::unsetenv("MBT_DATA_DIR");
  EXPECT_EQ(defaultFashionMnistDir(), "/usr/share/datasets/fashion-mnist");
}

} // namespace
