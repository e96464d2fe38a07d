//===- LossScaleRules.h - a dynamic loss scale's settings -------*- C++ -*-===//
//
// The settings of a dynamic loss scale (precision = f16), checked the same
// way by the front end (the sweep's `loss_scale`), the sweep op and
// mbt.update_loss_scale: what torch.amp.GradScaler accepts.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_DIALECT_MBT_IR_LOSSSCALERULES_H
#define MBT_DIALECT_MBT_IR_LOSSSCALERULES_H

#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

namespace mlir::mbt {

/// The buffers mbt-autocast gives a model under a loss scale (the model's
/// state, like batch norm's running statistics): the role that the
/// argument attribute `mbt.loss_scale` names, and the buffer's name.
struct LossScaleBuffer {
  llvm::StringLiteral role;
  llvm::StringLiteral name;
};
inline constexpr LossScaleBuffer kLossScaleBuffers[] = {
    {"scale", "amp.loss_scale"},
    {"good_steps", "amp.good_steps"},
    {"skipped_steps", "amp.skipped_steps"}};

/// GradScaler's defaults.
struct LossScaleSettings {
  double initScale = 65536.0;
  double growthFactor = 2.0;
  double backoffFactor = 0.5;
  int64_t growthInterval = 2000;
};

/// What is wrong with `settings` (the name of the setting first), or
/// nothing.
inline std::optional<std::string>
lossScaleProblem(const LossScaleSettings &settings) {
  auto text = [](double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%g", v);
    return std::string(buffer);
  };
  // The scale is kept as an f32, as GradScaler's is.
  if (!(settings.initScale > 0.0) ||
      !(settings.initScale <= std::numeric_limits<float>::max()))
    return "init_scale must be positive and an f32 (at most 3.4e38), got " +
           text(settings.initScale);
  if (!(settings.growthFactor > 1.0) || !std::isfinite(settings.growthFactor))
    return "growth_factor must exceed 1, got " + text(settings.growthFactor);
  if (!(settings.backoffFactor > 0.0 && settings.backoffFactor < 1.0))
    return "backoff_factor must be in (0, 1), got " +
           text(settings.backoffFactor);
  if (settings.growthInterval < 1)
    return "growth_interval must be positive, got " +
           std::to_string(settings.growthInterval);
  return std::nullopt;
}

} // namespace mlir::mbt

#endif // MBT_DIALECT_MBT_IR_LOSSSCALERULES_H
