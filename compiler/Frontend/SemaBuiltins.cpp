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
  llvm::StringLiteral name;
  llvm::ArrayRef<llvm::StringLiteral> tensors;
  llvm::ArrayRef<BuiltinOption> options;
};

constexpr llvm::StringLiteral kX[] = {"x"};
constexpr llvm::StringLiteral kMatmul[] = {"a", "b"};
constexpr llvm::StringLiteral kTarget[] = {"y"};
constexpr llvm::StringLiteral kClassification[] = {"logits", "y"};
constexpr llvm::StringLiteral kEmbedding[] = {"x", "weight"};
constexpr llvm::StringLiteral kMaskedMean[] = {"x", "tokens"};
constexpr llvm::StringLiteral kAttention[] = {"q", "k", "v", "tokens"};
const BuiltinOption kAttentionOptions[] = {{"heads", ConstScalar::Int, 1.0},
                                           {"causal", ConstScalar::Bool, 0.0}};
constexpr llvm::StringLiteral kPositionEmbedding[] = {"x", "table"};
constexpr llvm::StringLiteral kGruScan[] = {"inputs", "weight", "bias",
                                            "tokens"}; // lstm_scan's too

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
const BuiltinOption kShape[] = {{"shape", ConstScalar::Int, {},
                                 /*acceptsTensor=*/false, /*isShape=*/true}};

