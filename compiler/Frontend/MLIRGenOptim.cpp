//===- MLIRGenOptim.cpp - an optimizer's body as an mbt.optimizer ---------===//
//
// The checked statements of an optimizer (for the sweep's flags) become the
// two regions of mbt.optimizer. A value made of hyperparameters, the step
// and numbers only is a per-model scalar: it is computed in the `scalars`
// region, in f64. A value that touches `param`, `grad` or a state slot is
// per element: it is computed in the `elements` region, in the model's
// float type (f32 or f64). Where a scalar meets an element value, the
// scalars region yields it (rounded to f32 in an f32 model, as PyTorch
// rounds a Python float when it meets a float tensor) and the elements
// region receives it as an argument; numbers become constants of the
// element type directly.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/MLIRGenOptim.h"
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/SemaOptim.h"

#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

using namespace mbt;
using llvm::cast;
using llvm::dyn_cast;

namespace {

/// A value of an optimizer body: where it lives decides its kind.
struct OptValue {
  mlir::Value value;
  bool element = false;
};

class OptimizerGen {
public:
  OptimizerGen(mlir::MLIRContext &ctx, const OptimizerAST &optimizer,
               const SweepConfig &config, mlir::FloatType elementType)
      : ctx(ctx), optimizer(optimizer), config(config),
        elementType(elementType), scalars(&ctx), elements(&ctx) {}

  mlir::mbt::OptimizerOp gen(mlir::OpBuilder &builder);

private:
  OptValue genExpr(const ExprAST &expr);
  OptValue genCall(const CallExprAST &call, mlir::Location loc);
  OptValue genBinary(char op, OptValue l, OptValue r, mlir::Location loc);
  /// `v` as a value of the elements region.
  mlir::Value toElement(OptValue v, mlir::Location loc);
  mlir::OpBuilder &builderFor(bool element) {
    return element ? elements : scalars;
  }
  mlir::Location loc(const Location &l) { return toMLIRLoc(ctx, l); }
  mlir::Value constant(bool element, double v, mlir::Location l) {
    mlir::OpBuilder &b = builderFor(element);
    if (element)
      return b.create<mlir::arith::ConstantOp>(l,
                                               b.getFloatAttr(elementType, v));
    return b.create<mlir::arith::ConstantOp>(l, b.getF64FloatAttr(v));
  }
  mlir::Value boolean(bool element, bool v, mlir::Location l) {
    return builderFor(element).create<mlir::arith::ConstantOp>(
        l, builderFor(element).getBoolAttr(v));
  }

  mlir::MLIRContext &ctx;
  const OptimizerAST &optimizer;
  const SweepConfig &config;
  /// The model's float type, which the elements region computes in.
  mlir::FloatType elementType;
  mlir::OpBuilder scalars, elements;
  mlir::Block *elementsBlock = nullptr;
  llvm::StringMap<OptValue> names;
  /// What the scalars region yields, and the elements region's argument
  /// for each scalar it has received.
  llvm::SmallVector<mlir::Value> yielded;
  llvm::DenseMap<mlir::Value, mlir::Value> received;
};

} // namespace

