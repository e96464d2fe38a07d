//===- SemaSequenceBuiltins.cpp - builtins over token ids and sequences ---===//
//
// The shape rules of the builtins that read token ids or values with the
// sequence dimension ([?, D]: one row per token, T changing from step to
// step): embedding, position_embedding, masked_mean, attention, gru_scan
// and lstm_scan, and cross_entropy / accuracy of next-token targets. The
// table of builtins and the binding of their arguments are in
// SemaBuiltins.cpp.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/SemaInternal.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mbt;
using namespace mbt::sema;

/// embedding(x, weight): x holds token ids (a tokens[V] input) or class
/// indices in [0, C) (the target), the weight is a table [V, D] with at
/// least as many rows that does not depend on the input; the result is one
/// row per token, [?, D], or per sample, [D].
ValueType BodyChecker::checkEmbedding(CallExprAST &call,
                                      llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  const ValueType &weight = args[1];
  const ExprAST &xExpr = *call.builtinArgs[0], &wExpr = *call.builtinArgs[1];
  if (x.kind != ValueType::Class && x.kind != ValueType::Tokens) {
    error(xExpr.loc()) << "'embedding' looks up token ids (a tokens[V] "
                       << "input) or class indices (the target), got "
                       << describeShape(x);
    return ValueType();
  }
  if (!requireTensor(weight, wExpr.loc()))
    return ValueType();
  if (weight.batched || weight.shape.size() != 2) {
    error(wExpr.loc()) << "'embedding' needs a table [V, D] that does not "
                       << "depend on the input, got " << describeShape(weight);
    return ValueType();
  }
  if (weight.shape[0] < x.numClasses) {
    error(wExpr.loc()) << "'embedding' table has " << weight.shape[0]
                       << " rows for indices in [0, " << x.numClasses << ")";
    return ValueType();
  }
  // One row per token of a sequence ([?, D]), one per sample of classes.
  if (x.kind == ValueType::Tokens)
    return ValueType::tensor({x.shape[0], weight.shape[1]}, /*batched=*/true);
  return ValueType::tensor({weight.shape[1]}, /*batched=*/true);
}

/// masked_mean(x, tokens): x per-sample [?, D] (one row per position of
/// the token sequence), the mean over the real tokens' rows: [D].
ValueType BodyChecker::checkMaskedMean(CallExprAST &call,
                                       llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  const ValueType &tokens = args[1];
  const ExprAST &xExpr = *call.builtinArgs[0], &tExpr = *call.builtinArgs[1];
  if (tokens.kind != ValueType::Tokens) {
    error(tExpr.loc()) << "'masked_mean' needs the token ids of a tokens[V] "
                       << "input to tell real tokens from padding, got "
                       << describeShape(tokens);
    return ValueType();
  }
  if (!requireTensor(x, xExpr.loc()))
    return ValueType();
  if (!x.batched || x.shape.size() != 2 ||
      !mlir::ShapedType::isDynamic(x.shape[0])) {
    error(xExpr.loc()) << "'masked_mean' averages one row per token, a "
                       << "per-sample shape [?, D], got " << describeShape(x);
    return ValueType();
  }
  return ValueType::tensor({x.shape[1]}, /*batched=*/true);
}

/// attention(q, k, v, tokens, heads, causal): q, k, v per-sample [?, D]
/// sequences of one shape, tokens the input's ids (the padding mask), D a
/// multiple of heads; the result is [?, D].
ValueType BodyChecker::checkAttention(CallExprAST &call,
                                      llvm::ArrayRef<ValueType> args) {
  const ValueType &q = args[0];
  for (int i = 0; i < 3; ++i) {
    const ExprAST &expr = *call.builtinArgs[i];
    if (!requireTensor(args[i], expr.loc()))
      return ValueType();
    if (!args[i].batched || args[i].shape.size() != 2 ||
        !mlir::ShapedType::isDynamic(args[i].shape[0])) {
      error(expr.loc()) << "'attention' needs one row per token, a per-sample "
                        << "shape [?, D], got " << describeShape(args[i]);
      return ValueType();
    }
    if (args[i].shape != q.shape) {
      error(expr.loc()) << "'attention' needs query, key and value of one "
                        << "shape, got " << describeShape(q) << " and "
                        << describeShape(args[i]);
      return ValueType();
    }
  }
  if (args[3].kind != ValueType::Tokens) {
    error(call.builtinArgs[3]->loc())
        << "'attention' needs the token ids of a tokens[V] input to mask "
        << "the padding, got " << describeShape(args[3]);
    return ValueType();
  }
  int64_t heads = call.builtinOptions.find("heads")->second.intValue;
  if (heads < 1 || q.shape[1] % heads != 0) {
    error(call.loc()) << "'attention' splits the " << q.shape[1]
                      << " features into heads of equal size, but " << heads
                      << " heads do not divide them";
    return ValueType();
  }
  return q;
}

