//===- ASTDumper.cpp - print the AST of a spec ----------------------------===//
//
// An indented dump in the style of the Toy tutorial's, one node per line
// with its location as `@line:col`. Expressions show the type Sema gave
// them (`f32[B, 128]`: batched; `f32[784, 128]`: not), parameters their
// resolved initializer and the sweep its evaluated settings.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Frontend.h"
#include "compiler/Frontend/Sema.h"
#include "compiler/Frontend/SweepEval.h"

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
  void dump(const ModelAST &model);
  void dump(const StmtAST &stmt);
  void dump(const SweepAST &sweep);
  void dump(const SweepConfig &config);
  void dump(const ExprAST &expr);
  void dumpLoc(const Location &loc) {
    os << " @" << loc.line << ":" << loc.col << "\n";
  }
  void dumpType(const TypeAST &type) {
    os << type.elementType << mlir::mbt::formatShape(type.dims);
  }
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
};
} // namespace

void ASTDumper::dump(const ModuleAST &module) {
  indent() << "Module\n";
  Indent guard(level);
  for (const auto &model : module.getModels())
    dump(*model);
  for (const auto &sweep : module.getSweeps())
    dump(*sweep);
}

void ASTDumper::dump(const ModelAST &model) {
  indent() << "Model '" << model.getName() << "'";
  dumpLoc(model.loc());
  Indent guard(level);
  for (const auto &stmt : model.getBody())
    dump(*stmt);
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
    indent() << "Param '" << param->getName() << "': ";
    dumpType(param->getType());
    if (const auto &init = param->resolvedInit) {
      os << " = " << init->kind;
      if (!init->args.empty()) {
        os << "(";
        llvm::interleaveComma(init->args, os, [&](const auto &arg) {
          os << arg.first << " = " << formatNumber(arg.second);
        });
        os << ")";
      }
    }
    dumpLoc(param->loc());
    Indent guard(level);
    dump(*param->getInit());
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
           << formatNumber(number->isInteger()
                               ? ConstNumber::integer(number->getIntValue())
                               : ConstNumber::real(number->getValue()));
      })
      .Case([&](const VariableExprAST *var) {
        os << "Var '" << var->getName() << "'";
      })
      .Case([&](const UnaryExprAST *unary) {
        os << "Unary '" << unary->getOp() << "'";
      })
      .Case([&](const BinaryExprAST *binary) {
        os << "BinOp '" << binary->getOp() << "'";
      })
      .Case([&](const CallExprAST *call) {
        os << "Call '" << call->getCallee() << "'";
      })
      .Case([&](const ListExprAST *list) {
        os << "List [" << list->getElements().size() << "]";
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
  } else if (const auto *list = llvm::dyn_cast<ListExprAST>(&expr)) {
    for (const auto &element : list->getElements())
      dump(*element);
  }
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
  indent() << "model = " << config.model << "\n";
  indent() << "models = " << config.models << "\n";
  indent() << "seeds = ";
  printList(config.seeds);
  indent() << "optimizer = " << config.optimizer << "\n";
  for (const auto &[name, values] :
       llvm::zip(config.hyperNames, config.hyper)) {
    indent() << "  " << name << " = ";
    printList(values);
  }
  indent() << "data = " << config.data << "(batch = " << config.batchSize
           << ", shuffle_seed = " << config.shuffleSeed << ")\n";
  indent() << "epochs = " << config.epochs << "\n";
}

void mbt::dumpAST(const ModuleAST &module, llvm::raw_ostream &os) {
  ASTDumper(os).dump(module);
}
