//===- ShapeRulesTest.cpp - the dialect's shape rules as functions --------===//
//
// MBTShapes.h and ConvShapes.h decide both what Sema accepts and what the
// verifiers accept, so each rule is pinned here by value: the sizes PyTorch
// gives for the same layer, and the message of each rejected case.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/ConvShapes.h"
#include "dialects/MBT/IR/MBTShapes.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"

#include <gtest/gtest.h>

using namespace mlir::mbt;
using Shape = llvm::SmallVector<int64_t>;

namespace {
constexpr int64_t kDyn = mlir::ShapedType::kDynamic;

Shape shape(std::initializer_list<int64_t> dims) { return Shape(dims); }

TEST(BroadcastShapes, SizeOneDimensionsTakeTheOtherSize) {
  EXPECT_EQ(broadcastEqualRankShapes({4, 1, 3}, {1, 5, 3}), shape({4, 5, 3}));
  // A dynamic size meets a static one: the static one is known.
  EXPECT_EQ(broadcastEqualRankShapes({kDyn, 3}, {8, 3}), shape({8, 3}));
  EXPECT_EQ(broadcastEqualRankShapes({kDyn, 3}, {1, 3}), shape({kDyn, 3}));
}

TEST(BroadcastShapes, DifferentSizesOrRanksDoNotBroadcast) {
  EXPECT_EQ(broadcastEqualRankShapes({4, 3}, {5, 3}), std::nullopt);
  EXPECT_EQ(broadcastEqualRankShapes({4, 3}, {3}), std::nullopt);
}

TEST(MatmulShape, TransposesPickTheRowsAndColumns) {
  std::string error;
  EXPECT_EQ(matmulShape({7, 4, 3}, {7, 3, 5}, false, false, error),
            shape({7, 4, 5}));
  EXPECT_EQ(matmulShape({7, 3, 4}, {7, 3, 5}, true, false, error),
            shape({7, 4, 5}));
  EXPECT_EQ(matmulShape({7, 4, 3}, {7, 5, 3}, false, true, error),
            shape({7, 4, 5}));
  EXPECT_EQ(matmulShape({kDyn, 4, 3}, {7, 3, kDyn}, false, false, error),
            shape({7, 4, kDyn}));
  EXPECT_TRUE(error.empty()) << error;
}

TEST(MatmulShape, SaysWhichDimensionsDisagree) {
  std::string error;
  EXPECT_EQ(matmulShape({4, 3}, {4, 5}, false, false, error), std::nullopt);
  EXPECT_EQ(error, "matmul contraction dimensions differ: [4, 3] and [4, 5]");
  EXPECT_EQ(matmulShape({2, 4, 3}, {6, 3, 5}, false, false, error),
            std::nullopt);
  EXPECT_EQ(error, "matmul batch dimensions differ: [2, 4, 3] and [6, 3, 5]");
  EXPECT_EQ(matmulShape({4}, {4, 5}, false, false, error), std::nullopt);
  EXPECT_EQ(error, "matmul operands must have rank >= 2, got [4] and [4, 5]");
  EXPECT_EQ(matmulShape({2, 4, 3}, {3, 5}, false, false, error), std::nullopt);
  EXPECT_EQ(error,
            "matmul operands must have equal rank, got [2, 4, 3] and [3, 5]");
}

TEST(ReshapeRules, UnitDimensionsAndTheStaticTailBehindADynamicBatch) {
  EXPECT_EQ(nonUnitDims({1, 784, 1}), shape({784}));
  EXPECT_TRUE(reshapeKeepsDynamicPrefix({kDyn, 784}, {kDyn, 28, 28}));
  EXPECT_TRUE(reshapeKeepsDynamicPrefix({kDyn, 28, 28}, {kDyn, 784}));
  EXPECT_FALSE(reshapeKeepsDynamicPrefix({kDyn, 784}, {kDyn, 28, 27}));
  // The dynamic dimension itself may not be regrouped.
  EXPECT_FALSE(reshapeKeepsDynamicPrefix({kDyn, 784}, {kDyn}));
}

TEST(ShapeText, PrintsDynamicSizesAsQuestionMarks) {
  EXPECT_EQ(formatShape({kDyn, 784}), "[?, 784]");
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_TRUE(sameSize(kDyn, 3));
  EXPECT_FALSE(sameSize(2, 3));
}

TEST(WindowPositions, IsTorchsOutputSizeFormula) {
  // nn.Conv2d(k=5) on 28: 24; k=3, padding 1: 28; stride 2: 14;
  // dilation 2, k=3 on 28: 24; a window larger than the padded input: 0.
  EXPECT_EQ(windowPositions(28, 5, 1, 0, 1), 24);
  EXPECT_EQ(windowPositions(28, 3, 1, 1, 1), 28);
  EXPECT_EQ(windowPositions(28, 3, 2, 1, 1), 14);
  EXPECT_EQ(windowPositions(28, 3, 1, 0, 2), 24);
  EXPECT_EQ(windowPositions(7, 2, 2, 0, 1), 3); // floor, as MaxPool2d(2)
  EXPECT_EQ(windowPositions(2, 5, 1, 0, 1), 0);
}

TEST(Conv2dShape, GivesChannelsAndPlaneAsTorch) {
  std::string error;
  int64_t one[] = {1, 1}, zero[] = {0, 0}, two[] = {2, 2};
  // LeNet's first layer: Conv2d(1, 6, 5, padding=2) on 1x28x28.
  EXPECT_EQ(conv2dShape({1, 28, 28}, {6, 1, 5, 5}, one, two, one, 1, error),
            (llvm::SmallVector<int64_t, 3>{6, 28, 28}));
  // Grouped: Conv2d(8, 16, 3, stride=2, groups=4) on 8x9x9.
  EXPECT_EQ(conv2dShape({8, 9, 9}, {16, 2, 3, 3}, two, zero, one, 4, error),
            (llvm::SmallVector<int64_t, 3>{16, 4, 4}));
  EXPECT_TRUE(error.empty()) << error;
}

TEST(Conv2dShape, RejectsWithTheReason) {
  std::string error;
  int64_t one[] = {1, 1}, zero[] = {0, 0}, bad[] = {0, 1};
  EXPECT_FALSE(conv2dShape({3, 8, 8}, {4, 2, 3, 3}, one, zero, one, 1, error));
  EXPECT_EQ(error, "conv2d filter [4, 2, 3, 3] takes 2 channels per group, "
                   "but the image [3, 8, 8] has 3 in 1 group");
  EXPECT_FALSE(conv2dShape({6, 8, 8}, {4, 2, 3, 3}, one, zero, one, 4, error));
  EXPECT_EQ(error, "conv2d groups (4) must divide the input channels (6) and "
                   "the output channels (4)");
  EXPECT_FALSE(conv2dShape({1, 2, 2}, {1, 1, 3, 3}, one, zero, one, 1, error));
  EXPECT_EQ(error, "conv2d kernel (3, 3) (dilation (1, 1)) does not fit the "
                   "image (2, 2) padded by (0, 0)");
  EXPECT_FALSE(conv2dShape({1, 8, 8}, {1, 1, 3, 3}, bad, zero, one, 1, error));
  EXPECT_EQ(error, "conv2d stride must be at least 1, got (0, 1)");
  EXPECT_FALSE(
      conv2dShape({1, kDyn, 8}, {1, 1, 3, 3}, one, zero, one, 1, error));
  EXPECT_EQ(error, "conv2d needs static image and filter sizes, got [1, ?, "
                   "8] and [1, 1, 3, 3]");
  EXPECT_FALSE(conv2dShape({8, 8}, {1, 1, 3, 3}, one, zero, one, 1, error));
  EXPECT_EQ(error, "conv2d needs an image [C, H, W] and a filter [O, "
                   "C/groups, KH, KW], got [8, 8] and [1, 1, 3, 3]");
}

TEST(Pool2dShape, GivesThePlaneAsTorchAndNamesTheLayer) {
  std::string error;
  int64_t two[] = {2, 2}, three[] = {3, 3}, one[] = {1, 1}, zero[] = {0, 0};
  // MaxPool2d(2) on 28x28; MaxPool2d(3, stride=2, padding=1) on 7x7.
  EXPECT_EQ(pool2dShape({28, 28}, two, two, zero, "max_pool2d", error),
            (llvm::SmallVector<int64_t, 2>{14, 14}));
  EXPECT_EQ(pool2dShape({7, 7}, three, two, one, "max_pool2d", error),
            (llvm::SmallVector<int64_t, 2>{4, 4}));
  EXPECT_FALSE(pool2dShape({7, 7}, two, two, two, "avg_pool2d", error));
  EXPECT_EQ(error,
            "avg_pool2d padding (2, 2) must be at most half the kernel (2, 2)");
  EXPECT_FALSE(pool2dShape({1, 1}, three, one, zero, "max_pool2d", error));
  EXPECT_EQ(error, "max_pool2d kernel (3, 3) does not fit the plane (1, 1) "
                   "padded by (0, 0)");
}
} // namespace
