//===- ConvOps.cpp - convolution and pooling ops --------------------------===//
//
// Result types (from the shared rules of ConvShapes.h), the adjoint ops'
// verifiers, and the gradients: conv2d's are its two adjoint ops, the
// poolings' theirs.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/ConvShapes.h"
#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/MBTShapes.h"

using namespace mlir;
using namespace mlir::mbt;

static LogicalResult shapeError(std::optional<Location> loc,
                                const llvm::Twine &message) {
  if (loc)
    return emitError(*loc, message);
  return failure();
}

/// The result shape [L..., B, O, OH, OW] of a conv2d of `input` [L..., B,
/// C, H, W] with `filter` [L..., O, Cg, KH, KW], or an error message.
static std::optional<SmallVector<int64_t>>
conv2dResultShape(ArrayRef<int64_t> input, ArrayRef<int64_t> filter,
                  ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                  ArrayRef<int64_t> dilation, int64_t groups,
                  std::string &error) {
  if (input.size() < 4 || input.size() != filter.size()) {
    error = "conv2d needs an input [..., B, C, H, W] and a filter [..., O, "
            "C/groups, KH, KW] with the same leading dims, got " +
            formatShape(input) + " and " + formatShape(filter);
    return std::nullopt;
  }
  size_t leading = input.size() - 4;
  for (size_t d = 0; d < leading; ++d)
    if (!sameSize(input[d], filter[d])) {
      error = "conv2d leading dims differ: " + formatShape(input) + " and " +
              formatShape(filter);
      return std::nullopt;
    }
  auto image = conv2dShape(input.take_back(3), filter.take_back(4), stride,
                           padding, dilation, groups, error);
  if (!image)
    return std::nullopt;
  SmallVector<int64_t> shape(input.take_front(leading + 1));
  shape.append(image->begin(), image->end());
  return shape;
}

/// The result shape [..., OH, OW] of a pooling of `input` [..., H, W].
static std::optional<SmallVector<int64_t>>
pool2dResultShape(ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
                  ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                  StringRef name, std::string &error) {
  if (input.size() < 2) {
    error =
        (name + " needs an input [..., H, W], got " + formatShape(input)).str();
    return std::nullopt;
  }
  auto plane =
      pool2dShape(input.take_back(2), kernel, stride, padding, name, error);
  if (!plane)
    return std::nullopt;
  SmallVector<int64_t> shape(input.drop_back(2));
  shape.append(plane->begin(), plane->end());
  return shape;
}

static RankedTensorType withShape(Type like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, getElementTypeOrSelf(like));
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto filter = cast<RankedTensorType>(adaptor.getFilter().getType());
  if (input.getElementType() != filter.getElementType())
    return shapeError(loc, "conv2d operands have different element types");
  std::string error;
  auto shape = conv2dResultShape(
      input.getShape(), filter.getShape(), adaptor.getStride(),
      adaptor.getPadding(), adaptor.getDilation(), adaptor.getGroups(), error);
  if (!shape)
    return shapeError(loc, error);
  results.push_back(withShape(input, *shape));
  return success();
}

/// Whether `actual` is `expected` up to dynamic sizes.
static bool matches(ArrayRef<int64_t> actual, ArrayRef<int64_t> expected) {
  if (actual.size() != expected.size())
    return false;
  for (auto [a, e] : llvm::zip(actual, expected))
    if (!sameSize(a, e))
      return false;
  return true;
}

/// A conv2d adjoint's `grad` must be shaped as the conv2d of `input` with
/// `filter` gives.
template <typename OpTy>
static LogicalResult verifyConvAdjoint(OpTy op, Value input, Value filter,
                                       Value grad) {
  std::string error;
  auto expected = conv2dResultShape(
      cast<RankedTensorType>(input.getType()).getShape(),
      cast<RankedTensorType>(filter.getType()).getShape(), op.getStride(),
      op.getPadding(), op.getDilation(), op.getGroups(), error);
  if (!expected)
    return op.emitOpError(error);
  auto gradShape = cast<RankedTensorType>(grad.getType()).getShape();
  if (!matches(gradShape, *expected))
    return op.emitOpError("needs a gradient shaped like the conv2d result ")
           << formatShape(*expected) << ", got " << formatShape(gradShape);
  return success();
}

