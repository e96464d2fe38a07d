//===- SequenceOps.cpp - ops of sequence models: verifiers, gradients ----===//

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
           << rowsName
           << " of shape [indices..., D] = " << formatShape(indices.getShape())
           << " + [" << table.getDimSize(table.getRank() - 1) << "], got "
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
  Value dTable = b.create<EmbeddingGradOp>(
      getLoc(), getTable().getType(), getIndices(), resultGrads[0], getTable());
  return {dTable, Value()};
}

// The indices are data: nothing differentiable may flow into them.
bool EmbeddingOp::isDifferentiableOperand(unsigned index) { return index == 0; }

namespace {
/// Checks that `tokens` [L..., T] and `pooled` [L..., D] (masked_mean's
/// result, or the adjoint of it) fit `values` [L..., T, D].
LogicalResult verifyPooling(Operation *op, RankedTensorType values,
                            RankedTensorType tokens, RankedTensorType pooled,
                            StringRef pooledName) {
  int64_t rank = values.getRank();
  if (rank < 2)
    return op->emitOpError("needs values [L..., T, D], got ")
           << formatShape(values.getShape());
  bool tokensOk = tokens.getRank() == rank - 1;
  for (int64_t d = 0; tokensOk && d + 1 < rank; ++d)
    tokensOk = sameSize(tokens.getDimSize(d), values.getDimSize(d));
  if (!tokensOk)
    return op->emitOpError("needs tokens of shape [L..., T] = ")
           << formatShape(values.getShape().drop_back()) << ", got "
           << formatShape(tokens.getShape());
  if (pooled.getElementType() != values.getElementType())
    return op->emitOpError("needs a ")
           << pooledName << " of the values' element type "
           << values.getElementType() << ", got " << pooled.getElementType();
  bool pooledOk = pooled.getRank() == rank - 1;
  for (int64_t d = 0; pooledOk && d + 1 < rank; ++d) {
    int64_t source = d + 2 == rank ? rank - 1 : d; // T is dropped
    pooledOk = sameSize(pooled.getDimSize(d), values.getDimSize(source));
  }
  if (!pooledOk) {
    SmallVector<int64_t> expected(values.getShape().drop_back(2));
    expected.push_back(values.getDimSize(rank - 1));
    return op->emitOpError("needs a ")
           << pooledName << " of shape [L..., D] = " << formatShape(expected)
           << ", got " << formatShape(pooled.getShape());
  }
  return success();
}
} // namespace

LogicalResult MaskedMeanOp::verify() {
  return verifyPooling(*this, getValues().getType(), getTokens().getType(),
                       getType(), "result");
}

LogicalResult MaskedMeanGradOp::verify() {
  if (getType() != getLike().getType())
    return emitOpError("needs a result of the values' type ")
           << getLike().getType() << ", got " << getType();
  return verifyPooling(*this, getLike().getType(), getTokens().getType(),
                       getGrad().getType(), "gradient");
}

SmallVector<Value> MaskedMeanOp::buildGradients(OpBuilder &b,
                                                ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value(), Value()};
  Value dValues =
      b.create<MaskedMeanGradOp>(getLoc(), getValues().getType(), getTokens(),
                                 resultGrads[0], getValues());
  return {dValues, Value()};
}

// The tokens are data: nothing differentiable may flow into them.
bool MaskedMeanOp::isDifferentiableOperand(unsigned index) {
  return index == 0;
}

namespace {
/// B * T, or dynamic when either is.
int64_t rowsOf(int64_t b, int64_t t) {
  return ShapedType::isDynamic(b) || ShapedType::isDynamic(t)
             ? ShapedType::kDynamic
             : b * t;
}

/// Checks that `rows` [L..., B * T, K] is `split` [L..., B, T, K] with its
/// batch and position dimensions merged.
LogicalResult verifyRows(Operation *op, RankedTensorType rows,
                         RankedTensorType split, StringRef splitName) {
  if (split.getRank() < 3)
    return op->emitOpError("needs ") << splitName << " [L..., B, T, K], got "
                                     << formatShape(split.getShape());
  if (rows.getElementType() != split.getElementType())
    return op->emitOpError("needs the element type ")
           << split.getElementType() << " of " << splitName << ", got "
           << rows.getElementType();
  int64_t rank = split.getRank();
  SmallVector<int64_t> expected(split.getShape().drop_back(3));
  expected.push_back(
      rowsOf(split.getDimSize(rank - 3), split.getDimSize(rank - 2)));
  expected.push_back(split.getDimSize(rank - 1));
  bool ok = rows.getRank() == rank - 1;
  for (int64_t d = 0; ok && d < rank - 1; ++d)
    ok = sameSize(rows.getDimSize(d), expected[d]);
  if (!ok)
    return op->emitOpError("needs rows of shape [L..., B * T, K] = ")
           << formatShape(expected) << ", got " << formatShape(rows.getShape());
  return success();
}
} // namespace

