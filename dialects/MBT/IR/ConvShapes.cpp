//===- ConvShapes.cpp - shape rules of convolution and pooling ------------===//
#include "dialects/MBT/IR/ConvShapes.h"
#include "dialects/MBT/IR/MBTShapes.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"

using namespace mlir;
using namespace mlir::mbt;

int64_t mlir::mbt::windowPositions(int64_t size, int64_t kernel, int64_t stride,
                                   int64_t padding, int64_t dilation) {
  int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

static std::string pairString(ArrayRef<int64_t> pair) {
  return "(" + std::to_string(pair[0]) + ", " + std::to_string(pair[1]) + ")";
}

/// Checks the window settings shared by convolution and pooling.
static bool checkWindow(ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                        ArrayRef<int64_t> dilation, StringRef name,
                        std::string &error) {
  for (int d = 0; d < 2; ++d) {
    if (stride[d] < 1) {
      error = (name + " stride must be at least 1, got " + pairString(stride))
                  .str();
      return false;
    }
    if (padding[d] < 0) {
      error =
          (name + " padding must not be negative, got " + pairString(padding))
              .str();
      return false;
    }
    if (dilation[d] < 1) {
      error =
          (name + " dilation must be at least 1, got " + pairString(dilation))
              .str();
      return false;
    }
  }
  return true;
}

std::optional<SmallVector<int64_t, 3>>
mlir::mbt::conv2dShape(ArrayRef<int64_t> image, ArrayRef<int64_t> filter,
                       ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                       ArrayRef<int64_t> dilation, int64_t groups,
                       std::string &error) {
  if (image.size() != 3 || filter.size() != 4) {
    error = "conv2d needs an image [C, H, W] and a filter [O, C/groups, KH, "
            "KW], got " +
            formatShape(image) + " and " + formatShape(filter);
    return std::nullopt;
  }
  for (int64_t s : llvm::concat<const int64_t>(image, filter))
    if (ShapedType::isDynamic(s)) {
      error = "conv2d needs static image and filter sizes, got " +
              formatShape(image) + " and " + formatShape(filter);
      return std::nullopt;
    }
  if (!checkWindow(stride, padding, dilation, "conv2d", error))
    return std::nullopt;
  int64_t channels = image[0], out = filter[0], perGroup = filter[1];
  if (groups < 1 || channels % groups != 0 || out % groups != 0) {
    error = "conv2d groups (" + std::to_string(groups) +
            ") must divide the input channels (" + std::to_string(channels) +
            ") and the output channels (" + std::to_string(out) + ")";
    return std::nullopt;
  }
  if (perGroup * groups != channels) {
    error = "conv2d filter " + formatShape(filter) + " takes " +
            std::to_string(perGroup) + " channels per group, but the image " +
            formatShape(image) + " has " + std::to_string(channels) + " in " +
            std::to_string(groups) + " group" + (groups == 1 ? "" : "s");
    return std::nullopt;
  }
  int64_t oh =
      windowPositions(image[1], filter[2], stride[0], padding[0], dilation[0]);
  int64_t ow =
      windowPositions(image[2], filter[3], stride[1], padding[1], dilation[1]);
  if (oh < 1 || ow < 1) {
    error = "conv2d kernel " + pairString(filter.take_back(2)) + " (dilation " +
            pairString(dilation) + ") does not fit the image " +
            pairString(image.take_back(2)) + " padded by " +
            pairString(padding);
    return std::nullopt;
  }
  return SmallVector<int64_t, 3>{out, oh, ow};
}

std::optional<SmallVector<int64_t, 2>>
mlir::mbt::pool2dShape(ArrayRef<int64_t> plane, ArrayRef<int64_t> kernel,
                       ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                       StringRef name, std::string &error) {
  if (plane.size() != 2 || ShapedType::isDynamic(plane[0]) ||
      ShapedType::isDynamic(plane[1])) {
    error = (name + " needs a static [H, W] plane, got " + formatShape(plane))
                .str();
    return std::nullopt;
  }
  int64_t one[] = {1, 1};
  if (!checkWindow(stride, padding, one, name, error))
    return std::nullopt;
  for (int d = 0; d < 2; ++d) {
    if (kernel[d] < 1) {
      error = (name + " kernel must be at least 1, got " + pairString(kernel))
                  .str();
      return std::nullopt;
    }
    if (2 * padding[d] > kernel[d]) {
      error = (name + " padding " + pairString(padding) +
               " must be at most half the kernel " + pairString(kernel))
                  .str();
      return std::nullopt;
    }
  }
  int64_t oh = windowPositions(plane[0], kernel[0], stride[0], padding[0], 1);
  int64_t ow = windowPositions(plane[1], kernel[1], stride[1], padding[1], 1);
  if (oh < 1 || ow < 1) {
    error =
        (name + " kernel " + pairString(kernel) + " does not fit the plane " +
         pairString(plane) + " padded by " + pairString(padding))
            .str();
    return std::nullopt;
  }
  return SmallVector<int64_t, 2>{oh, ow};
}
