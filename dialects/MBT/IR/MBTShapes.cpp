//===- MBTShapes.cpp - result types of the mbt ops ------------------------===//
//
// Shape rules, written once: the ops' type inference uses them, and so does
// the frontend's Sema, so a user sees the same rule the verifier enforces.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/MBTShapes.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mbt;

bool mlir::mbt::sameSize(int64_t a, int64_t b) {
  return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
}

std::optional<llvm::SmallVector<int64_t>>
mlir::mbt::broadcastEqualRankShapes(llvm::ArrayRef<int64_t> lhs,
                                    llvm::ArrayRef<int64_t> rhs) {
  if (lhs.size() != rhs.size())
    return std::nullopt;
  llvm::SmallVector<int64_t> result;
  for (auto [a, b] : llvm::zip(lhs, rhs)) {
    if (a == 1)
      result.push_back(b);
    else if (b == 1)
      result.push_back(a);
    else if (sameSize(a, b))
      result.push_back(ShapedType::isDynamic(a) ? b : a);
    else
      return std::nullopt;
  }
  return result;
}

std::string mlir::mbt::formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << '?';
    else
      os << d;
  });
  os << ']';
  return text;
}

std::optional<llvm::SmallVector<int64_t>>
mlir::mbt::matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs,
                       bool transposeLhs, bool transposeRhs,
                       std::string &error) {
  if (lhs.size() < 2 || rhs.size() < 2) {
    error = "matmul operands must have rank >= 2, got " + formatShape(lhs) +
            " and " + formatShape(rhs);
    return std::nullopt;
  }
  if (lhs.size() != rhs.size()) {
    error = "matmul operands must have equal rank, got " + formatShape(lhs) +
            " and " + formatShape(rhs);
    return std::nullopt;
  }
  size_t rank = lhs.size();
  llvm::SmallVector<int64_t> result;
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (!sameSize(lhs[i], rhs[i])) {
      error = "matmul batch dimensions differ: " + formatShape(lhs) + " and " +
              formatShape(rhs);
      return std::nullopt;
    }
    result.push_back(ShapedType::isDynamic(lhs[i]) ? rhs[i] : lhs[i]);
  }
  int64_t m = transposeLhs ? lhs[rank - 1] : lhs[rank - 2];
  int64_t kl = transposeLhs ? lhs[rank - 2] : lhs[rank - 1];
  int64_t kr = transposeRhs ? rhs[rank - 1] : rhs[rank - 2];
  int64_t n = transposeRhs ? rhs[rank - 2] : rhs[rank - 1];
  if (!sameSize(kl, kr)) {
    error = "matmul contraction dimensions differ: " + formatShape(lhs) +
            " and " + formatShape(rhs);
    return std::nullopt;
  }
  result.push_back(m);
  result.push_back(n);
  return result;
}

static LogicalResult emitShapeError(std::optional<Location> loc,
                                    const llvm::Twine &message) {
  if (loc)
    return emitError(*loc, message);
  return failure();
}

/// A tensor of `shape` with the element type of `like` (a model computes in
/// one float type, so every result takes its float operand's).
static RankedTensorType tensorLike(Value like, llvm::ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, getElementTypeOrSelf(like.getType()));
}

/// Fails, with a diagnostic, when the two operands of `name` have different
/// element types: the dialect never converts between float types implicitly.
static LogicalResult checkSameElementType(std::optional<Location> loc,
                                          Value lhs, Value rhs,
                                          StringRef name) {
  Type a = getElementTypeOrSelf(lhs.getType());
  Type b = getElementTypeOrSelf(rhs.getType());
  if (a == b)
    return success();
  if (!loc)
    return failure();
  return emitError(*loc) << name
                         << " operands have different element types: " << a
                         << " and " << b;
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  std::string error;
  auto shape =
      matmulShape(lhs.getShape(), rhs.getShape(), adaptor.getTransposeLhs(),
                  adaptor.getTransposeRhs(), error);
  if (!shape)
    return emitShapeError(loc, error);
  if (failed(checkSameElementType(loc, adaptor.getLhs(), adaptor.getRhs(),
                                  "matmul")))
    return failure();
  results.push_back(tensorLike(adaptor.getLhs(), *shape));
  return success();
}

