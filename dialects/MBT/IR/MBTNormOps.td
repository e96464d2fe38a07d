//===- MBTNormOps.td - normalization with running statistics -*- tablegen -*-===//
//
// Batch normalization. A model's running statistics are *buffers*: per-model
// tensors that are not trained but that the train step updates (the model
// function's arguments marked `mbt.buffer`, docs/abi.md). Included by
// MBTOps.td, which defines the classes it uses.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_NORM_OPS_TD
#define MBT_NORM_OPS_TD

def MBT_BatchNormOp : MBT_PureOp<"batch_norm", [
    AllTypesMatch<["input", "result"]>,
    AllTypesMatch<["mean", "variance"]>]> {
  let summary = "Batch normalization with given statistics (evaluation form)";
  let description = [{
    `(input - mean) / sqrt(variance + epsilon)`, the statistics broadcast
    along the batch and spatial dimensions: `input` is `[L..., B, C, S...]`
    and `mean` and `variance` are `[L..., C]`, where `L` are the leading
    (model) dimensions, `B` the batch, `C` the channels (features) and `S`
    zero or more spatial dimensions. This is
    `torch.nn.functional.batch_norm` in evaluation mode, without the affine
    part (the `nn` layer multiplies and adds its own parameters).

    The model function holds this form, its statistics being the model's
    running-statistics buffers, and the evaluation step computes it.
    `mbt-autodiff` replaces the train step's copies by the training form
    (`buildTrainingForm`): the batch's own mean and biased variance over
    `B` and `S`, from reductions whose adjoints give the gradient, and the
    buffers' new values `(1 - momentum) * running + momentum * batch`, with
    the unbiased batch variance (`n / (n - 1)` times the biased one, `n`
    the number of values per channel), as PyTorch updates them.

    ```mlir
    %y = mbt.batch_norm %x, %running_mean, %running_var
        {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64}
        : tensor<?x16x8x8xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, MBT_FloatTensor:$mean,
                       MBT_FloatTensor:$variance, F64Attr:$epsilon,
                       F64Attr:$momentum);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $mean `,` $variance attr-dict `:` type($input) `,` type($mean)
  }];
  let extraClassDeclaration = [{
    /// The number of leading (model) dimensions: the statistics' rank - 1.
    int64_t getNumLeadingDims() {
      return ::llvm::cast<::mlir::RankedTensorType>(getMean().getType())
                 .getRank() - 1;
    }
    /// The dimensions of the input the statistics are taken over: the
    /// batch and the spatial ones.
    ::llvm::SmallVector<int64_t> getReducedAxes();

    /// The training form's values: the result normalized with the batch's
    /// statistics, and the running statistics' new values.
    struct TrainingForm {
      ::mlir::Value result, newMean, newVariance;
    };
    /// Builds the training form at the builder's insertion point, out of
    /// reductions and elementwise ops (which carry the gradient).
    TrainingForm buildTrainingForm(::mlir::OpBuilder &b);
  }];
  let hasVerifier = 1;
}

#endif // MBT_NORM_OPS_TD
