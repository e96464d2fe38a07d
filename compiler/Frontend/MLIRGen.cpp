//===- MLIRGen.cpp - generate the mbt dialect from a checked AST ----------===//
//
// One func.func per expanded model: its arguments are the parameters (in the
// order Sema found them, calls of functions inlined, with `mbt.param` naming
// each by its path and `mbt.init`), then the input (`mbt.input`, batch
// dimension first; a tokens[V] input is i32 [B, T] with its vocabulary in
// `mbt.vocab`) and the target (`mbt.target`, i32 class indices [B], or a
// tokens[V] target's next tokens [B, T], with its class count or vocabulary
// in `mbt.classes`); it returns the loss and then the metrics
// (`mbt.outputs` names them). A call
// of a function generates the callee's expanded body in place, in a scope
// of its own. The sweep's optimizer becomes an `mbt.optimizer`
// (MLIRGenOptim.cpp) and the sweep one `mbt.sweep` op. Every op gets the
// FileLineColLoc of the expression it comes from.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/Frontend.h"
#include "compiler/Frontend/MLIRGenBuiltins.h"
#include "compiler/Frontend/MLIRGenOptim.h"

#include "dialects/MBT/IR/MBTDialect.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

using namespace mbt;
using llvm::cast;
using llvm::dyn_cast;

namespace {
/// The sweep's `data_source`: the settings of the user's own files, keyed
/// as in the language, those at their defaults left out; null for a
/// built-in data set.
/// The sweep's `init_checkpoint` (null without `init = checkpoint(...)`).
mlir::DictionaryAttr initCheckpointAttr(mlir::Builder &builder,
                                        const SweepConfig &config) {
  if (config.initFiles.empty())
    return {};
  auto strings = [&](const std::vector<std::string> &values) {
    llvm::SmallVector<llvm::StringRef> refs(values.begin(), values.end());
    return builder.getStrArrayAttr(refs);
  };
  llvm::SmallVector<mlir::NamedAttribute> entries{
      builder.getNamedAttr("files", strings(config.initFiles))};
  if (!config.initTranspose.empty())
    entries.push_back(
        builder.getNamedAttr("transpose", strings(config.initTranspose)));
  if (!config.initRename.empty()) {
    llvm::SmallVector<mlir::NamedAttribute> renames;
    for (const auto &[name, tensor] : config.initRename)
      renames.push_back(
          builder.getNamedAttr(name, builder.getStringAttr(tensor)));
    entries.push_back(
        builder.getNamedAttr("rename", builder.getDictionaryAttr(renames)));
  }
  if (config.initPartial)
    entries.push_back(
        builder.getNamedAttr("partial", builder.getBoolAttr(true)));
  return builder.getDictionaryAttr(entries);
}

mlir::DictionaryAttr dataSourceAttr(mlir::Builder &builder,
                                    const SweepConfig &config) {
  if (!mlir::mbt::isFileDataSet(config.data))
    return {};
  const ::mbt::DataSource &s = config.source;
  llvm::SmallVector<mlir::NamedAttribute> entries;
  const ::mbt::DataSource unset;
  for (const auto &[key, member] : ::mbt::kDataSourceTexts)
    if (s.*member != unset.*member)
      entries.push_back(
          builder.getNamedAttr(key, builder.getStringAttr(s.*member)));
  if (!s.columns.empty()) {
    llvm::SmallVector<llvm::StringRef> columns(s.columns.begin(),
                                               s.columns.end());
    entries.push_back(
        builder.getNamedAttr("columns", builder.getStrArrayAttr(columns)));
  }
  if (!s.header)
    entries.push_back(
        builder.getNamedAttr("header", builder.getBoolAttr(false)));
  if (s.skipRows > 0)
    entries.push_back(builder.getNamedAttr(
        "skip_rows", builder.getI64IntegerAttr(s.skipRows)));
  if (s.standardize)
    entries.push_back(
        builder.getNamedAttr("standardize", builder.getBoolAttr(true)));
  if (!s.mean.empty())
    entries.push_back(
        builder.getNamedAttr("mean", builder.getDenseF64ArrayAttr(s.mean)));
  if (!s.stddev.empty())
    entries.push_back(
        builder.getNamedAttr("std", builder.getDenseF64ArrayAttr(s.stddev)));
  return builder.getDictionaryAttr(entries);
}

class MLIRGenImpl {
public:
  explicit MLIRGenImpl(mlir::MLIRContext &ctx) : ctx(ctx), builder(&ctx) {}

