//===- RecurrentOps.cpp - gru and lstm: verifiers and gradients -----------===//

#include "dialects/MBT/IR/MBTOps.h"
#include "dialects/MBT/IR/MBTShapes.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {
/// Checks a recurrent layer's operands, for `gates` gates (G: 3 for a GRU,
/// 4 for an LSTM): inputs [P..., B, T, GH], weight [P..., H, GH], bias
/// [P..., GH], tokens [P..., B, T], with P at most one dimension.
LogicalResult verifyRecurrent(Operation *op, RankedTensorType inputs,
                              RankedTensorType weight, RankedTensorType bias,
                              RankedTensorType tokens, int64_t gates) {
  std::string gh = std::to_string(gates) + "H";
  int64_t p = weight.getRank() - 2;
  if (p < 0 || p > 1)
    return op->emitOpError("needs a weight [H, ")
           << gh << "] or, with the model dimension, [M, H, " << gh << "], got "
           << formatShape(weight.getShape());
  int64_t h = weight.getDimSize(p);
  if (ShapedType::isDynamic(h) ||
      !sameSize(weight.getDimSize(p + 1), gates * h))
    return op->emitOpError("needs a weight [H, ")
           << gh << "] with a static H, got " << formatShape(weight.getShape());
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
                      inputs.getRank() > p + 1 ? inputs.getDimSize(p + 1) : dyn,
                      gates * h});
  biasShape.push_back(gates * h);
  tokensShape.append(inputsShape.begin() + p, inputsShape.begin() + p + 2);
  if (!shapeIs(inputs, inputsShape))
    return op->emitOpError("needs inputs [P..., B, T, ")
           << gh << "] = " << formatShape(inputsShape) << ", got "
           << formatShape(inputs.getShape());
  if (!shapeIs(bias, biasShape))
    return op->emitOpError("needs a bias [P..., ")
           << gh << "] = " << formatShape(biasShape) << ", got "
           << formatShape(bias.getShape());
  if (!shapeIs(tokens, tokensShape))
    return op->emitOpError("needs tokens [P..., B, T] = ")
           << formatShape(tokensShape) << ", got "
           << formatShape(tokens.getShape());
  return success();
}

/// The states' type of a recurrent layer: inputs [P..., B, T, GH] ->
/// [P..., B, T, H].
RankedTensorType statesType(RankedTensorType inputs, RankedTensorType weight) {
  SmallVector<int64_t> shape(inputs.getShape());
  shape.back() = weight.getDimSize(weight.getRank() - 2);
  return RankedTensorType::get(shape, inputs.getElementType());
}

/// A GRU's gates' type: inputs [P..., B, T, 3H] -> [P..., B, T, 4H] (r, z,
/// n and the recurrent projection of n).
RankedTensorType gruGatesType(RankedTensorType inputs,
                              RankedTensorType weight) {
  SmallVector<int64_t> shape(inputs.getShape());
  shape.back() = 4 * weight.getDimSize(weight.getRank() - 2);
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
/// A recurrent layer's gradient op (GRU or LSTM) gives the gradients of
/// its inputs, weight and bias, of their types.
template <typename GradOp> LogicalResult verifyGradientResults(GradOp op) {
  if (op.getDinputs().getType() != op.getInputs().getType() ||
      op.getDweight().getType() != op.getWeight().getType() ||
      op.getDbias().getType() != op.getBias().getType())
    return op.emitOpError("needs results of the types of inputs, weight and "
                          "bias");
  return success();
}
} // namespace

LogicalResult GruOp::verify() {
  if (failed(verifyRecurrent(*this, getInputs().getType(),
                             getWeight().getType(), getBias().getType(),
                             getTokens().getType(), 3)))
    return failure();
  auto expected = statesType(getInputs().getType(), getWeight().getType());
  if (!fits(getStates().getType(), expected))
    return emitOpError("needs states [P..., B, T, H] = ")
           << formatShape(expected.getShape()) << ", got "
           << formatShape(getStates().getType().getShape());
  auto gates = gruGatesType(getInputs().getType(), getWeight().getType());
  if (getGates().getType() != gates)
    return emitOpError("needs gates [P..., B, T, 4H] = ")
           << formatShape(gates.getShape()) << ", got "
           << formatShape(getGates().getType().getShape());
  return success();
}

