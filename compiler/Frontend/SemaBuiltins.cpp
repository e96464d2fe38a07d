//===- SemaBuiltins.cpp - the builtin functions of model expressions ------===//
//
// One table lists every builtin: its tensor arguments and its constant
// options (`axis`, `k`, `label_smoothing`) with their kinds and defaults.
// A call binds its arguments by position or keyword like a call of a spec
// function, checks the tensor ones, evaluates the options, and applies the
// builtin's shape rule. MLIRGen reads the bound arguments and the option
// values from the call, so it never re-interprets the source.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/SemaInternal.h"
#include "compiler/Frontend/SweepEval.h"

#include "dialects/MBT/IR/ConvShapes.h"
#include "dialects/MBT/IR/MBTShapes.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringExtras.h"

using namespace mbt;
using namespace mbt::sema;

namespace {

/// Whether `expr` uses a name of the body (a tensor): after expansion,
/// constants are numbers, so any other name is one.
bool usesTensors(const ExprAST &expr) {
  switch (expr.getKind()) {
  case ExprAST::Expr_Var: {
    llvm::StringRef name = llvm::cast<VariableExprAST>(expr).getName();
    return name != "true" && name != "false";
  }
  case ExprAST::Expr_Unary:
    return usesTensors(*llvm::cast<UnaryExprAST>(expr).getOperand());
  case ExprAST::Expr_Binary: {
    const auto &binary = llvm::cast<BinaryExprAST>(expr);
    return usesTensors(*binary.getLHS()) || usesTensors(*binary.getRHS());
  }
  case ExprAST::Expr_Call: {
    const auto &call = llvm::cast<CallExprAST>(expr);
    if (call.getCallee() == "dim")
      return false;
    return true;
  }
  default:
    return false;
  }
}

/// A builtin function: its tensor arguments, then its options, both
/// accepted by position or keyword.
struct BuiltinInfo {
  BuiltinID id;
  llvm::StringLiteral name;
  llvm::ArrayRef<llvm::StringLiteral> tensors;
  llvm::ArrayRef<BuiltinOption> options;
  BuiltinArgs args;
};

constexpr llvm::StringLiteral kX[] = {"x"};
constexpr llvm::StringLiteral kMatmul[] = {"a", "b"};
constexpr llvm::StringLiteral kTarget[] = {"y"};
constexpr llvm::StringLiteral kClassification[] = {"logits", "y"};
constexpr llvm::StringLiteral kRegression[] = {"prediction", "expected"};
constexpr llvm::StringLiteral kEmbedding[] = {"x", "weight"};
constexpr llvm::StringLiteral kMaskedMean[] = {"x", "tokens"};
constexpr llvm::StringLiteral kAttention[] = {"q", "k", "v", "tokens"};
const BuiltinOption kAttentionOptions[] = {{"heads", ConstScalar::Int, 1.0},
                                           {"causal", ConstScalar::Bool, 0.0}};
constexpr llvm::StringLiteral kPositionEmbedding[] = {"x", "table"};
constexpr llvm::StringLiteral kRecurrentScan[] = {"inputs", "weight", "bias",
                                                  "tokens"};

const BuiltinOption kOptionalAxis[] = {{"axis", ConstScalar::Int, {}}};
const BuiltinOption kLastAxis[] = {{"axis", ConstScalar::Int, -1.0}};
const BuiltinOption kSmoothing[] = {
    {"label_smoothing", ConstScalar::Float, 0.0, /*acceptsTensor=*/true}};
constexpr llvm::StringLiteral kConvTensors[] = {"x", "w"};
const BuiltinOption kConv[] = {{"stride", ConstScalar::Int, 1.0},
                               {"padding", ConstScalar::Int, 0.0},
                               {"dilation", ConstScalar::Int, 1.0},
                               {"groups", ConstScalar::Int, 1.0}};
/// Pooling: the stride defaults to the kernel (absent: MLIRGen takes it).
const BuiltinOption kPool[] = {
    {"kernel", ConstScalar::Int, {}, false, false, /*required=*/true},
    {"stride", ConstScalar::Int, {}},
    {"padding", ConstScalar::Int, 0.0}};
const BuiltinOption kEps[] = {{"eps", ConstScalar::Float, 1e-5}};
const BuiltinOption kDropout[] = {
    {"rate", ConstScalar::Float, 0.5, /*acceptsTensor=*/true}};
const BuiltinOption kTopK[] = {{"k", ConstScalar::Int, 1.0}};
constexpr llvm::StringLiteral kBatchNormTensors[] = {"x", "running_mean",
                                                     "running_var"};
const BuiltinOption kBatchNorm[] = {{"momentum", ConstScalar::Float, 0.1},
                                    {"eps", ConstScalar::Float, 1e-5}};
const BuiltinOption kSlice[] = {
    {"start", ConstScalar::Int, {}, false, false, /*required=*/true},
    {"end", ConstScalar::Int, {}, false, false, /*required=*/true},
    {"axis", ConstScalar::Int, -1.0}};
constexpr llvm::StringLiteral kConcat[] = {"a", "b"};
const BuiltinOption kShape[] = {{"shape",
                                 ConstScalar::Int,
                                 {},
                                 /*acceptsTensor=*/false,
                                 /*isShape=*/true}};

const BuiltinInfo kBuiltins[] = {
#define BUILTIN(ID, SPELLING, TENSORS, OPTIONS, ARGS, CHECK, GEN)              \
  {BuiltinID::ID, SPELLING, TENSORS, OPTIONS, BuiltinArgs::ARGS},
#include "compiler/Frontend/Builtins.def"
};

/// Whether a value has a dimension that changes from step to step (the
/// sequence length).
bool hasSequenceDim(const ValueType &type) {
  return type.kind == ValueType::Tensor &&
         llvm::any_of(type.shape, mlir::ShapedType::isDynamic);
}

const BuiltinInfo *lookupBuiltin(llvm::StringRef name) {
  for (const BuiltinInfo &info : kBuiltins)
    if (info.name == name)
      return &info;
  return nullptr;
}

ConstScalar defaultValue(const BuiltinOption &option) {
  double value = *option.defaultValue;
  if (option.kind == ConstScalar::Int)
    return ConstScalar::integer(static_cast<int64_t>(value));
  if (option.kind == ConstScalar::Bool)
    return ConstScalar::boolean(value != 0);
  return ConstScalar::real(value);
}

} // namespace