  mlir::OwningOpRef<mlir::ModuleOp> gen(const ModuleAST &moduleAST);

private:
  mlir::func::FuncOp genModel(const ModelAST &model);
  /// Generates the statements of a body (the `if` branches taken).
  void genBody(llvm::ArrayRef<std::unique_ptr<StmtAST>> body);
  void genAssignment(const AssignStmtAST &assign);
  void genOutputs(mlir::func::FuncOp func, mlir::Location l,
                  const AssignStmtAST &loss,
                  llvm::ArrayRef<const AssignStmtAST *> metrics);
  mlir::Value genFunctionCall(const CallExprAST &call);
  void genSweep(const SweepAST &sweep, const ModuleAST &moduleAST);
  mlir::Value genExpr(const ExprAST &expr);
  mlir::Value genCall(const CallExprAST &call);
  mlir::Value genElementwise(const BinaryExprAST &binary);
  /// Reshapes `value` to `rank` by prepending size-1 dimensions.
  mlir::Value expandRank(mlir::Value value, int64_t rank, mlir::Location loc);
  mlir::mbt::InitAttr genInitAttr(const ResolvedInit &init);

  mlir::Location loc(const Location &l) { return toMLIRLoc(ctx, l); }
  /// A tensor of the model's float type.
  mlir::RankedTensorType modelTensor(llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, elementType);
  }
  /// A tensor of `shape` with the element type of `value`.
  static mlir::RankedTensorType tensorLike(mlir::Value value,
                                           llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(
        shape, cast<mlir::ShapedType>(value.getType()).getElementType());
  }
  /// The float type a checked model computes in.
  mlir::FloatType floatTypeOf(const ModelAST &model) {
    if (model.floatType == "f64")
      return builder.getF64Type();
    return builder.getF32Type();
  }

  mlir::MLIRContext &ctx;
  mlir::OpBuilder builder;
  /// The values of the names of the body being generated.
  llvm::StringMap<mlir::Value> symbols;
  /// The func argument of every parameter of the model being generated.
  llvm::DenseMap<const ParamDeclAST *, mlir::Value> paramValues;
  /// The random-drawing calls (dropout) generated so far in this model.
  int64_t randomSites = 0;
  /// The results of each metric over a whole split (rmse, r2), by name.
  llvm::StringMap<llvm::SmallVector<mlir::Value>> splitMetricColumns;
  /// The value of the `return` of the function body being generated.
  mlir::Value returned;
  /// The float type of the model being generated.
  mlir::FloatType elementType;
};
} // namespace

mlir::OwningOpRef<mlir::ModuleOp> MLIRGenImpl::gen(const ModuleAST &moduleAST) {
  Location first;
  if (!moduleAST.getModels().empty())
    first = moduleAST.getModels().front()->loc();
  else if (moduleAST.getSweep())
    first = moduleAST.getSweep()->loc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(
      first.file ? loc(Location{first.file, 1, 1}) : builder.getUnknownLoc());
  builder.setInsertionPointToEnd(module->getBody());
  for (const auto &model : moduleAST.getModels())
    if (model->instance && !genModel(*model))
      return nullptr;
  if (const SweepAST *sweep = moduleAST.getSweep()) {
    // The sweep's optimizer, the only one the module needs.
    // The sweep's optimizer, the only one the module needs, updating the
    // swept model's float type.
    const ModelAST *swept = nullptr;
    if (sweep->config)
      for (const auto &model : moduleAST.getModels())
        if (model->getName() == sweep->config->model)
          swept = model.get();
    if (swept)
      if (const OptimizerAST *optimizer =
              moduleAST.lookupOptimizer(sweep->config->optimizer))
        genOptimizer(builder, *optimizer, *sweep->config, floatTypeOf(*swept));
    genSweep(*sweep, moduleAST);
  }
  if (mlir::failed(mlir::verify(*module))) {
    module->emitError("internal error: the generated module does not verify");
    return nullptr;
  }
  return module;
}