template <typename Adaptor>
static LogicalResult inferBroadcastBinary(MLIRContext *ctx,
                                          std::optional<Location> loc,
                                          Adaptor adaptor, StringRef name,
                                          SmallVectorImpl<Type> &results) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  auto shape = broadcastEqualRankShapes(lhs.getShape(), rhs.getShape());
  if (!shape)
    return emitShapeError(loc, name + " operands cannot be broadcast: " +
                                   formatShape(lhs.getShape()) + " and " +
                                   formatShape(rhs.getShape()));
  if (failed(
          checkSameElementType(loc, adaptor.getLhs(), adaptor.getRhs(), name)))
    return failure();
  results.push_back(tensorLike(adaptor.getLhs(), *shape));
  return success();
}

LogicalResult AddOp::inferReturnTypes(MLIRContext *ctx,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  return inferBroadcastBinary(ctx, loc, adaptor, "add", results);
}

LogicalResult SubOp::inferReturnTypes(MLIRContext *ctx,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  return inferBroadcastBinary(ctx, loc, adaptor, "sub", results);
}

LogicalResult MulOp::inferReturnTypes(MLIRContext *ctx,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  return inferBroadcastBinary(ctx, loc, adaptor, "mul", results);
}

LogicalResult DivOp::inferReturnTypes(MLIRContext *ctx,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  return inferBroadcastBinary(ctx, loc, adaptor, "div", results);
}

LogicalResult BroadcastOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto like = cast<RankedTensorType>(adaptor.getLike().getType());
  ArrayRef<int64_t> dims = adaptor.getDims();
  if (input.getRank() + static_cast<int64_t>(dims.size()) != like.getRank())
    return emitShapeError(loc, "broadcast of rank " +
                                   llvm::Twine(input.getRank()) + " along " +
                                   llvm::Twine(dims.size()) +
                                   " new dimensions cannot give rank " +
                                   llvm::Twine(like.getRank()));
  int64_t next = 0;
  for (int64_t d = 0; d < like.getRank(); ++d) {
    if (llvm::is_contained(dims, d))
      continue;
    if (!sameSize(input.getDimSize(next), like.getDimSize(d)))
      return emitShapeError(
          loc, "broadcast input " + formatShape(input.getShape()) +
                   " does not fit " + formatShape(like.getShape()));
    ++next;
  }
  for (int64_t d : dims)
    if (d < 0 || d >= like.getRank())
      return emitShapeError(loc, "broadcast dimension " + llvm::Twine(d) +
                                     " out of range");
  results.push_back(tensorLike(adaptor.getInput(), like.getShape()));
  return success();
}

/// The shape of a reduction of `input` over `axes` (distinct, in range),
/// which are removed; `name` is the op's mnemonic for diagnostics.
static FailureOr<llvm::SmallVector<int64_t>>
reducedShape(std::optional<Location> loc, Value input, ArrayRef<int64_t> axes,
             StringRef name) {
  auto type = cast<RankedTensorType>(input.getType());
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= type.getRank())
      return emitShapeError(loc, name + " axis " + llvm::Twine(axis) +
                                     " out of range for " +
                                     formatShape(type.getShape()));
    if (llvm::is_contained(axes.take_front(i), axis))
      return emitShapeError(loc, name + " axis " + llvm::Twine(axis) +
                                     " listed twice");
  }
  llvm::SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!llvm::is_contained(axes, d))
      shape.push_back(type.getDimSize(d));
  return shape;
}

/// inferReturnTypes of the reductions that share the rule above.
template <typename Adaptor>
static LogicalResult
inferReduction(MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,
               StringRef name, SmallVectorImpl<Type> &results) {
  auto shape = reducedShape(loc, adaptor.getInput(), adaptor.getAxes(), name);
  if (failed(shape))
    return failure();
  results.push_back(tensorLike(adaptor.getInput(), *shape));
  return success();
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferReduction(ctx, loc, adaptor, "reduce_sum", results);
}

LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferReduction(ctx, loc, adaptor, "reduce_max", results);
}

LogicalResult LogSumExpOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferReduction(ctx, loc, adaptor, "logsumexp", results);
}

LogicalResult CountOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  return inferReduction(ctx, loc, adaptor, "count", results);
}

LogicalResult ReduceMaxGradOp::verify() {
  auto shape = reducedShape(getLoc(), getInput(), getAxes(), "reduce_max_grad");
  if (failed(shape))
    return failure();
  for (Value v : {getMax(), getGrad()}) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getShape() != ArrayRef<int64_t>(*shape))
      return emitOpError("max and grad must have the reduced shape ")
             << formatShape(*shape) << ", got " << formatShape(type.getShape());
  }
  if (getResult().getType() != getInput().getType())
    return emitOpError("result must have the input's type");
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto type = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != type.getRank())
    return emitShapeError(
        loc, "transpose permutation of " + llvm::Twine(perm.size()) +
                 " dimensions for " + formatShape(type.getShape()));
  llvm::SmallVector<int64_t> shape;
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= type.getRank() ||
        llvm::is_contained(perm.take_front(i), p))
      return emitShapeError(loc, "transpose permutation " + formatShape(perm) +
                                     " is not a permutation of " +
                                     llvm::Twine(type.getRank()) +
                                     " dimensions");
    shape.push_back(type.getDimSize(p));
  }
  results.push_back(tensorLike(adaptor.getInput(), shape));
  return success();
}

LogicalResult OneHotOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  if (static_cast<int64_t>(adaptor.getNumClasses()) <= 0)
    return emitShapeError(loc, "one_hot needs a positive num_classes");
  auto labels = cast<RankedTensorType>(adaptor.getLabels().getType());
  llvm::SmallVector<int64_t> shape(labels.getShape());
  shape.push_back(adaptor.getNumClasses());
  Type element = adaptor.getElementType() ? *adaptor.getElementType()
                                          : Float32Type::get(ctx);
  results.push_back(RankedTensorType::get(shape, element));
  return success();
}

/// Checks `logits` [..., B, C] against `labels` [..., B] and returns the
/// leading dimensions `[...]`.
static FailureOr<llvm::SmallVector<int64_t>>
classificationLeadingShape(std::optional<Location> loc, Value logits,
                           Value labels, StringRef name) {
  auto l = cast<RankedTensorType>(logits.getType());
  auto y = cast<RankedTensorType>(labels.getType());
  if (l.getRank() < 2 || y.getRank() != l.getRank() - 1)
    return emitShapeError(loc, name + " expects logits [..., B, C] and " +
                                   "labels [..., B], got " +
                                   formatShape(l.getShape()) + " and " +
                                   formatShape(y.getShape()));
  for (int64_t d = 0; d < y.getRank(); ++d)
    if (!sameSize(l.getDimSize(d), y.getDimSize(d)))
      return emitShapeError(loc, name + " logits " + formatShape(l.getShape()) +
                                     " do not match labels " +
                                     formatShape(y.getShape()));
  return llvm::SmallVector<int64_t>(l.getShape().drop_back(2));
}

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *ctx,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  auto lead = classificationLeadingShape(loc, adaptor.getLogits(),
                                         adaptor.getLabels(), "cross_entropy");
  if (failed(lead))
    return failure();
  results.push_back(tensorLike(adaptor.getLogits(), *lead));
  return success();
}

LogicalResult AccuracyOp::inferReturnTypes(MLIRContext *ctx,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  auto lead = classificationLeadingShape(loc, adaptor.getLogits(),
                                         adaptor.getLabels(), "accuracy");
  if (failed(lead))
    return failure();
  results.push_back(tensorLike(adaptor.getLogits(), *lead));
  return success();
}

