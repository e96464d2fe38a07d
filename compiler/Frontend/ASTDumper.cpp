//===- ASTDumper.cpp - print the AST of a spec ----------------------------===//
//
// An indented dump in the style of the Toy tutorial's, one node per line
// with its location as `@line:col`. Functions are dumped as written; models
// as Sema expanded them, with every call of a function followed by its
// expansion. Expressions show the type Sema gave them (`f32[B, 128]`:
// batched; `f32[784, 128]`: not), parameters their path and resolved
// initializer, `if`s the branch taken and the sweep its evaluated settings.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Frontend.h"
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/SweepEval.h"

#include "dialects/MBT/IR/InitRules.h"
#include "dialects/MBT/IR/MBTShapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mbt;

namespace {
class ASTDumper {
public:
  explicit ASTDumper(llvm::raw_ostream &os) : os(os) {}

  void dump(const ModuleAST &module);

private:
  void dump(const FunctionAST &function);
  void dump(const ModelAST &model);
  void dump(const OptimizerAST &optimizer);
  void dump(llvm::ArrayRef<std::unique_ptr<StmtAST>> body);
  void dump(const StmtAST &stmt);
  void dump(const BodyInstance &instance);
  void dumpArgs(llvm::ArrayRef<ArgDeclAST> args);
  void dump(const SweepAST &sweep);
  void dump(const SweepConfig &config);
  void dump(const ExprAST &expr);
  void dumpLoc(const Location &loc) {
    os << " @" << loc.line << ":" << loc.col << "\n";
  }
  void dumpType(const TypeAST &type) {
    if (type.dims.size() == type.dimExprs.size()) {
      os << type.elementType << mlir::mbt::formatShape(type.dims);
      return;
    }
    // Not resolved (a function as written): the sizes as expressions.
    os << type.elementType << "[";
    llvm::interleaveComma(type.dimExprs, os,
                          [&](const auto &dim) { printExpr(*dim); });
    os << "]";
  }
  /// Prints an expression on one line, as it could be written.
  void printExpr(const ExprAST &expr);
  llvm::raw_ostream &indent() {
    for (int i = 0; i < level; ++i)
      os << "  ";
    return os;
  }

  /// Increments the indentation for the lifetime of a scope.
  struct Indent {
    explicit Indent(int &level) : level(level) { ++level; }
    ~Indent() { --level; }
    int &level;
  };

  llvm::raw_ostream &os;
  int level = 0;
  /// The path of the expansion being dumped ("" for a model's body).
  std::string path;
};
} // namespace

void ASTDumper::dump(const ModuleAST &module) {
  indent() << "Module\n";
  Indent guard(level);
  for (const ImportAST &import : module.getImports()) {
    indent() << "Import \"" << import.path << "\"";
    dumpLoc(import.loc);
  }
  for (const auto &function : module.getFunctions())
    dump(*function);
  for (const auto &model : module.getModels())
    dump(*model);
  for (const auto &optimizer : module.getOptimizers())
    if (!optimizer->implicitlyImported)
      dump(*optimizer);
  for (const auto &sweep : module.getSweeps())
    dump(*sweep);
}

void ASTDumper::dumpArgs(llvm::ArrayRef<ArgDeclAST> args) {
  os << "(";
  llvm::interleaveComma(args, os, [&](const ArgDeclAST &arg) {
    os << arg.name;
    if (!arg.typeName.empty())
      os << ": " << arg.typeName;
    if (arg.defaultValue) {
      os << " = ";
      printExpr(*arg.defaultValue);
    }
  });
  os << ")";
}

void ASTDumper::dump(const FunctionAST &function) {
  indent() << "Function '" << function.getName() << "'";
  dumpArgs(function.getArgs());
  dumpLoc(function.loc());
  Indent guard(level);
  dump(function.getBody());
}

void ASTDumper::dump(const OptimizerAST &optimizer) {
  indent() << "Optimizer '" << optimizer.getName() << "'";
  dumpArgs(optimizer.getArgs());
  dumpLoc(optimizer.loc());
  Indent guard(level);
  dump(optimizer.getBody());
}

void ASTDumper::dump(const ModelAST &model) {
  indent() << "Model '" << model.getName() << "'";
  if (!model.getArgs().empty())
    dumpArgs(model.getArgs());
  dumpLoc(model.loc());
  Indent guard(level);
  if (!model.instance) {
    dump(model.getBody());
    return;
  }
  if (!model.instance->constArgs.empty()) {
    indent() << "With ";
    llvm::interleaveComma(model.instance->constArgs, os, [&](const auto &arg) {
      os << arg.first << " = " << arg.second.str();
    });
    os << "\n";
  }
  path.clear();
  dump(model.instance->body);
}

void ASTDumper::dump(llvm::ArrayRef<std::unique_ptr<StmtAST>> body) {
  for (const auto &stmt : body)
    dump(*stmt);
}

