//===- SemaInternal.h - the pieces Sema's files share -----------*- C++ -*-===//
//
// Sema expands models and function calls into BodyInstances and checks them
// with a BodyChecker, one per instance: Sema.cpp checks statements and
// tensor expressions, SemaCall.cpp the calls of functions (argument binding,
// expansion, the "in call to" notes), BodyConstants.cpp constant expressions,
// SemaDecl.cpp the declarations before any expansion (arguments, names,
// recursion) and the order of the whole check.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_SEMAINTERNAL_H
#define MBT_COMPILER_FRONTEND_SEMAINTERNAL_H

#include "compiler/Frontend/AST.h"
#include "compiler/Frontend/ConstEval.h"
#include "compiler/Frontend/Diagnostics.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace mbt::sema {

/// Values substituted for constant arguments while a body is copied.
using ConstBindings = llvm::StringMap<ConstScalar>;

/// Copies `body`, replacing every use of a name in `bindings` with its value.
StmtASTList cloneBody(llvm::ArrayRef<std::unique_ptr<StmtAST>> body,
                      const ConstBindings &bindings);

/// The number of statements and expressions in `body` (both branches of
/// every `if`): what a copy of it costs.
size_t countNodes(llvm::ArrayRef<std::unique_ptr<StmtAST>> body);

/// Whether `name` is a builtin function of model expressions.
bool isBuiltinFunction(llvm::StringRef name);

/// "unknown function 'NAME' (known: ...)", listing the builtins and the
/// functions of `spec`. Sema reports it before and during expansion, with
/// the same text, so that the duplicate is dropped.
std::string unknownFunctionMessage(llvm::StringRef name, const ModuleAST &spec);

/// The function of `spec` named `name`, or null.
const FunctionAST *lookupFunction(const ModuleAST &spec, llvm::StringRef name);

/// Evaluates the constant expressions inside models and functions, whose
/// names are the tensors in scope, which are never
/// constants, and `dim(t)`/`dim(t, axis)`, a per-sample size of one of
/// them. Lists are not values here.
class BodyConstants final : public ConstEvaluator {
public:
  /// The type of a name in scope, or null.
  using Lookup = std::function<const ValueType *(llvm::StringRef)>;

  BodyConstants(mlir::MLIRContext &ctx, Lookup lookupType)
      : ConstEvaluator(ctx), lookupType(std::move(lookupType)) {}

private:
  mlir::FailureOr<ConstValue> lookup(const VariableExprAST &var) override;
  mlir::FailureOr<ConstValue> call(const CallExprAST &call) override;
  bool allowsLists() const override { return false; }
  mlir::FailureOr<ConstScalar> evaluateDim(const CallExprAST &call);

  Lookup lookupType;
};

/// What the checks of one model expansion share: the parameters found so
/// far and the budget that bounds the expansion.
struct ExpansionState {
  const ModuleAST &spec;
  const ModelAST &model;
  /// The trained parameters and the buffers, in declaration order.
  std::vector<FlatParam> params;
  std::vector<FlatParam> buffers;
  llvm::StringMap<Location> paramNames;
  /// The buffers a batch_norm updates, with the call that does.
  // (A std::map: ExpansionState is aggregate-initialized, and DenseMap's
  // explicit default constructor breaks that under clang 14.)
  std::map<const ParamDeclAST *, Location> updatedBuffers;
  /// Statements and expressions copied so far, against kMaxExpandedNodes.
  size_t nodes = 0;
  bool budgetReported = false;
  /// Whether a call of a function failed (so it may have parameters that
  /// were never declared).
  bool callFailed = false;
  /// The model's target, for diagnostics about class indices.
  const DataDeclAST *target = nullptr;
  /// The first declaration with a float type (input or parameter): the
  /// model computes in its type, which every other one must have.
  struct FloatDecl {
    std::string type;
    std::string what; // "input 'x'", "parameter 'fc1.w'"
    Location loc;
  };
  std::optional<FloatDecl> floatType;
};

/// The most statements and expressions a model may expand to, and the
/// deepest chain of calls: bounds that keep Sema and MLIRGen fast on any
/// input (without recursion, k functions that each call the next twice
/// expand to 2^k calls).
constexpr size_t kMaxExpandedNodes = 100000;
constexpr unsigned kMaxCallDepth = 64;