LogicalResult CrossEntropyGradOp::inferReturnTypes(
    MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  auto lead = classificationLeadingShape(
      loc, adaptor.getLogits(), adaptor.getLabels(), "cross_entropy_grad");
  if (failed(lead))
    return failure();
  auto grad = cast<RankedTensorType>(adaptor.getGrad().getType());
  if (grad.getShape() != ArrayRef<int64_t>(*lead))
    return emitShapeError(
        loc, "cross_entropy_grad adjoint " + formatShape(grad.getShape()) +
                 " does not match the loss shape " + formatShape(*lead));
  results.push_back(adaptor.getLogits().getType());
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  auto mismatch = [&] {
    return emitShapeError(loc, "concat operands " +
                                   formatShape(lhs.getShape()) + " and " +
                                   formatShape(rhs.getShape()) +
                                   " differ outside axis " + llvm::Twine(axis));
  };
  if (lhs.getRank() != rhs.getRank())
    return mismatch();
  if (axis < 0 || axis >= lhs.getRank() || lhs.isDynamicDim(axis) ||
      rhs.isDynamicDim(axis))
    return emitShapeError(loc, "concat axis " + llvm::Twine(axis) +
                                   " is not a static dimension of " +
                                   formatShape(lhs.getShape()) + " and " +
                                   formatShape(rhs.getShape()));
  llvm::SmallVector<int64_t> shape;
  for (int64_t d = 0; d < lhs.getRank(); ++d) {
    int64_t a = lhs.getDimSize(d), b = rhs.getDimSize(d);
    if (d == axis) {
      shape.push_back(ShapedType::isDynamic(a) || ShapedType::isDynamic(b)
                          ? ShapedType::kDynamic
                          : a + b);
    } else if (!sameSize(a, b)) {
      return mismatch();
    } else {
      shape.push_back(ShapedType::isDynamic(a) ? b : a);
    }
  }
  if (failed(checkSameElementType(loc, adaptor.getLhs(), adaptor.getRhs(),
                                  "concat")))
    return failure();
  results.push_back(tensorLike(adaptor.getLhs(), shape));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  int64_t start = static_cast<int64_t>(adaptor.getStart());
  int64_t end = static_cast<int64_t>(adaptor.getEnd());
  if (axis < 0 || axis >= input.getRank() || input.isDynamicDim(axis))
    return emitShapeError(loc, "slice axis " + llvm::Twine(axis) +
                                   " is not a static dimension of " +
                                   formatShape(input.getShape()));
  if (start < 0 || start >= end || end > input.getDimSize(axis))
    return emitShapeError(loc, "slice [" + llvm::Twine(start) + ", " +
                                   llvm::Twine(end) +
                                   ") out of range for size " +
                                   llvm::Twine(input.getDimSize(axis)));
  llvm::SmallVector<int64_t> shape(input.getShape());
  shape[axis] = end - start;
  results.push_back(tensorLike(adaptor.getInput(), shape));
  return success();
}

LogicalResult SliceGradOp::verify() {
  auto grad = getGrad().getType();
  auto like = getLike().getType();
  int64_t axis = getAxis(), start = getStart();
  if (grad.getRank() != like.getRank() || axis < 0 || axis >= like.getRank() ||
      like.isDynamicDim(axis) || grad.isDynamicDim(axis) || start < 0 ||
      start + grad.getDimSize(axis) > like.getDimSize(axis))
    return emitOpError("grad ")
           << formatShape(grad.getShape()) << " at " << start << " of axis "
           << axis << " does not fit " << formatShape(like.getShape());
  for (int64_t d = 0; d < like.getRank(); ++d)
    if (d != axis && !sameSize(grad.getDimSize(d), like.getDimSize(d)))
      return emitOpError("grad ")
             << formatShape(grad.getShape()) << " differs from "
             << formatShape(like.getShape()) << " outside axis " << axis;
  if (getResult().getType() != like)
    return emitOpError("result must have the type of 'like'");
  return success();
}
