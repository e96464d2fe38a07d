//===- MBTRandomOps.td - per-model randomness --------------*- tablegen -*-===//
//
// Ops whose results are drawn at random inside the compiled step. Draws come
// from Philox4x32-10, a counter-based generator: each element's random bits
// are a pure function of (model seed, call site, step, element index), so
// model i's draws do not depend on how many models share the batch or where
// model i sits in it. Included by MBTOps.td, which defines the classes they
// use.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RANDOM_OPS_TD
#define MBT_RANDOM_OPS_TD

def MBT_I64Tensor : RankedTensorOf<[I64]>;

def MBT_ModelSeedOp : MBT_PureOpOwnBatching<"model_seed"> {
  let summary = "The sweep's seed of each model";
  let description = [{
    Model `i` sees `seeds[i]`, the seed the sweep gave it (the one its
    parameters were drawn with). `mbt-autodiff` creates it to key the
    train step's random draws; batching turns it into the constant
    `[seeds[0], ..., seeds[M-1]]` along the model dimension, so it needs
    exactly one seed per model.

    ```mlir
    %seed = mbt.model_seed {seeds = array<i64: 0, 1, 2>} : tensor<i64>
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$seeds);
  let results = (outs 0DTensorOf<[I64]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def MBT_DropoutOp : MBT_PureOp<"dropout", [
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<GradientOpInterface,
                              ["isDifferentiableOperand"]>]> {
  let summary = "Inverted dropout with a counter-based mask";
  let description = [{
    With a `key` of `seed` (i64) and `step` (f64), the training form, each element of `input` is
    zeroed with probability `rate` and the others are scaled by
    `1 / (1 - rate)`, as `torch.nn.functional.dropout` in training mode.
    Without a key (the evaluation form, which the model function holds)
    the op is the identity and folds away; `mbt-autodiff` gives the train
    step's copies the key.

    Element `e` (its row-major index within one model's slice, the leading
    dimensions that `rate`, `seed` and `step` share excluded) is kept when
    `u >= rate`, where `u = (w >> 8) * 2^-24` and `w` is word 0 of
    `philox4x32_10(counter = {e, site, step, 0x44524F50 "DROP"}, key =
    {seed low, seed high})`. `site` numbers the dropout calls of a model,
    so two calls draw different masks; a model's masks do not depend on
    the other models of the batch. The gradient is the same op applied to
    the adjoint: the same mask, the same scale.

    `shared_dims` trailing dims share one draw: 0 for dropout, 2 for
    dropout2d (`torch.nn.functional.dropout2d`: a whole `H x W` plane of a
    channel is kept or zeroed); `e` then indexes the dims before them.

    `rate`, `seed` and `step` have one shape, a prefix of `input`'s: `[]`
    in a model's function, `[M]` once `mbt-batch-models` has added the
    model dimension, so each model has its own rate, seed and step.

    ```mlir
    %eval = mbt.dropout %h, %rate {site = 0 : i64}
        : tensor<?x128xf32>, tensor<f32>
    %train = mbt.dropout %h, %rate, %seed, %step {site = 0 : i64}
        : tensor<?x128xf32>, tensor<f32>, tensor<i64>, tensor<f64>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, MBT_FloatTensor:$rate,
                       Variadic<AnyRankedTensor>:$key,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$site,
                       ConfinedAttr<DefaultValuedAttr<I64Attr, "0">,
                                    [IntNonNegative]>:$shared_dims);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $rate (`,` $key^)? attr-dict `:` type($input) `,` type($rate)
    (`,` type($key)^)?
  }];
  let extraClassDeclaration = [{
    /// Whether this is the training form (it draws a mask).
    bool isTraining() { return !getKey().empty(); }
    /// The training form's per-model seed (i64) and step (f64).
    ::mlir::Value getSeed() { return getKey()[0]; }
    ::mlir::Value getStep() { return getKey()[1]; }
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // MBT_RANDOM_OPS_TD
