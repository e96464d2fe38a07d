//===- MBTInterfaces.h - gradient and batching interfaces -------*- C++ -*-===//
#ifndef MBT_DIALECT_MBT_IR_MBTINTERFACES_H
#define MBT_DIALECT_MBT_IR_MBTINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::mbt::detail {
/// The batching rule of most ops: the same op, on batched operands, with a
/// leading dimension of size `numModels` prepended to every result type.
Operation *buildBatchedByPrependingModelDim(Operation *op, OpBuilder &builder,
                                            ValueRange batchedOperands,
                                            int64_t numModels);
} // namespace mlir::mbt::detail

#include "dialects/MBT/IR/MBTInterfaces.h.inc"

#endif
