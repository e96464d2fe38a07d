//===- AttentionKernelTest.cpp - mbt_rt_attention_f32 and its adjoint -----===//
//
// The attention kernels against the attention computed in double, every
// element within a first-order bound on the f32 computation's error: a
// score's error (a sum of headSize products, then the scale) moves each
// weight by at most twice the row's largest score error, relatively; the
// exponential, the sum, the reciprocal and the product add a few units of
// rounding u = 2^-24 and gamma_T = T u; each product of the result and
// the adjoint adds gamma_n times the sum of its terms' magnitudes, and its
// operands' errors times their partners' magnitudes. Cases cover head
// sizes the kernels unroll (8, 16) and those they do not (6, 24), causal
// and not, lengths that are not a multiple of 16, padding in the middle
// of a sequence and a sequence of padding alone, and operands that are
// strided views (query, key and value as columns of one buffer). Then a
// sequence's bits alone and in a longer, padded batch, the bf16 kernels'
// rounding of their operands and results, and malformed calls.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Kernels.h"

#include "DeterministicValues.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

using namespace mbt;
using namespace mbt::runtime;
using mbt::test::bf16Reference;
using mbt::test::filled;

namespace {

constexpr double kUnit = 1.0 / (1 << 24);

struct Case {
  const char *name;
  int64_t sequences, length, heads, headSize;
  bool causal;
  bool strided; // query, key and value as column slices of one buffer
};

/// A call's operands: query, key, value and grad [S, T, D], the tokens
/// [S, T], and the results. `lengths[s]` real tokens, but every fifth
/// position from the third on is padding too, and the last sequence is
/// padding alone.
struct Problem {
  Case c;
  int64_t features;
  std::vector<float> qkv, grads, out, dQuery, dKey, dValue;
  std::vector<int32_t> ids;
  MemRef3F q, k, v, g, o, dq, dk, dv;
  MemRef2I tokens;

  explicit Problem(const Case &c) : c(c), features(c.heads * c.headSize) {
    int64_t s = c.sequences, t = c.length, d = features;
    // [S, T, 3D + 1] with a gap, or three [S, T, D] blocks.
    int64_t width = c.strided ? 3 * d + 1 : d;
    int64_t blocks = c.strided ? 1 : 3;
    qkv = filled(blocks * s * t * width, 17);
    for (int64_t i = 0; i < 3; ++i) {
      MemRef3F &ref = i == 0 ? q : i == 1 ? k : v;
      ref = makeDenseMemRef<float, 3>(qkv.data(), {s, t, d});
      ref.strides[0] = t * width;
      ref.strides[1] = width;
      ref.offset = c.strided ? i * d : i * s * t * d;
    }
    grads = filled(s * t * d, 29);
    g = makeDenseMemRef<float, 3>(grads.data(), {s, t, d});
    for (std::vector<float> *r : {&out, &dQuery, &dKey, &dValue})
      r->assign(s * t * d, -7.0f);
    o = makeDenseMemRef<float, 3>(out.data(), {s, t, d});
    dq = makeDenseMemRef<float, 3>(dQuery.data(), {s, t, d});
    dk = makeDenseMemRef<float, 3>(dKey.data(), {s, t, d});
    dv = makeDenseMemRef<float, 3>(dValue.data(), {s, t, d});
    ids.assign(s * t, 0);
    for (int64_t seq = 0; seq < s; ++seq) {
      if (s > 1 && seq == s - 1)
        break; // padding alone
      int64_t real = std::max<int64_t>(1, t - seq * 3);
      for (int64_t i = 0; i < real; ++i)
        ids[seq * t + i] = (i >= 2 && i % 5 == 2) ? 0 : int32_t(1 + i % 200);
    }
    tokens = makeDenseMemRef<int32_t, 2>(ids.data(), {s, t});
  }

  float at(const MemRef3F &r, int64_t s, int64_t t, int64_t c) const {
    return r.data[r.offset + s * r.strides[0] + t * r.strides[1] +
                  c * r.strides[2]];
  }
  bool real(int64_t s, int64_t j) const { return ids[s * c.length + j] != 0; }
  bool allowed(int64_t s, int64_t i, int64_t j) const {
    return real(s, j) && (!c.causal || j <= i);
  }

