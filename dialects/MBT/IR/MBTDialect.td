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
    `mbt.param = "name"` with `mbt.init = #mbt.init<...>`, `mbt.input` and
    `mbt.target`; the dialect verifies them. The passes record on functions
    and on the module what the manifest needs (`mbt.outputs`, `mbt.layout`,
    ...). Every such name is declared once, below: code spells it through
    its helper, e.g. `MBTDialect::ParamAttrHelper::getNameStr()`.
  }];
  let discardableAttrs = (ins
    // Arguments of the model function and of the train step.
    "::mlir::StringAttr":$param,        // a parameter, by name
    "::mlir::StringAttr":$buffer,       // a buffer (running statistics)
    "::mlir::mbt::InitAttr":$init,      // a parameter's initializer
    "::mlir::StringAttr":$input,        // the input (also on the module)
    "::mlir::StringAttr":$target,       // the target (also on the module)
    "::mlir::IntegerAttr":$classes,     // the target's classes (also module)
    "::mlir::IntegerAttr":$vocab,       // a tokens input's vocabulary (also module)
    "::mlir::StringAttr":$loss_scale,   // a loss-scale buffer's role
    "::mlir::StringAttr":$state,        // optimizer state, param.slot
    "::mlir::StringAttr":$hyper,        // the hyperparameter table
    "::mlir::StringAttr":$step,         // the step count
    // Functions.
    "::mlir::ArrayAttr":$outputs,       // the output each result feeds
    // Metrics over a whole split, by name: #mbt.split_reduce<...>; each
    // feeds several consecutive results (its statistics).
    "::mlir::DictionaryAttr":$split_metrics,
    "::mlir::IntegerAttr":$models,      // a batched function's M
    // The module, after mbt-fuse-optimizer (read by mbt-export-manifest).
    "::mlir::StringAttr":$model,        // the model function's name
    "::mlir::ArrayAttr":$layout,        // the parameters in [M, P]
    "::mlir::ArrayAttr":$buffer_layout, // the buffers in [M, Q]
    "::mlir::DenseI64ArrayAttr":$input_shape,
    // A product whose operands mbt.round_to rounded to one format.
    "::mlir::TypeAttr":$operands_format,
    // A product that rounds its operands to this format itself: the linalg
    // batched matmul of a rounded product whose mbt.round_to ops
    // mbt-lower-to-linalg folded into it, for the CPU kernel that rounds
    // while it packs (mbt-linalg-to-blas must replace it).
    "::mlir::TypeAttr":$round_operands_to
  );
  let cppNamespace = "::mlir::mbt";
  // Update rules (mbt.optimizer) are written with arith and math ops.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
  let hasConstantMaterializer = 1;
  // The lowering's tensor.expand_shape of two dynamic sizes (MBTFolds.cpp).
  let hasCanonicalizer = 1;
  let hasRegionArgAttrVerify = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes of MBTAttributes.td.
    void registerAttributes();
  }];
}

class MBT_Op<string mnemonic, list<Trait> traits = []> :
    Op<MBT_Dialect, mnemonic, traits>;

#endif // MBT_DIALECT_TD