/// A constant option of a builtin. Without a default it may be omitted
/// (then it is absent from the call's options). An option that
/// `acceptsTensor` may instead be a scalar tensor expression that does not
/// depend on the input, such as a model argument that differs per model.
struct BuiltinOption {
  llvm::StringLiteral name;
  ConstScalar::Kind kind;
  std::optional<double> defaultValue;
  bool acceptsTensor = false;
  /// A list of integers (a shape) rather than one number; required.
  bool isShape = false;
  /// Must be given (there is no sensible default).
  bool required = false;
};

/// What the tensor arguments of a builtin may be (ARGS in Builtins.def).
enum class BuiltinArgs { Tensors, SequenceTensors, Typed };

/// Checks one BodyInstance (a model's, or a function's at one call site):
/// statements in order, each expression's type, the `if` branches taken,
/// and the calls of functions, which it expands into nested instances.
class BodyChecker {
public:
  BodyChecker(mlir::MLIRContext &ctx, ExpansionState &state,
              BodyInstance &instance, unsigned depth)
      : ctx(ctx), state(state), instance(instance), depth(depth) {}

  /// Checks a model's body; then that it has an input, target, loss and
  /// parameters.
  mlir::LogicalResult checkModel();
  /// Checks a function's body with its tensor arguments in scope; returns
  /// the type of its `return` (invalid after an error).
  ValueType checkFunction(
      llvm::ArrayRef<std::pair<const ArgDeclAST *, ValueType>> tensorArgs);

private:
  /// A name in scope: where it is defined, and its type.
  struct Symbol {
    Location loc;
    ValueType type;
    /// The declaration when the name is a buffer of this body.
    const ParamDeclAST *buffer = nullptr;
  };

  void collectNames(llvm::ArrayRef<std::unique_ptr<StmtAST>> body);
  void checkBody(llvm::ArrayRef<std::unique_ptr<StmtAST>> body);
  void checkDataDecl(DataDeclAST &decl);
  void checkParamDecl(ParamDeclAST &decl);
  void checkAssignment(AssignStmtAST &assign);
  void checkIf(IfStmtAST &ifStmt);
  void checkAssert(const AssertStmtAST &assert);
  bool resolveDims(TypeAST &type);
  /// Whether the element type of `type`, declared by `what` ("input 'x'"),
  /// is a float type the model can compute in and agrees with the model's
  /// (`float` takes the model's); reports otherwise.
  bool checkFloatType(const TypeAST &type, const std::string &what,
                      bool allowGeneric);
  void declare(llvm::StringRef name, const Location &loc, ValueType type);
  BodyConstants constants();

