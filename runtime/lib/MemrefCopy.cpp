//===- MemrefCopy.cpp - the memrefCopy the compiled code calls ------------===//
//
// MLIR lowers a memref.copy between non-contiguous buffers to a call of
// `memrefCopy` (normally from libmlir_c_runner_utils, which Debian does not
// ship). The artifact imports it, like the BLAS kernel, from this library.
// Rows whose innermost stride is 1 in both buffers are copied with memcpy.
//
//===----------------------------------------------------------------------===//
#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
/// The operands, as CRunnerUtils.h declares memrefCopy: a rank and a
/// pointer to a ranked descriptor.
using UnrankedMemRef = ::UnrankedMemRefType<char>;

/// View of a ranked descriptor (StridedMemRefType: {T *basePtr, T *data,
/// int64_t offset, int64_t sizes[rank], int64_t strides[rank]}) of any
/// element type.
struct DescriptorView {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
  explicit DescriptorView(const UnrankedMemRef &m) {
    auto *words = static_cast<char **>(m.descriptor);
    aligned = words[1];
    auto *ints = reinterpret_cast<const int64_t *>(words + 2);
    offset = ints[0];
    sizes = ints + 1;
    strides = ints + 1 + m.rank;
  }
};
} // namespace

extern "C" __attribute__((visibility("default"))) void
memrefCopy(int64_t elemSize, UnrankedMemRef *src, UnrankedMemRef *dst) {
  int64_t rank = src->rank;
  DescriptorView s(*src), d(*dst);
  if (rank == 0) {
    std::memcpy(d.aligned + d.offset * elemSize,
                s.aligned + s.offset * elemSize, elemSize);
    return;
  }
  int64_t total = 1;
  for (int64_t r = 0; r < rank; ++r)
    total *= s.sizes[r];
  if (total == 0)
    return;
  // The innermost dim is one memcpy when both sides are unit-stride there.
  int64_t inner = s.sizes[rank - 1];
  bool rows = s.strides[rank - 1] == 1 && d.strides[rank - 1] == 1;
  int64_t chunk = rows ? inner : 1;
  int64_t outerRank = rows ? rank - 1 : rank;
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < total; n += chunk) {
    int64_t so = s.offset, dof = d.offset;
    for (int64_t r = 0; r < outerRank; ++r) {
      so += index[r] * s.strides[r];
      dof += index[r] * d.strides[r];
    }
    std::memcpy(d.aligned + dof * elemSize, s.aligned + so * elemSize,
                chunk * elemSize);
    for (int64_t r = outerRank - 1; r >= 0; --r) {
      if (++index[r] < s.sizes[r])
        break;
      index[r] = 0;
    }
  }
}
