//===- Builtins.h - the builtin functions of model expressions --*- C++ -*-===//
#ifndef MBT_COMPILER_FRONTEND_BUILTINS_H
#define MBT_COMPILER_FRONTEND_BUILTINS_H

namespace mbt {

/// A builtin function of model expressions (Builtins.def). Sema records
/// it on each call it checks; MLIRGen dispatches on it.
enum class BuiltinID {
  None, ///< a call of a function of the spec, or not checked yet
#define BUILTIN(ID, ...) ID,
#include "compiler/Frontend/Builtins.def"
};

/// Whether `id` is a metric over a whole split (rmse, r2): the runtime
/// makes it from statistics of each step, which MLIRGen returns as several
/// results of the model.
inline bool isSplitMetric(BuiltinID id) {
  return id == BuiltinID::Rmse || id == BuiltinID::R2;
}

} // namespace mbt

#endif // MBT_COMPILER_FRONTEND_BUILTINS_H