bool sema::isBuiltinFunction(llvm::StringRef name) {
  return lookupBuiltin(name) != nullptr;
}

std::string sema::unknownFunctionMessage(llvm::StringRef name,
                                         const ModuleAST &spec) {
  std::vector<std::string> known;
  for (const BuiltinInfo &f : kBuiltins)
    known.push_back(f.name.str());
  for (const auto &function : spec.getFunctions())
    known.push_back(function->getName().str());
  return ("unknown function '" + name + "' (known: " + llvm::join(known, ", ") +
          ")")
      .str();
}

ValueType BodyChecker::checkBuiltinCall(CallExprAST &call) {
  llvm::StringRef name = call.getCallee();
  const BuiltinInfo *info = lookupBuiltin(name);
  if (!info) {
    error(call.loc()) << unknownFunctionMessage(name, state.spec);
    return ValueType();
  }
  call.builtin = info->id;
  std::vector<llvm::StringRef> params(info->tensors.begin(),
                                      info->tensors.end());
  for (const BuiltinOption &option : info->options)
    params.push_back(option.name);
  auto bound =
      bindArguments(ctx, call, params, ("'" + name + "'").str(), "argument");
  if (mlir::failed(bound)) {
    ok = false;
    return ValueType();
  }
  llvm::SmallVector<ValueType, 4> args;
  std::optional<bool> tensorsOk =
      bindBuiltinTensors(call, info->tensors, *bound, args);
  if (!tensorsOk)
    return ValueType();
  bool argsOk = *tensorsOk;
  call.builtinOptions.clear();
  call.builtinTensorOptions.clear();
  for (auto [i, option] : llvm::enumerate(info->options)) {
    const ExprAST *expr = (*bound)[info->tensors.size() + i];
    std::optional<bool> optionOk = bindBuiltinOption(call, option, expr);
    if (!optionOk)
      return ValueType();
    argsOk &= *optionOk;
  }
  if (!argsOk || !checkBuiltinArgs(call, info->args, args))
    return ValueType();
  return applyShapeRule(call, args);
}

