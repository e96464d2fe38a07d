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
// in another order, and moves every intermediate value of its forward pass
// (and so of the backward pass through it) and every gradient element to
// a random one of its neighbouring float32 values (relative noise up to
// 2^-23: the size of the differences between two float32 implementations
// of one step, mbt's glibc tanh and exp against torch's Sleef ones, FMA
// contraction or not). The mathematics is the same. The root mean square
// of the members' distances from float64 estimates the scale sigma of float32's
// distance under this machine's kernels, and mbt, one more float32 run of the
// same mathematics, must end within kSpreadFactor * sigma of float64.
//
// Why 4: take the pessimistic model in which each run's end distance is
// |N(0, sigma^2)|, a projection on one direction (a distance over many
// independent directions concentrates far more). Then mbt's distance over
// the 8 members' root mean square is |t| with 8 degrees of freedom, which
// exceeds 4 with probability 0.004 per parameter tensor. The model is far
// too pessimistic: in every float32 comparison of these tests, under
// OpenBLAS's SkylakeX, Haswell, Prescott, Sandybridge and Nehalem kernels,
// mbt ends within 1.6 root mean squares (0.4 of its bound). A real error
// (an off-by-one step count, a wrong bias correction or momentum) moves the
// parameters by 1e-3 to 1e-1, two to three orders above these bounds (a few
// 1e-4 at most), and the absolute cap kFloat32Cap holds even if every
// float32 run went wrong together.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_TEST_UNIT_REFERENCE_ROUNDINGSPREAD_H
#define MBT_TEST_UNIT_REFERENCE_ROUNDINGSPREAD_H

#include "mbt/common/Philox.h"
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
      uint32_t bits = mbt::philox4x32x10(
          {static_cast<uint32_t>(e), static_cast<uint32_t>(t),
           static_cast<uint32_t>(step), 0x70756e64u},
          mbt::makePhiloxKey(0x5eed0000u + uint64_t(member)))[0];
      double u = 2.0 * mbt::uniformFloat(bits) - 1.0;
      g[e] = static_cast<float>(g[e] * (1.0 + u * 0x1p-23));
    }
    params[t].mutable_grad() = grad;
  }
}

/// Member `member`'s last-bit rounding of an intermediate value at step
/// `step` (1-based): each element of `t` times the float32 nearest to
/// 1 + u * 2^-23, u uniform in [-1, 1) from Philox keyed by (member, step,
/// site, element), so each element moves to a neighbouring float32 value
/// or stays; the gradient that flows back through it moves alike. Member 0
/// (and any tensor that is not float32) gets `t` itself.
inline torch::Tensor jitter(const torch::Tensor &t, int member, int64_t step,
                            uint32_t site) {
  if (member == 0 || t.scalar_type() != torch::kFloat32)
    return t;
  std::vector<float> factors(t.numel());
  for (size_t e = 0; e < factors.size(); ++e) {
    uint32_t bits = mbt::philox4x32x10(
        {static_cast<uint32_t>(e), site, static_cast<uint32_t>(step),
         0x6a697474u},
        mbt::makePhiloxKey(0x5eed0000u + uint64_t(member)))[0];
    double u = 2.0 * mbt::uniformFloat(bits) - 1.0;
    factors[e] = static_cast<float>(1.0 + u * 0x1p-23);
  }
  return t *
         torch::from_blob(factors.data(), t.sizes(), torch::kFloat32).clone();
}

/// The intermediate values of one member's step, rounded by jitter at sites
/// numbered in the order the forward pass reaches them.
class MemberRounding {
public:
  MemberRounding(int member, int64_t step) : member(member), step(step) {}
  torch::Tensor operator()(const torch::Tensor &t) {
    return jitter(t, member, step, site++);
  }

private:
  int member;
  int64_t step;
  uint32_t site = 0;
};

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