mlir::mbt::InitAttr MLIRGenImpl::genInitAttr(const ResolvedInit &init) {
  return mlir::mbt::InitAttr::get(&ctx, init.kind,
                                  llvm::ArrayRef<double>(init.args));
}

/// Appends the statements of `body` to `stmts`, those of the branch each
/// `if` takes in place of the `if`.
static void flattenTaken(llvm::ArrayRef<std::unique_ptr<StmtAST>> body,
                         llvm::SmallVectorImpl<const StmtAST *> &stmts) {
  for (const auto &stmt : body) {
    if (const auto *ifStmt = dyn_cast<IfStmtAST>(stmt.get()))
      flattenTaken(ifStmt->getTaken(), stmts);
    else
      stmts.push_back(stmt.get());
  }
}

mlir::func::FuncOp MLIRGenImpl::genModel(const ModelAST &model) {
  // Arguments: parameters in the order Sema found them, then the input and
  // the target.
  llvm::SmallVector<const StmtAST *> stmts;
  flattenTaken(model.instance->body, stmts);
  const DataDeclAST *input = nullptr, *target = nullptr;
  const AssignStmtAST *loss = nullptr;
  llvm::SmallVector<const AssignStmtAST *> metrics;
  for (const StmtAST *stmt : stmts) {
    if (const auto *decl = dyn_cast<DataDeclAST>(stmt))
      (decl->isInput() ? input : target) = decl;
    else if (const auto *assign = dyn_cast<AssignStmtAST>(stmt)) {
      if (assign->isLoss())
        loss = assign;
      else if (assign->isMetric())
        metrics.push_back(assign);
    }
  }
  assert(input && target && loss && "generating an unchecked model");
  elementType = floatTypeOf(model);

  // Arguments: the parameters, the buffers, the input and the target.
  llvm::SmallVector<FlatParam> declared(model.params.begin(),
                                        model.params.end());
  declared.append(model.buffers.begin(), model.buffers.end());
  llvm::SmallVector<mlir::Type> argTypes;
  for (const FlatParam &param : declared)
    argTypes.push_back(modelTensor(param.decl->getType().dims));
  if (input->getType().elementType == "tokens") {
    // Token ids [B, T]: both sizes change from step to step.
    argTypes.push_back(mlir::RankedTensorType::get(
        {mlir::ShapedType::kDynamic, mlir::ShapedType::kDynamic},
        builder.getI32Type()));
  } else {
    llvm::SmallVector<int64_t> inputShape{mlir::ShapedType::kDynamic};
    inputShape.append(input->getType().dims.begin(),
                      input->getType().dims.end());
    argTypes.push_back(modelTensor(inputShape));
  }
  // Class indices [B], a tokens[V] target's next tokens [B, T], or a
  // f32[K] target's values [B, K].
  llvm::StringRef targetElement = target->getType().elementType;
  llvm::SmallVector<int64_t, 2> targetShape{mlir::ShapedType::kDynamic};
  if (targetElement == "tokens")
    targetShape.push_back(mlir::ShapedType::kDynamic);
  if (target->isValueTarget())
    argTypes.push_back(modelTensor(
        {mlir::ShapedType::kDynamic, target->getType().dims.front()}));
  else
    argTypes.push_back(
        mlir::RankedTensorType::get(targetShape, builder.getI32Type()));
  auto func =
      builder.create<mlir::func::FuncOp>(loc(model.nameLoc()), model.getName(),
                                         builder.getFunctionType(argTypes, {}));

  mlir::Block *entry = func.addEntryBlock();
  symbols.clear();
  splitMetricColumns.clear();
  paramValues.clear();
  randomSites = 0;
  for (auto [i, param] : llvm::enumerate(declared)) {
    mlir::BlockArgument arg = entry->getArgument(i);
    arg.setLoc(loc(param.decl->nameLoc()));
    paramValues[param.decl] = arg;
    func.setArgAttr(i,
                    param.decl->isBuffer()
                        ? mlir::mbt::MBTDialect::BufferAttrHelper::getNameStr()
                        : mlir::mbt::MBTDialect::ParamAttrHelper::getNameStr(),
                    builder.getStringAttr(param.name));
    func.setArgAttr(i, mlir::mbt::MBTDialect::InitAttrHelper::getNameStr(),
                    genInitAttr(*param.decl->resolvedInit));
  }
  unsigned numParams = declared.size();
  const DataDeclAST *data[] = {input, target};
  for (auto [i, decl] : llvm::enumerate(data)) {
    mlir::BlockArgument arg = entry->getArgument(numParams + i);
    arg.setLoc(loc(decl->nameLoc()));
    symbols[decl->getName()] = arg;
    func.setArgAttr(numParams + i,
                    decl == input
                        ? mlir::mbt::MBTDialect::InputAttrHelper::getNameStr()
                        : mlir::mbt::MBTDialect::TargetAttrHelper::getNameStr(),
                    builder.getStringAttr(decl->getName()));
    if (decl == target && !target->isValueTarget())
      func.setArgAttr(
          numParams + i, mlir::mbt::MBTDialect::ClassesAttrHelper::getNameStr(),
          builder.getI64IntegerAttr(target->getType().dims.front()));
    else if (decl != target && decl->getType().elementType == "tokens")
      func.setArgAttr(numParams + i,
                      mlir::mbt::MBTDialect::VocabAttrHelper::getNameStr(),
                      builder.getI64IntegerAttr(decl->getType().dims.front()));
  }

  mlir::OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(entry);
  for (const auto &arg : model.instance->perModelArgs) {
    const std::string &name = arg.first;
    const ArgDeclAST *decl = llvm::find_if(
        model.getArgs(), [&](const ArgDeclAST &a) { return a.name == name; });
    symbols[name] = builder.create<mlir::mbt::ModelConstantOp>(
        loc(decl->loc), modelTensor({}),
        builder.getDenseF64ArrayAttr(arg.second));
  }
  genBody(model.instance->body);
  genOutputs(func, loc(model.loc()), *loss, metrics);
  return func;
}

