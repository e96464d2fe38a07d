//===- RecurrentOps.cpp - gru: verifiers and gradient ---------------------===//

#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/MBTShapes.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {
/// Checks a GRU's operands: inputs [P..., B, T, 3H], weight [P..., H, 3H],
/// bias [P..., 3H], tokens [P..., B, T], with P at most one dimension.
LogicalResult verifyGru(Operation *op, RankedTensorType inputs,
                        RankedTensorType weight, RankedTensorType bias,
                        RankedTensorType tokens) {
  int64_t p = weight.getRank() - 2;
  if (p < 0 || p > 1)
    return op->emitOpError("needs a weight [H, 3H] or, with the model "
                           "dimension, [M, H, 3H], got ")
           << formatShape(weight.getShape());
  int64_t h = weight.getDimSize(p);
  if (ShapedType::isDynamic(h) ||
      !sameSize(weight.getDimSize(p + 1), 3 * h))
    return op->emitOpError("needs a weight [H, 3H] with a static H, got ")
           << formatShape(weight.getShape());
  if (inputs.getElementType() != weight.getElementType() ||
      bias.getElementType() != weight.getElementType())
    return op->emitOpError("needs inputs, weight and bias of one element "
                           "type");
  SmallVector<int64_t> lead(weight.getShape().take_front(p));
  auto shapeIs = [&](RankedTensorType type, ArrayRef<int64_t> expected) {
    if (type.getRank() != static_cast<int64_t>(expected.size()))
      return false;
    for (auto [a, b] : llvm::zip(type.getShape(), expected))
      if (!sameSize(a, b))
        return false;
    return true;
  };
  int64_t dyn = ShapedType::kDynamic;
  SmallVector<int64_t> inputsShape(lead), biasShape(lead), tokensShape(lead);
  inputsShape.append({inputs.getRank() > p ? inputs.getDimSize(p) : dyn,
                      inputs.getRank() > p + 1 ? inputs.getDimSize(p + 1)
                                               : dyn,
                      3 * h});
  biasShape.push_back(3 * h);
  tokensShape.append(inputsShape.begin() + p, inputsShape.begin() + p + 2);
  if (!shapeIs(inputs, inputsShape))
    return op->emitOpError("needs inputs [P..., B, T, 3H] = ")
           << formatShape(inputsShape) << ", got "
           << formatShape(inputs.getShape());
  if (!shapeIs(bias, biasShape))
    return op->emitOpError("needs a bias [P..., 3H] = ")
           << formatShape(biasShape) << ", got "
           << formatShape(bias.getShape());
  if (!shapeIs(tokens, tokensShape))
    return op->emitOpError("needs tokens [P..., B, T] = ")
           << formatShape(tokensShape) << ", got "
           << formatShape(tokens.getShape());
  return success();
}

/// The states' type of a GRU: inputs [P..., B, T, 3H] -> [P..., B, T, H].
RankedTensorType statesType(RankedTensorType inputs, RankedTensorType weight) {
  SmallVector<int64_t> shape(inputs.getShape());
  shape.back() = weight.getDimSize(weight.getRank() - 2);
  return RankedTensorType::get(shape, inputs.getElementType());
}

/// Whether `type` has `expected`'s element type and rank, and sizes that
/// agree with it (a dynamic size agrees with any).
bool fits(RankedTensorType type, RankedTensorType expected) {
  if (type.getElementType() != expected.getElementType() ||
      type.getRank() != expected.getRank())
    return false;
  for (auto [a, b] : llvm::zip(type.getShape(), expected.getShape()))
    if (!sameSize(a, b))
      return false;
  return true;
}
} // namespace

LogicalResult GruOp::verify() {
  if (failed(verifyGru(*this, getInputs().getType(), getWeight().getType(),
                       getBias().getType(), getTokens().getType())))
    return failure();
  auto expected = statesType(getInputs().getType(), getWeight().getType());
  if (!fits(getType(), expected))
    return emitOpError("needs a result [P..., B, T, H] = ")
           << formatShape(expected.getShape()) << ", got "
           << formatShape(getType().getShape());
  return success();
}

LogicalResult GruGradOp::verify() {
  if (failed(verifyGru(*this, getInputs().getType(), getWeight().getType(),
                       getBias().getType(), getTokens().getType())))
    return failure();
  auto states = statesType(getInputs().getType(), getWeight().getType());
  if (!fits(getStates().getType(), states) ||
      getStates().getType() != getGrad().getType())
    return emitOpError("needs states and a gradient [P..., B, T, H] = ")
           << formatShape(states.getShape());
  if (getDinputs().getType() != getInputs().getType() ||
      getDweight().getType() != getWeight().getType() ||
      getDbias().getType() != getBias().getType())
    return emitOpError("needs results of the types of inputs, weight and "
                       "bias");
  return success();
}

SmallVector<Value> GruOp::buildGradients(OpBuilder &b, ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value(), Value(), Value(), Value()};
  auto grad = b.create<GruGradOp>(
      getLoc(),
      TypeRange{getInputs().getType(), getWeight().getType(),
                getBias().getType()},
      getInputs(), getWeight(), getBias(), getTokens(), getResult(),
      resultGrads[0]);
  return {grad.getDinputs(), grad.getDweight(), grad.getDbias(), Value()};
}

// The tokens are data: nothing differentiable may flow into them.
bool GruOp::isDifferentiableOperand(unsigned index) { return index < 3; }
