//===- MBTInterfaces.td - how ops differentiate and batch -*- tablegen -*-===//
//
// The passes hold no per-op special cases: `mbt-autodiff` asks each op for
// its vector-Jacobian product, `mbt-batch-models` asks each op to rebuild
// itself with a leading model dimension.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_INTERFACES_TD
#define MBT_INTERFACES_TD

include "mlir/IR/OpBase.td"

def GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::mbt";
  let description = [{
    An op that reverse-mode automatic differentiation can propagate through.
    Given the adjoint of each result, the op builds the adjoint of each
    operand (its vector-Jacobian product).
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the adjoint of every
        operand. `resultGrads[i]` is the adjoint of result `i` or a null
        value when no gradient reaches that result. Returns one value per
        operand; a null value means the operand gets no gradient
        (integer operands such as labels).
      }],
      "::llvm::SmallVector<::mlir::Value>", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGrads)>,
    InterfaceMethod<[{
        Whether the op can carry a gradient to operand `index`. An operand
        it cannot (dropout's rate) must not depend on the parameters:
        `mbt-autodiff` reports it if it does, rather than dropping that
        path's contribution to the gradient.
      }],
      "bool", "isDifferentiableOperand", (ins "unsigned":$index),
      /*methodBody=*/"", /*defaultImplementation=*/"return true;">
  ];
}

def BatchableOpInterface : OpInterface<"BatchableOpInterface"> {
  let cppNamespace = "::mlir::mbt";
  let description = [{
    An op that can compute the same thing for M independent models at once
    when every operand gains a leading model dimension of size M.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the batched form of this op from operands that each carry a
        leading model dimension of size `numModels`. Returns the new op, or
        null after emitting an error when this instance cannot be batched.
      }],
      "::mlir::Operation *", "buildBatched",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$batchedOperands,
           "int64_t":$numModels),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::mbt::detail::buildBatchedByPrependingModelDim(
            $_op.getOperation(), builder, batchedOperands, numModels);
      }]>
  ];
}

#endif // MBT_INTERFACES_TD
