//===- FlatLayout.h - the flat [M, P] layout --------------------*- C++ -*-===//
//
// The artifact's entry points take every parameter of model m as a column
// range of row m of one [M, P] tensor (docs/abi.md). These are the pieces
// mbt-fuse-optimizer builds them from: where each parameter lives, the
// slicing in and out of the flat rows, and the entry point's skeleton.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_DIALECT_MBT_TRANSFORMS_FLATLAYOUT_H
#define MBT_DIALECT_MBT_TRANSFORMS_FLATLAYOUT_H

#include "dialects/MBT/IR/MBTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::mbt {

/// Where parameter k of every model lives in the flat [M, P] buffer.
struct ParamSlot {
  StringAttr name;
  RankedTensorType type; // [M, shape...]
  int64_t offset;
  int64_t size;
  InitAttr init;
  /// A loss scale's buffer: its role (mbt.loss_scale), else empty.
  StringRef lossScaleRole;
};

/// Builds the flat views: slicing parameters out of [M, P] rows and putting
/// per-parameter tensors back into them.
class FlatLayout {
public:
  FlatLayout(OpBuilder &b, int64_t numModels, Type element)
      : b(b), numModels(numModels), element(element) {}

  /// Reassociation between [M, d1..dn] and [M, d1*...*dn] (or [M] and [M, 1]).
  static SmallVector<ReassociationIndices> rowGroups(int64_t rank) {
    if (rank == 1)
      return {{0, 1}};
    ReassociationIndices rest;
    for (int64_t d = 1; d < rank; ++d)
      rest.push_back(d);
    return {{0}, rest};
  }

  /// [M, size] -> the parameter's [M, shape...] type.
  Value unflatten(Location loc, Value row, RankedTensorType type) {
    if (type.getRank() == 2)
      return row;
    if (type.getRank() == 1)
      return b.create<tensor::CollapseShapeOp>(loc, type, row, rowGroups(1));
    return b.create<tensor::ExpandShapeOp>(loc, type, row,
                                           rowGroups(type.getRank()));
  }

  /// [M, shape...] -> [M, size].
  Value flatten(Location loc, Value v, int64_t size) {
    auto type = cast<RankedTensorType>(v.getType());
    auto rowType = RankedTensorType::get({numModels, size}, element);
    if (type.getRank() == 2)
      return v;
    if (type.getRank() == 1)
      return b.create<tensor::ExpandShapeOp>(loc, rowType, v, rowGroups(1));
    return b.create<tensor::CollapseShapeOp>(loc, rowType, v,
                                             rowGroups(type.getRank()));
  }

  /// Parameter `slot` of `flat` ([M, P], or [S, M, P] at `leading` = s).
  Value extract(Location loc, Value flat, const ParamSlot &slot,
                std::optional<int64_t> leading = std::nullopt) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    if (leading) {
      offsets.push_back(b.getIndexAttr(*leading));
      sizes.push_back(b.getIndexAttr(1));
      strides.push_back(b.getIndexAttr(1));
    }
    offsets.append({b.getIndexAttr(0), b.getIndexAttr(slot.offset)});
    sizes.append({b.getIndexAttr(numModels), b.getIndexAttr(slot.size)});
    strides.append({b.getIndexAttr(1), b.getIndexAttr(1)});
    auto rowType = RankedTensorType::get({numModels, slot.size}, element);
    Value row = b.create<tensor::ExtractSliceOp>(loc, rowType, flat, offsets,
                                                 sizes, strides);
    return unflatten(loc, row, slot.type);
  }

  /// Writes the [M, n] tensor `v` into columns [offset, offset + n) of `dest`.
  Value insertColumns(Location loc, Value v, Value dest, int64_t offset,
                      int64_t n) {
    SmallVector<OpFoldResult> offsets{b.getIndexAttr(0),
                                      b.getIndexAttr(offset)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(numModels),
                                    b.getIndexAttr(n)};
    SmallVector<OpFoldResult> strides{b.getIndexAttr(1), b.getIndexAttr(1)};
    return b.create<tensor::InsertSliceOp>(loc, v, dest, offsets, sizes,
                                           strides);
  }

  /// An [M, size] tensor and the columns of a flat row it goes to.
  struct Columns {
    Value value;
    int64_t offset;
    int64_t size;
  };

  /// Writes each of `columns` into `dest` (insertColumns), in order;
  /// past a few dozen, in groups (FlatLayout.cpp says why).
  Value insertAllColumns(Location loc, ArrayRef<Columns> columns, Value dest);

private:
  OpBuilder &b;
  int64_t numModels;
  /// The model's float type (f32 or f64).
  Type element;
};

/// `{bufferization.writable = writable}`, the attributes of a tensor
/// argument of an entry point.
DictionaryAttr writableArgAttrs(OpBuilder &b, bool writable);

/// A value an entry point writes into one of its arguments.
struct ResultInto {
  Value value;
  unsigned argument;
};

/// Builds `name(params [M,P], <extra>, x, y, out [M,K])`: slices the
/// parameters out of the flat buffer, copies the body of `source` (whose
/// first arguments are the parameters, then `extraSourceArgs` more mapped to
/// the new function's `extraArgs`, then x and y), writes its trailing
/// `numOutputs` results into `out` and each value `finish` returns into
/// its argument.
func::FuncOp buildEntryPoint(
    OpBuilder &b, ModuleOp module, StringRef name, func::FuncOp source,
    ArrayRef<ParamSlot> slots, int64_t numModels, Type element,
    bool paramsWritable, ArrayRef<std::pair<Type, bool>> extraArgs,
    function_ref<void(IRMapping &, Block *)> mapExtra,
    function_ref<SmallVector<ResultInto>(IRMapping &, Block *, func::ReturnOp)>
        finish);

} // namespace mlir::mbt

#endif // MBT_DIALECT_MBT_TRANSFORMS_FLATLAYOUT_H
