//===- SequenceOps.cpp - embedding's verifiers and gradient ---------------===//

#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/MBTShapes.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {
/// Checks that `indices` [L..., I...] and `rows` [L..., I..., D] (the
/// embedding's result, or the adjoint of it) fit `table` [L..., V, D].
LogicalResult verifyLookup(Operation *op, RankedTensorType table,
                           RankedTensorType indices, RankedTensorType rows,
                           StringRef rowsName) {
  if (table.getRank() < 2)
    return op->emitOpError("needs a table [L..., V, D], got ")
           << formatShape(table.getShape());
  int64_t leading = table.getRank() - 2;
  if (indices.getRank() < leading)
    return op->emitOpError("needs indices with the table's ")
           << leading << " leading dimensions, got "
           << formatShape(indices.getShape());
  for (int64_t d = 0; d < leading; ++d)
    if (!sameSize(table.getDimSize(d), indices.getDimSize(d)))
      return op->emitOpError("has indices ")
             << formatShape(indices.getShape())
             << " whose leading dims differ from the table's "
             << formatShape(table.getShape());
  if (rows.getElementType() != table.getElementType())
    return op->emitOpError("needs a ")
           << rowsName << " of the table's element type "
           << table.getElementType() << ", got " << rows.getElementType();
  bool shapeOk = rows.getRank() == indices.getRank() + 1 &&
                 sameSize(rows.getDimSize(rows.getRank() - 1),
                       table.getDimSize(table.getRank() - 1));
  for (int64_t d = 0; shapeOk && d < indices.getRank(); ++d)
    shapeOk = sameSize(rows.getDimSize(d), indices.getDimSize(d));
  if (!shapeOk)
    return op->emitOpError("needs a ")
           << rowsName << " of shape [indices..., D] = "
           << formatShape(indices.getShape()) << " + ["
           << table.getDimSize(table.getRank() - 1) << "], got "
           << formatShape(rows.getShape());
  return success();
}
} // namespace

LogicalResult EmbeddingOp::verify() {
  return verifyLookup(*this, getTable().getType(), getIndices().getType(),
                      getType(), "result");
}

LogicalResult EmbeddingGradOp::verify() {
  if (getType() != getLike().getType())
    return emitOpError("needs a result of the table's type ")
           << getLike().getType() << ", got " << getType();
  return verifyLookup(*this, getLike().getType(), getIndices().getType(),
                      getGrad().getType(), "gradient");
}

SmallVector<Value> EmbeddingOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value(), Value()};
  Value dTable = b.create<EmbeddingGradOp>(getLoc(), getTable().getType(),
                                           getIndices(), resultGrads[0],
                                           getTable());
  return {dTable, Value()};
}

// The indices are data: nothing differentiable may flow into them.
bool EmbeddingOp::isDifferentiableOperand(unsigned index) {
  return index == 0;
}