/// Returns the loss and the metrics, and names the output each result
/// feeds: one result for each, several for a metric over a whole split.
void MLIRGenImpl::genOutputs(mlir::func::FuncOp func, mlir::Location l,
                             const AssignStmtAST &loss,
                             llvm::ArrayRef<const AssignStmtAST *> metrics) {
  llvm::SmallVector<mlir::Value> results{symbols.lookup(loss.getName())};
  llvm::SmallVector<mlir::Attribute> outputs{builder.getStringAttr("loss")};
  llvm::SmallVector<mlir::NamedAttribute> splitMetrics;
  for (const AssignStmtAST *metric : metrics) {
    mlir::StringAttr name = builder.getStringAttr(metric->getName());
    auto columns = splitMetricColumns.find(metric->getName());
    if (columns == splitMetricColumns.end()) {
      results.push_back(symbols.lookup(metric->getName()));
      outputs.push_back(name);
      continue;
    }
    results.append(columns->second);
    outputs.append(columns->second.size(), name);
    auto call = cast<CallExprAST>(metric->getValue());
    splitMetrics.emplace_back(name,
                              mlir::mbt::SplitReduceAttr::get(
                                  &ctx, call->builtin == BuiltinID::R2
                                            ? mlir::mbt::SplitReduce::r2
                                            : mlir::mbt::SplitReduce::rmse));
  }
  builder.create<mlir::func::ReturnOp>(l, results);
  func.setType(builder.getFunctionType(func.getArgumentTypes(),
                                       mlir::ValueRange(results).getTypes()));
  func->setAttr(mlir::mbt::MBTDialect::OutputsAttrHelper::getNameStr(),
                builder.getArrayAttr(outputs));
  if (!splitMetrics.empty())
    func->setAttr(mlir::mbt::MBTDialect::SplitMetricsAttrHelper::getNameStr(),
                  builder.getDictionaryAttr(splitMetrics));
}

