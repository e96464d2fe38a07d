//===- MBTConvOps.td - convolution and pooling -------------*- tablegen -*-===//
//
// 2-D convolution and pooling over [.., C, H, W] images (channels first, as
// PyTorch), with their adjoints. Leading dimensions before the image's are
// batch dimensions (the samples, and the models once batched). Included by
// MBTOps.td, which defines the classes they use.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_CONV_OPS_TD
#define MBT_CONV_OPS_TD

// Pairs (height, width) of non-negative sizes.
def MBT_Pair : ConfinedAttr<DenseI64ArrayAttr, [DenseArrayCount<2>]>;

def MBT_Conv2dOp : MBT_PureOp<"conv2d", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "2-D cross-correlation, as torch.nn.functional.conv2d";
  let description = [{
    `input` is `[L..., B, C, H, W]` and `filter` `[L..., O, C / groups, KH,
    KW]` with the same leading dims `L` (none, or the model dimension); the
    result `[L..., B, O, OH, OW]` is
    `sum_{c, kh, kw} input[b, g * C/groups + c, oh * sh + kh * dh - ph,
    ow * sw + kw * dw - pw] * filter[o, c, kh, kw]` (zero outside the
    image) with `g = o / (O / groups)` and
    `OH = (H + 2 ph - dh (KH - 1) - 1) / sh + 1` (floor), likewise `OW`.
    Lowered as im2col (one gather into `[B * OH * OW, C/groups * KH * KW]`
    columns per model and group) and one batched GEMM over models and
    groups, which BLAS or cuBLAS runs.

    ```mlir
    %y = mbt.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>,
                             dilation = array<i64: 1, 1>, groups = 1 : i64}
        : (tensor<?x1x28x28xf32>, tensor<6x1x5x5xf32>) -> tensor<?x6x28x28xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, MBT_FloatTensor:$filter,
                       MBT_Pair:$stride, MBT_Pair:$padding, MBT_Pair:$dilation,
                       ConfinedAttr<I64Attr, [IntPositive]>:$groups);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` functional-type(operands, results)
  }];
}

def MBT_Conv2dGradInputOp : MBT_PureOp<"conv2d_grad_input",
    [AllTypesMatch<["like", "result"]>]> {
  let summary = "Adjoint of conv2d with respect to its input";
  let description = [{
    Given the adjoint `grad` `[L..., B, O, OH, OW]` of a conv2d's result
    and its `filter`, the adjoint of its input, shaped like `like` (the
    input: its size is not implied by the result's when a stride drops
    rows). Lowered as one batched GEMM into columns and a col2im gather
    that sums, for each input element, the columns that read it (no
    scatter, so no atomics on the GPU).

    ```mlir
    %dx = mbt.conv2d_grad_input %dy, %w like %x {stride = array<i64: 1, 1>,
            padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, groups = 1 : i64}
        : tensor<?x6x28x28xf32>, tensor<6x1x5x5xf32>, tensor<?x1x28x28xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$grad, MBT_FloatTensor:$filter,
                       MBT_FloatTensor:$like,
                       MBT_Pair:$stride, MBT_Pair:$padding, MBT_Pair:$dilation,
                       ConfinedAttr<I64Attr, [IntPositive]>:$groups);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $filter `like` $like attr-dict `:` type($grad) `,` type($filter)
    `,` type($like)
  }];
  let hasVerifier = 1;
}

def MBT_Conv2dGradFilterOp : MBT_PureOp<"conv2d_grad_filter",
    [AllTypesMatch<["like", "result"]>]> {
  let summary = "Adjoint of conv2d with respect to its filter";
  let description = [{
    Given a conv2d's `input` and the adjoint `grad` of its result, the
    adjoint of its filter (shaped like `like`, the filter): per model and
    group, the product of the gradient's rows with the input's im2col
    columns, summed over the batch and the output positions.

    ```mlir
    %dw = mbt.conv2d_grad_filter %x, %dy like %w {stride = array<i64: 1, 1>,
            padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, groups = 1 : i64}
        : tensor<?x1x28x28xf32>, tensor<?x6x28x28xf32>, tensor<6x1x5x5xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, MBT_FloatTensor:$grad,
                       MBT_FloatTensor:$like,
                       MBT_Pair:$stride, MBT_Pair:$padding, MBT_Pair:$dilation,
                       ConfinedAttr<I64Attr, [IntPositive]>:$groups);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad `like` $like attr-dict `:` type($input) `,` type($grad)
    `,` type($like)
  }];
  let hasVerifier = 1;
}