/// Tensor arguments: all required, checked in the caller's scope. Empty
/// when one is missing (reported); false when one fails to check.
std::optional<bool>
BodyChecker::bindBuiltinTensors(CallExprAST &call,
                                llvm::ArrayRef<llvm::StringLiteral> names,
                                llvm::ArrayRef<const ExprAST *> bound,
                                llvm::SmallVectorImpl<ValueType> &args) {
  bool argsOk = true;
  call.builtinArgs.clear();
  for (auto [i, tensorName] : llvm::enumerate(names)) {
    const ExprAST *expr = bound[i];
    if (!expr) {
      error(call.loc()) << "'" << call.getCallee() << "' is missing argument '"
                        << tensorName << "'";
      return std::nullopt;
    }
    call.builtinArgs.push_back(expr);
    args.push_back(checkArgument(call, *expr));
    argsOk &= args.back().isValid();
  }
  return argsOk;
}

/// The call owns its arguments: finds `expr` among them to check it (and
/// annotate it with its type).
ValueType BodyChecker::checkArgument(CallExprAST &call, const ExprAST &expr) {
  for (const ArgumentAST &arg : call.getArgs())
    if (arg.value.get() == &expr)
      return checkExpr(*arg.value);
  llvm_unreachable("a bound argument is one of the call's");
}

/// An option: a constant, evaluated now, or a scalar tensor where allowed.
/// Empty when a required one is missing (reported); false when it fails
/// to check.
std::optional<bool> BodyChecker::bindBuiltinOption(CallExprAST &call,
                                                   const BuiltinOption &option,
                                                   const ExprAST *expr) {
  llvm::StringRef name = call.getCallee();
  if (expr && option.acceptsTensor && usesTensors(*expr)) {
    ValueType type = checkArgument(call, *expr);
    if (!type.isValid() || !requireTensor(type, expr->loc()))
      return false;
    if (type.batched || !type.shape.empty()) {
      error(expr->loc()) << "option '" << option.name << "' of '" << name
                         << "' must be a number or a scalar that does not "
                            "depend on the input, got "
                         << describeShape(type);
      return false;
    }
    call.builtinTensorOptions[option.name] = expr;
    return true;
  }
  if (!expr && (option.isShape || option.required)) {
    error(call.loc()) << "'" << name << "' is missing argument '" << option.name
                      << "'";
    return std::nullopt;
  }
  if (option.isShape)
    return evaluateShape(call, *expr);
  if (!expr) {
    if (option.defaultValue)
      call.builtinOptions[option.name] = defaultValue(option);
    return true;
  }
  std::string what = ("option '" + option.name + "' of '" + name + "'").str();
  auto value = constants().evaluateAs(*expr, option.kind, what);
  if (mlir::failed(value)) {
    ok = false; // the evaluator reported it; the spec fails to check.
    return false;
  }
  call.builtinOptions[option.name] = *value;
  return true;
}