const BuiltinInfo kBuiltins[] = {
    {"matmul", kMatmul, {}},
    {"relu", kX, {}},
    {"tanh", kX, {}},
    {"sigmoid", kX, {}},
    {"silu", kX, {}},
    {"gelu", kX, {}},
    {"exp", kX, {}},
    {"log", kX, {}},
    {"softplus", kX, {}},
    {"sqrt", kX, {}},
    {"normalize", kX, kEps},
    {"dropout", kX, kDropout},
    {"dropout2d", kX, kDropout},
    {"batch_norm", kBatchNormTensors, kBatchNorm},
    {"conv2d", kConvTensors, kConv},
    {"max_pool2d", kX, kPool},
    {"avg_pool2d", kX, kPool},
    {"transpose", kX, {}},
    {"flatten", kX, {}},
    {"concat", kConcat, kLastAxis},
    {"slice", kX, kSlice},
    {"reshape", kX, kShape},
    {"sum", kX, kOptionalAxis},
    {"mean", kX, kOptionalAxis},
    {"max", kX, kOptionalAxis},
    {"logsumexp", kX, kLastAxis},
    {"softmax", kX, kLastAxis},
    {"log_softmax", kX, kLastAxis},
    {"one_hot", kTarget, {}},
    {"embedding", kEmbedding, {}},
    {"masked_mean", kMaskedMean, {}},
    {"attention", kAttention, kAttentionOptions},
    {"position_embedding", kPositionEmbedding, {}},
    {"gru_scan", kGruScan, {}},
    {"lstm_scan", kGruScan, {}},
    {"cross_entropy", kClassification, kSmoothing},
    {"accuracy", kClassification, kTopK},
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
  std::vector<llvm::StringRef> params(info->tensors.begin(),
                                      info->tensors.end());
  for (const BuiltinOption &option : info->options)
    params.push_back(option.name);
  auto bound = bindArguments(ctx, call, params,
                             ("'" + name + "'").str(), "argument");
  if (mlir::failed(bound)) {
    ok = false;
    return ValueType();
  }
  // Tensor arguments: all required, checked in the caller's scope.
  llvm::SmallVector<ValueType, 2> args;
  bool argsOk = true;
  call.builtinArgs.clear();
  for (auto [i, tensorName] : llvm::enumerate(info->tensors)) {
    const ExprAST *expr = (*bound)[i];
    if (!expr) {
      error(call.loc()) << "'" << name << "' is missing argument '"
                        << tensorName << "'";
      return ValueType();
    }
    call.builtinArgs.push_back(expr);
    // The call owns the argument; find it to annotate it with its type.
    for (const ArgumentAST &arg : call.getArgs())
      if (arg.value.get() == expr)
        args.push_back(checkExpr(*arg.value));
    argsOk &= args.back().isValid();
  }
  // Options: constants, evaluated now, or scalar tensors where allowed.
  call.builtinOptions.clear();
  call.builtinTensorOptions.clear();
  for (auto [i, option] : llvm::enumerate(info->options)) {
    const ExprAST *expr = (*bound)[info->tensors.size() + i];
    if (expr && option.acceptsTensor && usesTensors(*expr)) {
      ValueType type;
      for (const ArgumentAST &arg : call.getArgs())
        if (arg.value.get() == expr)
          type = checkExpr(*arg.value);
      if (!type.isValid()) {
        argsOk = false;
      } else if (!requireTensor(type, expr->loc())) {
        argsOk = false;
      } else if (type.batched || !type.shape.empty()) {
        error(expr->loc()) << "option '" << option.name << "' of '" << name
                           << "' must be a number or a scalar that does not "
                              "depend on the input, got "
                           << describeShape(type);
        argsOk = false;
      } else {
        call.builtinTensorOptions[option.name] = expr;
      }
      continue;
    }
    if (option.isShape) {
      if (!expr) {
        error(call.loc()) << "'" << name << "' is missing argument '"
                          << option.name << "'";
        return ValueType();
      }
      argsOk &= evaluateShape(call, *expr);
      continue;
    }
    if (!expr && option.required) {
      error(call.loc()) << "'" << name << "' is missing argument '"
                        << option.name << "'";
      return ValueType();
    }
    if (!expr) {
      if (option.defaultValue)
        call.builtinOptions[option.name] =
            option.kind == ConstScalar::Int
                ? ConstScalar::integer(static_cast<int64_t>(*option.defaultValue))
            : option.kind == ConstScalar::Bool
                ? ConstScalar::boolean(*option.defaultValue != 0)
                : ConstScalar::real(*option.defaultValue);
      continue;
    }
    std::string what = ("option '" + option.name + "' of '" + name + "'").str();
    auto value = scalarEval().evaluateAs(*expr, option.kind, what);
    if (mlir::failed(value)) {
      // ScalarEval reported it; the spec fails to check.
      argsOk = ok = false;
      continue;
    }
    call.builtinOptions[option.name] = *value;
  }
  if (!argsOk)
    return ValueType();

  if (name == "cross_entropy" || name == "accuracy")
    return checkClassification(call, args[0], args[1]);
  if (name == "one_hot") {
    if (args[0].kind != ValueType::Class) {
      error(call.builtinArgs[0]->loc())
          << "'one_hot' takes the target (class indices), got "
          << describeShape(args[0]);
      return ValueType();
    }
    return ValueType::tensor({args[0].numClasses}, /*batched=*/true);
  }
  if (name == "embedding")
    return checkEmbedding(call, args[0], args[1]);
  if (name == "masked_mean")
    return checkMaskedMean(call, args[0], args[1]);
  if (name == "attention")
    return checkAttention(call, args);
  if (name == "position_embedding")
    return checkPositionEmbedding(call, args[0], args[1]);
  if (name == "gru_scan" || name == "lstm_scan")
    return checkRecurrentScan(call, args, name == "gru_scan" ? 3 : 4);
  // The sequence dimension reaches the elementwise functions only, for
  // now: the others assume sizes known when the spec compiles.
  static constexpr llvm::StringLiteral kSequenceAware[] = {
      "relu", "tanh", "sigmoid", "silu", "gelu", "exp", "log", "softplus",
      "sqrt", "normalize"};
  for (auto [expr, type] : llvm::zip(call.builtinArgs, args))
    if (hasSequenceDim(type) && !llvm::is_contained(kSequenceAware, name)) {
      error(expr->loc()) << "'" << name << "' does not take a value with a "
                         << "sequence dimension yet, got "
                         << describeShape(type)
                         << "; pool the sequence first (masked_mean)";
      return ValueType();
    }
  for (auto [expr, type] : llvm::zip(call.builtinArgs, args))
    if (!requireTensor(type, expr->loc()))
      return ValueType();
  if (name == "matmul")
    return checkMatmul(args[0], args[1], call.loc());
  if (name == "sum" || name == "mean" || name == "max")
    return checkReduction(call, args[0]);
  if (name == "logsumexp" || name == "softmax" || name == "log_softmax")
    return checkSoftmaxFamily(call, args[0]);
  if (name == "concat")
    return checkConcat(call, args[0], args[1]);
  if (name == "slice")
    return checkSlice(call, args[0]);
  if (name == "flatten" || name == "reshape")
    return checkReshape(call, args[0]);
  if (name == "dropout" || name == "dropout2d")
    return checkDropout(call, args[0]);
  if (name == "batch_norm")
    return checkBatchNorm(call, args);
  if (name == "conv2d")
    return checkConv2d(call, args[0], args[1]);
  if (name == "max_pool2d" || name == "avg_pool2d")
    return checkPool2d(call, args[0]);
  if (name == "transpose") {
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
  if (name == "normalize") {
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
  }
  return args[0]; // elementwise functions keep the shape
}

/// dropout(x, rate), dropout2d(x, rate): the rate a number or a per-model
/// value in [0, 1); dropout2d's x a per-sample image.
ValueType BodyChecker::checkDropout(const CallExprAST &call,
                                    const ValueType &x) {
  if (call.getCallee() == "dropout2d" && (!x.batched || x.shape.size() != 3)) {
    error(call.builtinArgs[0]->loc())
        << "'dropout2d' zeroes whole channels of a per-sample image [C, H, W], "
        << "got " << describeShape(x);
    return ValueType();
  }
  for (double value : knownOptionValues(call, "rate"))
    if (!(value >= 0.0 && value < 1.0)) {
      error(call.loc()) << "rate of '" << call.getCallee()
                        << "' must be at least 0 and below 1, got "
                        << ConstScalar::real(value).str();
      return ValueType();
    }
  return x;
}

/// batch_norm(x, running_mean, running_var, momentum, eps): x per-sample
/// [C] or [C, S...]; the statistics [C] buffers of this body, each updated
/// by this call only (the train step writes their new values).
ValueType BodyChecker::checkBatchNorm(const CallExprAST &call,
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
  for (double eps : knownOptionValues(call, "eps"))
    if (!(eps > 0.0)) {
      error(call.loc()) << "eps of 'batch_norm' must be positive, got "
                        << ConstScalar::real(eps).str();
      return ValueType();
    }
  for (double momentum : knownOptionValues(call, "momentum"))
    if (!(momentum >= 0.0 && momentum <= 1.0)) {
      error(call.loc()) << "momentum of 'batch_norm' must be in [0, 1], got "
                        << ConstScalar::real(momentum).str();
      return ValueType();
    }
  return x;
}

/// conv2d(x, w): a batched image [C, H, W] and a filter [O, C/groups, KH,
/// KW] that does not depend on the input; the batched result [O, OH, OW].
ValueType BodyChecker::checkConv2d(const CallExprAST &call, const ValueType &x,
                                   const ValueType &w) {
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
ValueType BodyChecker::checkPool2d(const CallExprAST &call,
                                   const ValueType &x) {
  llvm::StringRef name = call.getCallee();
  if (x.shape.size() < 2) {
    error(call.builtinArgs[0]->loc())
        << "'" << name << "' pools the last two dimensions, got "
        << describeShape(x);
    return ValueType();
  }
  int64_t kernel = call.builtinOptions.find("kernel")->second.intValue;
  auto stride = call.builtinOptions.find("stride");
  int64_t step = stride == call.builtinOptions.end() ? kernel
                                                     : stride->second.intValue;
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
                      << (rank == 0 ? ", which has no axes"
                                    : " (axes are -" + std::to_string(rank) +
                                          " to " + std::to_string(rank - 1) +
                                          ")");
    return false;
  }
  it->second = ConstScalar::integer(normalized);
  return true;
}

/// sum/mean/max(x): over every dimension, the batch's too, to a scalar;
/// with `axis`, over that per-sample dimension only.
ValueType BodyChecker::checkReduction(CallExprAST &call, const ValueType &x) {
  if (!call.builtinOptions.count("axis"))
    return ValueType::tensor({}, /*batched=*/false);
  if (!resolveAxis(call, x))
    return ValueType();
  ValueType result = x;
  result.shape.erase(result.shape.begin() +
                     call.builtinOptions["axis"].intValue);
  return result;
}

/// logsumexp removes its axis; softmax and log_softmax keep the shape.
ValueType BodyChecker::checkSoftmaxFamily(CallExprAST &call,
                                          const ValueType &x) {
  if (!resolveAxis(call, x))
    return ValueType();
  if (call.getCallee() != "logsumexp")
    return x;
  ValueType result = x;
  result.shape.erase(result.shape.begin() +
                     call.builtinOptions["axis"].intValue);
  return result;
}

/// cross_entropy(logits, target) and accuracy(logits, target): logits are a
/// per-sample vector with one entry per class of the target; for a
/// tokens[V] target (next tokens), one vector [V] per position.
ValueType BodyChecker::checkClassification(const CallExprAST &call,
                                           const ValueType &logits,
                                           const ValueType &labels) {
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
  if (name == "cross_entropy") {
    for (double value : knownOptionValues(call, "label_smoothing"))
      if (!(value >= 0.0 && value <= 1.0)) {
        error(call.loc()) << "label_smoothing of 'cross_entropy' must be "
                          << "between 0 and 1, got "
                          << ConstScalar::real(value).str();
        return ValueType();
      }
  } else if (name == "accuracy") {
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
    auto size = scalarEval().evaluateAs(*element, ConstScalar::Int,
                                        "a size of 'reshape'");
    if (mlir::failed(size)) {
      ok = this->ok = false; // reported by ScalarEval
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
ValueType BodyChecker::checkReshape(CallExprAST &call, const ValueType &x) {
  int64_t count = 1;
  for (int64_t d : x.shape)
    count *= d;
  if (call.getCallee() == "flatten") {
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
    error(call.loc()) << "cannot reshape " << describeShape(x) << " ("
                      << count << " elements) to "
                      << mlir::mbt::formatShape(call.builtinShape);
    return ValueType();
  }
  call.builtinShape.assign(shape.begin(), shape.end());
  return ValueType::tensor(shape, x.batched);
}

/// concat(a, b, axis = -1): equal shapes but along the axis, and both
/// batched or neither (the batch is not a dimension one can join along).
ValueType BodyChecker::checkConcat(CallExprAST &call, const ValueType &a,
                                   const ValueType &b) {
  if (a.batched != b.batched) {
    error(call.loc()) << "'concat' joins two values that both depend on the "
                      << "input or neither, got " << describeShape(a)
                      << " and " << describeShape(b);
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
ValueType BodyChecker::checkSlice(CallExprAST &call, const ValueType &x) {
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
