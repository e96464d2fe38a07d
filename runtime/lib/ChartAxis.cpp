//===- ChartAxis.cpp - Round ticks and the range a chart shows ------------===//

#include "mbt/runtime/ChartAxis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace mbt {
namespace runtime {

namespace {

/// A step of 1, 2 or 5 times 10^exponent, kept apart so that tick k is
/// k * mantissa / 10^-exponent: the double nearest the decimal, not an
/// accumulated sum.
struct Step {
  int mantissa = 1, exponent = 0;
  double value() const { return mantissa * std::pow(10.0, exponent); }
  double tick(long long k) const {
    double m = double(k) * mantissa;
    return exponent >= 0 ? m * std::pow(10.0, exponent)
                         : m / std::pow(10.0, -exponent);
  }
};

/// The round step nearest `raw` (Heckbert: thresholds 1.5, 3 and 7).
Step niceStep(double raw) {
  int exponent = int(std::floor(std::log10(raw)));
  double m = raw / std::pow(10.0, exponent);
  Step step{m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10, exponent};
  if (step.mantissa == 10)
    step = {1, exponent + 1};
  return step;
}

/// 10^k exactly as a decimal literal would give it.
double powerOfTen(int k) {
  return k >= 0 ? std::pow(10.0, k) : 1.0 / std::pow(10.0, -k);
}

void labelLog(Axis &axis) {
  for (double t : axis.ticks)
    axis.labels.push_back(fmt::format("{:g}", t));
}

} // namespace

double Axis::fraction(double value) const {
  if (scale == Scale::Log)
    return (std::log10(value) - std::log10(lo)) /
           (std::log10(hi) - std::log10(lo));
  return (value - lo) / (hi - lo);
}

std::string tickLabel(double value, double step) {
  if (value == 0)
    return "0";
  if (step < 1e-6 || step >= 1e6) {
    int digits =
        std::max(0, int(std::floor(std::log10(std::abs(value)) + 1e-9)) -
                        int(std::floor(std::log10(step) + 1e-9)));
    return fmt::format("{:.{}e}", value, std::min(digits, 15));
  }
  int decimals = std::max(0, int(std::ceil(-std::log10(step) - 1e-9)));
  return fmt::format("{:.{}f}", value, decimals);
}

Axis linearAxis(double lo, double hi, int target) {
  if (!(hi > lo)) {
    double half = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= half;
    hi += half;
  }
  Step step = niceStep((hi - lo) / std::max(target, 1));
  // The tolerance keeps a bound that is a tick (up to rounding) one.
  long long first = (long long)std::floor(lo / step.value() + 1e-7);
  long long last = (long long)std::ceil(hi / step.value() - 1e-7);
  Axis axis;
  for (long long k = first; k <= last; ++k) {
    axis.ticks.push_back(step.tick(k));
    axis.labels.push_back(tickLabel(axis.ticks.back(), step.value()));
  }
  axis.lo = axis.ticks.front();
  axis.hi = axis.ticks.back();
  return axis;
}

Axis logAxis(double lo, double hi, int target) {
  if (!(hi > lo))
    hi = lo * 10;
  Axis axis;
  axis.scale = Axis::Scale::Log;
  // The span is the data's, a little wider; the ticks are those inside it.
  const double pad = std::pow(hi / lo, 0.03);
  axis.lo = lo / pad;
  axis.hi = hi * pad;
  int a = int(std::floor(std::log10(axis.lo)));
  int b = int(std::ceil(std::log10(axis.hi)));
  if (std::log10(hi / lo) > 2.2) {
    // Powers of ten, every k-th one where the span holds many.
    int every =
        std::max(1, int(std::ceil(std::log10(hi / lo) / target - 1e-9)));
    for (int k = int(std::ceil(double(a) / every)) * every; k <= b; k += every)
      if (powerOfTen(k) >= axis.lo && powerOfTen(k) <= axis.hi)
        axis.ticks.push_back(powerOfTen(k));
    labelLog(axis);
    return axis;
  }
  // 1, 2 and 5 times the powers of ten inside the span.
  for (int k = a; k <= b; ++k)
    for (int m : {1, 2, 5})
      if (double v = m * powerOfTen(k); v >= axis.lo && v <= axis.hi)
        axis.ticks.push_back(v);
  if (axis.ticks.size() >= 3) {
    labelLog(axis);
    return axis;
  }
  // Within a factor of a few: round linear steps, on the log scale.
  Axis linear = linearAxis(lo, hi, target);
  axis.ticks.clear();
  for (size_t i = 0; i < linear.ticks.size(); ++i)
    if (linear.ticks[i] > 0) {
      axis.ticks.push_back(linear.ticks[i]);
      axis.labels.push_back(linear.labels[i]);
    }
  axis.lo = std::min(lo, axis.ticks.front());
  axis.hi = std::max(hi, axis.ticks.back());
  return axis;
}

ShownRange shownRange(const std::vector<double> &values, bool logScale,
                      WorseSide worse) {
  std::vector<double> t;
  for (double v : values)
    if (std::isfinite(v) && (!logScale || v > 0))
      t.push_back(logScale ? std::log10(v) : v);
  ShownRange range;
  if (t.empty())
    return range;
  range.empty = false;
  std::sort(t.begin(), t.end());
  auto quantile = [&](double q) {
    double at = q * double(t.size() - 1);
    size_t i = size_t(at);
    double w = at - double(i);
    return i + 1 < t.size() ? t[i] * (1 - w) + t[i + 1] * w : t[i];
  };
  double q1 = quantile(0.25), q3 = quantile(0.75), iqr = q3 - q1;
  // Tukey's far-out fence, on the worse side only, and never nearer than a
  // decade on a log axis. Where half the values are one value there is no
  // spread to measure and nothing is clipped.
  double reach = logScale ? std::max(3 * iqr, 1.0) : 3 * iqr;
  double fenceLo = -std::numeric_limits<double>::infinity(),
         fenceHi = std::numeric_limits<double>::infinity();
  if (iqr > 0) {
    if (worse == WorseSide::High)
      fenceHi = q3 + reach;
    else
      fenceLo = q1 - reach;
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  double farthest = 0;
  for (double v : t) {
    if (v < fenceLo || v > fenceHi) {
      if (range.clipped++ == 0 || std::abs(v - q1) > std::abs(farthest - q1))
        farthest = v;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  auto back = [&](double v) { return logScale ? std::pow(10.0, v) : v; };
  range.lo = back(lo);
  range.hi = back(hi);
  range.farthest = back(farthest);
  return range;
}

} // namespace runtime
} // namespace mbt
