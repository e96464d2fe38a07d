//===- MBTDialect.h - the mbt dialect ---------------------------*- C++ -*-===//
#ifndef MBT_DIALECT_MBT_IR_MBTDIALECT_H
#define MBT_DIALECT_MBT_IR_MBTDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"

// The attributes come first: the dialect's discardable-attribute helpers
// (MBTOpsDialect.h.inc) return #mbt.init.
#include "dialects/MBT/IR/MBTEnums.h"

#define GET_ATTRDEF_CLASSES
#include "dialects/MBT/IR/MBTAttributes.h.inc"

#include "dialects/MBT/IR/MBTOpsDialect.h.inc"

#endif