mlir::mbt::OptimizerOp OptimizerGen::gen(mlir::OpBuilder &builder) {
  llvm::StringMap<bool> flags;
  for (const auto &[name, value] : config.optimizerFlags)
    flags[name] = value;
  std::vector<const StmtAST *> statements =
      takenOptimizerStatements(*builder.getContext(), optimizer, flags);
  llvm::SmallVector<llvm::StringRef> slots;
  for (const StmtAST *stmt : statements)
    if (llvm::isa<StateDeclAST>(stmt))
      slots.push_back(stmt->getName());

  mlir::Location opLoc = loc(optimizer.nameLoc());
  mlir::DictionaryAttr flagsAttr;
  if (!config.optimizerFlags.empty()) {
    llvm::SmallVector<mlir::NamedAttribute> entries;
    for (const auto &[name, value] : config.optimizerFlags)
      entries.push_back(builder.getNamedAttr(name, builder.getBoolAttr(value)));
    flagsAttr = builder.getDictionaryAttr(entries);
  }
  auto op = builder.create<mlir::mbt::OptimizerOp>(
      opLoc, builder.getStringAttr(optimizer.getName()),
      builder.getStrArrayAttr(llvm::SmallVector<llvm::StringRef>(
          config.hyperNames.begin(), config.hyperNames.end())),
      builder.getStrArrayAttr(slots), flagsAttr);
  mlir::Type f64 = builder.getF64Type();
  mlir::Block *scalarsBlock = new mlir::Block();
  op.getScalars().push_back(scalarsBlock);
  elementsBlock = new mlir::Block();
  op.getElements().push_back(elementsBlock);
  scalars.setInsertionPointToEnd(scalarsBlock);
  elements.setInsertionPointToEnd(elementsBlock);

  for (const std::string &name : config.hyperNames)
    names[name] = {scalarsBlock->addArgument(f64, opLoc), false};
  names["step"] = {scalarsBlock->addArgument(f64, opLoc), false};
  for (const auto &[name, value] : config.optimizerFlags)
    names[name] = {boolean(false, value, opLoc), false};
  names["grad"] = {elementsBlock->addArgument(elementType, opLoc), true};
  names["param"] = {elementsBlock->addArgument(elementType, opLoc), true};
  for (llvm::StringRef slot : slots)
    names[slot] = {elementsBlock->addArgument(elementType, opLoc), true};

  for (const StmtAST *stmt : statements)
    if (const auto *assign = dyn_cast<AssignStmtAST>(stmt))
      names[assign->getName()] = genExpr(*assign->getValue());

  llvm::SmallVector<mlir::Value> results{toElement(names["param"], opLoc)};
  for (llvm::StringRef slot : slots)
    results.push_back(toElement(names[slot], opLoc));
  scalars.create<mlir::mbt::YieldOp>(opLoc, yielded);
  elements.create<mlir::mbt::YieldOp>(opLoc, results);
  return op;
}

mlir::Value OptimizerGen::toElement(OptValue v, mlir::Location l) {
  if (v.element)
    return v.value;
  auto it = received.find(v.value);
  if (it != received.end())
    return it->second;
  mlir::Value result;
  if (auto c = v.value.getDefiningOp<mlir::arith::ConstantOp>()) {
    if (auto f = dyn_cast<mlir::FloatAttr>(c.getValue()))
      result = constant(true, f.getValueAsDouble(), l);
    else
      result =
          boolean(true, cast<mlir::IntegerAttr>(c.getValue()).getInt() != 0, l);
  } else {
    mlir::Value sent = v.value;
    if (sent.getType().isF64() && !elementType.isF64())
      sent = scalars.create<mlir::arith::TruncFOp>(l, elementType, sent);
    yielded.push_back(sent);
    result = elementsBlock->addArgument(sent.getType(), l);
  }
  received[v.value] = result;
  return result;
}

OptValue OptimizerGen::genExpr(const ExprAST &expr) {
  mlir::Location l = loc(expr.loc());
  switch (expr.getKind()) {
  case ExprAST::Expr_Number:
    return {constant(false, cast<NumberExprAST>(expr).getValue(), l), false};
  case ExprAST::Expr_Var: {
    llvm::StringRef name = cast<VariableExprAST>(expr).getName();
    if (name == "true" || name == "false")
      return {boolean(false, name == "true", l), false};
    return names.lookup(name);
  }
  case ExprAST::Expr_Unary: {
    const auto &unary = cast<UnaryExprAST>(expr);
    OptValue v = genExpr(*unary.getOperand());
    mlir::OpBuilder &b = builderFor(v.element);
    if (unary.getOp() == '-')
      return {b.create<mlir::arith::NegFOp>(l, v.value), v.element};
    return {
        b.create<mlir::arith::XOrIOp>(l, v.value, boolean(v.element, true, l)),
        v.element};
  }
  case ExprAST::Expr_Binary: {
    const auto &binary = cast<BinaryExprAST>(expr);
    OptValue lhs = genExpr(*binary.getLHS());
    OptValue rhs = genExpr(*binary.getRHS());
    return genBinary(binary.getOp(), lhs, rhs, l);
  }
  case ExprAST::Expr_Call:
    return genCall(cast<CallExprAST>(expr), l);
  default:
    llvm_unreachable("Sema rejects lists and strings in optimizers");
  }
}

