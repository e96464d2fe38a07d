//===- OptimizerRules.cpp - the built-in optimizer update rules -----------===//
#include "dialects/MBT/IR/OptimizerRules.h"

using namespace mlir::mbt;

static const llvm::StringLiteral kSgdSlots[] = {"momentum_buffer"};
static const OptimizerHyper kSgdHyper[] = {
    {"lr", 0.01}, {"momentum", 0.0}, {"weight_decay", 0.0}};
static const llvm::StringLiteral kAdamSlots[] = {"exp_avg", "exp_avg_sq"};
static const OptimizerHyper kAdamHyper[] = {{"lr", 0.001},
                                            {"beta1", 0.9},
                                            {"beta2", 0.999},
                                            {"eps", 1e-8},
                                            {"weight_decay", 0.0}};

static const OptimizerRule kRules[] = {
    {"sgd", kSgdSlots, kSgdHyper},
    {"adam", kAdamSlots, kAdamHyper},
};

int OptimizerRule::hyperIndex(llvm::StringRef hyperName) const {
  for (auto [i, h] : llvm::enumerate(hyper))
    if (h.name == hyperName)
      return static_cast<int>(i);
  return -1;
}

const OptimizerRule *mlir::mbt::lookupOptimizerRule(llvm::StringRef name) {
  for (const OptimizerRule &rule : kRules)
    if (rule.name == name)
      return &rule;
  return nullptr;
}

llvm::ArrayRef<OptimizerRule> mlir::mbt::allOptimizerRules() { return kRules; }
