//===- Init.cpp - Draw initial parameters with Philox ---------------------===//
//
// Draws are addressed by element index, not drawn sequentially, so the value
// of an element never depends on what else is initialized: not on M, not on
// the model's position, not on other parameters.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Init.h"

#include "mbt/common/Philox.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mbt {
namespace runtime {

namespace {
/// Philox block `block` of parameter `paramIndex`'s init stream.
PhiloxCounter initBlock(uint64_t seed, uint32_t paramIndex, uint64_t block) {
  return philox4x32x10({static_cast<uint32_t>(block),
                        static_cast<uint32_t>(block >> 32), paramIndex,
                        kInitDomain},
                       makePhiloxKey(seed));
}

/// low + (high - low) * u, kept inside [low, high): rounding to float could
/// otherwise land exactly on `high`.
float scaleUniform(float u, double low, double high) {
  float value = static_cast<float>(low + (high - low) * static_cast<double>(u));
  float top = static_cast<float>(high);
  if (value >= top && high > low)
    value = std::nextafter(top, -std::numeric_limits<float>::infinity());
  return value;
}

void fillUniform(uint32_t paramIndex, uint64_t seed, double low, double high,
                 int64_t count, float *values) {
  for (int64_t start = 0; start < count; start += 4) {
    PhiloxCounter bits = initBlock(seed, paramIndex, start / 4);
    for (int64_t lane = 0; lane < 4 && start + lane < count; ++lane)
      values[start + lane] = scaleUniform(uniformFloat(bits[lane]), low, high);
  }
}

void fillNormal(uint32_t paramIndex, uint64_t seed, double mean, double stddev,
                int64_t count, float *values) {
  for (int64_t start = 0; start < count; start += 4) {
    std::array<float, 4> z =
        normalsFromBlock(initBlock(seed, paramIndex, start / 4));
    for (int64_t lane = 0; lane < 4 && start + lane < count; ++lane)
      values[start + lane] =
          static_cast<float>(mean + stddev * static_cast<double>(z[lane]));
  }
}
} // namespace

double initUniformBound(const ParamSpec &param) {
  const std::vector<int64_t> &shape = param.shape;
  double fanIn = shape.empty() ? 1.0 : static_cast<double>(shape[0]);
  double fanOut = shape.size() < 2 ? 1.0 : static_cast<double>(shape[1]);
  if (shape.size() >= 3) {
    // A convolution filter [O, C/groups, K...], PyTorch's layout and fans:
    // fan_in = C/groups * prod(K), fan_out = O * prod(K). (Rank-2 weights
    // are mbt's [in, out].)
    double receptive = 1.0;
    for (size_t d = 2; d < shape.size(); ++d)
      receptive *= static_cast<double>(shape[d]);
    fanIn = static_cast<double>(shape[1]) * receptive;
    fanOut = static_cast<double>(shape[0]) * receptive;
  }
  if (param.init.kind == InitSpec::Kind::XavierUniform)
    return std::sqrt(6.0 / (fanIn + fanOut));
  return 1.0 / std::sqrt(fanIn); // kaiming_uniform, as nn.Linear does
}

void initParam(const ParamSpec &param, uint32_t paramIndex, uint64_t seed,
               float *values) {
  const InitSpec &init = param.init;
  int64_t count = param.size;
  switch (init.kind) {
  case InitSpec::Kind::Zeros:
    std::fill(values, values + count, 0.0f);
    return;
  case InitSpec::Kind::Ones:
    std::fill(values, values + count, 1.0f);
    return;
  case InitSpec::Kind::Constant:
    std::fill(values, values + count, static_cast<float>(init.value));
    return;
  case InitSpec::Kind::Normal:
    fillNormal(paramIndex, seed, init.mean, init.stddev, count, values);
    return;
  case InitSpec::Kind::Uniform:
    fillUniform(paramIndex, seed, init.low, init.high, count, values);
    return;
  case InitSpec::Kind::XavierUniform:
  case InitSpec::Kind::KaimingUniform: {
    double bound = initUniformBound(param);
    fillUniform(paramIndex, seed, -bound, bound, count, values);
    return;
  }
  }
}

void initModelParams(const Manifest &manifest, uint64_t seed, float *row) {
  for (size_t k = 0; k < manifest.params.size(); ++k) {
    const ParamSpec &param = manifest.params[k];
    initParam(param, static_cast<uint32_t>(k), seed, row + param.offset);
  }
}

void initModelBuffers(const Manifest &manifest, uint64_t seed, float *row) {
  // Buffers are numbered after the parameters, so their draws (for a
  // random init) never repeat a parameter's.
  uint32_t first = static_cast<uint32_t>(manifest.params.size());
  for (size_t k = 0; k < manifest.buffers.size(); ++k) {
    const ParamSpec &buffer = manifest.buffers[k];
    initParam(buffer, first + static_cast<uint32_t>(k), seed,
              row + buffer.offset);
  }
}

void initAllParams(const Manifest &manifest, float *params) {
  for (int64_t m = 0; m < manifest.models; ++m)
    initModelParams(manifest, manifest.seeds[m],
                    params + m * manifest.paramCount);
}

} // namespace runtime
} // namespace mbt
