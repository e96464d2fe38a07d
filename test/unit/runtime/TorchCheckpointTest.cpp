//===- TorchCheckpointTest.cpp - .pt state dicts read back ----------------===//
//
// mbt's own .pt files (TorchStateDict.h) through the .pt reader: every
// tensor back bit for bit, in order, and the errors of a file that is cut,
// not a zip, or a zip without a pickle. Files that torch.save writes are
// checked by test/python/torch_checkpoint_errors.py.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/TorchCheckpoint.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/TorchStateDict.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::HasSubstr;

namespace {

class TorchCheckpointTest : public ::testing::Test {
protected:
  std::string write(const std::string &name, const std::string &bytes) {
    std::string path = dir.file(name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  TempDir dir;
};

} // namespace

// Mutations caught: a reader that takes the wrong storage for a tensor
// (the keys), ignores the storage offset or the element type, loses the
// dict's order, or reads a scalar's shape as [1].
TEST_F(TorchCheckpointTest, MbtsOwnFilesReadBackBitForBit) {
  std::vector<float> weight = {1.5f, -2.0f, 3.25f, 1e-30f, -0.0f, 7.0f};
  std::vector<double> bias = {0.1, -1e300};
  std::vector<float> scalar = {42.0f};
  std::vector<NamedTensor> tensors = {
      {"fc.w", {2, 3}, mbt::DType::F32, weight.data()},
      {"fc.b", {2}, mbt::DType::F64, bias.data()},
      {"bn.count", {}, mbt::DType::F32, scalar.data()}};
  std::string path = write("m.pt", torchStateDict(tensors));
  ASSERT_TRUE(isTorchFile(path));
  StateDict read = readTorchStateDict(path);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].first, "fc.w");
  EXPECT_EQ(read[0].second.type, ElementType::F32);
  EXPECT_EQ(read[0].second.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(read[0].second.data, weight.data(), 6 * 4), 0);
  EXPECT_EQ(read[1].first, "fc.b");
  EXPECT_EQ(read[1].second.type, ElementType::F64);
  EXPECT_EQ(std::memcmp(read[1].second.data, bias.data(), 2 * 8), 0);
  EXPECT_EQ(read[2].first, "bn.count");
  EXPECT_TRUE(read[2].second.shape.empty());
  EXPECT_EQ(std::memcmp(read[2].second.data, scalar.data(), 4), 0);
  EXPECT_THAT(read[1].second.origin, HasSubstr("tensor 'fc.b'"));
}

TEST_F(TorchCheckpointTest, BrokenFilesAreNamed) {
  std::vector<float> weight = {1, 2};
  std::string bytes =
      torchStateDict({{"w", {2}, mbt::DType::F32, weight.data()}});
  std::string cut = write("cut.pt", bytes.substr(0, bytes.size() - 30));
  EXPECT_THAT(errorOf([&] { readTorchStateDict(cut); }),
              HasSubstr("cut.pt' is not a .pt file (torch.save writes a zip "
                        "archive): no zip directory found"));
  std::string text = write("text.pt", "not a zip at all");
  EXPECT_FALSE(isTorchFile(text));
  EXPECT_THAT(errorOf([&] { readTorchStateDict(text); }),
              HasSubstr("text.pt' is not a .pt file"));
  // The pickle's name changed: a zip, but no PREFIX/data.pkl in it.
  std::string renamed = bytes;
  for (size_t at = renamed.find("data.pkl"); at != std::string::npos;
       at = renamed.find("data.pkl", at + 1))
    renamed.replace(at, 8, "data.pkx");
  std::string nopickle = write("nopickle.pt", renamed);
  EXPECT_THAT(errorOf([&] { readTorchStateDict(nopickle); }),
              HasSubstr("is a zip archive but not a torch.save file: it "
                        "holds 0 PREFIX/data.pkl members"));
}