/// The expansion of a call: its path, constant arguments and body.
void ASTDumper::dump(const BodyInstance &instance) {
  indent() << "Expansion '" << instance.path << "' of '"
           << instance.function->getName() << "'";
  if (!instance.constArgs.empty()) {
    os << " with ";
    llvm::interleaveComma(instance.constArgs, os, [&](const auto &arg) {
      os << arg.first << " = " << arg.second.str();
    });
  }
  os << "\n";
  Indent guard(level);
  std::string outer = std::move(path);
  path = instance.path;
  dump(instance.body);
  path = std::move(outer);
}

void ASTDumper::dump(const StmtAST &stmt) {
  if (const auto *decl = llvm::dyn_cast<DataDeclAST>(&stmt)) {
    indent() << (decl->isInput() ? "Input '" : "Target '") << decl->getName()
             << "': ";
    dumpType(decl->getType());
    dumpLoc(decl->loc());
    return;
  }
  if (const auto *param = llvm::dyn_cast<ParamDeclAST>(&stmt)) {
    indent() << (param->isBuffer() ? "Buffer '" : "Param '")
             << (path.empty() ? "" : path + ".") << param->getName() << "': ";
    dumpType(param->getType());
    if (const auto &init = param->resolvedInit) {
      const mlir::mbt::InitRule &rule = mlir::mbt::getInitRule(init->kind);
      os << " = " << rule.name();
      if (!init->args.empty()) {
        os << "(";
        llvm::interleaveComma(
            llvm::zip_equal(rule.params, init->args), os, [&](const auto &arg) {
              os << std::get<0>(arg) << " = " << formatNumber(std::get<1>(arg));
            });
        os << ")";
      }
    }
    dumpLoc(param->loc());
    Indent guard(level);
    dump(*param->getInit());
    return;
  }
  if (const auto *ret = llvm::dyn_cast<ReturnStmtAST>(&stmt)) {
    indent() << "Return";
    dumpLoc(ret->loc());
    Indent guard(level);
    dump(*ret->getValue());
    return;
  }
  if (const auto *ifStmt = llvm::dyn_cast<IfStmtAST>(&stmt)) {
    indent() << "If";
    dumpLoc(ifStmt->loc());
    Indent guard(level);
    dump(*ifStmt->getCondition());
    bool decided = ifStmt->taken != IfStmtAST::Undecided;
    indent() << "Then"
             << (decided ? ifStmt->taken == IfStmtAST::Then ? " (taken)"
                                                            : " (not taken)"
                         : "")
             << "\n";
    {
      Indent branch(level);
      dump(ifStmt->getThen());
    }
    if (!ifStmt->getElse().empty() || ifStmt->taken == IfStmtAST::Else) {
      indent() << "Else"
               << (decided ? ifStmt->taken == IfStmtAST::Else ? " (taken)"
                                                              : " (not taken)"
                           : "")
               << "\n";
      Indent branch(level);
      dump(ifStmt->getElse());
    }
    return;
  }
  if (const auto *assert = llvm::dyn_cast<AssertStmtAST>(&stmt)) {
    indent() << "Assert \"" << assert->getMessage() << "\"";
    dumpLoc(assert->loc());
    Indent guard(level);
    dump(*assert->getCondition());
    return;
  }
  if (llvm::isa<StateDeclAST>(stmt)) {
    indent() << "State '" << stmt.getName() << "'";
    dumpLoc(stmt.loc());
    return;
  }
  const auto &assign = llvm::cast<AssignStmtAST>(stmt);
  indent() << (assign.isMetric() ? "Metric '"
               : assign.isLoss() ? "Loss '"
                                 : "Assign '")
           << assign.getName() << "'";
  dumpLoc(assign.loc());
  Indent guard(level);
  dump(*assign.getValue());
}

void ASTDumper::dump(const ExprAST &expr) {
  indent();
  llvm::TypeSwitch<const ExprAST *>(&expr)
      .Case([&](const NumberExprAST *number) {
        os << "Number "
           << (number->isInteger() ? ConstScalar::integer(number->getIntValue())
                                   : ConstScalar::real(number->getValue()))
                  .str();
      })
      .Case([&](const VariableExprAST *var) {
        os << "Var '" << var->getName() << "'";
      })
      .Case([&](const UnaryExprAST *unary) {
        os << "Unary '" << spellOperator(unary->getOp(), /*unary=*/true) << "'";
      })
      .Case([&](const BinaryExprAST *binary) {
        os << "BinOp '" << spellOperator(binary->getOp()) << "'";
      })
      .Case([&](const CallExprAST *call) {
        os << "Call '" << call->getCallee() << "'";
      })
      .Case([&](const ListExprAST *list) {
        os << "List [" << list->getElements().size() << "]";
      })
      .Case([&](const DictExprAST *dict) {
        os << "Dict {" << dict->getEntries().size() << "}";
      })
      .Case([&](const StringExprAST *string) {
        os << "String \"" << string->getValue() << "\"";
      });
  if (expr.type.isValid())
    os << " : " << formatValueType(expr.type);
  dumpLoc(expr.loc());

  Indent guard(level);
  if (const auto *unary = llvm::dyn_cast<UnaryExprAST>(&expr)) {
    dump(*unary->getOperand());
  } else if (const auto *binary = llvm::dyn_cast<BinaryExprAST>(&expr)) {
    dump(*binary->getLHS());
    dump(*binary->getRHS());
  } else if (const auto *call = llvm::dyn_cast<CallExprAST>(&expr)) {
    for (const ArgumentAST &arg : call->getArgs()) {
      if (arg.name.empty()) {
        dump(*arg.value);
        continue;
      }
      indent() << "Arg '" << arg.name << "'";
      dumpLoc(arg.nameLoc);
      Indent argGuard(level);
      dump(*arg.value);
    }
    if (call->instance)
      dump(*call->instance);
  } else if (const auto *list = llvm::dyn_cast<ListExprAST>(&expr)) {
    for (const auto &element : list->getElements())
      dump(*element);
  } else if (const auto *dict = llvm::dyn_cast<DictExprAST>(&expr)) {
    for (const DictExprAST::Entry &entry : dict->getEntries()) {
      dump(*entry.key);
      dump(*entry.value);
    }
  }
}