/// What every builtin of a kind needs of its tensor arguments: no sequence
/// dimension but where the builtin handles one, and float tensors (not the
/// target or token ids) but where its shape rule tells them apart.
bool BodyChecker::checkBuiltinArgs(const CallExprAST &call, BuiltinArgs kind,
                                   llvm::ArrayRef<ValueType> args) {
  if (kind == BuiltinArgs::Typed)
    return true;
  if (kind == BuiltinArgs::Tensors)
    for (auto [expr, type] : llvm::zip(call.builtinArgs, args))
      if (hasSequenceDim(type)) {
        error(expr->loc()) << "'" << call.getCallee()
                           << "' does not take a value with a "
                           << "sequence dimension yet, got "
                           << describeShape(type)
                           << "; pool the sequence first (masked_mean)";
        return false;
      }
  for (auto [expr, type] : llvm::zip(call.builtinArgs, args))
    if (!requireTensor(type, expr->loc()))
      return false;
  return true;
}

ValueType BodyChecker::applyShapeRule(CallExprAST &call,
                                      llvm::ArrayRef<ValueType> args) {
  switch (call.builtin) {
#define BUILTIN(ID, SPELLING, TENSORS, OPTIONS, ARGS, CHECK, GEN)              \
  case BuiltinID::ID:                                                          \
    return CHECK(call, args);
#include "compiler/Frontend/Builtins.def"
  case BuiltinID::None:
    break;
  }
  llvm_unreachable("a call of a builtin without its ID");
}

ValueType BodyChecker::checkMatmulCall(CallExprAST &call,
                                       llvm::ArrayRef<ValueType> args) {
  return checkMatmul(args[0], args[1], call.loc());
}

/// Elementwise functions keep the shape.
ValueType BodyChecker::checkUnary(CallExprAST &,
                                  llvm::ArrayRef<ValueType> args) {
  return args[0];
}

/// normalize(x, eps) over the last dimension.
ValueType BodyChecker::checkNormalize(CallExprAST &call,
                                      llvm::ArrayRef<ValueType> args) {
  if (args[0].shape.empty()) {
    error(call.builtinArgs[0]->loc())
        << "'normalize' normalizes over the last dimension, got "
        << describeShape(args[0]);
    return ValueType();
  }
  if (call.builtinOptions.find("eps")->second.floatValue < 0) {
    error(call.loc()) << "'normalize' needs eps >= 0";
    return ValueType();
  }
  return args[0];
}

/// transpose(x) swaps the last two dimensions.
ValueType BodyChecker::checkTranspose(CallExprAST &call,
                                      llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  if (x.shape.size() < 2) {
    error(call.loc()) << "'transpose' swaps the last two dimensions of a "
                      << "matrix, got " << describeShape(x);
    return ValueType();
  }
  ValueType result = x;
  std::swap(result.shape[x.shape.size() - 2], result.shape.back());
  return result;
}

/// one_hot(y): the target's class indices as per-sample vectors [C].
ValueType BodyChecker::checkOneHot(CallExprAST &call,
                                   llvm::ArrayRef<ValueType> args) {
  if (args[0].kind != ValueType::Class) {
    error(call.builtinArgs[0]->loc())
        << "'one_hot' takes the target (class indices), got "
        << describeShape(args[0]);
    return ValueType();
  }
  return ValueType::tensor({args[0].numClasses}, /*batched=*/true);
}

/// dropout(x, rate), dropout2d(x, rate): the rate a number or a per-model
/// value in [0, 1); dropout2d's x a per-sample image.
ValueType BodyChecker::checkDropout(CallExprAST &call,
                                    llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  if (call.builtin == BuiltinID::Dropout2d &&
      (!x.batched || x.shape.size() != 3)) {
    error(call.builtinArgs[0]->loc())
        << "'dropout2d' zeroes whole channels of a per-sample image [C, H, W], "
        << "got " << describeShape(x);
    return ValueType();
  }
  if (!checkOptionValues(
          call, "rate", [](double v) { return v >= 0.0 && v < 1.0; },
          "at least 0 and below 1"))
    return ValueType();
  return x;
}