void MLIRGenImpl::genBody(llvm::ArrayRef<std::unique_ptr<StmtAST>> body) {
  llvm::SmallVector<const StmtAST *> stmts;
  flattenTaken(body, stmts);
  for (const StmtAST *stmt : stmts) {
    if (const auto *param = dyn_cast<ParamDeclAST>(stmt))
      symbols[param->getName()] = paramValues.lookup(param);
    else if (const auto *assign = dyn_cast<AssignStmtAST>(stmt))
      genAssignment(*assign);
    else if (const auto *ret = dyn_cast<ReturnStmtAST>(stmt))
      returned = genExpr(*ret->getValue());
  }
}

/// The callee's expanded body, generated in place: its tensor arguments are
/// the caller's values, its names a scope of their own.
mlir::Value MLIRGenImpl::genFunctionCall(const CallExprAST &call) {
  const BodyInstance &callee = *call.instance;
  llvm::StringMap<mlir::Value> calleeSymbols;
  for (const auto &[name, expr] : callee.tensorArgs)
    calleeSymbols[name] = genExpr(*expr);
  std::swap(symbols, calleeSymbols);
  genBody(callee.body);
  std::swap(symbols, calleeSymbols);
  return returned;
}

mlir::Value MLIRGenImpl::genExpr(const ExprAST &expr) {
  mlir::Location l = loc(expr.loc());
  switch (expr.getKind()) {
  case ExprAST::Expr_Number: {
    auto type = modelTensor({});
    auto value = mlir::DenseElementsAttr::get(
        type, builder.getFloatAttr(elementType,
                                   cast<NumberExprAST>(expr).getValue()));
    return builder.create<mlir::mbt::ConstantOp>(l, type, value);
  }
  case ExprAST::Expr_Var:
    return symbols.lookup(cast<VariableExprAST>(expr).getName());
  case ExprAST::Expr_Unary: {
    mlir::Value operand = genExpr(*cast<UnaryExprAST>(expr).getOperand());
    return builder.create<mlir::mbt::NegOp>(l, operand);
  }
  case ExprAST::Expr_Binary: {
    const auto &binary = cast<BinaryExprAST>(expr);
    if (binary.getOp() != '@')
      return genElementwise(binary);
    mlir::Value lhs = genExpr(*binary.getLHS());
    mlir::Value rhs = genExpr(*binary.getRHS());
    return genMatmul(builder, l, lhs, rhs);
  }
  case ExprAST::Expr_Call:
    return genCall(cast<CallExprAST>(expr));
  case ExprAST::Expr_List:
  case ExprAST::Expr_String:
  case ExprAST::Expr_Dict:
    break;
  }
  llvm_unreachable("unchecked expression in MLIRGen");
}

void MLIRGenImpl::genAssignment(const AssignStmtAST &assign) {
  const auto *call = dyn_cast<CallExprAST>(assign.getValue());
  if (!assign.isMetric() || !call || !isSplitMetric(call->builtin)) {
    symbols[assign.getName()] = genExpr(*assign.getValue());
    return;
  }
  splitMetricColumns[assign.getName()] = genSplitMetricColumns(
      builder, loc(call->loc()), elementType, *call,
      genExpr(*call->builtinArgs[0]), genExpr(*call->builtinArgs[1]));
}

mlir::Value MLIRGenImpl::genCall(const CallExprAST &call) {
  if (call.instance)
    return genFunctionCall(call);
  mlir::Location l = loc(call.loc());
  llvm::SmallVector<mlir::Value, 2> args;
  for (const ExprAST *arg : call.builtinArgs)
    args.push_back(genExpr(*arg));
  llvm::StringMap<mlir::Value> tensorOptions;
  for (const auto &option : call.builtinTensorOptions)
    tensorOptions[option.getKey()] = genExpr(*option.getValue());
  return genBuiltinCall(builder, l, elementType, call, args, tensorOptions,
                        randomSites);
}

