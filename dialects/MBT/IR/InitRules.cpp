//===- InitRules.cpp - the built-in parameter initializers ----------------===//
#include "dialects/MBT/IR/InitRules.h"

#include <cassert>
#include <iterator>

using namespace mlir::mbt;

static const llvm::StringLiteral kConstantParams[] = {"value"};
static const llvm::StringLiteral kNormalParams[] = {"mean", "std"};
static const llvm::StringLiteral kUniformParams[] = {"low", "high"};

static const InitRule kInitializers[] = {
    {InitKind::zeros, {}},
    {InitKind::ones, {}},
    {InitKind::constant, kConstantParams, false, /*inLanguage=*/false},
    {InitKind::normal, kNormalParams},
    {InitKind::uniform, kUniformParams},
    {InitKind::xavier_uniform, {}, /*needsFans=*/true},
    {InitKind::kaiming_uniform, {}, /*needsFans=*/true},
};
static_assert(std::size(kInitializers) == getMaxEnumValForInitKind() + 1,
              "one rule per InitKind enumerator");

const InitRule &mlir::mbt::getInitRule(InitKind kind) {
  const InitRule &rule = kInitializers[static_cast<uint32_t>(kind)];
  assert(rule.kind == kind && "kInitializers is in enumerator order");
  return rule;
}

llvm::ArrayRef<InitRule> mlir::mbt::allInitRules() { return kInitializers; }
