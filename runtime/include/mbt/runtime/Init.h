//===- Init.h - Parameter initialization from the manifest -----*- C++ -*-===//
//
// Fills a params row from the manifest's init specs. Element e of parameter
// k of a model with seed s is a pure function of (s, k, e): Philox block
// e / 4 (lane e % 4) of the stream with key s and counter words 2-3 =
// (k, kInitDomain). So model m's initial weights are the same whether it is
// trained alone or as any member of any batch.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_INIT_H
#define MBT_RUNTIME_INIT_H

#include "mbt/runtime/Manifest.h"

#include <cstdint>

namespace mbt {
namespace runtime {

/// Fills `values[0, count)` as elements [0, count) of parameter number
/// `paramIndex` (its position in the manifest) of a model seeded `seed`.
void initParam(const ParamSpec &param, uint32_t paramIndex, uint64_t seed,
               float *values);

/// Fills one params row (manifest.paramCount floats) for a model seeded
/// `seed`, every parameter at its manifest offset.
void initModelParams(const Manifest &manifest, uint64_t seed, float *row);

/// Fills one buffers row (manifest.bufferCount floats) for a model seeded
/// `seed` (buffer k is drawn as parameter number params.size() + k).
void initModelBuffers(const Manifest &manifest, uint64_t seed, float *row);
/// Fills params [M, P] row by row with each model's own seed.
void initAllParams(const Manifest &manifest, float *params);

/// The bound b of the uniform(-b, b) that xavier_uniform and kaiming_uniform
/// draw from, from the parameter's shape (docs/abi.md).
double initUniformBound(const ParamSpec &param);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_INIT_H