mlir::Value MLIRGenImpl::expandRank(mlir::Value value, int64_t rank,
                                    mlir::Location l) {
  auto type = cast<mlir::RankedTensorType>(value.getType());
  if (type.getRank() >= rank)
    return value;
  llvm::SmallVector<int64_t> shape(rank - type.getRank(), 1);
  shape.append(type.getShape().begin(), type.getShape().end());
  return builder.create<mlir::mbt::ReshapeOp>(l, tensorLike(value, shape),
                                              value);
}

/// The mbt elementwise ops need operands of equal rank: a lower-rank
/// operand gets size-1 dims in front of its per-sample dims (after the
/// batch dimension of a batched one).
mlir::Value MLIRGenImpl::genElementwise(const BinaryExprAST &binary) {
  mlir::Location l = loc(binary.loc());
  const ValueType &type = binary.type;
  int64_t rank =
      static_cast<int64_t>(type.shape.size()) + (type.batched ? 1 : 0);
  auto operand = [&](const ExprAST &expr) -> mlir::Value {
    mlir::Value v = genExpr(expr);
    if (!expr.type.batched)
      return expandRank(v, rank, l);
    auto vType = cast<mlir::RankedTensorType>(v.getType());
    if (vType.getRank() >= rank)
      return v;
    llvm::SmallVector<int64_t> shape{vType.getDimSize(0)};
    shape.append(rank - vType.getRank(), 1);
    shape.append(vType.getShape().begin() + 1, vType.getShape().end());
    return builder.create<mlir::mbt::ReshapeOp>(l, tensorLike(v, shape), v)
        .getResult();
  };
  mlir::Value lhs = operand(*binary.getLHS());
  mlir::Value rhs = operand(*binary.getRHS());
  switch (binary.getOp()) {
  case '+':
    return builder.create<mlir::mbt::AddOp>(l, lhs, rhs);
  case '-':
    return builder.create<mlir::mbt::SubOp>(l, lhs, rhs);
  case '*':
    return builder.create<mlir::mbt::MulOp>(l, lhs, rhs);
  case '/':
    return builder.create<mlir::mbt::DivOp>(l, lhs, rhs);
  default:
    llvm_unreachable("unknown elementwise operator");
  }
}

