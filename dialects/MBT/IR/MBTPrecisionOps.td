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
    Each element of `input` (f32) becomes the nearest value of `format`
    (`bf16`: 8 bits of mantissa, f32's exponent range), ties to even, and
    stays an f32: `x.to(torch.bfloat16).to(torch.float32)`. NaN stays NaN;
    a value beyond the format's largest rounds to infinity. Values computed
    from rounded operands are what the format would compute where the
    products are exact in f32 (a bf16 times a bf16 is), so a matmul of
    rounded operands, accumulated in f32 and rounded, is a bf16 matmul with
    f32 accumulation, as autocast runs it.

    The adjoint rounds the gradient the same way: autograd hands a bf16
    value's gradient over in bf16.

    ```mlir
    %h = mbt.round_to %x {format = bf16} : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins MBT_FloatTensor:$input, TypeAttr:$format);
  let results = (outs MBT_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // MBT_PRECISION_OPS_TD
