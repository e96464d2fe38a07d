//===- MBTSequenceOps.td - ops of sequence models ----------*- tablegen -*-===//
//
// Token embeddings and pooling over tokens. Included by MBTOps.td, which
// defines the classes it uses.
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

def MBT_MaskedMeanOp : MBT_PureOp<"masked_mean", [
    DeclareOpInterfaceMethods<GradientOpInterface,
                              ["isDifferentiableOperand"]>]> {
  let summary = "Mean over a sequence's real tokens (padding left out)";
  let description = [{
    `result[l..., :] = sum_t values[l..., t, :] * real[l..., t] / n[l...]`
    where `real[l..., t]` is 1 when `tokens[l..., t]` is not the pad token
    0 and 0 when it is, and `n[l...] = max(1, sum_t real[l..., t])`.
    `values` is `[L..., T, D]`, `tokens` `[L..., T]` and the result
    `[L..., D]`; `L` are the independent leading dimensions (the batch,
    and the models after `mbt-batch-models`), so the op batches by
    prepending the model dimension.

    Padding never reaches the result, and a sample's result does not depend
    on how far its step pads it (T): this is what makes a dynamic batch
    give the gradient of the same samples in one padded fixed batch. A row
    of padding alone has no real token and gives 0. The gradient flows to
    `values` only (`mbt.masked_mean_grad`).

    ```mlir
    %pooled = mbt.masked_mean %h, %tokens
        : (tensor<?x?x64xf32>, tensor<?x?xi32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$values, MBT_I32Tensor:$tokens);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $values `,` $tokens attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_MaskedMeanGradOp : MBT_PureOp<"masked_mean_grad"> {
  let summary = "Adjoint of masked_mean: the gradient spread over real tokens";
  let description = [{
    A tensor of the shape of `like` (masked_mean's `values`,
    `[L..., T, D]`): `result[l..., t, :] = grad[l..., :] / n[l...]` at a
    real token (`tokens[l..., t] != 0`) and 0 at padding, with
    `n[l...] = max(1, number of real tokens of row l)`. `grad` is
    `[L..., D]`, the adjoint of masked_mean's result.

    ```mlir
    %dh = mbt.masked_mean_grad %tokens, %dpooled like %h
        : (tensor<?x?xi32>, tensor<?x64xf32>, tensor<?x?x64xf32>)
        -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins MBT_I32Tensor:$tokens, MBT_FloatTensor:$grad,
                       MBT_FloatTensor:$like);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $tokens `,` $grad `like` $like attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_MergeRowsOp : MBT_PureOp<"merge_rows", [
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Merge the batch and position dimensions into one of rows";
  let description = [{
    `[L..., B, T, K] -> [L..., B * T, K]`, row-major: row `b * T + t` is
    position `t` of sample `b`. With `mbt.split_rows` around it, a matmul
    applies a matrix to every position of every sample as one matrix
    product (a position-wise linear layer), whatever B and T a step has.
    The adjoint is `mbt.split_rows` like the input.

    ```mlir
    %rows = mbt.merge_rows %h : (tensor<?x?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def MBT_SplitRowsOp : MBT_PureOp<"split_rows", [
    DeclareOpInterfaceMethods<GradientOpInterface,
                              ["isDifferentiableOperand"]>]> {
  let summary = "Split rows back into the batch and position dimensions of a value";
  let description = [{
    `[L..., B * T, K] -> [L..., B, T, K]`, the inverse of `mbt.merge_rows`,
    with B and T those of `like` (`[L..., B, T, ...]`, read for its sizes
    only). The adjoint is `mbt.merge_rows`; `like` may depend on the
    parameters, but its gradient through this op is zero. Like
    `mbt.merge_rows`, it lowers to a view (`tensor.expand_shape`), not a
    copy.

    ```mlir
    %y = mbt.split_rows %rows like %h
        : (tensor<?x32xf32>, tensor<?x?x64xf32>) -> tensor<?x?x32xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, MBT_FloatTensor:$like);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $input `like` $like attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_AttentionOp : MBT_PureOp<"attention", [
    DeclareOpInterfaceMethods<GradientOpInterface,
                              ["isDifferentiableOperand"]>]> {
  let summary = "Multi-head scaled dot-product attention with padding and causal masks";
  let description = [{
    `query`, `key` and `value` are `[L..., T, D]`, `tokens` `[L..., T]` the
    token ids of the sequence (0 is padding); the result is `[L..., T, D]`.
    Each of the `heads` heads owns `D / heads` consecutive columns `c`:

        s[i, j] = sum_c query[i, c] * key[j, c] / sqrt(D / heads)
        result[i, c] = sum_j softmax_j(s[i, j]) * value[j, c]

    where the softmax runs over the keys `j` allowed to query `i`: the real
    tokens (`tokens[j] != 0`), and with `causal` only `j <= i`. A padded key
    gets no weight, so a sample's rows at its real positions do not depend
    on how far its step pads it. A query with no allowed key (a row of
    padding alone) gives 0. `L` are independent leading dimensions (the
    batch, and the models after `mbt-batch-models`). This is
    `torch.nn.functional.scaled_dot_product_attention` over the heads with
    `attn_mask` the allowed pairs. The gradient flows to query, key and
    value (`mbt.attention_grad`), which recomputes the weights.

    With `format` (bf16 or f16, set by `mbt-autocast` for the sweep's
    `precision`), the two products take operands rounded to it and give a rounded
    result (`mbt.round_to`), as autocast runs the matmuls of attention;
    the scale, the masks and the softmax stay f32.

    ```mlir
    %o = mbt.attention %q, %k, %v, %tokens {heads = 4 : i64, causal = false}
        : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>,
           tensor<?x?xi32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$query, MBT_FloatTensor:$key,
                       MBT_FloatTensor:$value, MBT_I32Tensor:$tokens,
                       I64Attr:$heads, BoolAttr:$causal,
                       OptionalAttr<TypeAttr>:$format);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $tokens attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_AttentionGradOp : MBT_PureOp<"attention_grad"> {
  let summary = "Adjoint of attention: the gradients of query, key and value";
  let description = [{
    Given `grad`, the adjoint of `mbt.attention`'s result (`[L..., T, D]`),
    and the attention's operands and attributes, the gradients of query,
    key and value. With `p` the attention weights (recomputed) and
    `dp[i, j] = sum_c grad[i, c] * value[j, c]`:

        dvalue[j, c] = sum_i p[i, j] * grad[i, c]
        ds[i, j] = p[i, j] * (dp[i, j] - sum_j' p[i, j'] * dp[i, j'])
        dquery[i, c] = sum_j ds[i, j] * key[j, c] / sqrt(D / heads)
        dkey[j, c] = sum_i ds[i, j] * query[i, c] / sqrt(D / heads)

    each within its head's columns. Masked pairs have `p = 0` and pass
    nothing back. With `format`, the four products round their operands
    and results as the attention's do; `ds` stays f32.

    ```mlir
    %dq, %dk, %dv = mbt.attention_grad %q, %k, %v, %tokens, %g
        {heads = 4 : i64, causal = false}
        : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>,
           tensor<?x?xi32>, tensor<?x?x64xf32>)
        -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>)
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$query, MBT_FloatTensor:$key,
                       MBT_FloatTensor:$value, MBT_I32Tensor:$tokens,
                       MBT_FloatTensor:$grad, I64Attr:$heads,
                       BoolAttr:$causal, OptionalAttr<TypeAttr>:$format);
  let results = (outs MBT_FloatTensor:$dquery, MBT_FloatTensor:$dkey,
                      MBT_FloatTensor:$dvalue);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $tokens `,` $grad attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_PositionsOp : MBT_PureOp<"positions"> {
  let summary = "The position of every token in its sequence";
  let description = [{
    `result[l..., t] = t` for token ids `tokens` `[L..., T]`: the indices
    that a table of position embeddings is read at (`mbt.embedding`), padded
    positions included (their rows are left out downstream by the masks).
    Not differentiable: it depends on the data only.

    ```mlir
    %pos = mbt.positions %tokens : (tensor<?x?xi32>) -> tensor<?x?xi32>
    ```
  }];
  let arguments = (ins MBT_I32Tensor:$tokens);
  let results = (outs MBT_I32Tensor:$result);
  let assemblyFormat = "$tokens attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def MBT_GruOp : MBT_PureOp<"gru", [
    DeclareOpInterfaceMethods<GradientOpInterface,
                              ["isDifferentiableOperand"]>]> {
  let summary = "The hidden states of a GRU over a padded token sequence";
  let description = [{
    `inputs` `[P..., B, T, 3H]` are the input projections of every
    position (`x W_ih + b_ih`, gates in PyTorch's order r, z, n),
    `weight` `[P..., H, 3H]` and `bias` `[P..., 3H]` the recurrent
    projection (`h W_hh + b_hh`), `tokens` `[P..., B, T]` the token ids.
    With `h_0 = 0` and `g = h_{t-1} weight + bias`:

        r = sigmoid(i_r + g_r), z = sigmoid(i_z + g_z)
        n = tanh(i_n + r * g_n)
        h_t = (1 - z) * n + z * h_{t-1}     at a real token
        h_t = h_{t-1}                        at padding (token 0)

    The result `states` `[P..., B, T, H]` holds every `h_t`:
    `torch.nn.GRU` (one layer, batch_first) on each sample's real tokens,
    since padding comes after them and carries the state unchanged (so
    `h_{T-1}` is the state after the last real token, whatever the step's
    T). `P` are the model dimensions (none in one model's function, one
    after `mbt-batch-models`). The second, `gates` `[P..., B, T, 4H]`,
    holds r, z, n and `g_n` of every real position, for the gradient
    (`mbt.gru_grad`), which reads them instead of recomputing
    `h_{t-1} weight` (PyTorch keeps them too); where nothing reads it, the
    lowering does not write it. Lowered to a loop over T, each step one
    batched matmul and one elementwise update; the gradient runs the loop
    backward (backpropagation through time).

    ```mlir
    %h, %gates = mbt.gru %gx, %w, %b, %tokens
        : (tensor<?x?x96xf32>, tensor<32x96xf32>, tensor<96xf32>,
           tensor<?x?xi32>) -> (tensor<?x?x32xf32>, tensor<?x?x128xf32>)
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$inputs, MBT_FloatTensor:$weight,
                       MBT_FloatTensor:$bias, MBT_I32Tensor:$tokens);
  let results = (outs MBT_FloatTensor:$states, MBT_FloatTensor:$gates);
  let assemblyFormat = [{
    $inputs `,` $weight `,` $bias `,` $tokens attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_GruGradOp : MBT_PureOp<"gru_grad"> {
  let summary = "Adjoint of gru: backpropagation through time";
  let description = [{
    Given the operands of `mbt.gru`, its results `states` and `gates`, and
    `grad`, the adjoint of the states (`[P..., B, T, H]`), the gradients
    of the input projections (`[P..., B, T, 3H]`, 0 at padding), of the
    recurrent weight (`[P..., H, 3H]`) and of its bias (`[P..., 3H]`). A
    loop from `t = T - 1` down to 0 reads the gates of step t and carries
    the adjoint of the state backward; at padding the adjoint passes
    through unchanged.

    ```mlir
    %dgx, %dw, %db = mbt.gru_grad %gx, %w, %b, %tokens, %h, %gates, %dh
        : (tensor<?x?x96xf32>, tensor<32x96xf32>, tensor<96xf32>,
           tensor<?x?xi32>, tensor<?x?x32xf32>, tensor<?x?x128xf32>,
           tensor<?x?x32xf32>)
        -> (tensor<?x?x96xf32>, tensor<32x96xf32>, tensor<96xf32>)
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$inputs, MBT_FloatTensor:$weight,
                       MBT_FloatTensor:$bias, MBT_I32Tensor:$tokens,
                       MBT_FloatTensor:$states, MBT_FloatTensor:$gates,
                       MBT_FloatTensor:$grad);
  let results = (outs MBT_FloatTensor:$dinputs, MBT_FloatTensor:$dweight,
                      MBT_FloatTensor:$dbias);
  let assemblyFormat = [{
    $inputs `,` $weight `,` $bias `,` $tokens `,` $states `,` $gates `,`
    $grad attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_LstmOp : MBT_PureOp<"lstm", [
    DeclareOpInterfaceMethods<GradientOpInterface,
                              ["isDifferentiableOperand"]>]> {
  let summary = "The hidden and cell states of an LSTM over a padded token sequence";
  let description = [{
    `inputs` `[P..., B, T, 4H]` are the input projections of every
    position (`x W_ih + b_ih`, gates in PyTorch's order i, f, g, o),
    `weight` `[P..., H, 4H]` and `bias` `[P..., 4H]` the recurrent
    projection, `tokens` `[P..., B, T]` the token ids. With
    `h_0 = c_0 = 0` and `a = inputs_t + h_{t-1} weight + bias`:

        i = sigmoid(a_i), f = sigmoid(a_f), g = tanh(a_g), o = sigmoid(a_o)
        c_t = f * c_{t-1} + i * g,  h_t = o * tanh(c_t)   at a real token
        c_t = c_{t-1},  h_t = h_{t-1}                      at padding

    The results `[P..., B, T, H]` are every `h_t` and every `c_t`:
    `torch.nn.LSTM` (one layer, batch_first) on each sample's real tokens.
    The third, `gates` (the inputs' type), holds i, f, g and o of every
    real position after their nonlinearities, for the gradient
    (`mbt.lstm_grad`), which reads them and the cell states back instead
    of recomputing `h_{t-1} weight` (PyTorch keeps them too); where
    nothing reads it, the lowering does not write it. Lowered to a loop
    over T like `mbt.gru`.

    ```mlir
    %h, %c, %gates = mbt.lstm %gx, %w, %b, %tokens
        : (tensor<?x?x128xf32>, tensor<32x128xf32>, tensor<128xf32>,
           tensor<?x?xi32>)
        -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x128xf32>)
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$inputs, MBT_FloatTensor:$weight,
                       MBT_FloatTensor:$bias, MBT_I32Tensor:$tokens);
  let results = (outs MBT_FloatTensor:$states, MBT_FloatTensor:$cells,
                      MBT_FloatTensor:$gates);
  let assemblyFormat = [{
    $inputs `,` $weight `,` $bias `,` $tokens attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_LstmGradOp : MBT_PureOp<"lstm_grad"> {
  let summary = "Adjoint of lstm: backpropagation through time";
  let description = [{
    Given the operands of `mbt.lstm`, its results `states`, `cells` and
    `gates`, and `grad`, the adjoint of the states (the cells' adjoint is
    zero: only the states are read downstream), the gradients of the
    input projections (`[P..., B, T, 4H]`, 0 at padding), of the recurrent
    weight and of its bias. A loop from `t = T - 1` down to 0 reads the
    gates of step t and carries the adjoints of h and c backward; at
    padding both pass through unchanged.

    ```mlir
    %dgx, %dw, %db = mbt.lstm_grad %gx, %w, %b, %tokens, %h, %c, %gates, %dh
        : (tensor<?x?x128xf32>, tensor<32x128xf32>, tensor<128xf32>,
           tensor<?x?xi32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>,
           tensor<?x?x128xf32>, tensor<?x?x32xf32>)
        -> (tensor<?x?x128xf32>, tensor<32x128xf32>, tensor<128xf32>)
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$inputs, MBT_FloatTensor:$weight,
                       MBT_FloatTensor:$bias, MBT_I32Tensor:$tokens,
                       MBT_FloatTensor:$states, MBT_FloatTensor:$cells,
                       MBT_FloatTensor:$gates, MBT_FloatTensor:$grad);
  let results = (outs MBT_FloatTensor:$dinputs, MBT_FloatTensor:$dweight,
                      MBT_FloatTensor:$dbias);
  let assemblyFormat = [{
    $inputs `,` $weight `,` $bias `,` $tokens `,` $states `,` $cells `,`
    $gates `,` $grad attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // MBT_SEQUENCE_OPS_TD
