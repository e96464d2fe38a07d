//===- MBTTrainingOps.td - optimizer and sweep ops ---------*- tablegen -*-===//
//
// The ops of the optimizer step (update rules, per-parameter updates, gradient clipping,
// learning-rate schedules, the fused update) and the sweep. Included by
// MBTOps.td, which defines the classes they use.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_TRAINING_OPS_TD
#define MBT_TRAINING_OPS_TD

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

def MBT_OptimizerOp : MBT_Op<"optimizer", [Symbol, IsolatedFromAbove]> {
  let summary = "An optimizer's update rule: per-model scalars, then per element";
  let description = [{
    An update rule written in the language (`optim NAME(...) { ... }`,
    `stdlib/optim.mbt`). `hyper` names its hyperparameters and `slots` its
    state slots (one value per parameter element each, starting at 0).

    The rule is split where PyTorch splits it: the `scalars` region runs
    once per model, in double, on the model's hyperparameters and the
    1-based step (`^bb0(%h0: f64, ..., %step: f64)`), as the Python
    scalars of `torch.optim` are; it yields the scalars the element code
    uses (f32, or i1 for conditions). The `elements` region runs once per
    parameter element (`^bb0(%grad: f32, %param: f32, %slot0: f32, ...,
    %scalar0, ...)`) and yields the new parameter and the new slots.
    `mbt.update` and `mbt.fused_update` name the rule; the fused update's
    lowering puts the `scalars` region in a loop over the models and the
    `elements` region in the one loop nest over `[M, P]`. Both regions hold
    only side-effect free ops (arith, math). `flags` records the values of
    the rule's `bool` arguments, which chose its code, for the manifest.

    ```mlir
    mbt.optimizer @sgd attributes {hyper = ["lr"], slots = []} scalars {
    ^bb0(%lr: f64, %step: f64):
      %f = arith.truncf %lr : f64 to f32
      mbt.yield %f : f32
    } elements {
    ^bb0(%g: f32, %p: f32, %lr: f32):
      %d = arith.mulf %lr, %g : f32
      %p1 = arith.subf %p, %d : f32
      mbt.yield %p1 : f32
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$hyper,
                       StrArrayAttr:$slots, OptionalAttr<DictionaryAttr>:$flags);
  let regions = (region SizedRegion<1>:$scalars, SizedRegion<1>:$elements);
  let assemblyFormat = [{
    $sym_name attr-dict-with-keyword `scalars` $scalars `elements` $elements
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    unsigned getNumHyper() { return getHyper().size(); }
    unsigned getNumSlots() { return getSlots().size(); }
    /// Index of hyperparameter `name`, or -1.
    int getHyperIndex(::llvm::StringRef name);
    /// The `scalars` region's terminator (the scalars it yields).
    ::mlir::Operation *getScalarsYield() {
      return getScalars().front().getTerminator();
    }
    /// The float type the rule updates: that of its `grad` argument (f32 or
    /// f64, the model's), or null when the region has no arguments.
    ::mlir::Type getElementType() {
      ::mlir::Block &elements = getElements().front();
      return elements.getNumArguments() ? elements.getArgument(0).getType()
                                        : ::mlir::Type();
    }
  }];
}

def MBT_YieldOp : MBT_Op<"yield", [Pure, Terminator,
    HasParent<"OptimizerOp">]> {
  let summary = "Ends a region of mbt.optimizer";
  let description = [{
    Yields the per-model scalars (`scalars` region) or the new parameter and
    state slots (`elements` region) of an update rule.
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def MBT_UpdateOp : MBT_PureOp<"update",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "One optimizer step for one parameter";
  let description = [{
    Applies the update rule `rule` (an `mbt.optimizer`) to `param` given
    its gradient, its state slots, the hyperparameter vector `hyper` (last
    dimension: the rule's hyperparameters in order, in f64 so that
    per-model scalars are computed as PyTorch computes them, in double) and
    the 1-based step number. Results are the new parameter and the new
    state slots. `mbt-autodiff` emits one per parameter;
    `mbt-fuse-optimizer` replaces them all with one `mbt.fused_update`.

    ```mlir
    %w1, %m1, %v1 = mbt.update @adam %w, %gw state(%m, %v) hyper(%h) step(%t)
        : (tensor<784x128xf32>, tensor<784x128xf32>, tensor<784x128xf32>,
           tensor<784x128xf32>, tensor<5xf64>, tensor<f64>)
        -> (tensor<784x128xf32>, tensor<784x128xf32>, tensor<784x128xf32>)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$rule, MBT_FloatTensor:$param,
                       MBT_FloatTensor:$grad, Variadic<MBT_FloatTensor>:$state,
                       MBT_F64Tensor:$hyper, MBT_F64Tensor:$step);
  let results = (outs MBT_FloatTensor:$new_param, Variadic<MBT_FloatTensor>:$new_state);
  let assemblyFormat = [{
    $rule $param `,` $grad `state` `(` $state `)` `hyper` `(` $hyper `)`
    `step` `(` $step `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$rule, "::mlir::Value":$param,
                   "::mlir::Value":$grad, "::mlir::ValueRange":$state,
                   "::mlir::Value":$hyper, "::mlir::Value":$step)>
  ];
}

def MBT_ClipGradNormOp : MBT_Op<"clip_grad_norm", [Pure,
    AllTypesMatch<["grads", "result"]>]> {
  let summary = "Scale each model's gradient to a global norm of at most max_norm";
  let description = [{
    `grads` is `[M, P]` (row `m`: every parameter gradient of model `m`)
    and `max_norm` is `[M]`. Row `m` is multiplied by
    `min(1, max_norm[m] / (||grads[m]|| + 1e-6))`, the 2-norm taken over
    the whole row: `torch.nn.utils.clip_grad_norm_` applied to each model
    on its own, in float32 as PyTorch computes it. `mbt-fuse-optimizer`
    puts it before the fused update when the sweep sets `clip`.

    ```mlir
    %g = mbt.clip_grad_norm %grads, %max : tensor<16x101770xf32>, tensor<16xf64>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$grads, MBT_F64Tensor:$max_norm);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$grads `,` $max_norm attr-dict `:` type($grads) `,` type($max_norm)";
  let hasVerifier = 1;
}

def MBT_GuardStepOp : MBT_Op<"guard_step", [Pure,
    AllTypesMatch<["step", "result"]>, AllTypesMatch<["loss", "reported_loss"]>]> {
  let summary = "Each model's step number, or 0 where its gradients or loss are not finite";
  let description = [{
    `step` is `[M]` (the 1-based step numbers the fused update takes),
    `grads` is `[M, P]` (row `m`: every parameter gradient of model `m`)
    and `loss` is `[M]`. A model steps when its step is not 0 and its loss
    and every element of its gradient row are finite. `result` is `step`
    with 0 for every other model (`mbt.fused_update` leaves a model whose
    step is 0 unchanged), and `reported_loss` is `loss` with NaN for them,
    which is how the train step tells the runtime that a model did not
    step. So a model that diverges (a NaN or inf loss or gradient) is
    frozen at its last finite parameters instead of writing NaN into them,
    and the other models of the batch are not affected. It reads the
    gradients once more (about 1/7 of the memory traffic of Adam's
    update). `mbt-fuse-optimizer` puts it before clipping and the update.

    With `skip_overflow` (a loss scale, `precision = f16`), non-finite
    gradients under a finite loss are an overflow of the model's loss
    scale, not a divergence: the model does not step (its `result` is 0)
    but reports its loss, and `mbt.update_loss_scale` backs its scale off.
    Only a non-finite loss is reported as NaN.

    ```mlir
    %s, %l = mbt.guard_step %step, %grads, %loss
        : tensor<16xf64>, tensor<16x101770xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins MBT_F64Tensor:$step, MBT_FloatTensor:$grads,
                       MBT_FloatTensor:$loss, UnitAttr:$skip_overflow);
  let results = (outs MBT_F64Tensor:$result, MBT_FloatTensor:$reported_loss);
  let assemblyFormat = [{
    $step `,` $grads `,` $loss attr-dict `:` type($step) `,` type($grads) `,`
    type($loss)
  }];
  let hasVerifier = 1;
}

def MBT_LRScheduleOp : MBT_Op<"lr_schedule", [Pure,
    AllTypesMatch<["hyper", "result"]>]> {
  let summary = "Each model's hyperparameters with its scheduled learning rate";
  let description = [{
    `hyper` is `[M, H]` with the learning rate in column `column`, `step` is `[M]`
    (1-based optimizer steps) and `params` is `[M, K]`, model `m`'s
    parameters of the schedule `rule` (ScheduleRules.h: `constant`, `step`,
    `exponential`, `cosine`, `linear`, `one_cycle`). The result is `hyper`
    with that column multiplied by the schedule's factor at step `step - 1`,
    in double, as PyTorch's schedulers set a parameter group's lr.
    `mbt-fuse-optimizer` puts it before the fused update when the sweep
    sets `schedule`.

    ```mlir
    %h = mbt.lr_schedule cosine %hyper, %step, %params
        : tensor<16x5xf64>, tensor<16xf64>, tensor<16x3xf64>
    ```
  }];
  let arguments = (ins MBT_ScheduleAttr:$rule, MBT_F64Tensor:$hyper,
                       MBT_F64Tensor:$step, MBT_F64Tensor:$params,
                       DefaultValuedAttr<I64Attr, "0">:$column);
  let results = (outs MBT_F64Tensor:$result);
  let assemblyFormat = [{
    custom<EnumKeyword>($rule) $hyper `,` $step `,` $params attr-dict `:`
    type($hyper) `,`
    type($step) `,` type($params)
  }];
  let hasVerifier = 1;
}

def MBT_FusedUpdateOp : MBT_Op<"fused_update", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    AllTypesMatch<["params", "grads", "new_params"]>,
    RangedTypesMatchWith<"the new slots have the types of the slots",
                         "state", "new_state", "$_self">]> {
  let summary = "One optimizer step for every parameter of every model";
  let description = [{
    `params` and `grads` are `[M, P]`: row `m` holds every parameter of model
    `m`. Each of the rule's state slots is one `[M, P]` tensor, `hyper` is
    `[M, H]` (row `m` holds model `m`'s hyperparameters) and `step` is
    `[M]`. The rule is the one of `mbt.update`, applied to every element
    with its own model's hyperparameters, in one loop nest. An optional
    `decay_mask` `[P]` (1 or 0 per column) marks the columns that decay:
    where it is 0 the rule runs with its `weight_decay` hyperparameter set
    to 0 (a PyTorch parameter group with `weight_decay = 0`), so parameters
    such as biases can be left undecayed. The slots are separate values so
    that each can be updated in place in its own part of the ABI's
    `[S, M, P]` state buffer. A model whose `step` is 0 does not step: its
    parameters and slots are returned unchanged (`mbt.guard_step` sets it
    for a model whose gradients are not finite; the runtime, for a model
    it has frozen).

    ```mlir
    %p, %m, %v = mbt.fused_update @adam %params, %grads
        state(%m0, %v0 : tensor<16x101770xf32>, tensor<16x101770xf32>)
        hyper(%hyper) step(%step)
        : tensor<16x101770xf32>, tensor<16x5xf64>, tensor<16xf64>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$rule, MBT_FloatTensor:$params,
                       MBT_FloatTensor:$grads, Variadic<MBT_FloatTensor>:$state,
                       MBT_F64Tensor:$hyper, MBT_F64Tensor:$step,
                       Optional<RankedTensorOf<[F32]>>:$decay_mask);
  let results = (outs MBT_FloatTensor:$new_params,
                      Variadic<MBT_FloatTensor>:$new_state);
  let assemblyFormat = [{
    $rule $params `,` $grads (`state` `(` $state^ `:` type($state) `)`)?
    `hyper` `(` $hyper `)` `step` `(` $step `)`
    (`decay_mask` `(` $decay_mask^ `:` type($decay_mask) `)`)? attr-dict `:`
    type($params) `,` type($hyper) `,` type($step)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$rule, "::mlir::Value":$params,
                   "::mlir::Value":$grads, "::mlir::ValueRange":$state,
                   "::mlir::Value":$hyper, "::mlir::Value":$step,
                   CArg<"::mlir::Value", "{}">:$decayMask)>
  ];
}

//===----------------------------------------------------------------------===//
// The sweep
//===----------------------------------------------------------------------===//

def MBT_SweepOp : MBT_Op<"sweep", [Symbol,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The model batch: which model, how many, with what settings";
  let description = [{
    Names the model function and the optimizer (an `mbt.optimizer`) and
    gives the number of models, every model's seed and optimizer
    hyperparameters (one array of `models` values per hyperparameter, in
    the optimizer's order), the data set, the batch
    size and the number of epochs. `routing` says which training samples
    each model sees: `shared` (all, the default), `kfold` (model m holds
    out fold `fold[m]` of `folds` and is validated on it) or `bootstrap` (a
    resample with replacement keyed by the model's seed).
    `model_arg_names` and `model_args` record the model's arguments with
    one value per model, for the reports. `clip_norm`, when present, bounds
    each model's global gradient norm (see `mbt.clip_grad_norm`).
    `schedule` names a learning-rate schedule and `schedule_params` gives
    one array of per-model values per parameter of it (see
    `mbt.lr_schedule`). `no_decay` lists glob patterns of parameter names
    that get no weight decay. `freeze` lists glob patterns of parameter
    names that do not train, as `requires_grad_(False)` in PyTorch: the
    train step computes no gradient for them and keeps no optimizer state
    (see `mbt-autodiff` and `mbt-fuse-optimizer`). `validation` (a fraction in [0, 1), 0: none)
    carves a validation split, the same for every model, out of the
    training data (keyed by the shuffle seed); the models train on the
    rest. `crop` (padding, 0: none) and `flip` augment image inputs in
    training: a random crop of the image padded by `crop` zeros per side
    and a random horizontal flip, drawn per model from its seed.
    A data set of token sequences gives `batching`, how the runtime groups
    samples of different lengths into steps (`dynamic`, `fixed`,
    `group-by-length` or `fixed-shape`; docs/data.md), with the padded
    tokens a step may hold (`token_budget`), the samples sorted together
    (`window`) and the length beyond which a sample is cut (`max_length`,
    0: none); `batch_size` is then the samples of a fixed step (0: the
    budget over the longest sample). `precision`, when present, is the
    format of the model's products: `bf16` or `f16` (mixed precision,
    see `mbt-autocast`); absent, the model computes in its own float type.
    Under `f16` each model has a dynamic loss scale, as
    `torch.amp.GradScaler(init_scale, growth_factor, backoff_factor,
    growth_interval)` with those four attributes (absent: GradScaler's
    defaults, 65536, 2, 0.5 and 2000; only under `f16`); see
    `mbt.update_loss_scale`. A data set of the user's own files (`npz`,
    `npy`, `csv`, `image_folder`, `safetensors`) has a `data_source`
    dictionary of its settings, keyed as in the language: the files of the
    splits as absolute paths (`train` and an optional `test`; for `npy`
    `train_x`, `train_y`, `test_x`, `test_y`), the arrays' names (`x`, `y`
    for `npz` and `safetensors`), the columns of a `csv` (`target`,
    `columns`, `header`, `skip_rows`, `delimiter`, `missing`,
    `standardize`) and the
    normalization of an `image_folder` (`mean`, `std`); a built-in data
    set has none. `rank_by`, when present, names the output of the model
    (its loss or a metric, `mbt.outputs`) that the results rank the models
    by. `init_checkpoint`, when present, is the warm start `init =
    checkpoint(...)`: `files` (absolute paths of safetensors or .pt files,
    one for every model or one per model), `transpose` (parameters stored
    transposed), `rename` (a dictionary from a parameter's or buffer's name
    to its tensor's name in the files, where they differ) and `partial` (a
    file may lack parameters and hold others).
    A sweep whose models are a slice of a larger one (`mbt-select-models`:
    the models one rank of a run over several processes trains) says
    where: its model `i` is model `first_model + i` of the `sweep_models`
    models of the whole sweep (absent: the sweep is whole).
    The enumerations are enum attributes
    (`#mbt.data_set<..>`, `#mbt.routing<..>`, `#mbt.schedule<..>`,
    `#mbt.batching<..>`, `#mbt.precision<..>`), spelled as in the language.

    ```mlir
    mbt.sweep @sweep {model = @mlp, models = 2 : i64, optimizer = @sgd,
        hyper_names = ["lr", "momentum", "weight_decay"],
        hyper = [array<f64: 0.1, 0.01>, array<f64: 0.0, 0.0>,
                 array<f64: 0.0, 0.0>],
        seeds = array<i64: 0, 1>, data = #mbt.data_set<fashion_mnist>,
        batch_size = 128 : i64, epochs = 1 : i64, shuffle_seed = 0 : i64}
    mbt.sweep @sweep {model = @mlp, models = 2 : i64, optimizer = @sgd,
        hyper_names = ["lr"], hyper = [array<f64: 0.1, 0.01>],
        seeds = array<i64: 0, 1>, data = #mbt.data_set<csv>,
        data_source = {train = "/data/wine.csv", target = "quality",
                       standardize = true},
        batch_size = 32 : i64, epochs = 5 : i64, shuffle_seed = 0 : i64}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$model,
                       I64Attr:$models, FlatSymbolRefAttr:$optimizer,
                       StrArrayAttr:$hyper_names,
                       TypedArrayAttrBase<DenseF64ArrayAttr,
                                          "per-model values">:$hyper,
                       DenseI64ArrayAttr:$seeds, MBT_DataSetAttr:$data,
                       OptionalAttr<DictionaryAttr>:$data_source,
                       I64Attr:$batch_size, I64Attr:$epochs,
                       I64Attr:$shuffle_seed,
                       DefaultValuedAttr<MBT_RoutingAttr,
                                         "::mlir::mbt::Routing::shared">:$routing,
                       DefaultValuedAttr<I64Attr, "0">:$folds,
                       OptionalAttr<DenseI64ArrayAttr>:$fold,
                       OptionalAttr<StrArrayAttr>:$model_arg_names,
                       OptionalAttr<TypedArrayAttrBase<DenseF64ArrayAttr,
                                    "per-model values">>:$model_args,
                       OptionalAttr<DenseF64ArrayAttr>:$clip_norm,
                       OptionalAttr<MBT_ScheduleAttr>:$schedule,
                       OptionalAttr<TypedArrayAttrBase<DenseF64ArrayAttr,
                                    "per-model values">>:$schedule_params,
                       OptionalAttr<StrArrayAttr>:$no_decay,
                       OptionalAttr<StrArrayAttr>:$freeze,
                       DefaultValuedAttr<F64Attr, "0.0">:$validation,
                       DefaultValuedAttr<I64Attr, "0">:$crop,
                       DefaultValuedAttr<BoolAttr, "false">:$flip,
                       OptionalAttr<MBT_BatchingAttr>:$batching,
                       DefaultValuedAttr<I64Attr, "8192">:$token_budget,
                       DefaultValuedAttr<I64Attr, "1024">:$window,
                       DefaultValuedAttr<I64Attr, "0">:$max_length,
                       OptionalAttr<MBT_PrecisionAttr>:$precision,
                       OptionalAttr<F64Attr>:$init_scale,
                       OptionalAttr<F64Attr>:$growth_factor,
                       OptionalAttr<F64Attr>:$backoff_factor,
                       OptionalAttr<I64Attr>:$growth_interval,
                       OptionalAttr<StrAttr>:$rank_by,
                       OptionalAttr<DictionaryAttr>:$init_checkpoint,
                       DefaultValuedAttr<I64Attr, "0">:$first_model,
                       OptionalAttr<I64Attr>:$sweep_models);
  let assemblyFormat = "$sym_name attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The values of hyperparameter `name` for every model, or an empty
    /// array when the sweep has no such hyperparameter.
    ::llvm::ArrayRef<double> getHyperValues(::llvm::StringRef name);
    /// The loss scale's settings, GradScaler's defaults where absent.
    LossScaleSettings getLossScaleSettings();
    /// Whether the sweep's no_decay patterns match parameter `name`.
    bool isExcludedFromDecay(::llvm::StringRef name);
    /// Whether the sweep's freeze patterns match parameter `name`.
    bool isFrozen(::llvm::StringRef name);
  }];
}

#endif // MBT_TRAINING_OPS_TD
