//===- MBTTokenLossOps.td - per-token loss of language models -*- tablegen -*-===//
//
// The loss and accuracy of a model that predicts a token at every position
// (a language model's next token). Included by MBTOps.td, which defines the
// classes it uses.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_TOKEN_LOSS_OPS_TD
#define MBT_TOKEN_LOSS_OPS_TD

def MBT_TokenCrossEntropyOp : MBT_PureOp<"token_cross_entropy", [
    DeclareOpInterfaceMethods<GradientOpInterface,
                              ["isDifferentiableOperand"]>]> {
  let summary = "Mean softmax cross-entropy over the real target tokens of a step";
  let description = [{
    `logits` is `[L..., B, T, V]` and `targets` `[L..., B, T]` with token
    ids in `[0, V)`; the result `[L...]` is

    `sum_{b,t: targets[b,t] != 0} (logsumexp(logits[b,t]) - logits[b,t,targets[b,t]]) / n`

    with `n = max(1, number of targets that are not the pad token 0)`: the
    mean over the real tokens of the whole step, as
    `torch.nn.functional.cross_entropy(..., ignore_index=0)` over the
    flattened batch. A target of 0 (padding) adds nothing and counts for
    nothing, so the loss of a sample and its share of the gradient do not
    depend on how far its step pads it (T), and a step's gradient is that
    of the same samples in one padded batch. `L` are independent leading
    dimensions (the models after `mbt-batch-models`).

    ```mlir
    %l = mbt.token_cross_entropy %logits, %y
        : (tensor<?x?x259xf32>, tensor<?x?xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$logits, MBT_I32Tensor:$targets);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $targets attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_TokenCrossEntropyGradOp : MBT_PureOp<"token_cross_entropy_grad"> {
  let summary = "Adjoint of token_cross_entropy with respect to the logits";
  let description = [{
    `grad[l...] * (softmax(logits[l..., b, t]) - onehot(targets[l..., b, t])) / n[l...]`
    at a real target and 0 where the target is the pad token 0, with `n`
    the real targets of the step as in `mbt.token_cross_entropy`; `grad`
    `[L...]` is the adjoint of the loss. The result has the logits' type.

    ```mlir
    %dl = mbt.token_cross_entropy_grad %logits, %y, %one
        : (tensor<?x?x259xf32>, tensor<?x?xi32>, tensor<f32>)
        -> tensor<?x?x259xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$logits, MBT_I32Tensor:$targets,
                       MBT_FloatTensor:$grad);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $targets `,` $grad attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MBT_TokenAccuracyOp : MBT_PureOp<"token_accuracy"> {
  let summary = "Fraction of the real target tokens that are the arg-max logit";
  let description = [{
    Shapes as in `mbt.token_cross_entropy`. The result `[L...]` is the
    number of positions whose target is not the pad token 0 and equals the
    arg-max of their logits (the first maximum, as `torch.argmax`), over
    `max(1, number of such targets)`. Not differentiable.

    ```mlir
    %a = mbt.token_accuracy %logits, %y
        : (tensor<?x?x259xf32>, tensor<?x?xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$logits, MBT_I32Tensor:$targets);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $targets attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // MBT_TOKEN_LOSS_OPS_TD
