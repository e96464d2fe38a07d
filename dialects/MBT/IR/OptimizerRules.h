//===- OptimizerRules.h - the built-in optimizer update rules ---*- C++ -*-===//
//
// The one table that says which optimizer rules exist, which state slots
// and hyperparameters each has, and their defaults (PyTorch's). The
// frontend, the verifiers and the lowering of mbt.fused_update all read it.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_DIALECT_MBT_IR_OPTIMIZERRULES_H
#define MBT_DIALECT_MBT_IR_OPTIMIZERRULES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::mbt {

struct OptimizerHyper {
  llvm::StringLiteral name;
  double defaultValue;
};

struct OptimizerRule {
  llvm::StringLiteral name;
  llvm::ArrayRef<llvm::StringLiteral> slots;
  llvm::ArrayRef<OptimizerHyper> hyper;

  /// Index of hyperparameter `name` in `hyper`, or -1.
  int hyperIndex(llvm::StringRef hyperName) const;
};

/// The rule named `name`, or null.
const OptimizerRule *lookupOptimizerRule(llvm::StringRef name);

/// Every rule, for diagnostics that list the choices.
llvm::ArrayRef<OptimizerRule> allOptimizerRules();

} // namespace mlir::mbt

#endif