LogicalResult Conv2dGradInputOp::verify() {
  return verifyConvAdjoint(*this, getLike(), getFilter(), getGrad());
}

LogicalResult Conv2dGradFilterOp::verify() {
  return verifyConvAdjoint(*this, getInput(), getLike(), getGrad());
}

/// The pooled result type of either pooling op, or an error at `loc`.
template <typename Adaptor>
static FailureOr<RankedTensorType> pooledType(std::optional<Location> loc,
                                              Adaptor adaptor, StringRef name) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  std::string error;
  auto shape =
      pool2dResultShape(input.getShape(), adaptor.getKernel(),
                        adaptor.getStride(), adaptor.getPadding(), name, error);
  if (!shape)
    return shapeError(loc, error);
  return withShape(input, *shape);
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto pooled = pooledType(loc, adaptor, "max_pool2d");
  if (failed(pooled))
    return failure();
  results.push_back(*pooled);
  results.push_back(
      RankedTensorType::get(pooled->getShape(), IntegerType::get(ctx, 32)));
  return success();
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto pooled = pooledType(loc, adaptor, "avg_pool2d");
  if (failed(pooled))
    return failure();
  results.push_back(*pooled);
  return success();
}

/// A pooling adjoint's `grad` (and max pooling's `indices`) must be shaped
/// as the pooling of `like` gives.
template <typename OpTy>
static LogicalResult verifyPoolAdjoint(OpTy op, StringRef name) {
  auto like = cast<RankedTensorType>(op.getLike().getType()).getShape();
  std::string error;
  auto expected = pool2dResultShape(like, op.getKernel(), op.getStride(),
                                    op.getPadding(), name, error);
  if (!expected)
    return op.emitOpError(error);
  auto gradShape = cast<RankedTensorType>(op.getGrad().getType()).getShape();
  if (!matches(gradShape, *expected))
    return op.emitOpError("needs a gradient shaped like the ")
           << name << " result " << formatShape(*expected) << ", got "
           << formatShape(gradShape);
  return success();
}

LogicalResult MaxPool2dGradOp::verify() {
  if (failed(verifyPoolAdjoint(*this, "max_pool2d")))
    return failure();
  auto indices = getIndices().getType().getShape();
  if (indices != getGrad().getType().getShape())
    return emitOpError("needs indices shaped like the gradient ")
           << formatShape(getGrad().getType().getShape()) << ", got "
           << formatShape(indices);
  return success();
}

LogicalResult AvgPool2dGradOp::verify() {
  return verifyPoolAdjoint(*this, "avg_pool2d");
}

SmallVector<Value> Conv2dOp::buildGradients(OpBuilder &b,
                                            ValueRange resultGrads) {
  Value g = resultGrads[0];
  if (!g)
    return {Value(), Value()};
  Location loc = getLoc();
  Value input = b.create<Conv2dGradInputOp>(
      loc, getInput().getType(), g, getFilter(), getInput(), getStrideAttr(),
      getPaddingAttr(), getDilationAttr(), getGroupsAttr());
  Value filter = b.create<Conv2dGradFilterOp>(
      loc, getFilter().getType(), getInput(), g, getFilter(), getStrideAttr(),
      getPaddingAttr(), getDilationAttr(), getGroupsAttr());
  return {input, filter};
}

SmallVector<Value> MaxPool2dOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  Value g = resultGrads[0];
  if (!g)
    return {Value()};
  return {b.create<MaxPool2dGradOp>(getLoc(), getInput().getType(), g,
                                    getIndices(), getInput(), getKernelAttr(),
                                    getStrideAttr(), getPaddingAttr())};
}

SmallVector<Value> AvgPool2dOp::buildGradients(OpBuilder &b,
                                               ValueRange resultGrads) {
  Value g = resultGrads[0];
  if (!g)
    return {Value()};
  return {b.create<AvgPool2dGradOp>(getLoc(), getInput().getType(), g,
                                    getInput(), getKernelAttr(),
                                    getStrideAttr(), getPaddingAttr())};
}
