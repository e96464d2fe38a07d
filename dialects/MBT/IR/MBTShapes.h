//===- MBTShapes.h - shape rules shared by ops and frontend -----*- C++ -*-===//
#ifndef MBT_DIALECT_MBT_IR_MBTSHAPES_H
#define MBT_DIALECT_MBT_IR_MBTSHAPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace mlir::mbt {

/// Broadcasts two shapes of equal rank along size-1 dimensions
/// (ShapedType::kDynamic stands for an unknown size). Returns std::nullopt
/// when some dimension has two different sizes, neither of them 1.
std::optional<llvm::SmallVector<int64_t>>
broadcastEqualRankShapes(llvm::ArrayRef<int64_t> lhs,
                         llvm::ArrayRef<int64_t> rhs);

/// Shape of op(lhs) · op(rhs) for `mbt.matmul`, or an error message.
std::optional<llvm::SmallVector<int64_t>>
matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs,
            bool transposeLhs, bool transposeRhs, std::string &error);

/// The dims of `shape` other than static 1s.
llvm::SmallVector<int64_t> nonUnitDims(llvm::ArrayRef<int64_t> shape);

/// Whether `in` and `out` have the same dims up to the last dynamic one
/// (of either) and as many elements after it: a reshape that regroups
/// only static dims behind a dynamic batch, such as [?, 784] <-> [?, 28, 28].
bool reshapeKeepsDynamicPrefix(llvm::ArrayRef<int64_t> in,
                               llvm::ArrayRef<int64_t> out);

/// Whether two dimension sizes can be the same: equal, or either dynamic.
bool sameSize(int64_t a, int64_t b);

/// Formats a shape as `[?, 784]`.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace mlir::mbt

#endif
