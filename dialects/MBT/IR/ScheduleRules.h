//===- ScheduleRules.h - the built-in learning-rate schedules ---*- C++ -*-===//
//
// The one table of learning-rate schedules: each multiplies a model's
// learning rate by a factor of the optimizer step, with parameters that may
// differ per model. The frontend checks sweeps against it, the verifier of
// mbt.lr_schedule checks its parameter count, and its lowering
// (SchedulePatterns.cpp) evaluates the formulas in the generated code;
// TorchReferenceTest compares the training it gives with PyTorch's.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_DIALECT_MBT_IR_SCHEDULERULES_H
#define MBT_DIALECT_MBT_IR_SCHEDULERULES_H

#include "dialects/MBT/IR/MBTDialect.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::mbt {

struct ScheduleParam {
  llvm::StringLiteral name;
  /// The default, or none when the sweep must give it.
  std::optional<double> defaultValue;
  /// Whether it counts optimizer steps (a positive integer).
  bool isSteps = false;
};

struct ScheduleRule {
  Schedule kind;
  llvm::ArrayRef<ScheduleParam> params;

  /// The name the language, the IR and the manifest spell it with.
  llvm::StringRef name() const { return stringifySchedule(kind); }
};

/// The rule of schedule `kind`.
const ScheduleRule &getScheduleRule(Schedule kind);

/// The schedule named `name`, or null.
const ScheduleRule *lookupScheduleRule(llvm::StringRef name);

/// Every schedule, for diagnostics that list the choices.
llvm::ArrayRef<ScheduleRule> allScheduleRules();

} // namespace mlir::mbt

#endif