void ASTDumper::printExpr(const ExprAST &expr) {
  llvm::TypeSwitch<const ExprAST *>(&expr)
      .Case([&](const NumberExprAST *number) {
        os << (number->isInteger() ? ConstScalar::integer(number->getIntValue())
                                   : ConstScalar::real(number->getValue()))
                  .str();
      })
      .Case([&](const VariableExprAST *var) { os << var->getName(); })
      .Case([&](const UnaryExprAST *unary) {
        bool isNot = unary->getOp() == '!';
        os << (isNot ? "not " : "-");
        printExpr(*unary->getOperand());
      })
      .Case([&](const BinaryExprAST *binary) {
        os << "(";
        printExpr(*binary->getLHS());
        os << " " << spellOperator(binary->getOp()) << " ";
        printExpr(*binary->getRHS());
        os << ")";
      })
      .Case([&](const CallExprAST *call) {
        os << call->getCallee() << "(";
        llvm::interleaveComma(call->getArgs(), os, [&](const ArgumentAST &a) {
          if (!a.name.empty())
            os << a.name << " = ";
          printExpr(*a.value);
        });
        os << ")";
      })
      .Case([&](const ListExprAST *list) {
        os << "[";
        llvm::interleaveComma(
            list->getElements(), os,
            [&](const auto &element) { printExpr(*element); });
        os << "]";
      })
      .Case([&](const DictExprAST *dict) {
        os << "{";
        llvm::interleaveComma(dict->getEntries(), os,
                              [&](const DictExprAST::Entry &entry) {
                                printExpr(*entry.key);
                                os << ": ";
                                printExpr(*entry.value);
                              });
        os << "}";
      })
      .Case([&](const StringExprAST *string) {
        os << "\"" << string->getValue() << "\"";
      });
}

void ASTDumper::dump(const SweepAST &sweep) {
  indent() << "Sweep";
  dumpLoc(sweep.loc());
  Indent guard(level);
  for (const SweepSettingAST &setting : sweep.getSettings()) {
    indent() << "Setting '" << setting.key << "'";
    dumpLoc(setting.loc);
    Indent settingGuard(level);
    dump(*setting.value);
  }
  if (sweep.config)
    dump(*sweep.config);
}

void ASTDumper::dump(const SweepConfig &config) {
  auto printList = [&](const auto &values) {
    os << "[";
    llvm::interleaveComma(values, os, [&](auto v) {
      if constexpr (std::is_same_v<decltype(v), double>)
        os << formatNumber(v);
      else
        os << v;
    });
    os << "]\n";
  };
  indent() << "Config\n";
  Indent guard(level);
  indent() << "model = " << config.model;
  if (!config.modelArgs.empty()) {
    os << "(";
    llvm::interleaveComma(config.modelArgs, os, [&](const ModelArgValue &arg) {
      os << arg.name << " = " << arg.value.str();
    });
    os << ")";
  }
  os << "\n";
  indent() << "models = " << config.models << "\n";
  indent() << "seeds = ";
  printList(config.seeds);
  indent() << "optimizer = " << config.optimizer << "\n";
  for (const auto &[name, values] :
       llvm::zip(config.hyperNames, config.hyper)) {
    indent() << "  " << name << " = ";
    printList(values);
  }
  for (const auto &[name, value] : config.optimizerFlags)
    indent() << "  " << name << " = " << (value ? "true" : "false") << "\n";
  indent() << "data = " << config.data << "(batch = " << config.batchSize
           << ", shuffle_seed = " << config.shuffleSeed << ")\n";
  indent() << "epochs = " << config.epochs << "\n";
}

void mbt::dumpAST(const ModuleAST &module, llvm::raw_ostream &os) {
  ASTDumper(os).dump(module);
}
