//===- ScheduleReference.h - schedules, written out -------------*- C++ -*-===//
//
// The factor each schedule of docs/language.md gives the learning rate,
// written from PyTorch's and transformers' definitions independently of the
// compiler's ScheduleRules, for the tests that replay training in LibTorch.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_TEST_UNIT_REFERENCE_SCHEDULEREFERENCE_H
#define MBT_TEST_UNIT_REFERENCE_SCHEDULEREFERENCE_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace mbt::test {

/// The schedule's factor after `s` scheduler steps, with parameters `p`
/// in the order of docs/language.md.
inline double scheduleFactor(const std::string &name,
                             const std::vector<double> &p, int64_t steps) {
  const double pi = 3.14159265358979323846;
  double s = static_cast<double>(steps);
  // PyTorch's StepLR: gamma ** (last_epoch // step_size). (LibTorch's C++
  // StepLR decays one step later than Python's, so it is not used here.)
  if (name == "step")
    return std::pow(p[1], std::floor(s / p[0]));
  if (name == "exponential") // torch ExponentialLR: gamma ** last_epoch
    return std::pow(p[0], s);
  if (name == "cosine" || name == "linear") {
    // transformers' get_{cosine,linear}_schedule_with_warmup, with a floor.
    double total = p[0], warmup = p[1], floor = p[2];
    if (s < warmup)
      return s / std::max(1.0, warmup);
    double progress =
        std::min((s - warmup) / std::max(1.0, total - warmup), 1.0);
    double shape = name == "cosine" ? 0.5 * (1.0 + std::cos(pi * progress))
                                    : 1.0 - progress;
    return floor + (1.0 - floor) * shape;
  }
  if (name == "one_cycle") {
    // torch OneCycleLR (anneal_strategy='cos', two phases) over max_lr.
    double total = p[0], initial = 1.0 / p[2], minimum = initial / p[3];
    double ends[2] = {p[1] * total - 1.0, total - 1.0};
    double starts[2] = {initial, 1.0}, targets[2] = {1.0, minimum};
    double start = 0;
    for (int phase = 0; phase < 2; ++phase) {
      if (s <= ends[phase] || phase == 1) {
        double pct = (s - start) / (ends[phase] - start);
        return targets[phase] + (starts[phase] - targets[phase]) / 2.0 *
                                    (std::cos(pi * pct) + 1.0);
      }
      start = ends[phase];
    }
  }
  ADD_FAILURE() << "no reference for schedule " << name;
  return 1.0;
}

} // namespace mbt::test

#endif
