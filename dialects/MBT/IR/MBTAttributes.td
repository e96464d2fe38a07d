//===- MBTAttributes.td - the mbt dialect's attributes ----*- tablegen -*-===//
//
// The sweep's enumerations (data set, routing, batching, precision,
// learning-rate schedule) as enum attributes, so that the verifier, the
// passes and the manifest compare C++ enumerators rather than strings; and
// a parameter's initializer, whose arguments its kind names (InitRules.h).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_ATTRIBUTES_TD
#define MBT_ATTRIBUTES_TD

include "dialects/MBT/IR/MBTDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// An enumeration whose spellings are those of the .mbt language and the
// manifest; a spelling that is not a bare identifier (`group-by-length`)
// is printed as a string.
class MBT_I32Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::mbt";
  let genSpecializedAttr = 0;
  let parameterParser = [{[&]() -> ::mlir::FailureOr<}] # cppType # [{> {
    auto loc = $_parser.getCurrentLocation();
    std::string spelling;
    if (::mlir::failed($_parser.parseKeywordOrString(&spelling)))
      return ::mlir::failure();
    if (auto value = }] # cppNamespace # "::" # stringToSymbolFnName #
      [{(spelling))
      return *value;
    return {(::mlir::LogicalResult)($_parser.emitError(loc)
        << "expected one of: " << }] #
      !interleave(!foreach(enum, enumerants, "\"" # enum.str # "\""),
                  [{ << ", " << }]) # [{)};
  }()}];
  let parameterPrinter =
      "$_printer.printKeywordOrString(" # symbolToStringFnName # "($_self))";
}

class MBT_EnumAttr<MBT_I32Enum info, string mnemonic>
    : EnumAttr<MBT_Dialect, info, mnemonic> {
  let assemblyFormat = "`<` $value `>`";
}

def MBT_DataSet : MBT_I32Enum<"DataSet",
    "a built-in data set, or a kind of the user's own files", [
  I32EnumAttrCase<"fashion_mnist", 0>,
  I32EnumAttrCase<"fortunes", 1>,
  I32EnumAttrCase<"npz", 2>,
  I32EnumAttrCase<"npy", 3>,
  I32EnumAttrCase<"csv", 4>,
  I32EnumAttrCase<"image_folder", 5>,
  I32EnumAttrCase<"safetensors", 6>
]>;
def MBT_DataSetAttr : MBT_EnumAttr<MBT_DataSet, "data_set">;

def MBT_SplitReduce : MBT_I32Enum<"SplitReduce",
    "how a metric over a whole split is made from per-step statistics", [
  // The mean over columns of sqrt(mean squared error): one column per
  // target column, each step's mean squared error.
  I32EnumAttrCase<"rmse", 0>,
  // sklearn's r2_score (columns averaged uniformly): three columns per
  // target column, each step's mean squared error, target mean and target
  // variance about that mean.
  I32EnumAttrCase<"r2", 1>
]>;
def MBT_SplitReduceAttr : MBT_EnumAttr<MBT_SplitReduce, "split_reduce">;

def MBT_Routing : MBT_I32Enum<"Routing",
    "which training samples each model sees", [
  I32EnumAttrCase<"shared", 0>,
  I32EnumAttrCase<"kfold", 1>,
  I32EnumAttrCase<"bootstrap", 2>
]>;
def MBT_RoutingAttr : MBT_EnumAttr<MBT_Routing, "routing">;

def MBT_Batching : MBT_I32Enum<"Batching",
    "how samples of different lengths are grouped into steps", [
  I32EnumAttrCase<"dynamic", 0>,
  I32EnumAttrCase<"fixed", 1>,
  I32EnumAttrCase<"group_by_length", 2, "group-by-length">,
  I32EnumAttrCase<"fixed_shape", 3, "fixed-shape">
]>;
def MBT_BatchingAttr : MBT_EnumAttr<MBT_Batching, "batching">;

def MBT_Precision : MBT_I32Enum<"Precision",
    "the float format of a mixed-precision model's products", [
  I32EnumAttrCase<"bf16", 0>,
  I32EnumAttrCase<"f16", 1>
]>;
def MBT_PrecisionAttr : MBT_EnumAttr<MBT_Precision, "precision">;

def MBT_Schedule : MBT_I32Enum<"Schedule",
    "a learning-rate schedule (parameters in ScheduleRules.h)", [
  I32EnumAttrCase<"constant", 0>,
  I32EnumAttrCase<"step", 1>,
  I32EnumAttrCase<"exponential", 2>,
  I32EnumAttrCase<"cosine", 3>,
  I32EnumAttrCase<"linear", 4>,
  I32EnumAttrCase<"one_cycle", 5>
]>;
def MBT_ScheduleAttr : MBT_EnumAttr<MBT_Schedule, "schedule">;

def MBT_InitKind : MBT_I32Enum<"InitKind",
    "a parameter initializer (arguments in InitRules.h)", [
  I32EnumAttrCase<"zeros", 0>,
  I32EnumAttrCase<"ones", 1>,
  I32EnumAttrCase<"constant", 2>,
  I32EnumAttrCase<"normal", 3>,
  I32EnumAttrCase<"uniform", 4>,
  I32EnumAttrCase<"xavier_uniform", 5>,
  I32EnumAttrCase<"kaiming_uniform", 6>
]>;

def MBT_InitAttr : AttrDef<MBT_Dialect, "Init"> {
  let mnemonic = "init";
  let summary = "how a parameter or buffer starts, per model";
  let description = [{
    The initializer of a model argument (its `mbt.init`): a kind and the
    float arguments that kind takes, each by name in the order of
    InitRules.h. The runtime draws each model's values from that model's
    seed (docs/manifest.md); `xavier_uniform` and `kaiming_uniform` take
    their bounds from the parameter's shape.

    ```mlir
    %w: tensor<784x128xf32> {mbt.param = "w", mbt.init = #mbt.init<kaiming_uniform>}
    %b: tensor<128xf32> {mbt.param = "b", mbt.init = #mbt.init<normal, mean = 0.0, std = 0.02>}
    ```
  }];
  // The arguments as a dense array attribute: uniqued by their bits (so
  // -0.0 and 0.0 stay apart), where a list of doubles would need a hash of
  // its own.
  let parameters = (ins EnumParameter<MBT_InitKind>:$kind,
                        "::mlir::DenseF64ArrayAttr":$args);
  let builders = [
    AttrBuilder<(ins "InitKind":$kind, "::llvm::ArrayRef<double>":$args), [{
      return $_get($_ctxt, kind, ::mlir::DenseF64ArrayAttr::get($_ctxt, args));
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The argument named `name` (one of the kind's, InitRules.h).
    double getArg(::llvm::StringRef name) const;
  }];
}

#endif // MBT_ATTRIBUTES_TD