/// batch_norm(x, running_mean, running_var, momentum, eps): x per-sample
/// [C] or [C, S...]; the statistics [C] buffers of this body, each updated
/// by this call only (the train step writes their new values).
ValueType BodyChecker::checkBatchNorm(CallExprAST &call,
                                      llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  if (!x.batched || x.shape.empty()) {
    error(call.builtinArgs[0]->loc())
        << "the input of 'batch_norm' must be computed from the input, with "
        << "channels first ([C] or [C, H, W] per sample), got "
        << describeShape(x);
    return ValueType();
  }
  int64_t channels = x.shape.front();
  llvm::SmallVector<const ParamDeclAST *, 2> buffers;
  for (unsigned i = 1; i < 3; ++i) {
    const ExprAST *expr = call.builtinArgs[i];
    llvm::StringRef what = i == 1 ? "running_mean" : "running_var";
    const auto *var = llvm::dyn_cast<VariableExprAST>(expr);
    auto it = var ? scope.find(var->getName()) : scope.end();
    if (it == scope.end() || !it->second.buffer) {
      error(expr->loc()) << "'" << what << "' of 'batch_norm' must name a "
                         << "buffer of this model or function (declared with "
                         << "'buffer NAME: float[C] = ...'): the train step "
                         << "updates it";
      return ValueType();
    }
    const ValueType &type = args[i];
    if (type.shape.size() != 1 || type.shape.front() != channels) {
      error(expr->loc()) << "'" << what << "' of 'batch_norm' must have one "
                         << "value per channel, [" << channels << "], got "
                         << describeShape(type);
      return ValueType();
    }
    buffers.push_back(it->second.buffer);
  }
  if (buffers[0] == buffers[1]) {
    error(call.builtinArgs[2]->loc())
        << "'batch_norm' needs two different buffers for its running mean "
        << "and variance";
    return ValueType();
  }
  for (const ParamDeclAST *buffer : buffers) {
    auto [it, inserted] = state.updatedBuffers.try_emplace(buffer, call.loc());
    if (!inserted) {
      auto diag = error(call.loc())
                  << "buffer '" << buffer->getName()
                  << "' is already updated by another 'batch_norm' (each "
                  << "running statistic belongs to one call)";
      attachNote(diag, ctx, it->second, "the other call is here");
      return ValueType();
    }
  }
  if (!checkOptionValues(
          call, "eps", [](double v) { return v > 0.0; }, "positive") ||
      !checkOptionValues(
          call, "momentum", [](double v) { return v >= 0.0 && v <= 1.0; },
          "in [0, 1]"))
    return ValueType();
  return x;
}

/// conv2d(x, w): a batched image [C, H, W] and a filter [O, C/groups, KH,
/// KW] that does not depend on the input; the batched result [O, OH, OW].
ValueType BodyChecker::checkConv2d(CallExprAST &call,
                                   llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  const ValueType &w = args[1];
  if (!x.batched || x.shape.size() != 3) {
    error(call.builtinArgs[0]->loc())
        << "the input of 'conv2d' must be a per-sample image [C, H, W] "
        << "(computed from the input), got " << describeShape(x);
    return ValueType();
  }
  if (w.batched || w.shape.size() != 4) {
    error(call.builtinArgs[1]->loc())
        << "the filter of 'conv2d' must be a parameter-like [O, C/groups, KH, "
        << "KW] that does not depend on the input, got " << describeShape(w);
    return ValueType();
  }
  auto option = [&](llvm::StringRef key) {
    return call.builtinOptions.find(key)->second.intValue;
  };
  int64_t stride = option("stride"), padding = option("padding"),
          dilation = option("dilation");
  std::string message;
  auto shape = mlir::mbt::conv2dShape(x.shape, w.shape, {stride, stride},
                                      {padding, padding}, {dilation, dilation},
                                      option("groups"), message);
  if (!shape) {
    error(call.loc()) << message;
    return ValueType();
  }
  return ValueType::tensor({shape->begin(), shape->end()}, /*batched=*/true);
}