void MLIRGenImpl::genSweep(const SweepAST &sweep, const ModuleAST &moduleAST) {
  assert(sweep.config && "generating an unchecked sweep");
  const SweepConfig &config = *sweep.config;
  llvm::SmallVector<mlir::Attribute> names, hyper;
  for (const auto &[name, values] :
       llvm::zip(config.hyperNames, config.hyper)) {
    names.push_back(builder.getStringAttr(name));
    hyper.push_back(builder.getDenseF64ArrayAttr(values));
  }
  auto patternsAttr =
      [&](llvm::ArrayRef<std::pair<std::string, Location>> patterns) {
        llvm::SmallVector<mlir::Attribute> texts;
        for (const auto &pattern : patterns)
          texts.push_back(builder.getStringAttr(pattern.first));
        return texts.empty() ? mlir::ArrayAttr() : builder.getArrayAttr(texts);
      };
  llvm::SmallVector<mlir::Attribute> scheduleParams;
  for (const std::vector<double> &values : config.scheduleParams)
    scheduleParams.push_back(builder.getDenseF64ArrayAttr(values));
  // The swept model's arguments, per model, in declaration order.
  llvm::SmallVector<mlir::Attribute> argNames, argValues;
  const ModelAST *model = nullptr;
  for (const auto &m : moduleAST.getModels())
    if (m->getName() == config.model)
      model = m.get();
  if (model && model->instance) {
    for (const ArgDeclAST &decl : model->getArgs()) {
      std::vector<double> values;
      for (const auto &[name, value] : model->instance->constArgs)
        if (name == decl.name && value.isNumber())
          values.assign(config.models, value.floatValue);
      for (const auto &[name, perModel] : model->instance->perModelArgs)
        if (name == decl.name)
          values = perModel;
      if (values.empty())
        continue; // a bool: it selects code, not a number to report
      argNames.push_back(builder.getStringAttr(decl.name));
      argValues.push_back(builder.getDenseF64ArrayAttr(values));
    }
  }
  const auto &scale = config.lossScale;
  builder.create<mlir::mbt::SweepOp>(
      loc(sweep.loc()), builder.getStringAttr("sweep"),
      mlir::FlatSymbolRefAttr::get(&ctx, config.model),
      builder.getI64IntegerAttr(config.models),
      mlir::FlatSymbolRefAttr::get(&ctx, config.optimizer),
      builder.getArrayAttr(names), builder.getArrayAttr(hyper),
      builder.getDenseI64ArrayAttr(config.seeds),
      mlir::mbt::DataSetAttr::get(&ctx, config.data),
      dataSourceAttr(builder, config),
      builder.getI64IntegerAttr(config.batchSize),
      builder.getI64IntegerAttr(config.epochs),
      builder.getI64IntegerAttr(config.shuffleSeed),
      mlir::mbt::RoutingAttr::get(&ctx, config.routing),
      builder.getI64IntegerAttr(config.folds),
      config.routing == mlir::mbt::Routing::kfold
          ? builder.getDenseI64ArrayAttr(config.fold)
          : mlir::DenseI64ArrayAttr(),
      argNames.empty() ? mlir::ArrayAttr() : builder.getArrayAttr(argNames),
      argNames.empty() ? mlir::ArrayAttr() : builder.getArrayAttr(argValues),
      config.clipNorm.empty() ? mlir::DenseF64ArrayAttr()
                              : builder.getDenseF64ArrayAttr(config.clipNorm),
      config.schedule ? mlir::mbt::ScheduleAttr::get(&ctx, *config.schedule)
                      : mlir::mbt::ScheduleAttr(),
      config.schedule ? builder.getArrayAttr(scheduleParams)
                      : mlir::ArrayAttr(),
      patternsAttr(config.noDecay), patternsAttr(config.freeze),
      builder.getF64FloatAttr(config.validation),
      builder.getI64IntegerAttr(config.crop), builder.getBoolAttr(config.flip),
      config.batching ? mlir::mbt::BatchingAttr::get(&ctx, *config.batching)
                      : mlir::mbt::BatchingAttr(),
      builder.getI64IntegerAttr(config.tokenBudget),
      builder.getI64IntegerAttr(config.window),
      builder.getI64IntegerAttr(config.maxLength),
      config.precision ? mlir::mbt::PrecisionAttr::get(&ctx, *config.precision)
                       : mlir::mbt::PrecisionAttr(),
      // f16's loss scale, written out even where it is GradScaler's default.
      scale ? builder.getF64FloatAttr(scale->initScale) : mlir::FloatAttr(),
      scale ? builder.getF64FloatAttr(scale->growthFactor) : mlir::FloatAttr(),
      scale ? builder.getF64FloatAttr(scale->backoffFactor) : mlir::FloatAttr(),
      scale ? builder.getI64IntegerAttr(scale->growthInterval)
            : mlir::IntegerAttr(),
      config.rankBy.empty() ? mlir::StringAttr()
                            : builder.getStringAttr(config.rankBy),
      initCheckpointAttr(builder, config),
      /*first_model=*/builder.getI64IntegerAttr(0),
      /*sweep_models=*/mlir::IntegerAttr());
}

mlir::OwningOpRef<mlir::ModuleOp> mbt::mlirGen(mlir::MLIRContext &ctx,
                                               const ModuleAST &module) {
  ctx.loadDialect<mlir::mbt::MBTDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect>();
  return MLIRGenImpl(ctx).gen(module);
}