/// position_embedding(x, table): row t of the [P, D] table for the token
/// at position t of x: [?, D].
ValueType BodyChecker::checkPositionEmbedding(CallExprAST &call,
                                              llvm::ArrayRef<ValueType> args) {
  const ValueType &x = args[0];
  const ValueType &table = args[1];
  const ExprAST &xExpr = *call.builtinArgs[0], &tExpr = *call.builtinArgs[1];
  if (x.kind != ValueType::Tokens) {
    error(xExpr.loc()) << "'position_embedding' needs the token ids of a "
                       << "tokens[V] input, got " << describeShape(x);
    return ValueType();
  }
  if (!requireTensor(table, tExpr.loc()))
    return ValueType();
  if (table.batched || table.shape.size() != 2) {
    error(tExpr.loc()) << "'position_embedding' needs a table [P, D] that "
                       << "does not depend on the input, got "
                       << describeShape(table);
    return ValueType();
  }
  return ValueType::tensor({x.shape[0], table.shape[1]}, /*batched=*/true);
}

/// gru_scan / lstm_scan(inputs, weight, bias, tokens): the input
/// projections [?, GH] of a sequence (G = 3 gates for a GRU, 4 for an
/// LSTM), the recurrent weight [H, GH] and bias [GH] (parameters), the
/// token ids; the states [?, H].
ValueType BodyChecker::checkRecurrentScan(CallExprAST &call,
                                          llvm::ArrayRef<ValueType> args) {
  int64_t gates = call.builtin == BuiltinID::GruScan ? 3 : 4;
  std::string name = ("'" + call.getCallee() + "'").str();
  std::string gh = std::to_string(gates) + "H";
  const ValueType &inputs = args[0], &weight = args[1], &bias = args[2];
  for (int i = 0; i < 3; ++i)
    if (!requireTensor(args[i], call.builtinArgs[i]->loc()))
      return ValueType();
  const ExprAST &wExpr = *call.builtinArgs[1];
  if (weight.batched || weight.shape.size() != 2 ||
      weight.shape[1] != gates * weight.shape[0]) {
    error(wExpr.loc()) << name << " needs a recurrent weight [H, " << gh
                       << "] that does not depend on the input, got "
                       << describeShape(weight);
    return ValueType();
  }
  int64_t hidden = weight.shape[0];
  if (bias.batched || bias.shape.size() != 1 ||
      bias.shape[0] != gates * hidden) {
    error(call.builtinArgs[2]->loc())
        << name << " needs a recurrent bias [" << gh << "] = ["
        << gates * hidden << "] that does not depend on the input, got "
        << describeShape(bias);
    return ValueType();
  }
  if (!inputs.batched || inputs.shape.size() != 2 ||
      !mlir::ShapedType::isDynamic(inputs.shape[0]) ||
      inputs.shape[1] != gates * hidden) {
    error(call.builtinArgs[0]->loc())
        << name << " needs the input projections of every token, a "
        << "per-sample shape [?, " << gh << "] = [?, " << gates * hidden
        << "], got " << describeShape(inputs);
    return ValueType();
  }
  if (args[3].kind != ValueType::Tokens) {
    error(call.builtinArgs[3]->loc())
        << name << " needs the token ids of a tokens[V] input to carry the "
        << "state over the padding, got " << describeShape(args[3]);
    return ValueType();
  }
  return ValueType::tensor({inputs.shape[0], hidden}, /*batched=*/true);
}

/// cross_entropy and accuracy of next-token targets: logits [?, V], one
/// vector per position; the mean is over the step's real targets.
ValueType BodyChecker::checkTokenPrediction(const CallExprAST &call,
                                            const ValueType &logits,
                                            const ValueType &targets) {
  llvm::StringRef name = call.getCallee();
  const ExprAST &logitsExpr = *call.builtinArgs[0];
  int64_t vocab = targets.numClasses;
  bool sequence = logits.batched && logits.shape.size() == 2 &&
                  mlir::ShapedType::isDynamic(logits.shape[0]);
  if (!sequence || logits.shape[1] != vocab) {
    error(logitsExpr.loc())
        << "the logits of '" << name << "' for next-token targets must be "
        << "one vector per position [?, " << vocab << "] (computed from the "
        << "input), got " << describeShape(logits);
    return ValueType();
  }
  if (call.builtin == BuiltinID::CrossEntropy) {
    // Only a smoothing known to be 0 (a tensor's value is not known).
    std::vector<double> smoothing = knownOptionValues(call, "label_smoothing");
    if (smoothing.empty() ||
        llvm::any_of(smoothing, [](double v) { return v != 0.0; })) {
      error(call.loc()) << "label_smoothing of 'cross_entropy' is not "
                        << "supported for next-token targets yet";
      return ValueType();
    }
  } else if (call.builtin == BuiltinID::Accuracy &&
             call.builtinOptions.find("k")->second.intValue != 1) {
    error(call.loc()) << "k of 'accuracy' must be 1 for next-token targets "
                      << "(top-k over tokens is not supported yet)";
    return ValueType();
  }
  return ValueType::tensor({}, /*batched=*/false);
}
