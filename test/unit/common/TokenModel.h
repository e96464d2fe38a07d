//===- TokenModel.h - one compiled model over token ids, for tests -*- C++ -*-//
//
// Calls a one-model artifact whose input is token ids (ABI version 8; a
// language model's next-token target, version 9) on a batch of sequences
// padded to a chosen width: its eval step's loss and its
// train step's gradient (with SGD at lr 1, one step moves the parameters by
// minus the gradient). Shared by the gradient and reference tests.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_TEST_UNIT_COMMON_TOKENMODEL_H
#define MBT_TEST_UNIT_COMMON_TOKENMODEL_H

#include "mbt/common/Abi.h"
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Workspace.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace mbt {
namespace test {

using mbt::makeDenseMemRef;
using runtime::Artifact;
using runtime::Workspace;

/// A batch of token sequences: each row's real tokens (ids in [1, V)), and
/// its label.
struct TokenBatch {
  std::vector<std::vector<int32_t>> rows;
  std::vector<int32_t> labels;
  int64_t longest() const {
    int64_t n = 0;
    for (const auto &row : rows)
      n = std::max<int64_t>(n, static_cast<int64_t>(row.size()));
    return n;
  }
  /// The [B, width] block, padded with the pad token 0.
  std::vector<int32_t> block(int64_t width) const {
    std::vector<int32_t> x(rows.size() * width, 0);
    for (size_t r = 0; r < rows.size(); ++r)
      std::copy(rows[r].begin(), rows[r].end(), x.begin() + r * width);
    return x;
  }
};

/// `rows` sequences of `shortest` to `longest` ids (1 to 9 by default) in
/// [1, usedIds), with labels in [0, classes).
inline TokenBatch randomBatch(int64_t rows, uint32_t seed, int32_t usedIds,
                              int32_t classes, int64_t longest = 9,
                              int64_t shortest = 1) {
  std::mt19937 rng(seed);
  TokenBatch batch;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t length = shortest + rng() % (longest - shortest + 1);
    std::vector<int32_t> row(length);
    for (int32_t &t : row)
      t = 1 + static_cast<int32_t>(rng() % (usedIds - 1));
    batch.rows.push_back(row);
    batch.labels.push_back(static_cast<int32_t>(rng() % classes));
  }
  return batch;
}

/// The [B, width] blocks of a language model's batch, whose rows are
/// framed samples: x the rows but their last token, y the rows but their
/// first (position t's target is token t + 1), both padded with 0.
struct NextTokenBlocks {
  std::vector<int32_t> x, y;
};
inline NextTokenBlocks nextTokenBlocks(const TokenBatch &batch, int64_t width) {
  NextTokenBlocks blocks{std::vector<int32_t>(batch.rows.size() * width, 0),
                         std::vector<int32_t>(batch.rows.size() * width, 0)};
  for (size_t r = 0; r < batch.rows.size(); ++r) {
    const std::vector<int32_t> &row = batch.rows[r];
    std::copy(row.begin(), row.end() - 1, blocks.x.begin() + r * width);
    std::copy(row.begin() + 1, row.end(), blocks.y.begin() + r * width);
  }
  return blocks;
}

/// The loss and gradient of one compiled token model, float type T: a
/// classifier (y: a label per row) or a language model (y: the next
/// tokens; its rows of x are one token shorter than the batch's rows).
template <typename T> class TokenModel {
public:
  explicit TokenModel(const std::string &path)
      : artifact(Artifact::load(path)), p(artifact.manifest().paramCount) {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 0.5f);
    params.resize(p);
    for (T &v : params)
      v = normal(rng);
  }

  /// Whether the target is the next tokens (a language model).
  bool nextTokens() const {
    return artifact.manifest().targetKind ==
           runtime::Manifest::TargetKind::NextTokens;
  }
  /// The narrowest width `batch` fits: its longest row of x.
  int64_t longest(const TokenBatch &batch) const {
    return batch.longest() - (nextTokens() ? 1 : 0);
  }

  /// The eval step's loss at `at` on `batch` padded to `width`.
  T loss(const std::vector<T> &at, const TokenBatch &batch, int64_t width) {
    std::vector<T> local(at), out(artifact.manifest().outputs.size());
    std::vector<T> buffers(1);
    Blocks data = blocks(batch, width);
    auto pm = makeDenseMemRef<T, 2>(local.data(), {1, p});
    auto bm = makeDenseMemRef<T, 2>(buffers.data(), {1, 0});
    auto xm = makeDenseMemRef<int32_t, 3>(data.x.data(), {1, data.b, width});
    auto om = makeDenseMemRef<T, 2>(out.data(), {1, (int64_t)out.size()});
    withY(data, width, [&](auto ym, auto rank) {
      constexpr int R = decltype(rank)::value;
      auto ws = workspace.descriptor(
          artifact.evalStepWorkspace<T, int32_t, R>()(&pm, &bm, &xm, &ym, &om));
      artifact.evalStep<T, int32_t, R>()(&pm, &bm, &xm, &ym, &om, &ws);
    });
    return out[0];
  }

  /// params - (params after one SGD step at lr 1): the gradient on `batch`
  /// padded to `width`.
  std::vector<double> gradient(const TokenBatch &batch, int64_t width) {
    std::vector<T> updated(params), state(p, T(0)), buffers(1);
    std::vector<T> out(artifact.manifest().outputs.size());
    std::vector<double> hyper{1.0, 0.0, 0.0}, step{1.0};
    Blocks data = blocks(batch, width);
    auto pm = makeDenseMemRef<T, 2>(updated.data(), {1, p});
    auto bm = makeDenseMemRef<T, 2>(buffers.data(), {1, 0});
    auto sm = makeDenseMemRef<T, 3>(state.data(), {1, 1, p});
    auto hm = makeDenseMemRef<double, 2>(hyper.data(), {1, 3});
    auto tm = makeDenseMemRef<double, 1>(step.data(), {1});
    auto xm = makeDenseMemRef<int32_t, 3>(data.x.data(), {1, data.b, width});
    auto om = makeDenseMemRef<T, 2>(out.data(), {1, (int64_t)out.size()});
    withY(data, width, [&](auto ym, auto rank) {
      constexpr int R = decltype(rank)::value;
      auto ws =
          workspace.descriptor(artifact.trainStepWorkspace<T, int32_t, R>()(
              &pm, &bm, &sm, &hm, &tm, &xm, &ym, &om));
      artifact.trainStep<T, int32_t, R>()(&pm, &bm, &sm, &hm, &tm, &xm, &ym,
                                          &om, &ws);
    });
    std::vector<double> g(p);
    for (int64_t i = 0; i < p; ++i)
      g[i] = double(params[i]) - double(updated[i]);
    return g;
  }

  std::vector<double> finiteDifferences(const TokenBatch &batch, T eps) {
    std::vector<double> g(p);
    for (int64_t i = 0; i < p; ++i) {
      std::vector<T> plus(params), minus(params);
      plus[i] += eps;
      minus[i] -= eps;
      g[i] = (double(loss(plus, batch, longest(batch))) -
              double(loss(minus, batch, longest(batch)))) /
             (double(plus[i]) - double(minus[i]));
    }
    return g;
  }

  std::vector<T> params;
  const runtime::Manifest &manifest() const { return artifact.manifest(); }

private:
  /// x [B, width] and y: labels [B], or next tokens [B, width].
  struct Blocks {
    std::vector<int32_t> x, y;
    int64_t b = 0;
  };
  Blocks blocks(const TokenBatch &batch, int64_t width) const {
    Blocks data;
    data.b = static_cast<int64_t>(batch.rows.size());
    if (nextTokens()) {
      NextTokenBlocks next = nextTokenBlocks(batch, width);
      data.x = std::move(next.x);
      data.y = std::move(next.y);
    } else {
      data.x = batch.block(width);
      data.y = batch.labels;
    }
    return data;
  }
  /// Calls fn(y descriptor, rank as an integral_constant).
  template <typename Fn> void withY(Blocks &data, int64_t width, Fn &&fn) {
    if (nextTokens())
      fn(makeDenseMemRef<int32_t, 3>(data.y.data(), {1, data.b, width}),
         std::integral_constant<int, 3>{});
    else
      fn(makeDenseMemRef<int32_t, 2>(data.y.data(), {1, data.b}),
         std::integral_constant<int, 2>{});
  }

  Artifact artifact;
  Workspace workspace;
  int64_t p;
};

} // namespace test
} // namespace mbt

#endif // MBT_TEST_UNIT_COMMON_TOKENMODEL_H