OptValue OptimizerGen::genBinary(char op, OptValue l, OptValue r,
                                 mlir::Location loc) {
  bool element = l.element || r.element;
  mlir::Value a = element ? toElement(l, loc) : l.value;
  mlir::Value c = element ? toElement(r, loc) : r.value;
  mlir::OpBuilder &b = builderFor(element);
  using P = mlir::arith::CmpFPredicate;
  auto compare = [&](P predicate) -> mlir::Value {
    return b.create<mlir::arith::CmpFOp>(loc, predicate, a, c);
  };
  mlir::Value result;
  switch (op) {
  case '+':
    result = b.create<mlir::arith::AddFOp>(loc, a, c);
    break;
  case '-':
    result = b.create<mlir::arith::SubFOp>(loc, a, c);
    break;
  case '*':
    result = b.create<mlir::arith::MulFOp>(loc, a, c);
    break;
  case '/':
    result = b.create<mlir::arith::DivFOp>(loc, a, c);
    break;
  case BinaryOp::Lt:
    result = compare(P::OLT);
    break;
  case BinaryOp::Gt:
    result = compare(P::OGT);
    break;
  case BinaryOp::Le:
    result = compare(P::OLE);
    break;
  case BinaryOp::Ge:
    result = compare(P::OGE);
    break;
  case BinaryOp::Eq:
    result = compare(P::OEQ);
    break;
  case BinaryOp::Ne:
    result = compare(P::UNE);
    break; // NaN != x, as Python
  case BinaryOp::And:
    result = b.create<mlir::arith::AndIOp>(loc, a, c);
    break;
  case BinaryOp::Or:
    result = b.create<mlir::arith::OrIOp>(loc, a, c);
    break;
  default:
    llvm_unreachable("Sema rejects other operators in optimizers");
  }
  return {result, element};
}

OptValue OptimizerGen::genCall(const CallExprAST &call, mlir::Location l) {
  llvm::SmallVector<OptValue> args;
  bool element = false;
  for (const ArgumentAST &arg : call.getArgs()) {
    args.push_back(genExpr(*arg.value));
    element |= args.back().element;
  }
  llvm::SmallVector<mlir::Value> v;
  for (OptValue a : args)
    v.push_back(element ? toElement(a, l) : a.value);
  mlir::OpBuilder &b = builderFor(element);
  llvm::StringRef name = call.getCallee();
  mlir::Value result;
  if (name == "sqrt")
    result = b.create<mlir::math::SqrtOp>(l, v[0]);
  else if (name == "abs")
    result = b.create<mlir::math::AbsFOp>(l, v[0]);
  else if (name == "exp")
    result = b.create<mlir::math::ExpOp>(l, v[0]);
  else if (name == "log")
    result = b.create<mlir::math::LogOp>(l, v[0]);
  else if (name == "pow")
    result = b.create<mlir::math::PowFOp>(l, v[0], v[1]);
  else if (name == "maximum") // NaN-propagating, as torch.maximum
    result = b.create<mlir::arith::MaximumFOp>(l, v[0], v[1]);
  else if (name == "minimum")
    result = b.create<mlir::arith::MinimumFOp>(l, v[0], v[1]);
  else if (name == "where")
    result = b.create<mlir::arith::SelectOp>(l, v[0], v[1], v[2]);
  else if (name == "sign") {
    // torch.sign: 1, -1, or the value itself for 0, -0 and NaN.
    mlir::Value zero = constant(element, 0.0, l);
    mlir::Value one = constant(element, 1.0, l);
    mlir::Value minusOne = constant(element, -1.0, l);
    using P = mlir::arith::CmpFPredicate;
    mlir::Value negative = b.create<mlir::arith::SelectOp>(
        l, b.create<mlir::arith::CmpFOp>(l, P::OLT, v[0], zero), minusOne,
        v[0]);
    result = b.create<mlir::arith::SelectOp>(
        l, b.create<mlir::arith::CmpFOp>(l, P::OGT, v[0], zero), one, negative);
  } else {
    llvm_unreachable("Sema rejects other functions in optimizers");
  }
  return {result, element};
}

mlir::mbt::OptimizerOp mbt::genOptimizer(mlir::OpBuilder &builder,
                                         const OptimizerAST &optimizer,
                                         const SweepConfig &config,
                                         mlir::FloatType elementType) {
  return OptimizerGen(*builder.getContext(), optimizer, config, elementType)
      .gen(builder);
}