  ValueType checkExpr(ExprAST &expr);
  ValueType checkVariable(const VariableExprAST &var);
  ValueType checkCall(CallExprAST &call);
  ValueType checkMatmul(const ValueType &lhs, const ValueType &rhs,
                        const Location &loc);
  ValueType checkElementwise(char op, const ValueType &lhs,
                             const ValueType &rhs, const Location &loc);
  // SemaBuiltins.cpp: binding a builtin's arguments (Builtins.def)
  ValueType checkBuiltinCall(CallExprAST &call);
  std::optional<bool>
  bindBuiltinTensors(CallExprAST &call,
                     llvm::ArrayRef<llvm::StringLiteral> names,
                     llvm::ArrayRef<const ExprAST *> bound,
                     llvm::SmallVectorImpl<ValueType> &args);
  ValueType checkArgument(CallExprAST &call, const ExprAST &expr);
  std::optional<bool> bindBuiltinOption(CallExprAST &call,
                                        const BuiltinOption &option,
                                        const ExprAST *expr);
  bool checkBuiltinArgs(const CallExprAST &call, BuiltinArgs kind,
                        llvm::ArrayRef<ValueType> args);
  /// Applies the shape rule of the call's builtin (its CHECK).
  ValueType applyShapeRule(CallExprAST &call, llvm::ArrayRef<ValueType> args);
  // The shape rules, one per line of Builtins.def (SemaBuiltins.cpp,
  // SemaSequenceBuiltins.cpp for token ids and sequences): each gets the
  // types of the call's tensor arguments, in the builtin's order, and
  // returns the result's (invalid after an error).
  using ShapeArgs = llvm::ArrayRef<ValueType>;
  ValueType checkMatmulCall(CallExprAST &call, ShapeArgs args);
  ValueType checkUnary(CallExprAST &call, ShapeArgs args);
  ValueType checkNormalize(CallExprAST &call, ShapeArgs args);
  ValueType checkTranspose(CallExprAST &call, ShapeArgs args);
  ValueType checkOneHot(CallExprAST &call, ShapeArgs args);
  ValueType checkClassification(CallExprAST &call, ShapeArgs args);
  ValueType checkSplitMetric(CallExprAST &call, ShapeArgs args);
  ValueType checkReduction(CallExprAST &call, ShapeArgs args);
  ValueType checkSoftmaxFamily(CallExprAST &call, ShapeArgs args);
  ValueType checkReshape(CallExprAST &call, ShapeArgs args);
  ValueType checkConcat(CallExprAST &call, ShapeArgs args);
  ValueType checkSlice(CallExprAST &call, ShapeArgs args);
  ValueType checkDropout(CallExprAST &call, ShapeArgs args);
  ValueType checkMaskedMean(CallExprAST &call, ShapeArgs args);
  ValueType checkAttention(CallExprAST &call, ShapeArgs args);
  ValueType checkRecurrentScan(CallExprAST &call, ShapeArgs args);
  ValueType checkPositionEmbedding(CallExprAST &call, ShapeArgs args);
  ValueType checkEmbedding(CallExprAST &call, ShapeArgs args);
  ValueType checkBatchNorm(CallExprAST &call, ShapeArgs args);
  ValueType checkConv2d(CallExprAST &call, ShapeArgs args);
  ValueType checkPool2d(CallExprAST &call, ShapeArgs args);
  /// The values a float option of `call` is known to take: its number, a
  /// per-model argument's values, or none for another scalar tensor.
  std::vector<double> knownOptionValues(const CallExprAST &call,
                                        llvm::StringRef option) const;
  /// Whether every known value of the float option `option` is `inRange`;
  /// reports "OPTION of 'CALLEE' must be `requirement`, got VALUE" if not.
  bool checkOptionValues(const CallExprAST &call, llvm::StringRef option,
                         llvm::function_ref<bool(double)> inRange,
                         llvm::StringRef requirement);
  bool evaluateShape(CallExprAST &call, const ExprAST &expr);
  /// Resolves the call's `axis` option against `x` (negative counts from
  /// the end) and stores it back normalized; false after an error.
  bool resolveAxis(CallExprAST &call, const ValueType &x);
  /// Reports the use of the target where a float tensor is needed.
  bool requireTensor(const ValueType &type, const Location &loc);
  ValueType checkTokenPrediction(const CallExprAST &call,
                                 const ValueType &logits,
                                 const ValueType &targets);
  /// A tokens[V] target needs a tokens[V] input (checkModel).
  void checkNextTokenTarget();

  // SemaCall.cpp
  ValueType checkFunctionCall(CallExprAST &call, const FunctionAST &function);
  /// The name of a call site: the assignment's, or `NAME_k` for the k-th
  /// unnamed call of NAME in this body; reports a name used twice.
  std::optional<std::string> callSiteName(const CallExprAST &call);
  bool reserveNodes(size_t count, const Location &loc);

  mlir::InFlightDiagnostic error(const Location &loc) {
    ok = false;
    return emitError(ctx, loc);
  }

  mlir::MLIRContext &ctx;
  ExpansionState &state;
  BodyInstance &instance;
  unsigned depth;
  llvm::StringMap<Symbol> scope;
  /// Every name the body defines (in either branch of an `if`), to tell
  /// "defined later" or "defined in a branch not taken" from "undefined".
  llvm::StringMap<Location> allNames;
  /// The call sites named so far in this body, and the counters of the
  /// unnamed ones by function.
  llvm::StringMap<Location> callNames;
  llvm::StringMap<unsigned> unnamedCalls;
  /// The call that the assignment being checked names (`fc1 = linear(...)`).
  const CallExprAST *namedCall = nullptr;
  llvm::StringRef namedCallName;
  /// The call of rmse or r2 that a metric's whole value is, if any.
  const CallExprAST *splitMetricCall = nullptr;
  /// The model's metrics over a whole split, which no expression may use.
  llvm::StringSet<> splitMetrics;
  const DataDeclAST *input = nullptr;
  const AssignStmtAST *loss = nullptr;
  /// The type of the function's `return`.
  ValueType result;
  bool ok = true;
};

} // namespace mbt::sema

#endif // MBT_COMPILER_FRONTEND_SEMAINTERNAL_H
