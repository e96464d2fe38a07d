//===- RelativeDifference.h - the reference tests' distance -----*- C++ -*-===//
//
// max |a - b| / max |b|: how far a tensor of mbt's is from its reference,
// relative to the reference's largest element (0 when they are equal, even
// if both are all zeros).
//
//===----------------------------------------------------------------------===//
#ifndef MBT_TEST_UNIT_REFERENCE_RELATIVEDIFFERENCE_H
#define MBT_TEST_UNIT_REFERENCE_RELATIVEDIFFERENCE_H

#include <algorithm>
#include <cmath>
#include <vector>

namespace mbt::test {

inline double relativeDifference(const std::vector<double> &a,
                                 const std::vector<double> &b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return diff == 0 ? 0 : diff / scale;
}

} // namespace mbt::test

#endif // MBT_TEST_UNIT_REFERENCE_RELATIVEDIFFERENCE_H
