//===- SemaOptim.h - optimizers written in the language ---------*- C++ -*-===//
//
// `optim NAME(args) { ... }` declares an update rule. Inside it, `param`
// and `grad` are one element of a parameter and its gradient, `step` the
// 1-based number of the optimizer step, the numeric arguments the model's
// hyperparameters and `state NAME` a slot per element that starts at 0.
// Assignments run in order and may rebind a name; the final `param` and
// state slots are the rule's results. `bool` arguments are flags: `if`
// conditions use them (and numbers) to choose code when compiling, so they
// must agree between the models of a sweep. `assert` conditions over the
// arguments are checked for every model when the sweep binds them.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_FRONTEND_SEMAOPTIM_H
#define MBT_COMPILER_FRONTEND_SEMAOPTIM_H

#include "compiler/Frontend/AST.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/StringMap.h"

#include <vector>

namespace mbt {

class SweepEvaluator;

/// A function of optimizer expressions: `sqrt(v)`, `where(c, a, b)`, ...
struct OptimizerBuiltin {
  llvm::StringLiteral name;
  unsigned arity;
};
llvm::ArrayRef<OptimizerBuiltin> optimizerBuiltins();

/// Whether argument `arg` of an optimizer (checked) is a flag: a `bool`,
/// which chooses code, rather than a numeric hyperparameter.
inline bool isOptimizerFlag(const ArgDeclAST &arg) {
  return arg.kind == ArgDeclAST::Bool;
}

/// The statements of `optimizer` that run with the flag values `flags`
/// (every flag of the optimizer): `if` replaced by the branch it takes.
std::vector<const StmtAST *>
takenOptimizerStatements(mlir::MLIRContext &ctx, const OptimizerAST &optimizer,
                         const llvm::StringMap<bool> &flags);

/// Checks every optimizer of `module`: unique names, arguments with
/// defaults of the right kind, and the body with the flags' defaults.
bool checkOptimizers(mlir::MLIRContext &ctx, ModuleAST &module);

/// Binds the sweep's `optim = NAME(args)` (`call`, or null for a bare
/// `NAME`) to `optimizer`: evaluates each hyperparameter for every model
/// with `eval` and each flag, checks the body with those flags and the
/// optimizer's asserts for every model, and fills `config.optimizer`,
/// `optimizerFlags`, `hyperNames` and `hyper`. `useLoc` is the setting's
/// value. Reports what is wrong.
bool bindOptimizer(mlir::MLIRContext &ctx, const OptimizerAST &optimizer,
                   const CallExprAST *call, const Location &useLoc,
                   SweepEvaluator &eval, SweepConfig &config);

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_SEMAOPTIM_H