LogicalResult GruGradOp::verify() {
  if (failed(verifyRecurrent(*this, getInputs().getType(),
                             getWeight().getType(), getBias().getType(),
                             getTokens().getType(), 3)))
    return failure();
  auto states = statesType(getInputs().getType(), getWeight().getType());
  if (!fits(getStates().getType(), states) ||
      getStates().getType() != getGrad().getType())
    return emitOpError("needs states and a gradient [P..., B, T, H] = ")
           << formatShape(states.getShape());
  auto gates = gruGatesType(getInputs().getType(), getWeight().getType());
  if (getGates().getType() != gates)
    return emitOpError("needs gates [P..., B, T, 4H] = ")
           << formatShape(gates.getShape());
  return verifyGradientResults(*this);
}

SmallVector<Value> GruOp::buildGradients(OpBuilder &b, ValueRange resultGrads) {
  if (!resultGrads[0])
    return {Value(), Value(), Value(), Value()};
  auto grad =
      b.create<GruGradOp>(getLoc(),
                          TypeRange{getInputs().getType(),
                                    getWeight().getType(), getBias().getType()},
                          getInputs(), getWeight(), getBias(), getTokens(),
                          getStates(), getGates(), resultGrads[0]);
  return {grad.getDinputs(), grad.getDweight(), grad.getDbias(), Value()};
}

// The tokens are data: nothing differentiable may flow into them.
bool GruOp::isDifferentiableOperand(unsigned index) { return index < 3; }

LogicalResult LstmOp::verify() {
  if (failed(verifyRecurrent(*this, getInputs().getType(),
                             getWeight().getType(), getBias().getType(),
                             getTokens().getType(), 4)))
    return failure();
  auto expected = statesType(getInputs().getType(), getWeight().getType());
  if (!fits(getStates().getType(), expected) ||
      getCells().getType() != getStates().getType())
    return emitOpError("needs states and cells [P..., B, T, H] = ")
           << formatShape(expected.getShape()) << ", got "
           << formatShape(getStates().getType().getShape()) << " and "
           << formatShape(getCells().getType().getShape());
  if (getGates().getType() != getInputs().getType())
    return emitOpError("needs gates of the inputs' type ")
           << formatShape(getInputs().getType().getShape()) << ", got "
           << formatShape(getGates().getType().getShape());
  return success();
}

LogicalResult LstmGradOp::verify() {
  if (failed(verifyRecurrent(*this, getInputs().getType(),
                             getWeight().getType(), getBias().getType(),
                             getTokens().getType(), 4)))
    return failure();
  auto states = statesType(getInputs().getType(), getWeight().getType());
  if (!fits(getStates().getType(), states) ||
      getStates().getType() != getCells().getType() ||
      getStates().getType() != getGrad().getType())
    return emitOpError("needs states, cells and a gradient [P..., B, T, H] = ")
           << formatShape(states.getShape());
  if (getGates().getType() != getInputs().getType())
    return emitOpError("needs gates of the inputs' type ")
           << formatShape(getInputs().getType().getShape());
  return verifyGradientResults(*this);
}

SmallVector<Value> LstmOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads) {
  // Only the states reach the loss: model code never reads the cells.
  if (!resultGrads[0])
    return {Value(), Value(), Value(), Value()};
  auto grad = b.create<LstmGradOp>(
      getLoc(),
      TypeRange{getInputs().getType(), getWeight().getType(),
                getBias().getType()},
      getInputs(), getWeight(), getBias(), getTokens(), getStates(), getCells(),
      getGates(), resultGrads[0]);
  return {grad.getDinputs(), grad.getDweight(), grad.getDbias(), Value()};
}

// The tokens are data: nothing differentiable may flow into them.
bool LstmOp::isDifferentiableOperand(unsigned index) { return index < 3; }
