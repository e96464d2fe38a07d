//===- ScheduleRules.cpp - the built-in learning-rate schedules -----------===//
#include "dialects/MBT/IR/ScheduleRules.h"

#include <cassert>
#include <iterator>

using namespace mlir::mbt;

static const ScheduleParam kStepParams[] = {{"step_size", std::nullopt, true},
                                            {"gamma", 0.1}};
static const ScheduleParam kExponentialParams[] = {{"gamma", std::nullopt}};
static const ScheduleParam kCosineParams[] = {
    {"total", std::nullopt, true}, {"warmup", 0.0, false}, {"min_factor", 0.0}};
static const ScheduleParam kLinearParams[] = {
    {"total", std::nullopt, true}, {"warmup", 0.0, false}, {"end_factor", 0.0}};
static const ScheduleParam kOneCycleParams[] = {{"total", std::nullopt, true},
                                                {"pct_start", 0.3},
                                                {"div_factor", 25.0},
                                                {"final_div_factor", 1e4}};

// The formulas are in SchedulePatterns.cpp (the generated code) and, as an
// independent reference, in test/unit/reference/TorchReferenceTest.cpp.
static const ScheduleRule kSchedules[] = {
    {Schedule::constant, {}},
    {Schedule::step, kStepParams}, // gamma^floor(s / step_size), torch StepLR
    {Schedule::exponential, kExponentialParams}, // gamma^s, ExponentialLR
    {Schedule::cosine, kCosineParams},      // warmup, then cosine to min_factor
    {Schedule::linear, kLinearParams},      // warmup, then linear to end_factor
    {Schedule::one_cycle, kOneCycleParams}, // OneCycleLR's lr (no momentum)
};
static_assert(std::size(kSchedules) == getMaxEnumValForSchedule() + 1,
              "one rule per Schedule enumerator");

const ScheduleRule &mlir::mbt::getScheduleRule(Schedule kind) {
  const ScheduleRule &rule = kSchedules[static_cast<uint32_t>(kind)];
  assert(rule.kind == kind && "kSchedules is in enumerator order");
  return rule;
}

const ScheduleRule *mlir::mbt::lookupScheduleRule(llvm::StringRef name) {
  std::optional<Schedule> kind = symbolizeSchedule(name);
  return kind ? &getScheduleRule(*kind) : nullptr;
}

llvm::ArrayRef<ScheduleRule> mlir::mbt::allScheduleRules() {
  return kSchedules;
}
