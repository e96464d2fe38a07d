//===- MBTDialect.td - the mbt dialect --------------------*- tablegen -*-===//
//
// The `mbt` dialect describes one model's training semantics (forward pass,
// loss, metrics, optimizer rule) and, after `mbt-batch-models`, the same
// computation for a whole batch of independent models.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_DIALECT_TD
#define MBT_DIALECT_TD

include "mlir/IR/OpBase.td"

def MBT_Dialect : Dialect {
  let name = "mbt";
  let summary = "Model-batch training: many independent models in one program";
  let description = [{
    Ops of this dialect are tensor-valued and side-effect free. Every op has a
    *core* rank (the rank it has in one model's program) and may carry extra
    leading dimensions: the model dimension `M` that `mbt-batch-models`
    prepends. `matmul` treats leading dimensions as batch dimensions,
    elementwise ops broadcast along dimensions of size 1, and reductions name
    their axes explicitly, so adding a leading dimension never changes what
    an op computes for one model.

    Function arguments of a model function carry discardable attributes:
    `mbt.param = "name"` with `mbt.init = {kind = ..., ...}`, `mbt.input` and
    `mbt.target`; the dialect verifies them.
  }];
  let cppNamespace = "::mlir::mbt";
  // Update rules (mbt.optimizer) are written with arith and math ops.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
}

class MBT_Op<string mnemonic, list<Trait> traits = []> :
    Op<MBT_Dialect, mnemonic, traits>;

#endif // MBT_DIALECT_TD
