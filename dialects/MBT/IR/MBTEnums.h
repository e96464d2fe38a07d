//===- MBTEnums.h - the dialect's enumerations ------------------*- C++ -*-===//
//
// The enumerations of MBTAttributes.td (data set, routing, batching,
// precision, schedule, initializer) without the rest of the dialect, for the
// frontend's AST: the language, the IR and the manifest spell them alike.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_DIALECT_MBT_IR_MBTENUMS_H
#define MBT_DIALECT_MBT_IR_MBTENUMS_H

#include "mlir/Support/LLVM.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

#include "dialects/MBT/IR/MBTEnums.h.inc"

namespace mlir::mbt {
/// Whether `data` is a data set of token sequences (batched by a batching
/// strategy) rather than of fixed-size samples.
inline bool isSequenceDataSet(DataSet data) {
  return data == DataSet::fortunes;
}
/// Whether `data` is a kind of the user's own files (docs/data.md), which
/// the sweep describes in its `data_source`.
inline bool isFileDataSet(DataSet data) {
  return data != DataSet::fashion_mnist && data != DataSet::fortunes;
}
} // namespace mlir::mbt

#endif
