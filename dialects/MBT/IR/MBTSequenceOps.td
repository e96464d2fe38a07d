//===- MBTSequenceOps.td - ops of sequence models ----------*- tablegen -*-===//
//
// Token embeddings. Included by MBTOps.td, which defines the classes it
// uses.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_SEQUENCE_OPS_TD
#define MBT_SEQUENCE_OPS_TD

def MBT_EmbeddingOp : MBT_PureOp<"embedding", [
    DeclareOpInterfaceMethods<GradientOpInterface,
                              ["isDifferentiableOperand"]>]> {
  let summary = "Rows of a table picked by integer indices (a lookup)";
  let description = [{
    `result[l..., i..., :] = table[l..., indices[l..., i...], :]`: `table` is
    `[L..., V, D]` (V rows of D features) and `indices` `[L..., I...]` with
    values in `[0, V)`; the result is `[L..., I..., D]`. `L` are the leading
    (model) dimensions, none in one model's function and one after
    `mbt-batch-models`; `I` are the indices' own dimensions (the batch, the
    sequence). This is `torch.nn.functional.embedding`. An index outside
    `[0, V)` reads a row of zeros (the runtime rejects such data before it
    reaches a step). The gradient flows to `table` only
    (`mbt.embedding_grad`).

    ```mlir
    %e = mbt.embedding %w, %tokens
        : (tensor<259x64xf32>, tensor<?x16xi32>) -> tensor<?x16x64xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$table, MBT_I32Tensor:$indices);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The number of leading (model) dimensions: the table's rank - 2.
    int64_t getNumLeadingDims() {
      return ::llvm::cast<::mlir::RankedTensorType>(getTable().getType())
                 .getRank() - 2;
    }
  }];
  let hasVerifier = 1;
}

def MBT_EmbeddingGradOp : MBT_PureOp<"embedding_grad"> {
  let summary = "Adjoint of embedding: each row's gradient summed into the table";
  let description = [{
    A tensor of the shape of `like` (the embedding's table, `[L..., V, D]`):
    row `v` is the sum of `grad[l..., i..., :]` over every position whose
    index `indices[l..., i...]` is `v`, zero for rows no index picks.
    `grad` is `[L..., I..., D]`, the adjoint of the embedding's result.
    Indices outside `[0, V)` contribute nothing. Lowered to a scatter-add:
    in parallel over the models and the features, each column of the table
    adds up the positions' gradients in place, so its cost is that of
    reading `grad` once, not `V` times.

    ```mlir
    %dw = mbt.embedding_grad %tokens, %de like %w
        : (tensor<?x16xi32>, tensor<?x16x64xf32>, tensor<259x64xf32>)
        -> tensor<259x64xf32>
    ```
  }];
  let arguments = (ins MBT_I32Tensor:$indices, MBT_FloatTensor:$grad,
                       MBT_FloatTensor:$like);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $indices `,` $grad `like` $like attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // MBT_SEQUENCE_OPS_TD