  void forward(bool bf16 = false) {
    (bf16 ? _mlir_ciface_mbt_rt_attention_f32_bf16
          : _mlir_ciface_mbt_rt_attention_f32)(&q, &k, &v, &tokens, &o, c.heads,
                                               c.causal);
  }
  void adjoint(bool bf16 = false) {
    (bf16 ? _mlir_ciface_mbt_rt_attention_grad_f32_bf16
          : _mlir_ciface_mbt_rt_attention_grad_f32)(
        &q, &k, &v, &tokens, &g, &dq, &dk, &dv, c.heads, c.causal);
  }
};

/// One value in double and the bound on its f32 error.
struct Bounded {
  double value = 0, bound = 0;
};

/// The attention of one head of one sequence in double, with the bounds.
struct HeadReference {
  // [T][T] weights and their relative error bound per row.
  std::vector<std::vector<double>> p;
  std::vector<double> weightError;
  std::vector<std::vector<Bounded>> out, dq, dk, dv; // [T][hd]

  HeadReference(const Problem &pr, int64_t s, int64_t h) {
    const Case &c = pr.c;
    int64_t t = c.length, hd = c.headSize;
    double scale = 1.0 / std::sqrt(double(hd));
    double gammaHd = hd * kUnit, gammaT = t * kUnit;
    auto col = [&](int64_t e) { return h * hd + e; };
    p.assign(t, std::vector<double>(t, 0.0));
    weightError.assign(t, 0.0);
    auto zeros = [&] {
      return std::vector<std::vector<Bounded>>(t, std::vector<Bounded>(hd));
    };
    out = dq = dk = dv = zeros();
    std::vector<std::vector<double>> dp(t, std::vector<double>(t, 0.0)),
        dpError = dp, ds = dp, dsError = dp;
    for (int64_t i = 0; i < t; ++i) {
      std::vector<double> score(t, 0.0);
      double highest = -INFINITY, scoreError = 0;
      for (int64_t j = 0; j < t; ++j) {
        if (!pr.allowed(s, i, j))
          continue;
        double dot = 0, magnitude = 0;
        for (int64_t e = 0; e < hd; ++e) {
          double term = double(pr.at(pr.q, s, i, col(e))) *
                        double(pr.at(pr.k, s, j, col(e)));
          dot += term;
          magnitude += std::fabs(term);
        }
        score[j] = dot * scale;
        highest = std::max(highest, score[j]);
        // The sum's rounding, the product by the scale and the scale's
        // own rounding to f32.
        scoreError =
            std::max(scoreError, (gammaHd + 2 * kUnit) * magnitude * scale);
      }
      if (highest == -INFINITY)
        continue; // no allowed key: weights, result and adjoint 0
      double sum = 0;
      for (int64_t j = 0; j < t; ++j)
        if (pr.allowed(s, i, j))
          sum += std::exp(score[j] - highest);
      double spread = 0; // the subtraction's rounding of the exponent
      for (int64_t j = 0; j < t; ++j)
        if (pr.allowed(s, i, j)) {
          p[i][j] = std::exp(score[j] - highest) / sum;
          spread = std::max(spread, kUnit * std::fabs(score[j] - highest));
        }
      weightError[i] = 2 * (scoreError + spread) + gammaT + 10 * kUnit;
    }
    for (int64_t i = 0; i < t; ++i)
      for (int64_t e = 0; e < hd; ++e) {
        double value = 0, magnitude = 0;
        for (int64_t j = 0; j < t; ++j) {
          double term = p[i][j] * pr.at(pr.v, s, j, col(e));
          value += term;
          magnitude += std::fabs(term);
        }
        out[i][e] = {value, (weightError[i] + gammaT + kUnit) * magnitude};
      }
    // The adjoint, its errors propagated to first order.
    for (int64_t i = 0; i < t; ++i) {
      double rowDot = 0, rowDotError = 0, rowDotMagnitude = 0;
      for (int64_t j = 0; j < t; ++j) {
        double magnitude = 0;
        for (int64_t e = 0; e < hd; ++e) {
          double term = double(pr.at(pr.g, s, i, col(e))) *
                        double(pr.at(pr.v, s, j, col(e)));
          dp[i][j] += term;
          magnitude += std::fabs(term);
        }
        dpError[i][j] = gammaHd * magnitude;
        rowDot += p[i][j] * dp[i][j];
        rowDotMagnitude += p[i][j] * std::fabs(dp[i][j]);
        rowDotError += weightError[i] * p[i][j] * std::fabs(dp[i][j]) +
                       p[i][j] * dpError[i][j];
      }
      rowDotError += gammaT * rowDotMagnitude;
      for (int64_t j = 0; j < t; ++j) {
        double diff = dp[i][j] - rowDot;
        ds[i][j] = p[i][j] * diff * scale;
        dsError[i][j] = scale * (weightError[i] * p[i][j] * std::fabs(diff) +
                                 p[i][j] * (dpError[i][j] + rowDotError) +
                                 4 * kUnit * p[i][j] * std::fabs(diff));
      }
    }
    auto product = [&](auto weight, auto weightErr, auto operand) {
      double value = 0, error = 0, magnitude = 0;
      for (int64_t n = 0; n < t; ++n) {
        double x = operand(n);
        value += weight(n) * x;
        magnitude += std::fabs(weight(n) * x);
        error += weightErr(n) * std::fabs(x);
      }
      return Bounded{value, error + (gammaT + kUnit) * magnitude};
    };
    for (int64_t a = 0; a < t; ++a)
      for (int64_t e = 0; e < hd; ++e) {
        dq[a][e] = product(
            [&](int64_t j) { return ds[a][j]; },
            [&](int64_t j) { return dsError[a][j]; },
            [&](int64_t j) { return double(pr.at(pr.k, s, j, col(e))); });
        dk[a][e] = product(
            [&](int64_t i) { return ds[i][a]; },
            [&](int64_t i) { return dsError[i][a]; },
            [&](int64_t i) { return double(pr.at(pr.q, s, i, col(e))); });
        dv[a][e] = product(
            [&](int64_t i) { return p[i][a]; },
            [&](int64_t i) { return weightError[i] * p[i][a]; },
            [&](int64_t i) { return double(pr.at(pr.g, s, i, col(e))); });
      }
  }
};

/// Every element of `got` within its bound of the reference `want`.
void expectWithin(const Problem &pr, const MemRef3F &got,
                  std::vector<std::vector<Bounded>> HeadReference::*want,
                  const char *what) {
  for (int64_t s = 0; s < pr.c.sequences; ++s)
    for (int64_t h = 0; h < pr.c.heads; ++h) {
      HeadReference ref(pr, s, h);
      for (int64_t i = 0; i < pr.c.length; ++i)
        for (int64_t e = 0; e < pr.c.headSize; ++e) {
          Bounded b = (ref.*want)[i][e];
          float value = pr.at(got, s, i, h * pr.c.headSize + e);
          ASSERT_LE(std::fabs(value - b.value), b.bound)
              << what << " of sequence " << s << ", head " << h << ", row " << i
              << ", column " << e << ": " << value << " against " << b.value;
        }
    }
}

/// A case on one version of the kernels' code: the host's widest ("") or
/// a narrower one (MBT_ATTENTION_CODE), where the CPU runs it.
class AttentionKernelTest
    : public ::testing::TestWithParam<std::tuple<Case, std::string>> {
protected:
  void SetUp() override {
    const std::string &code = std::get<1>(GetParam());
    if (code.empty())
      return;
    setenv("MBT_ATTENTION_CODE", code.c_str(), 1);
    // A version this CPU cannot run is an error, and the widest runs.
    Problem probe({"probe", 1, 1, 1, 8, true, false});
    probe.forward();
    if (!takeKernelError().empty())
      GTEST_SKIP() << "this CPU does not run " << code;
  }
  void TearDown() override { unsetenv("MBT_ATTENTION_CODE"); }
  const Case &shape() const { return std::get<0>(GetParam()); }
};

TEST_P(AttentionKernelTest, ForwardWithinTheBoundOfDouble) {
  Problem pr(shape());
  pr.forward();
  EXPECT_EQ(takeKernelError(), "");
  expectWithin(pr, pr.o, &HeadReference::out, "result");
}

TEST_P(AttentionKernelTest, AdjointWithinTheBoundOfDouble) {
  Problem pr(shape());
  pr.adjoint();
  EXPECT_EQ(takeKernelError(), "");
  expectWithin(pr, pr.dq, &HeadReference::dq, "dquery");
  expectWithin(pr, pr.dk, &HeadReference::dk, "dkey");
  expectWithin(pr, pr.dv, &HeadReference::dv, "dvalue");
}

// The padding-alone sequence (the last) has result 0, and passes back 0.
TEST_P(AttentionKernelTest, PaddingAloneGivesZeros) {
  Problem pr(shape());
  if (pr.c.sequences < 2)
    GTEST_SKIP() << "one sequence, with real tokens";
  pr.forward();
  pr.adjoint();
  int64_t last = pr.c.sequences - 1;
  for (const MemRef3F *r : {&pr.o, &pr.dq, &pr.dk, &pr.dv})
    for (int64_t i = 0; i < pr.c.length; ++i)
      for (int64_t col = 0; col < pr.features; ++col)
        ASSERT_EQ(pr.at(*r, last, i, col), 0.0f);
}

/// A NaN whose low 16 bits are not all 0 (signalling, negative): the
/// rounding to bf16 must keep it a NaN, where a carry out of its low half
/// without the NaN case would give -inf.
float lowBitsNaN() {
  const uint32_t bits = 0xFF800001u;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// A NaN in a value reaches each result whose row weighs that value, and a
// NaN in the incoming gradient each dvalue of a key its row sees, in f32
// and bf16 (where the packing's rounding must keep it a NaN), and no other
// column. (A masked key's NaN reaches its chunk's rows too, as 0 * NaN
// does in the product of weights and values of any implementation.)
TEST_P(AttentionKernelTest, NaNOperandsReachTheResultsThatReadThem) {
  Problem shape0(shape());
  if (shape0.c.length <= 5)
    GTEST_SKIP() << "needs key 3 and row 5, both real";
  const int64_t key = 3, row = 5;
  for (bool bf16 : {false, true}) {
    Problem fwd(shape()), adj(shape());
    fwd.qkv[fwd.v.offset + key * fwd.v.strides[1]] = lowBitsNaN();
    adj.grads[row * adj.g.strides[1] + 1] = lowBitsNaN();
    fwd.forward(bf16);
    adj.adjoint(bf16);
    EXPECT_EQ(takeKernelError(), "");
    for (int64_t i = 0; i < fwd.c.length; ++i) {
      if (!fwd.real(0, i))
        continue;
      if (fwd.allowed(0, i, key))
        EXPECT_TRUE(std::isnan(fwd.at(fwd.o, 0, i, 0)))
            << (bf16 ? "bf16" : "f32") << " result row " << i;
      EXPECT_TRUE(std::isfinite(fwd.at(fwd.o, 0, i, 1))) << i;
      if (adj.allowed(0, row, i))
        EXPECT_TRUE(std::isnan(adj.at(adj.dv, 0, i, 1)))
            << (bf16 ? "bf16" : "f32") << " dvalue row " << i;
      EXPECT_TRUE(std::isfinite(adj.at(adj.dv, 0, i, 0))) << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AttentionKernelTest,
    ::testing::Combine(
        ::testing::Values(Case{"HeadsOf8Causal", 3, 37, 4, 8, true, false},
                          Case{"HeadsOf8Strided", 2, 19, 2, 8, true, true},
                          Case{"HeadsOf16", 3, 50, 2, 16, false, false},
                          Case{"HeadsOf6Causal", 3, 21, 3, 6, true, true},
                          Case{"HeadsOf24Causal", 2, 40, 2, 24, true, false},
                          Case{"OneToken", 2, 1, 2, 8, true, false},
                          Case{"Long", 2, 130, 1, 8, true, false}),
        ::testing::Values(std::string(), "x86-64-v3", "baseline")),
    [](const auto &info) {
      std::string code = std::get<1>(info.param);
      std::replace(code.begin(), code.end(), '-', '_');
      return std::string(std::get<0>(info.param).name) +
             (code.empty() ? "" : "_" + code);
    });

/// Sequence 0's rows at its real positions from a call of `batch`
/// sequences padded to `length`, its grad 0 at the padding (as a loss that
/// ignores the padding gives).
std::vector<float> sequenceZeroRows(int64_t batch, int64_t length, bool bf16,
                                    int64_t real) {
  Problem pr({"bits", batch, length, 4, 8, true, false});
  // Sequence 0 has the same real tokens and values whatever the padding.
  for (int64_t i = 0; i < length; ++i) {
    pr.ids[i] = i < real ? int32_t(1 + i) : 0;
    for (int64_t col = 0; col < pr.features; ++col) {
      float seed = float(i * pr.features + col);
      float *q = &pr.qkv[pr.q.offset + i * pr.q.strides[1] + col];
      float *k = &pr.qkv[pr.k.offset + i * pr.k.strides[1] + col];
      float *v = &pr.qkv[pr.v.offset + i * pr.v.strides[1] + col];
      *q = std::sin(seed);
      *k = std::cos(seed * 0.7f);
      *v = std::sin(seed * 1.3f);
      pr.grads[i * pr.features + col] = i < real ? std::cos(seed * 0.3f) : 0;
    }
  }
  pr.forward(bf16);
  pr.adjoint(bf16);
  std::vector<float> rows;
  for (const MemRef3F *r : {&pr.o, &pr.dq, &pr.dk, &pr.dv})
    for (int64_t i = 0; i < real; ++i)
      for (int64_t col = 0; col < pr.features; ++col)
        rows.push_back(pr.at(*r, 0, i, col));
  return rows;
}

// A sequence's rows at its real positions do not depend on how far its
// step pads it, nor on the other sequences: alone and unpadded, the same
// bits as padded to 53 among five.
TEST(AttentionKernelBits, ASequenceGetsItsBitsAloneAndInAPaddedBatch) {
  for (bool bf16 : {false, true}) {
    std::vector<float> alone = sequenceZeroRows(1, 35, bf16, 35);
    std::vector<float> batched = sequenceZeroRows(5, 53, bf16, 35);
    ASSERT_EQ(alone.size(), batched.size());
    EXPECT_EQ(
        std::memcmp(alone.data(), batched.data(), alone.size() * sizeof(float)),
        0)
        << (bf16 ? "bf16" : "f32");
  }
}

/// Whether `x` is a bf16 value (its low 16 bits 0).
bool isBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0xffffu) == 0;
}

// The bf16 kernels round their products' results to bf16, and stay
// within bf16's rounding of the f32 kernels: a result and an adjoint
// within a few units of 2^-8 of the magnitudes involved.
TEST(AttentionKernelBits, Bf16KernelsRoundTheirResults) {
  Problem f32({"f32", 3, 37, 4, 8, true, false});
  Problem bf16({"bf16", 3, 37, 4, 8, true, false});
  f32.forward();
  f32.adjoint();
  bf16.forward(true);
  bf16.adjoint(true);
  EXPECT_EQ(takeKernelError(), "");
  int64_t differ = 0;
  for (int64_t n = 0; n < int64_t(f32.out.size()); ++n) {
    ASSERT_TRUE(isBf16(bf16.out[n]) && isBf16(bf16.dQuery[n]) &&
                isBf16(bf16.dKey[n]) && isBf16(bf16.dValue[n]))
        << n;
    EXPECT_NEAR(bf16.out[n], f32.out[n], 0.05) << n;
    EXPECT_NEAR(bf16.dQuery[n], f32.dQuery[n], 0.05) << n;
    differ += bf16.out[n] != f32.out[n];
  }
  EXPECT_GT(differ, 0) << "the bf16 kernel computed in f32";
}

// The bf16 kernels round the operands they read: on query, key, value and
// grad rounded to bf16 beforehand, the same bits as on the values
// themselves.
TEST(AttentionKernelBits, Bf16KernelsRoundTheirOperands) {
  Case c{"operands", 2, 29, 2, 8, true, true};
  Problem values(c), rounded(c);
  for (float &x : rounded.qkv)
    x = float(bf16Reference(x));
  for (float &x : rounded.grads)
    x = float(bf16Reference(x));
  for (Problem *pr : {&values, &rounded}) {
    pr->forward(true);
    pr->adjoint(true);
  }
  EXPECT_EQ(values.out, rounded.out);
  EXPECT_EQ(values.dQuery, rounded.dQuery);
  EXPECT_EQ(values.dKey, rounded.dKey);
  EXPECT_EQ(values.dValue, rounded.dValue);
}

TEST(AttentionKernelBits, MalformedCallWritesNaNAndSaysWhy) {
  Problem pr({"malformed", 2, 9, 2, 4, true, false});
  _mlir_ciface_mbt_rt_attention_f32(&pr.q, &pr.k, &pr.v, &pr.tokens, &pr.o, 3,
                                    1);
  EXPECT_NE(takeKernelError().find(
                "mbt_rt_attention_f32: 3 heads do not divide the 8 features"),
            std::string::npos);
  EXPECT_TRUE(std::isnan(pr.out[0]));
  MemRef2I shortTokens = pr.tokens;
  shortTokens.sizes[1] = 8;
  _mlir_ciface_mbt_rt_attention_grad_f32(&pr.q, &pr.k, &pr.v, &shortTokens,
                                         &pr.g, &pr.dq, &pr.dk, &pr.dv, 2, 1);
  EXPECT_NE(takeKernelError().find("mbt_rt_attention_grad_f32: tokens [2,8] "
                                   "for operands [2,9,8]"),
            std::string::npos);
  EXPECT_TRUE(std::isnan(pr.dKey[0]));
  setenv("MBT_ATTENTION_CODE", "x86-64-v9", 1);
  Problem unknown({"unknown", 1, 3, 1, 8, true, false});
  unknown.forward();
  unsetenv("MBT_ATTENTION_CODE");
  EXPECT_NE(takeKernelError().find("MBT_ATTENTION_CODE=x86-64-v9 is not a "
                                   "version of the attention's code"),
            std::string::npos);
}

} // namespace
