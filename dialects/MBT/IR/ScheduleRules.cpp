//===- ScheduleRules.cpp - the built-in learning-rate schedules -----------===//
#include "dialects/MBT/IR/ScheduleRules.h"

using namespace mlir::mbt;

static const ScheduleParam kStepParams[] = {{"step_size", std::nullopt, true},
                                            {"gamma", 0.1}};
static const ScheduleParam kExponentialParams[] = {{"gamma", std::nullopt}};
static const ScheduleParam kCosineParams[] = {{"total", std::nullopt, true},
                                              {"warmup", 0.0, false},
                                              {"min_factor", 0.0}};
static const ScheduleParam kLinearParams[] = {{"total", std::nullopt, true},
                                              {"warmup", 0.0, false},
                                              {"end_factor", 0.0}};
static const ScheduleParam kOneCycleParams[] = {{"total", std::nullopt, true},
                                                {"pct_start", 0.3},
                                                {"div_factor", 25.0},
                                                {"final_div_factor", 1e4}};

// The formulas are in SchedulePatterns.cpp (the generated code) and, as an
// independent reference, in test/unit/reference/TorchReferenceTest.cpp.
static const ScheduleRule kSchedules[] = {
    {"constant", {}},
    {"step", kStepParams},        // gamma^floor(s / step_size), torch StepLR
    {"exponential", kExponentialParams}, // gamma^s, torch ExponentialLR
    {"cosine", kCosineParams},    // warmup, then cosine to min_factor
    {"linear", kLinearParams},    // warmup, then linear to end_factor
    {"one_cycle", kOneCycleParams}, // torch OneCycleLR's lr (no momentum)
};

const ScheduleRule *mlir::mbt::lookupScheduleRule(llvm::StringRef name) {
  for (const ScheduleRule &rule : kSchedules)
    if (rule.name == name)
      return &rule;
  return nullptr;
}

llvm::ArrayRef<ScheduleRule> mlir::mbt::allScheduleRules() {
  return kSchedules;
}
