//===- RoundingSpread.h - how far float32 may end from float64 --*- C++ -*-===//
//
// A float32 training run ends some distance from the float64 run of the
// same steps, and how far is partly luck. Every sum rounds; a trajectory
// that amplifies perturbations (a high learning rate, or Adam dividing
// gradients of eps's size by their own magnitude) grows those roundings
// along a few unstable directions, so the end distance is about the
// projection of one random rounding pattern on those directions times a
// gain. The projection can land near zero: in one case torch float32 ends
// 2.8e-6 from float64 under OpenBLAS's SkylakeX kernels and 3.9e-5 under
// its Prescott ones. A bound of a few times one run's distance therefore
// fails on whichever kernel makes that one run lucky.
//
// So a reference test runs an ensemble of float32 runs that differ only in
// rounding, in the manner of Monte Carlo arithmetic (Parker, 1997;
// Verificarlo): member 0 is torch as it is; member j takes each batch's
// rows in a permutation drawn from (j, step), so that every sum over the
// batch (weight and bias gradients, the mean loss, batch statistics) adds
// in another order, and rounds every gradient element to a random one of
// its neighbouring float32 values (relative noise up to 2^-23, the size of
// the differences between two float32 implementations of one step: mbt's
// glibc tanh against torch's Sleef one, FMA contraction or not). The
// mathematics is the same. The root mean square of the members' distances
// from float64 estimates the scale sigma of float32's distance under this
// machine's kernels, and mbt, one more float32 run of the same
// mathematics, must end within kSpreadFactor * sigma of float64.
//
// Why 4: if the end distance is |N(0, sigma^2)| (a one-dimensional
// projection, the worst case: a distance over many independent directions
// concentrates much more), mbt exceeds 4 sigma with probability 6e-5; the
// estimate of sigma from 8 members is within 30% of sigma with probability
// 0.95 (a chi distribution with 8 degrees of freedom), and even at 0.7
// sigma, 4 * 0.7 = 2.8 sigma is exceeded with probability 0.005. A real
// error — an off-by-one step count, a wrong bias correction or momentum —
// moves the parameters by 1e-3 to 1e-1 relative, two orders above such
// bounds (a few 1e-4 at most in these tests), and the absolute cap of
// kFloat32Cap holds even if every float32 run went wrong together.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_TEST_UNIT_REFERENCE_ROUNDINGSPREAD_H
#define MBT_TEST_UNIT_REFERENCE_ROUNDINGSPREAD_H

#include "mbt/runtime/Philox.h"
#include "mbt/runtime/Sampler.h"

#include <torch/types.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace mbt::test {

/// Float32 runs in a rounding ensemble, member 0 (the data order) included.
constexpr int kRoundingMembers = 8;
/// How many of the ensemble's root-mean-square distances from float64 a
/// float32 run of mbt's may end from float64.
constexpr double kSpreadFactor = 4;
/// Added to every float32 bound: where the trajectory does not amplify,
/// distances are a few float32 ulps, and their spread says little.
constexpr double kRoundingFloor = 1e-6;
/// No float32 run of these tests may end further than this from float64.
constexpr double kFloat32Cap = 1e-3;

/// The order in which ensemble member `member` takes the rows of a batch of
/// `rows` at step `step` (1-based): row r of its batch is row order[r] of
/// the data order's. Member 0 keeps the data order.
inline std::vector<int64_t> memberRowOrder(int member, int64_t step,
                                           int64_t rows) {
  if (member == 0) {
    std::vector<int64_t> identity(rows);
    for (int64_t r = 0; r < rows; ++r)
      identity[r] = r;
    return identity;
  }
  // The runtime's Philox permutation, keyed by the member and the step.
  return runtime::epochPermutation(rows, 0x5eed0000u + uint64_t(member),
                                   static_cast<uint32_t>(step));
}

/// `indices[0, rows)` in member `member`'s order at step `step`.
inline std::vector<int64_t> memberBatch(int member, int64_t step,
                                        const int64_t *indices, int64_t rows) {
  std::vector<int64_t> order = memberRowOrder(member, step, rows);
  std::vector<int64_t> batch(rows);
  for (int64_t r = 0; r < rows; ++r)
    batch[r] = indices[order[r]];
  return batch;
}

/// Member `member`'s last-bit rounding of the float32 gradients at step
/// `step` (1-based): element e of tensor t becomes the float32 nearest to
/// g * (1 + u * 2^-23), u uniform in [-1, 1) from Philox keyed by (member,
/// step, t, e). Member 0 keeps torch's gradients.
inline void perturbGradients(const std::vector<torch::Tensor> &params,
                             int member, int64_t step) {
  if (member == 0)
    return;
  for (size_t t = 0; t < params.size(); ++t) {
    torch::Tensor grad = params[t].grad();
    if (!grad.defined() || grad.scalar_type() != torch::kFloat32)
      continue;
    grad = grad.contiguous();
    float *g = grad.data_ptr<float>();
    for (int64_t e = 0; e < grad.numel(); ++e) {
      uint32_t bits = runtime::philox4x32x10(
          {static_cast<uint32_t>(e), static_cast<uint32_t>(t),
           static_cast<uint32_t>(step), 0x70756e64u},
          runtime::makePhiloxKey(0x5eed0000u + uint64_t(member)))[0];
      double u = 2.0 * runtime::uniformFloat(bits) - 1.0;
      g[e] = static_cast<float>(g[e] * (1.0 + u * 0x1p-23));
    }
    params[t].mutable_grad() = grad;
  }
}

/// The root mean square of the members' distances from float64.
inline double rootMeanSquare(const std::vector<double> &distances) {
  double sum = 0;
  for (double d : distances)
    sum += d * d;
  return distances.empty() ? 0 : std::sqrt(sum / distances.size());
}

/// How far a float32 run may end from float64, given the ensemble's
/// distances from it.
inline double float32Bound(const std::vector<double> &memberDistances) {
  return kSpreadFactor * rootMeanSquare(memberDistances) + kRoundingFloor;
}

} // namespace mbt::test

#endif // MBT_TEST_UNIT_REFERENCE_ROUNDINGSPREAD_H