/// max_pool2d / avg_pool2d(x, kernel): over the last two dims of x.
ValueType BodyChecker::checkPool2d(CallExprAST &call,
                                   llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  llvm::StringRef name = call.getCallee();
  if (x.shape.size() < 2) {
    error(call.builtinArgs[0]->loc())
        << "'" << name << "' pools the last two dimensions, got "
        << describeShape(x);
    return ValueType();
  }
  int64_t kernel = call.builtinOptions.find("kernel")->second.intValue;
  auto stride = call.builtinOptions.find("stride");
  int64_t step =
      stride == call.builtinOptions.end() ? kernel : stride->second.intValue;
  int64_t padding = call.builtinOptions.find("padding")->second.intValue;
  std::string message;
  auto plane = mlir::mbt::pool2dShape(
      llvm::ArrayRef<int64_t>(x.shape).take_back(2), {kernel, kernel},
      {step, step}, {padding, padding}, name, message);
  if (!plane) {
    error(call.loc()) << message;
    return ValueType();
  }
  ValueType result = x;
  result.shape[x.shape.size() - 2] = (*plane)[0];
  result.shape[x.shape.size() - 1] = (*plane)[1];
  return result;
}

bool BodyChecker::checkOptionValues(const CallExprAST &call,
                                    llvm::StringRef option,
                                    llvm::function_ref<bool(double)> inRange,
                                    llvm::StringRef requirement) {
  for (double value : knownOptionValues(call, option))
    if (!inRange(value)) {
      error(call.loc()) << option << " of '" << call.getCallee() << "' must be "
                        << requirement << ", got "
                        << ConstScalar::real(value).str();
      return false;
    }
  return true;
}

std::vector<double>
BodyChecker::knownOptionValues(const CallExprAST &call,
                               llvm::StringRef option) const {
  auto it = call.builtinTensorOptions.find(option);
  if (it == call.builtinTensorOptions.end())
    return {call.builtinOptions.find(option)->second.floatValue};
  // A per-model argument's values are known here; other tensors are not.
  if (const auto *var = llvm::dyn_cast<VariableExprAST>(it->second))
    for (const auto &[argName, values] : instance.perModelArgs)
      if (argName == var->getName())
        return values;
  return {};
}

bool BodyChecker::resolveAxis(CallExprAST &call, const ValueType &x) {
  auto it = call.builtinOptions.find("axis");
  int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = it->second.intValue;
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    error(call.loc()) << "axis " << axis << " of '" << call.getCallee()
                      << "' is out of range for " << describeShape(x)
                      << (rank == 0
                              ? ", which has no axes"
                              : " (axes are -" + std::to_string(rank) + " to " +
                                    std::to_string(rank - 1) + ")");
    return false;
  }
  it->second = ConstScalar::integer(normalized);
  return true;
}

/// sum/mean/max(x): over every dimension, the batch's too, to a scalar;
/// with `axis`, over that per-sample dimension only.
ValueType BodyChecker::checkReduction(CallExprAST &call,
                                      llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  if (!call.builtinOptions.count("axis"))
    return ValueType::tensor({}, /*batched=*/false);
  if (!resolveAxis(call, x))
    return ValueType();
  ValueType result = x;
  result.shape.erase(result.shape.begin() +
                     call.builtinOptions["axis"].intValue);
  return result;
}

/// rmse(prediction, expected) and r2(prediction, expected): per-sample
/// values [K] (or one value []) of one shape. The runtime makes them from
/// per-step statistics over the whole split, so each is the whole value of
/// a model's metric (checkAssignment allows that call alone).
ValueType BodyChecker::checkSplitMetric(CallExprAST &call,
                                        llvm::ArrayRef<ValueType> args) {
  llvm::StringRef name = call.getCallee();
  if (&call != splitMetricCall) {
    error(call.loc()) << "'" << name << "' is computed over a whole split, "
                      << "so it is the whole value of a metric: metric " << name
                      << " = " << name << "(prediction, y)";
    return ValueType();
  }
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (!arg.batched || arg.shape.size() > 1) {
      error(call.builtinArgs[i]->loc())
          << "the " << (i == 0 ? "prediction" : "expected values") << " of '"
          << name << "' must be per-sample values [K] (computed from the "
          << "input, or the target), got " << describeShape(arg);
      return ValueType();
    }
  }
  if (args[0].shape != args[1].shape) {
    error(call.loc()) << "'" << name << "' compares values of one shape, got "
                      << describeShape(args[0]) << " and "
                      << describeShape(args[1]);
    return ValueType();
  }
  return ValueType::tensor({}, /*batched=*/false);
}

