//===- MBTOps.td - ops of the mbt dialect -----------------*- tablegen -*-===//
//
// Tensor ops of one model's training program, and the ops the passes
// introduce (gradient helpers, per-parameter and fused optimizer updates).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_OPS_TD
#define MBT_OPS_TD

include "dialects/MBT/IR/MBTAttributes.td"
include "dialects/MBT/IR/MBTDialect.td"
include "dialects/MBT/IR/MBTInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MBT_FloatTensor : RankedTensorOf<[F32, F64]>;
def MBT_I32Tensor : RankedTensorOf<[I32]>;
def MBT_F64Tensor : RankedTensorOf<[F64]>;

// A side-effect free op batched by the default rule (prepend M to types).
class MBT_PureOp<string mnemonic, list<Trait> traits = []> :
    MBT_Op<mnemonic, !listconcat(traits, [Pure, BatchableOpInterface])>;

// A side-effect free op with its own batching rule.
class MBT_PureOpOwnBatching<string mnemonic, list<Trait> traits = []> :
    MBT_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<BatchableOpInterface, ["buildBatched"]>])>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def MBT_ConstantOp : MBT_PureOpOwnBatching<"constant", [ConstantLike,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "A constant tensor";
  let description = [{
    A tensor known at compile time. Only splat constants can be batched
    (they become the same splat with a leading model dimension).

    ```mlir
    %one = mbt.constant dense<1.0> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def MBT_ModelConstantOp : MBT_PureOpOwnBatching<"model_constant"> {
  let summary = "A scalar that differs between the models of a sweep";
  let description = [{
    Model `i` of the sweep sees `values[i]` (a model argument the sweep
    sets per model, such as a gain or a loss weight). Batching turns it
    into the constant `[values[0], ..., values[M-1]]` along the model
    dimension, so it needs exactly one value per model.

    ```mlir
    %gain = mbt.model_constant {values = array<f64: 0.5, 1.0, 2.0>} : tensor<f32>
    ```
  }];
  let arguments = (ins DenseF64ArrayAttr:$values);
  let results = (outs 0DTensorOf<[F32, F64]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def MBT_MatmulOp : MBT_PureOp<"matmul", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Batched matrix product over the last two dimensions";
  let description = [{
    `op(lhs) · op(rhs)` where `op` transposes the last two dimensions when
    the corresponding flag is set. Both operands have the same rank (at
    least 2); leading dimensions are batch dimensions and must agree. The
    contraction dimensions must agree (a dynamic size agrees with any).

    ```mlir
    %h = mbt.matmul %x, %w : (tensor<?x784xf32>, tensor<784x128xf32>)
                              -> tensor<?x128xf32>
    %gw = mbt.matmul %x, %g {transpose_lhs}
        : (tensor<?x784xf32>, tensor<?x128xf32>) -> tensor<784x128xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$lhs, MBT_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  // An operand transposed in its last two dims becomes a flag.
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class MBT_BroadcastBinaryOp<string mnemonic, list<Trait> traits = []> :
    MBT_PureOp<mnemonic, !listconcat(traits, [
        InferTypeOpAdaptor,
        DeclareOpInterfaceMethods<GradientOpInterface>])> {
  let arguments = (ins MBT_FloatTensor:$lhs, MBT_FloatTensor:$rhs);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def MBT_AddOp : MBT_BroadcastBinaryOp<"add", [Commutative]> {
  let summary = "Elementwise sum with broadcasting along size-1 dimensions";
  let description = [{
    Operands have equal rank; in each dimension their sizes are equal or one
    of them is 1 (the frontend inserts `mbt.reshape` to equalize ranks, so
    NumPy's rule holds at the language level).

    ```mlir
    %z = mbt.add %h, %b : (tensor<?x128xf32>, tensor<1x128xf32>)
                          -> tensor<?x128xf32>
    ```
  }];
}

def MBT_SubOp : MBT_BroadcastBinaryOp<"sub"> {
  let summary = "Elementwise difference with broadcasting";
  let description = [{
    `lhs - rhs` with the broadcasting rule of `mbt.add`.

    ```mlir
    %d = mbt.sub %a, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
    ```
  }];
}

def MBT_MulOp : MBT_BroadcastBinaryOp<"mul", [Commutative]> {
  let summary = "Elementwise product with broadcasting";
  let description = [{
    `lhs * rhs` with the broadcasting rule of `mbt.add`.

    ```mlir
    %p = mbt.mul %a, %b : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    ```
  }];
}

def MBT_DivOp : MBT_BroadcastBinaryOp<"div"> {
  let summary = "Elementwise quotient with broadcasting";
  let description = [{
    `lhs / rhs` (IEEE division) with the broadcasting rule of `mbt.add`.

    ```mlir
    %q = mbt.div %a, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
    ```
  }];
}

class MBT_UnaryOp<string mnemonic, list<Trait> traits = []> :
    MBT_PureOp<mnemonic, !listconcat(traits, [SameOperandsAndResultType])> {
  let arguments = (ins MBT_FloatTensor:$input);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def MBT_NegOp : MBT_UnaryOp<"neg",
    [DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Elementwise negation";
  let description = [{
    ```mlir
    %n = mbt.neg %a : tensor<4x3xf32>
    ```
  }];
}

def MBT_ReluOp : MBT_UnaryOp<"relu",
    [DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Rectified linear unit, max(x, 0)";
  let description = [{
    ```mlir
    %h = mbt.relu %z : tensor<?x128xf32>
    ```
  }];
}

def MBT_TanhOp : MBT_UnaryOp<"tanh",
    [DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Hyperbolic tangent";
  let description = [{
    ```mlir
    %h = mbt.tanh %z : tensor<?x128xf32>
    ```
  }];
}

def MBT_SigmoidOp : MBT_UnaryOp<"sigmoid",
    [DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Logistic sigmoid, 1 / (1 + exp(-x))";
  let description = [{
    ```mlir
    %p = mbt.sigmoid %z : tensor<?x10xf32>
    ```
  }];
}

def MBT_SiluOp : MBT_UnaryOp<"silu",
    [DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Sigmoid linear unit (swish), x * sigmoid(x)";
  let description = [{
    ```mlir
    %h = mbt.silu %z : tensor<?x128xf32>
    ```
  }];
}

def MBT_ExpOp : MBT_UnaryOp<"exp",
    [DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Elementwise natural exponential";
  let description = [{
    The adjoint is `grad * exp(x)`, built from the op's own result.

    ```mlir
    %e = mbt.exp %z : tensor<?x10xf32>
    ```
  }];
}

def MBT_LogOp : MBT_UnaryOp<"log",
    [DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Elementwise natural logarithm";
  let description = [{
    IEEE semantics: `log(0) = -inf`, `log(x < 0) = nan`. The adjoint is
    `grad / x`.

    ```mlir
    %l = mbt.log %p : tensor<?x10xf32>
    ```
  }];
}

def MBT_SoftplusOp : MBT_UnaryOp<"softplus",
    [DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Softplus, log(1 + exp(x)), computed without overflow";
  let description = [{
    Evaluated as `max(x, 0) + log1p(exp(-|x|))`, which is exact for large
    `|x|` in both directions (PyTorch's `softplus` with beta 1 and its
    `binary_cross_entropy_with_logits` use the same form). The adjoint is
    `grad * sigmoid(x)`.

    ```mlir
    %s = mbt.softplus %z : tensor<?x10xf32>
    ```
  }];
}

def MBT_SqrtOp : MBT_UnaryOp<"sqrt",
    [DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Elementwise square root";
  let description = [{
    IEEE semantics (`sqrt(x < 0) = nan`). The adjoint is
    `grad * 0.5 / sqrt(x)`, built from the op's own result.

    ```mlir
    %s = mbt.sqrt %v : tensor<?x1xf32>
    ```
  }];
}

def MBT_GeluOp : MBT_UnaryOp<"gelu",
    [DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Gaussian error linear unit, x * Phi(x), with erf";
  let description = [{
    The exact form `0.5 * x * (1 + erf(x / sqrt(2)))`, as PyTorch's
    default `gelu`.

    ```mlir
    %h = mbt.gelu %z : tensor<?x128xf32>
    ```
  }];
}

class MBT_ActivationGradOp<string mnemonic> :
    MBT_PureOp<mnemonic, [SameOperandsAndResultType]> {
  let arguments = (ins MBT_FloatTensor:$value, MBT_FloatTensor:$grad);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$value `,` $grad attr-dict `:` type($result)";
}

def MBT_ReluGradOp : MBT_ActivationGradOp<"relu_grad"> {
  let summary = "Adjoint of relu: grad where the input is positive, else 0";
  let description = [{
    Built by `mbt-autodiff`; `value` is relu's input.

    ```mlir
    %dz = mbt.relu_grad %z, %dh : tensor<?x128xf32>
    ```
  }];
}

def MBT_TanhGradOp : MBT_ActivationGradOp<"tanh_grad"> {
  let summary = "Adjoint of tanh: grad * (1 - y^2)";
  let description = [{
    Built by `mbt-autodiff`; `value` is tanh's result `y`.

    ```mlir
    %dz = mbt.tanh_grad %y, %dh : tensor<?x128xf32>
    ```
  }];
}

def MBT_SigmoidGradOp : MBT_ActivationGradOp<"sigmoid_grad"> {
  let summary = "Adjoint of sigmoid: grad * y * (1 - y)";
  let description = [{
    Built by `mbt-autodiff`; `value` is sigmoid's result `y`.

    ```mlir
    %dz = mbt.sigmoid_grad %y, %dp : tensor<?x10xf32>
    ```
  }];
}

def MBT_SiluGradOp : MBT_ActivationGradOp<"silu_grad"> {
  let summary = "Adjoint of silu: grad * (s + x * s * (1 - s)), s = sigmoid(x)";
  let description = [{
    Built by `mbt-autodiff`; `value` is silu's input `x`.

    ```mlir
    %dz = mbt.silu_grad %z, %dh : tensor<?x128xf32>
    ```
  }];
}

def MBT_GeluGradOp : MBT_ActivationGradOp<"gelu_grad"> {
  let summary = "Adjoint of gelu: grad * (Phi(x) + x * phi(x))";
  let description = [{
    Built by `mbt-autodiff`; `value` is gelu's input `x`; `Phi` and `phi`
    are the standard normal CDF and density.

    ```mlir
    %dz = mbt.gelu_grad %z, %dh : tensor<?x128xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

def MBT_ReshapeOp : MBT_PureOp<"reshape", [
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Reshape a tensor";
  let description = [{
    Reinterprets the row-major elements of a static tensor under a new
    static shape with the same element count. With dynamic sizes (a batch
    dimension), it may only insert or remove dimensions of size 1, such as
    `[?, 32] -> [?, 1, 32]`.

    ```mlir
    %b2 = mbt.reshape %b : (tensor<128xf32>) -> tensor<1x128xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def MBT_TransposeOp : MBT_PureOpOwnBatching<"transpose", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Permute the dimensions of a tensor";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`; the
    permutation lists every dimension once. The adjoint is the transpose
    by the inverse permutation.

    ```mlir
    %wt = mbt.transpose %w {permutation = array<i64: 1, 0>}
        : (tensor<784x128xf32>) -> tensor<128x784xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  // The transpose of a matmul is a matmul (operands swapped).
  let hasCanonicalizer = 1;
}

def MBT_ConcatOp : MBT_PureOpOwnBatching<"concat", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Join two tensors along a dimension";
  let description = [{
    `lhs` and `rhs` have the same rank and the same sizes except along
    `axis`, where the result has the sum of theirs. The adjoints are the
    two slices of the result's adjoint.

    ```mlir
    %c = mbt.concat %a, %b {axis = 1 : i64}
        : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$lhs, MBT_FloatTensor:$rhs, I64Attr:$axis);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def MBT_SliceOp : MBT_PureOpOwnBatching<"slice", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "The elements [start, end) along a dimension";
  let description = [{
    Keeps indices `start` to `end - 1` of dimension `axis` (static, within
    its size); the other dimensions are unchanged. The adjoint is the
    result's adjoint placed back into zeros (`mbt.slice_grad`).

    ```mlir
    %s = mbt.slice %x {axis = 1 : i64, start = 2 : i64, end = 5 : i64}
        : (tensor<?x8xf32>) -> tensor<?x3xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, I64Attr:$axis, I64Attr:$start,
                       I64Attr:$end);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def MBT_SliceGradOp : MBT_PureOpOwnBatching<"slice_grad"> {
  let summary = "Adjoint of slice: the slice's adjoint inside zeros";
  let description = [{
    A tensor of the shape of `like` (the slice's input), zero except at
    indices `[start, start + size)` of `axis`, which hold `grad`.

    ```mlir
    %dx = mbt.slice_grad %ds like %x {axis = 1 : i64, start = 2 : i64}
        : (tensor<?x3xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$grad, MBT_FloatTensor:$like, I64Attr:$axis,
                       I64Attr:$start);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `like` $like attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_UnbroadcastOp : MBT_PureOp<"unbroadcast"> {
  let summary = "Sum a tensor down to a shape it was broadcast from";
  let description = [{
    The adjoint of broadcasting: sums `input` over every dimension where the
    result has size 1 and the input does not. Ranks are equal; every other
    dimension is unchanged.

    ```mlir
    %db = mbt.unbroadcast %dz : (tensor<?x128xf32>) -> tensor<1x128xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def MBT_BroadcastOp : MBT_PureOpOwnBatching<"broadcast", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Broadcast a tensor along new dimensions";
  let description = [{
    The result has the shape of `like`; `dims` lists the result dimensions
    that `input` lacks, and `input` provides the others in order. `like`
    supplies only the shape (and its dynamic sizes at run time), so it gets
    no adjoint; the input's is the adjoint summed over `dims`.

    ```mlir
    %g = mbt.broadcast %s like %x {dims = array<i64: 0, 1>}
        : (tensor<f32>, tensor<?x10xf32>) -> tensor<?x10xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, AnyRankedTensor:$like,
                       DenseI64ArrayAttr:$dims);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $input `like` $like attr-dict `:` functional-type(operands, results)
  }];
}

def MBT_ReduceSumOp : MBT_PureOpOwnBatching<"reduce_sum", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Sum over the given dimensions, which are removed";
  let description = [{
    ```mlir
    %s = mbt.reduce_sum %x {axes = array<i64: 0, 1>}
        : (tensor<?x10xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def MBT_ReduceMaxOp : MBT_PureOpOwnBatching<"reduce_max", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Maximum over the given dimensions, which are removed";
  let description = [{
    The adjoint goes to the elements equal to the maximum, shared evenly
    among ties (as PyTorch's `amax`); see `mbt.reduce_max_grad`.

    ```mlir
    %m = mbt.reduce_max %x {axes = array<i64: 1>}
        : (tensor<?x10xf32>) -> tensor<?xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def MBT_ReduceMaxGradOp : MBT_PureOpOwnBatching<"reduce_max_grad"> {
  let summary = "Adjoint of reduce_max: grad shared among the maxima";
  let description = [{
    `input` is reduce_max's input, `max` its result and `grad` the adjoint
    of that result (both of the reduced shape). Each element of the result
    is `grad / n` where the input element equals its maximum (`n` such
    elements in its reduction group), and 0 elsewhere.

    ```mlir
    %dx = mbt.reduce_max_grad %x, %m, %dm {axes = array<i64: 1>}
        : (tensor<?x10xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x10xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, MBT_FloatTensor:$max,
                       MBT_FloatTensor:$grad, DenseI64ArrayAttr:$axes);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $max `,` $grad attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_LogSumExpOp : MBT_PureOpOwnBatching<"logsumexp", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "log(sum(exp(x))) over the given dimensions, which are removed";
  let description = [{
    Computed with the maximum subtracted, so it neither overflows nor
    underflows; the normalizer of softmax and log_softmax. The adjoint is
    `grad * softmax(x)`, that is `grad * exp(x - result)` with both
    broadcast back over the reduced dimensions.

    ```mlir
    %lse = mbt.logsumexp %z {axes = array<i64: 1>}
        : (tensor<?x10xf32>) -> tensor<?xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def MBT_CountOp : MBT_PureOpOwnBatching<"count", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "The number of elements a reduction over the axes combines";
  let description = [{
    A tensor of the reduced shape (the input's with `axes` removed) filled
    with the product of the sizes of `axes`, read at run time where they
    are dynamic. A mean is `reduce_sum(x) / count(x)` over the same axes.
    It depends on the input's shape only, so its adjoint is zero.

    ```mlir
    %n = mbt.count %x {axes = array<i64: 0, 1>}
        : (tensor<?x10xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Losses and metrics
//===----------------------------------------------------------------------===//

def MBT_CrossEntropyOp : MBT_PureOp<"cross_entropy", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Mean softmax cross-entropy over the batch";
  let description = [{
    `logits` is `[..., B, C]` and `labels` is `[..., B]` with class indices
    in `[0, C)`; the result `[...]` is
    `mean_b(logsumexp(logits[b]) - logits[b, labels[b]])`, computed with the
    maximum subtracted for stability.

    ```mlir
    %l = mbt.cross_entropy %logits, %y
        : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$logits, MBT_I32Tensor:$labels);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
}

def MBT_CrossEntropyGradOp : MBT_PureOp<"cross_entropy_grad", [
    InferTypeOpAdaptor]> {
  let summary = "Adjoint of cross_entropy with respect to the logits";
  let description = [{
    `grad[...] * (softmax(logits) - onehot(labels)) / B`, where `grad` is
    the adjoint of the mean loss.

    ```mlir
    %dl = mbt.cross_entropy_grad %logits, %y, %one
        : (tensor<?x10xf32>, tensor<?xi32>, tensor<f32>) -> tensor<?x10xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$logits, MBT_I32Tensor:$labels, MBT_FloatTensor:$grad);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $grad attr-dict `:` functional-type(operands, results)
  }];
}

def MBT_OneHotOp : MBT_PureOp<"one_hot", [
    InferTypeOpAdaptor]> {
  let summary = "Class indices as one-hot float vectors";
  let description = [{
    `labels` `[...]` with indices in `[0, num_classes)` become `[...,
    num_classes]` with 1.0 at each label and 0.0 elsewhere (an index out of
    range gives a row of zeros). Labels are data, so there is no gradient.
    `element_type` is the float type of the result (f32 when absent), the
    float type of the model that uses it.

    ```mlir
    %t = mbt.one_hot %y {num_classes = 10 : i64}
        : (tensor<?xi32>) -> tensor<?x10xf32>
    ```
  }];
  let arguments = (ins MBT_I32Tensor:$labels,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_classes,
                       OptionalAttr<TypeAttrOf<AnyFloat>>:$element_type);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$labels attr-dict `:` functional-type(operands, results)";
}

def MBT_AccuracyOp : MBT_PureOp<"accuracy", [
    InferTypeOpAdaptor]> {
  let summary = "Fraction of samples whose label is among the top-k logits";
  let description = [{
    Shapes as in `mbt.cross_entropy`. A sample counts when fewer than
    `top_k` classes rank before its label, where a class ranks before
    another if its logit is larger, or equal with a lower index; with
    `top_k = 1` (the default) that is the arg-max of `torch.argmax`. Not
    differentiable.

    ```mlir
    %a = mbt.accuracy %logits, %y
        : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
    %a5 = mbt.accuracy %logits, %y {top_k = 5 : i64}
        : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$logits, MBT_I32Tensor:$labels,
                       ConfinedAttr<DefaultValuedAttr<I64Attr, "1">,
                                    [IntPositive]>:$top_k);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
}

// The ops of the optimizer step and the sweep.
include "dialects/MBT/IR/MBTTrainingOps.td"
// Random draws (dropout masks).
include "dialects/MBT/IR/MBTRandomOps.td"
// Convolution and pooling.
include "dialects/MBT/IR/MBTConvOps.td"
// Normalization with running statistics.
include "dialects/MBT/IR/MBTNormOps.td"
// Token embeddings.
include "dialects/MBT/IR/MBTSequenceOps.td"
// Per-token loss and accuracy (language models).
include "dialects/MBT/IR/MBTTokenLossOps.td"
// Rounding to a narrower float format (mixed precision).
include "dialects/MBT/IR/MBTPrecisionOps.td"

#endif // MBT_OPS_TD
