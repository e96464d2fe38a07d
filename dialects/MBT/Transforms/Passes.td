//===- Passes.td - the mbt passes -------------------------*- tablegen -*-===//
#ifndef MBT_PASSES_TD
#define MBT_PASSES_TD

include "mlir/Pass/PassBase.td"

def MBTSelectModels : Pass<"mbt-select-models", "::mlir::ModuleOp"> {
  let summary = "Keeps a contiguous slice of the sweep's models";
  let description = [{
    Keeps models `[first, first + models)` of the sweep and drops the
    others: every per-model value of `mbt.sweep` (seeds, hyperparameters,
    folds, model arguments, clipping bounds, schedule parameters, one
    checkpoint file per model) and of the model's `mbt.model_constant` and
    `mbt.model_seed` ops is cut to the slice, and the sweep records where
    the slice lies (`first_model`, `sweep_models`). Model `i` of the slice
    computes what model `first + i` of the whole sweep computes: a model's
    initial weights, dropout masks and data order are keyed by its seed,
    never by its position. This is how each rank of a run over several
    processes gets its own models (docs/distributed.md). Runs on the `mbt`
    stage, before anything copies the sweep's values.

    ```
    mbt-opt --mbt-select-models="first=4 models=4" sweep.mlir
    ```
  }];
  let options = [
    Option<"first", "first", "int64_t", /*default=*/"0",
           "The first model kept">,
    Option<"count", "models", "int64_t", /*default=*/"-1",
           "How many models are kept (-1: the rest)">
  ];
  let dependentDialects = ["::mlir::mbt::MBTDialect"];
}

def MBTAutocast : Pass<"mbt-autocast", "::mlir::ModuleOp"> {
  let summary = "Mixed precision: the model's matmuls and convolutions in bf16 or f16";
  let description = [{
    For a sweep with `precision = "bf16"` (or `"f16"`), rounds the operands
    and the result of every `mbt.matmul` and `mbt.conv2d` of the sweep's
    model function to bf16 (f16) (`mbt.round_to`), and gives every
    `mbt.attention` the format, whose lowering rounds its two products the
    same way: a bf16 (f16) product with f32 accumulation, as
    `torch.autocast(dtype=...)` runs a linear layer or a convolution.
    Everything else (elementwise ops, reductions, the loss, the optimizer,
    the parameters themselves: f32 master weights) stays f32, as autocast's
    type promotion leaves a bf16 product plus an f32 bias. The adjoints
    follow through `mbt.round_to`'s gradient, so the backward matmuls are
    bf16 (f16) too. Runs before `mbt-autodiff`, so the train and evaluation
    steps both compute this way. bf16 has f32's exponent range: no loss
    scale is needed. f16 has not, so under `"f16"` the model also gets the
    three scalar buffers of a dynamic loss scale per model (`mbt.buffer`
    `amp.loss_scale`, starting at the sweep's `init_scale`,
    `amp.good_steps` and `amp.skipped_steps`, each marked with its role in
    `mbt.loss_scale`), after its parameters and buffers: `mbt-autodiff`
    seeds the reverse sweep with the scale and `mbt-fuse-optimizer`
    unscales, guards and updates it. Without a `precision`, nothing
    changes.
  }];
  let dependentDialects = ["::mlir::mbt::MBTDialect"];
}

def MBTAutodiff : Pass<"mbt-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation of the model into a train step";
  let description = [{
    For the model function named by `mbt.sweep`, builds `@train_step`: the
    forward pass, its reverse sweep (each op's GradientOpInterface gives the
    adjoints of its operands) seeded with 1 at the loss (result 0), or
    with the model's loss scale (its buffer marked `mbt.loss_scale =
    "scale"`, which `mbt-autocast` adds under f16), and one
    `mbt.update` per parameter with the sweep's optimizer rule. Its
    arguments are the parameters, the buffers (`mbt.buffer`: running
    statistics), the parameters' state slots, the hyperparameter vector,
    the step, the inputs and the targets; its results are the new
    parameters, the new state, the new buffers and the loss and metrics.
    The parameters the sweep's `freeze` patterns match stay arguments but
    have no state slots, no update and no result; the reverse sweep starts
    from the trainable parameters only, so no adjoint is built for a frozen
    parameter, nor for ops that depend on frozen parameters and data alone.
    A freeze pattern that matches no parameter, or freezing them all, is an
    error.
    Each `mbt.batch_norm` (the evaluation form, normalizing with its
    running statistics) becomes its training form, whose new running
    statistics are the new values of the buffers it reads; those must be
    buffers, each updated by one batch_norm. The forward pass's
    dropouts (the model function holds their evaluation form) get the key
    of the training form: an `mbt.model_seed` of the sweep's seeds and the
    step. An op that cannot carry a gradient to an operand that depends on
    the parameters (dropout's rate) is an error.
  }];
  let dependentDialects = ["::mlir::mbt::MBTDialect"];
}

def MBTBatchModels : Pass<"mbt-batch-models", "::mlir::ModuleOp"> {
  let summary = "Adds the model dimension M to every value";
  let description = [{
    Rewrites every function of the module so that each argument, result and
    intermediate value gains a leading dimension of size M (the sweep's
    number of models, or `models` if given); each op rebuilds itself through
    BatchableOpInterface. Model i's slice of every value is what model i
    alone would compute.
  }];
  let options = [
    Option<"numModels", "models", "int64_t", /*default=*/"0",
           "Number of models (0: take it from mbt.sweep)">
  ];
  let dependentDialects = ["::mlir::mbt::MBTDialect"];
}

def MBTFuseOptimizer : Pass<"mbt-fuse-optimizer", "::mlir::ModuleOp"> {
  let summary = "One update over a flat buffer of every parameter of every model";
  let description = [{
    Builds the artifact's entry points `@mbt_train_step`,
    `@mbt_optimizer_step` and `@mbt_eval_step` (docs/abi.md): every
    parameter of every model lives in one `[M, P]` tensor (row m is model
    m), every state slot in one `[S, M, P]` buffer (a memref argument: each
    slot is updated in place through its subview), and all the `mbt.update`
    ops of `@train_step` become one `mbt.fused_update` over them (after the
    sweep's clipping and schedule), the same step `@mbt_optimizer_step`
    applies to gradients its caller gives. Loss and metrics are written to
    an `[M, K]` output. The model's buffers (running statistics) live in
    one `[M, Q]` tensor that the train step rewrites (the rows of the
    models that stepped) and the evaluation step reads. The layouts are
    recorded in the `mbt.layout` and `mbt.buffer_layout` attributes.
    Under the sweep's `freeze`, the trainable parameters take the first
    `P_t` columns of a row and the frozen ones the rest: the state is
    `[S, M, P_t]`, the gradients `[M, P_t]`, and the fused update covers
    columns `[0, P_t)` only; each frozen parameter's layout entry says
    `trainable = false`.

    With `grad-step`, it also builds `@mbt_grad_step`: the train step up
    to the gradients, which it writes to an `[M, P_t]` argument instead of
    updating the models, for a run whose ranks share each step's samples
    and sum their gradients before `@mbt_optimizer_step`
    (docs/distributed.md). It is built only on request: it copies the
    whole forward and backward pass, which doubles the time LLVM spends on
    them.
  }];
  let options = [
    Option<"gradStep", "grad-step", "bool", /*default=*/"false",
           "Also build @mbt_grad_step (data across ranks)">
  ];
  let dependentDialects = ["::mlir::mbt::MBTDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

#endif // MBT_PASSES_TD