LogicalResult MergeRowsOp::verify() {
  return verifyRows(*this, getType(), getInput().getType(), "the input");
}

LogicalResult SplitRowsOp::verify() {
  auto like = getLike().getType();
  auto result = getType();
  if (like.getRank() != result.getRank())
    return emitOpError("needs `like` of the result's rank ")
           << result.getRank() << ", got " << formatShape(like.getShape());
  int64_t rank = result.getRank();
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (!sameSize(like.getDimSize(d), result.getDimSize(d)))
      return emitOpError("needs a result [L..., B, T, K] with the leading, "
                         "batch and position sizes of `like` ")
             << formatShape(like.getShape()) << ", got "
             << formatShape(result.getShape());
  return verifyRows(*this, getInput().getType(), result, "the result");
}

SmallVector<Value> MergeRowsOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value()};
  return {b.create<SplitRowsOp>(getLoc(), getInput().getType(), resultGrads[0],
                                getInput())};
}

SmallVector<Value> SplitRowsOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value(), Value()};
  return {b.create<MergeRowsOp>(getLoc(), getInput().getType(), resultGrads[0]),
          Value()};
}

// `like` gives sizes only: it may depend on the parameters, and its
// gradient through this op is zero (buildGradients returns none for it).
bool SplitRowsOp::isDifferentiableOperand(unsigned index) { return true; }

namespace {
/// Checks attention's operands: query, key, value of one type [L..., T, D]
/// with D a multiple of `heads`, tokens [L..., T].
LogicalResult verifyAttention(Operation *op, RankedTensorType query, Type key,
                              Type value, RankedTensorType tokens,
                              int64_t heads, std::optional<Type> format) {
  // The products round f32 values to bf16 or f16 (mbt.round_to's rule).
  if (format && ((!format->isBF16() && !format->isF16()) ||
                 !query.getElementType().isF32()))
    return op->emitOpError(
               "rounds the products of f32 values to bf16 or f16, got ")
           << query.getElementType() << " values and format " << *format;
  if (query.getRank() < 2)
    return op->emitOpError("needs query [L..., T, D], got ")
           << formatShape(query.getShape());
  if (key != query || value != query)
    return op->emitOpError("needs query, key and value of one type, got ")
           << query << ", " << key << " and " << value;
  int64_t d = query.getDimSize(query.getRank() - 1);
  if (heads < 1 || ShapedType::isDynamic(d) || d % heads != 0)
    return op->emitOpError("needs a static feature size D that the ")
           << heads << " heads divide, got " << formatShape(query.getShape());
  bool tokensOk = tokens.getRank() == query.getRank() - 1;
  for (int64_t i = 0; tokensOk && i + 1 < query.getRank(); ++i)
    tokensOk = sameSize(tokens.getDimSize(i), query.getDimSize(i));
  if (!tokensOk)
    return op->emitOpError("needs tokens of shape [L..., T] = ")
           << formatShape(query.getShape().drop_back()) << ", got "
           << formatShape(tokens.getShape());
  return success();
}
} // namespace

LogicalResult AttentionOp::verify() {
  if (getType() != getQuery().getType())
    return emitOpError("needs a result of the query's type ")
           << getQuery().getType() << ", got " << getType();
  return verifyAttention(*this, getQuery().getType(), getKey().getType(),
                         getValue().getType(), getTokens().getType(),
                         getHeads(), getFormat());
}

LogicalResult AttentionGradOp::verify() {
  Type query = getQuery().getType();
  if (getGrad().getType() != query || getDquery().getType() != query ||
      getDkey().getType() != query || getDvalue().getType() != query)
    return emitOpError("needs a gradient and results of the query's type ")
           << query;
  return verifyAttention(*this, getQuery().getType(), getKey().getType(),
                         getValue().getType(), getTokens().getType(),
                         getHeads(), getFormat());
}

SmallVector<Value> AttentionOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value(), Value(), Value(), Value()};
  Type type = getQuery().getType();
  auto grad = b.create<AttentionGradOp>(
      getLoc(), TypeRange{type, type, type}, getQuery(), getKey(), getValue(),
      getTokens(), resultGrads[0], getHeadsAttr(), getCausalAttr(),
      getFormatAttr());
  return {grad.getDquery(), grad.getDkey(), grad.getDvalue(), Value()};
}

// The tokens are data: nothing differentiable may flow into them.
bool AttentionOp::isDifferentiableOperand(unsigned index) { return index < 3; }

LogicalResult PositionsOp::verify() {
  if (getType() != getTokens().getType())
    return emitOpError("needs a result of the tokens' type ")
           << getTokens().getType() << ", got " << getType();
  if (getType().getRank() < 1)
    return emitOpError("needs tokens [L..., T], got a scalar");
  return success();
}
