//===- MBTPrecisionOps.td - reduced-precision compute ------*- tablegen -*-===//
//
// Mixed precision: values rounded to a narrower float format while they
// keep their type (the sweep's `precision`, mbt-autocast). Included by
// MBTOps.td, which defines the classes it uses.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_PRECISION_OPS_TD
#define MBT_PRECISION_OPS_TD

def MBT_RoundToOp : MBT_PureOp<"round_to", [
    SameOperandsAndResultType,
    DeclareOpInterfaceMethods<GradientOpInterface>]> {
  let summary = "Round every element to a narrower float format";
  let description = [{
    Each element of `input` (f32) becomes the nearest value of `format`,
    ties to even, and stays an f32: `x.to(torch.bfloat16).to(torch.float32)`
    or `x.half().float()`. `bf16` has 8 bits of mantissa and f32's exponent
    range; `f16` has 11 bits, its largest finite value is 65504 and below
    2^-14 its values are subnormal (multiples of 2^-24). NaN stays NaN; a
    value beyond the format's largest rounds to infinity. Values computed
    from rounded operands are what the format would compute where the
    products are exact in f32 (a bf16 or f16 times another is), so a matmul
    of rounded operands, accumulated in f32 and rounded, is a bf16 (f16)
    matmul with f32 accumulation, as autocast runs it.

    The adjoint rounds the gradient the same way: autograd hands a bf16
    (f16) value's gradient over in bf16 (f16). In f16 that is where a
    gradient too large for the format becomes infinite, which a loss
    scale's overflow check catches (`mbt.update_loss_scale`).

    ```mlir
    %h = mbt.round_to %x {format = bf16} : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, TypeAttr:$format);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def MBT_UnscaleGradsOp : MBT_Op<"unscale_grads", [Pure,
    AllTypesMatch<["grads", "result"]>]> {
  let summary = "Divide each model's gradients by its loss scale";
  let description = [{
    `grads` is `[M, P]` (row `m`: every parameter gradient of model `m`,
    computed from its loss times `scale[m]`) and `scale` is `[M]`. Row `m`
    is multiplied by `1 / scale[m]`, the reciprocal taken in f64 and
    rounded to the gradients' type, as `GradScaler.unscale_` does it (the
    scales are powers of two, so this is exact but for underflow). Inf and
    NaN stay non-finite, for `mbt.guard_step` to find.

    ```mlir
    %g = mbt.unscale_grads %grads, %scale : tensor<16x101770xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$grads, MBT_FloatTensor:$scale);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$grads `,` $scale attr-dict `:` type($grads) `,` type($scale)";
  let hasVerifier = 1;
}

def MBT_UpdateLossScaleOp : MBT_Op<"update_loss_scale", [Pure,
    AllTypesMatch<["reported_loss", "scale", "good_steps", "skipped_steps",
                   "new_scale",
                   "new_good_steps", "new_skipped_steps"]>,
    AllTypesMatch<["step", "stepped", "optimizer_step"]>]> {
  let summary = "Each model's dynamic loss scale after a step, and its optimizer step";
  let description = [{
    One dynamic loss scale per model, as `torch.amp.GradScaler.update`
    runs it for a model trained alone. `step` is `[M]` (the step the runtime
    asked for, 0 for a model that does not train), `stepped` the same after
    `mbt.guard_step` (0 where the model's unscaled gradients or its loss
    were not finite), and `reported_loss` the guard's loss (NaN where the
    loss itself was not finite: a diverged model, which the runtime
    freezes). `scale`, `good_steps` (steps since the scale last changed)
    and `skipped_steps` (steps skipped on overflow so far) are the model's
    state, buffers of the train step.

    A model that trains and whose loss is finite either stepped: its good
    steps grow by one and, at `growth_interval`, its scale is multiplied by
    `growth_factor` (if that stays finite) and its good steps restart at 0;
    or it overflowed: its scale is multiplied by `backoff_factor`, its good
    steps restart at 0 and its skipped steps grow by one. Every other model
    keeps its state.

    `optimizer_step` is the step number the optimizer takes: `stepped`
    less the steps skipped before, 0 where the model does not step. A
    skipped step is not an optimizer step (`GradScaler.step` does not call
    `optimizer.step()`), so Adam's bias correction counts only the steps
    taken; a learning-rate schedule keeps the runtime's step, as a
    scheduler stepped once per iteration does.

    ```mlir
    %scale2, %good2, %skipped2, %opt = mbt.update_loss_scale %step, %stepped,
        %loss, %scale, %good, %skipped {growth_factor = 2.0 : f64,
        backoff_factor = 0.5 : f64, growth_interval = 2000 : i64}
        : tensor<16xf64>, tensor<16xf32>
    ```
  }];
  let arguments = (ins MBT_F64Tensor:$step, MBT_F64Tensor:$stepped,
                       MBT_FloatTensor:$reported_loss,
                       MBT_FloatTensor:$scale, MBT_FloatTensor:$good_steps,
                       MBT_FloatTensor:$skipped_steps, F64Attr:$growth_factor,
                       F64Attr:$backoff_factor, I64Attr:$growth_interval);
  let results = (outs MBT_FloatTensor:$new_scale,
                      MBT_FloatTensor:$new_good_steps,
                      MBT_FloatTensor:$new_skipped_steps,
                      MBT_F64Tensor:$optimizer_step);
  let assemblyFormat = [{
    $step `,` $stepped `,` $reported_loss `,` $scale `,` $good_steps `,`
    $skipped_steps attr-dict `:` type($step) `,` type($scale)
  }];
  let hasVerifier = 1;
}

#endif // MBT_PRECISION_OPS_TD
