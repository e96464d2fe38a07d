//===- WindowBuilders.h - gathers over sliding windows ----------*- C++ -*-===//
//
// Convolution and pooling lower to gathers: all-parallel linalg.generics
// whose bodies read their sources at computed positions (tensor.extract),
// so that each output element is written by one iteration and the adjoints
// need no scatter (no atomics on the GPU). These helpers compute the
// positions a window tap reads and the window positions that read an input
// element.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_CONVERSION_MBTTOLINALG_WINDOWBUILDERS_H
#define MBT_COMPILER_CONVERSION_MBTTOLINALG_WINDOWBUILDERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::mbt {

Value indexConstant(OpBuilder &b, Location loc, int64_t v);

/// linalg.index 0 .. n-1 of the enclosing generic.
SmallVector<Value> loopIndices(OpBuilder &b, Location loc, int64_t n);

/// The input position `pos * stride + offset - pad` that window position
/// `pos` reads at tap offset `offset` (k * dilation), clamped to 0 where it
/// is outside [0, size) (so a gather may read it), and whether it is inside.
std::pair<Value, Value> tapSource(OpBuilder &b, Location loc, Value pos,
                                  int64_t stride, Value offset, int64_t pad,
                                  int64_t size);

/// The window position whose tap `k` reads input position `pos`:
/// (pos + pad - k * dilation) / stride when that is a whole position in
/// [0, positions), clamped to 0 otherwise; and whether it is one.
std::pair<Value, Value> tapReader(OpBuilder &b, Location loc, Value pos,
                                  int64_t k, int64_t stride, int64_t dilation,
                                  int64_t pad, int64_t positions);

/// An all-parallel linalg.generic writing a fresh `type` tensor (dynamic
/// dim d's size read as buildEmpty does, from `sizeSources[d]`) from
/// `inputs` read through `inputMaps`; `body` gets the inputs' elements and
/// returns the element to write.
Value buildGather(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<std::pair<Value, int64_t>> sizeSources,
                  ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// Size sources for a `rank`-dim result whose only dynamic dim is the
/// batch, read from dim `dim` of `source`.
inline SmallVector<std::pair<Value, int64_t>>
batchSizeFrom(Value source, int64_t dim, int64_t rank) {
  return SmallVector<std::pair<Value, int64_t>>(rank, {source, dim});
}

} // namespace mlir::mbt

#endif
