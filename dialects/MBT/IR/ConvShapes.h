//===- ConvShapes.h - shape rules of convolution and pooling ----*- C++ -*-===//
//
// Shared by the ops' verifiers and the frontend's checks, so that a spec
// that passes Sema builds ops that verify, and both say the same thing.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_DIALECT_MBT_IR_CONVSHAPES_H
#define MBT_DIALECT_MBT_IR_CONVSHAPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::mbt {

/// The number of positions of a window of `kernel` elements spaced
/// `dilation` apart, moved by `stride` over `size` elements padded by
/// `padding` on both sides: (size + 2 padding - dilation (kernel - 1) - 1)
/// / stride + 1, or 0 when the window does not fit.
int64_t windowPositions(int64_t size, int64_t kernel, int64_t stride,
                        int64_t padding, int64_t dilation);

/// The per-image result [O, OH, OW] of a conv2d of an image [C, H, W] with
/// a filter [O, C / groups, KH, KW], or an error message. Every size must
/// be static; stride and dilation at least 1, padding at least 0.
std::optional<llvm::SmallVector<int64_t, 3>>
conv2dShape(llvm::ArrayRef<int64_t> image, llvm::ArrayRef<int64_t> filter,
            llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> padding,
            llvm::ArrayRef<int64_t> dilation, int64_t groups,
            std::string &error);

/// The pooled plane [OH, OW] of an [H, W] plane, or an error message.
/// `name` ("max_pool2d") starts the message. Padding may be at most half
/// the kernel, as PyTorch requires.
std::optional<llvm::SmallVector<int64_t, 2>>
pool2dShape(llvm::ArrayRef<int64_t> plane, llvm::ArrayRef<int64_t> kernel,
            llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> padding,
            llvm::StringRef name, std::string &error);

} // namespace mlir::mbt

#endif
