//===- InitRules.h - the built-in parameter initializers --------*- C++ -*-===//
//
// The one table of initializers: the arguments each kind takes, in the order
// #mbt.init holds and prints them, and which need a parameter's fans. The
// frontend checks `param w: f32[...] = INIT` against it, the verifier of
// #mbt.init its argument count and ranges, and the manifest writes the
// arguments by these names (docs/abi.md); the runtime draws the values.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_DIALECT_MBT_IR_INITRULES_H
#define MBT_DIALECT_MBT_IR_INITRULES_H

#include "dialects/MBT/IR/MBTEnums.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::mbt {

struct InitRule {
  InitKind kind;
  llvm::ArrayRef<llvm::StringLiteral> params;
  /// Computes fan-in and fan-out, so needs a parameter of rank >= 2.
  bool needsFans = false;
  /// Whether a .mbt spec may name it (`constant` starts the compiler's own
  /// buffers: a loss scale).
  bool inLanguage = true;

  /// The name the language, the IR and the manifest spell it with.
  llvm::StringRef name() const { return stringifyInitKind(kind); }
};

/// The rule of initializer `kind`.
const InitRule &getInitRule(InitKind kind);

/// Every initializer, for diagnostics that list the choices.
llvm::ArrayRef<InitRule> allInitRules();

} // namespace mlir::mbt

#endif