/// logsumexp removes its axis; softmax and log_softmax keep the shape.
ValueType BodyChecker::checkSoftmaxFamily(CallExprAST &call,
                                          llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  if (!resolveAxis(call, x))
    return ValueType();
  if (call.builtin != BuiltinID::LogSumExp)
    return x;
  ValueType result = x;
  result.shape.erase(result.shape.begin() +
                     call.builtinOptions["axis"].intValue);
  return result;
}

/// cross_entropy(logits, target) and accuracy(logits, target): logits are a
/// per-sample vector with one entry per class of the target; for a
/// tokens[V] target (next tokens), one vector [V] per position.
ValueType BodyChecker::checkClassification(CallExprAST &call,
                                           llvm::ArrayRef<ValueType> args) {
  const ValueType &logits = args[0];
  const ValueType &labels = args[1];
  llvm::StringRef name = call.getCallee();
  const ExprAST &logitsExpr = *call.builtinArgs[0];
  if (!requireTensor(logits, logitsExpr.loc()))
    return ValueType();
  if (labels.kind == ValueType::NextTokens)
    return checkTokenPrediction(call, logits, labels);
  if (!logits.batched || logits.shape.size() != 1) {
    error(logitsExpr.loc())
        << "the logits of '" << name << "' must be a per-sample vector [C] "
        << "(computed from the input), got " << describeShape(logits);
    return ValueType();
  }
  if (labels.kind != ValueType::Class) {
    error(call.builtinArgs[1]->loc())
        << "the second argument of '" << name << "' must be the target, got "
        << describeShape(labels);
    return ValueType();
  }
  int64_t classes = labels.numClasses;
  if (logits.shape[0] != classes) {
    error(call.loc()) << "'" << name << "' logits have " << logits.shape[0]
                      << " classes but the target has " << classes;
    return ValueType();
  }
  auto option = [&](llvm::StringRef key) {
    return call.builtinOptions.find(key)->second;
  };
  if (call.builtin == BuiltinID::CrossEntropy) {
    if (!checkOptionValues(
            call, "label_smoothing",
            [](double v) { return v >= 0.0 && v <= 1.0; }, "between 0 and 1"))
      return ValueType();
  } else {
    int64_t k = option("k").intValue;
    if (k < 1 || k > classes) {
      error(call.loc()) << "k of 'accuracy' must be between 1 and the "
                        << "number of classes (" << classes << "), got " << k;
      return ValueType();
    }
  }
  return ValueType::tensor({}, /*batched=*/false);
}

/// reshape's shape: a list of integer constants, at most one -1.
bool BodyChecker::evaluateShape(CallExprAST &call, const ExprAST &expr) {
  const auto *list = llvm::dyn_cast<ListExprAST>(&expr);
  if (!list) {
    error(expr.loc()) << "the shape of 'reshape' must be a list of sizes, "
                         "such as [7, 112]";
    return false;
  }
  call.builtinShape.clear();
  bool ok = true;
  for (const auto &element : list->getElements()) {
    auto size = constants().evaluateAs(*element, ConstScalar::Int,
                                       "a size of 'reshape'");
    if (mlir::failed(size)) {
      ok = this->ok = false; // reported by the evaluator
      continue;
    }
    if (size->intValue < 1 && size->intValue != -1) {
      error(element->loc()) << "a size of 'reshape' must be positive or -1, "
                            << "got " << size->intValue;
      ok = false;
      continue;
    }
    call.builtinShape.push_back(size->intValue);
  }
  if (ok && llvm::count(call.builtinShape, -1) > 1) {
    error(expr.loc()) << "the shape of 'reshape' may have one -1, got "
                      << mlir::mbt::formatShape(call.builtinShape);
    ok = false;
  }
  return ok;
}

