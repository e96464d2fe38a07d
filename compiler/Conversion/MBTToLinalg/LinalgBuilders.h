//===- LinalgBuilders.h - helpers for lowering mbt to linalg ----*- C++ -*-===//
#ifndef MBT_COMPILER_CONVERSION_MBTTOLINALG_LINALGBUILDERS_H
#define MBT_COMPILER_CONVERSION_MBTTOLINALG_LINALGBUILDERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mbt {

/// A tensor.empty of `type` whose dynamic sizes are `tensor.dim`s of the
/// given sources: `sources[d]` is a (value, dim) pair for each result dim d
/// (only read where `type` is dynamic).
Value buildEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                 ArrayRef<std::pair<Value, int64_t>> sources);

/// buildEmpty whose dynamic sizes are those of `like` (of the same rank).
Value buildEmptyLike(OpBuilder &b, Location loc, RankedTensorType type,
                     Value like);

/// buildEmptyLike filled with `value`.
Value buildFilledLike(OpBuilder &b, Location loc, RankedTensorType type,
                      Value like, Attribute value);

/// buildEmpty filled with `value`.
Value buildFilled(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<std::pair<Value, int64_t>> sources, Attribute value);

/// For each dim d of `type`, the (value, dim) pair to read a dynamic size
/// from: the first of `candidates` whose dim d is not a broadcast 1.
SmallVector<std::pair<Value, int64_t>> sizeSources(RankedTensorType type,
                                                   ValueRange candidates);

/// The indexing map reading an operand of shape `operand` inside loops over
/// `result` (same rank): dims where the operand has a broadcast 1 read 0.
AffineMap broadcastingMap(MLIRContext *ctx, ArrayRef<int64_t> operand,
                          ArrayRef<int64_t> result);

/// The map from loops over `rank` dims to the dims not in `dropped`.
AffineMap droppingMap(MLIRContext *ctx, int64_t rank,
                      ArrayRef<int64_t> dropped);

/// `rank` iterators, reductions at `reduced`.
SmallVector<utils::IteratorType> iterators(int64_t rank,
                                           ArrayRef<int64_t> reduced = {});

/// An arith.constant `value` of float type `type`: the lowerings build their
/// constants in the model's float type (f32 or f64), that of the values
/// they meet.
Value floatConstant(OpBuilder &b, Location loc, Type type, double value);

/// The element type of a tensor `v` (the model's float type), or `v`'s type.
inline Type elementTypeOf(Value v) { return getElementTypeOrSelf(v.getType()); }

/// The size of dim `d` of `v` as an f32 (or f64) scalar.
Value dimAsFloat(OpBuilder &b, Location loc, Value v, int64_t d,
                 FloatType type);

/// The reassociation between `type` and `type` without its `unitDims`
/// (size-1 dims, not all of them): each unit dim joins the group of the
/// next other dim, or of the last one.
SmallVector<ReassociationIndices> unitDimGroups(RankedTensorType type,
                                                ArrayRef<int64_t> unitDims);

/// Reshapes `v` to `type` by inserting the unit dims `insertedDims` of
/// `type` (the other dims of `type` are those of `v`, in order).
Value expandUnitDims(OpBuilder &b, Location loc, Value v, RankedTensorType type,
                     ArrayRef<int64_t> insertedDims);

/// The slice of `tensor` that fixes each dim d whose `at[d]` is set at that
/// index (size 1, dropped from the slice's type) and keeps the other dims
/// whole: what a rank-reducing tensor.extract_slice or
/// tensor.parallel_insert_slice takes. `at` has one entry per dim; the
/// sizes of the whole dims are read at the builder's insertion point.
struct SliceAt {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  RankedTensorType type;
};
SliceAt sliceAt(OpBuilder &b, Location loc, Value tensor, ArrayRef<Value> at);

/// An scf.forall over `bounds` with `outputs` as its shared outs, each of
/// whose iterations builds `body` on a slice of every input and output
/// (`sliceOf(v, ivs)`: which slice of `v` the iteration at `ivs` takes)
/// and inserts body's results where it took the outputs' slices. Returns
/// the forall's results. What a lowering uses to run one piece of work per
/// model or per sequence on the CPU's threads (the forall becomes the
/// OpenMP loop).
SmallVector<Value> buildForallOverSlices(
    OpBuilder &b, Location loc, ArrayRef<OpFoldResult> bounds,
    ValueRange inputs, ValueRange outputs,
    function_ref<SliceAt(Value, ValueRange)> sliceOf,
    function_ref<SmallVector<Value>(ValueRange, ValueRange)> body);

/// A generic rounding every element of the f32 `tensor` to the nearest
/// value of `format` (bf16 or f16, ties to even), as mbt.round_to does: what
/// a pattern that rounds inside its own lowering uses.
Value buildRoundTo(OpBuilder &b, Location loc, Value tensor, Type format);

/// The f32 scalar `x` rounded as buildRoundTo rounds each element: for a
/// generic's body that rounds a value where it reads or writes it, instead
/// of a pass of its own over the tensor.
Value buildRoundedScalar(OpBuilder &b, Location loc, Value x, Type format);

} // namespace mlir::mbt

#endif