def MBT_MaxPool2dOp : MBT_PureOp<"max_pool2d", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "2-D max pooling over the last two dimensions";
  let description = [{
    `input` `[..., H, W]`; the result `[..., OH, OW]` holds the maximum of
    each `kernel` window at `stride`, the input padded with `-inf` by
    `padding` (`OH = (H + 2 ph - KH) / sh + 1`), as
    `torch.nn.functional.max_pool2d`. `indices` holds where in the `H x W`
    plane each maximum was (`ih * W + iw`), the first in row-major window
    order among equal values (as PyTorch's CPU kernel), for the adjoint.

    ```mlir
    %y, %i = mbt.max_pool2d %x {kernel = array<i64: 2, 2>,
                                 stride = array<i64: 2, 2>, padding = array<i64: 0, 0>}
        : (tensor<?x6x28x28xf32>) -> (tensor<?x6x14x14xf32>, tensor<?x6x14x14xi32>)
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, MBT_Pair:$kernel,
                       MBT_Pair:$stride, MBT_Pair:$padding);
  let results = (outs MBT_FloatTensor:$result, MBT_I32Tensor:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def MBT_MaxPool2dGradOp : MBT_PureOp<"max_pool2d_grad",
    [AllTypesMatch<["like", "result"]>]> {
  let summary = "Adjoint of max_pool2d";
  let description = [{
    Each input element receives the adjoints `grad` of the windows whose
    maximum it was (`indices`, from `mbt.max_pool2d` with the same
    attributes), gathered over the windows that contain it; the result is
    shaped like `like` (the pooled input).

    ```mlir
    %dx = mbt.max_pool2d_grad %dy, %i like %x {kernel = array<i64: 2, 2>,
            stride = array<i64: 2, 2>, padding = array<i64: 0, 0>}
        : tensor<?x6x14x14xf32>, tensor<?x6x14x14xi32>, tensor<?x6x28x28xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$grad, MBT_I32Tensor:$indices,
                       MBT_FloatTensor:$like, MBT_Pair:$kernel,
                       MBT_Pair:$stride, MBT_Pair:$padding);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices `like` $like attr-dict `:` type($grad) `,`
    type($indices) `,` type($like)
  }];
  let hasVerifier = 1;
}

def MBT_AvgPool2dOp : MBT_PureOp<"avg_pool2d", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "2-D average pooling over the last two dimensions";
  let description = [{
    As `mbt.max_pool2d`, the mean of each window instead, padding counted
    as zeros in a window of `KH * KW` elements (PyTorch's default,
    `count_include_pad = True`).

    ```mlir
    %y = mbt.avg_pool2d %x {kernel = array<i64: 2, 2>,
                             stride = array<i64: 2, 2>, padding = array<i64: 0, 0>}
        : (tensor<?x6x28x28xf32>) -> tensor<?x6x14x14xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, MBT_Pair:$kernel,
                       MBT_Pair:$stride, MBT_Pair:$padding);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def MBT_AvgPool2dGradOp : MBT_PureOp<"avg_pool2d_grad",
    [AllTypesMatch<["like", "result"]>]> {
  let summary = "Adjoint of avg_pool2d";
  let description = [{
    Each input element receives `1 / (KH * KW)` of the adjoint of every
    window that contains it; the result is shaped like `like`.

    ```mlir
    %dx = mbt.avg_pool2d_grad %dy like %x {kernel = array<i64: 2, 2>,
            stride = array<i64: 2, 2>, padding = array<i64: 0, 0>}
        : tensor<?x6x14x14xf32>, tensor<?x6x28x28xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$grad, MBT_FloatTensor:$like,
                       MBT_Pair:$kernel, MBT_Pair:$stride, MBT_Pair:$padding);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `like` $like attr-dict `:` type($grad) `,` type($like)
  }];
  let hasVerifier = 1;
}

#endif // MBT_CONV_OPS_TD