/// flatten(x) is x with its (per-sample) dims folded into one;
/// reshape(x, shape) x with the shape given, -1 standing for the rest.
ValueType BodyChecker::checkReshape(CallExprAST &call,
                                    llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  int64_t count = 1;
  for (int64_t d : x.shape)
    count *= d;
  if (call.builtin == BuiltinID::Flatten) {
    call.builtinShape = {count};
    return ValueType::tensor({count}, x.batched);
  }
  llvm::SmallVector<int64_t, 4> shape(call.builtinShape.begin(),
                                      call.builtinShape.end());
  int64_t known = 1;
  for (int64_t d : shape)
    if (d != -1)
      known *= d;
  auto *inferred = llvm::find(shape, -1);
  if (inferred != shape.end() && known > 0 && count % known == 0)
    *inferred = count / known;
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  if (inferred != shape.end() ? count % known != 0 : total != count) {
    error(call.loc()) << "cannot reshape " << describeShape(x) << " (" << count
                      << " elements) to "
                      << mlir::mbt::formatShape(call.builtinShape);
    return ValueType();
  }
  call.builtinShape.assign(shape.begin(), shape.end());
  return ValueType::tensor(shape, x.batched);
}

/// concat(a, b, axis = -1): equal shapes but along the axis, and both
/// batched or neither (the batch is not a dimension one can join along).
ValueType BodyChecker::checkConcat(CallExprAST &call,
                                   llvm::ArrayRef<ValueType> args) {
  const ValueType &a = args[0];
  const ValueType &b = args[1];
  if (a.batched != b.batched) {
    error(call.loc()) << "'concat' joins two values that both depend on the "
                      << "input or neither, got " << describeShape(a) << " and "
                      << describeShape(b);
    return ValueType();
  }
  if (a.shape.size() != b.shape.size()) {
    error(call.loc()) << "'concat' needs operands of equal rank, got "
                      << describeShape(a) << " and " << describeShape(b);
    return ValueType();
  }
  if (!resolveAxis(call, a))
    return ValueType();
  int64_t axis = call.builtinOptions["axis"].intValue;
  ValueType result = a;
  for (size_t d = 0; d < a.shape.size(); ++d) {
    if (static_cast<int64_t>(d) == axis)
      result.shape[d] = a.shape[d] + b.shape[d];
    else if (a.shape[d] != b.shape[d]) {
      error(call.loc()) << "'concat' operands " << describeShape(a) << " and "
                        << describeShape(b) << " differ in dimension " << d
                        << ", not only along axis " << axis;
      return ValueType();
    }
  }
  return result;
}

/// slice(x, start, end, axis = -1): indices [start, end) of the axis;
/// negative bounds count from its end, as in Python.
ValueType BodyChecker::checkSlice(CallExprAST &call,
                                  llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  if (!resolveAxis(call, x))
    return ValueType();
  int64_t axis = call.builtinOptions["axis"].intValue;
  int64_t size = x.shape[axis];
  int64_t start = call.builtinOptions["start"].intValue;
  int64_t end = call.builtinOptions["end"].intValue;
  int64_t s = start < 0 ? start + size : start;
  int64_t e = end < 0 ? end + size : end;
  if (s < 0 || e > size || s >= e) {
    error(call.loc()) << "slice [" << start << ", " << end << ") of axis "
                      << axis << " is empty or out of range for "
                      << describeShape(x) << " (size " << size << ")";
    return ValueType();
  }
  call.builtinOptions["start"] = ConstScalar::integer(s);
  call.builtinOptions["end"] = ConstScalar::integer(e);
  ValueType result = x;
  result.shape[axis] = e - s;
  return result;
}
