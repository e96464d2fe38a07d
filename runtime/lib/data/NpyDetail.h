//===- NpyDetail.h - What the .npy and .npz readers share -------*- C++ -*-===//
//
// Private to runtime/lib/data: Numpy.cpp reads .npy files and Npz.cpp the
// .npy members of an archive, and both turn a parsed header and its data
// into an ArrayView the same way.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_LIB_DATA_NPYDETAIL_H
#define MBT_RUNTIME_LIB_DATA_NPYDETAIL_H

#include "mbt/runtime/data/Numpy.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace mbt {
namespace runtime {
namespace detail {

/// Checks the magic and the version in the first `size` bytes (10 suffice
/// for version 1.0, 12 for 2.0 and 3.0); returns where the header text
/// starts and where it ends, i.e. where the data starts.
std::pair<uint64_t, uint64_t>
npyPreamble(const unsigned char *bytes, size_t size, const std::string &origin);

/// The bytes `header` says its data takes (parseNpyHeader checked that the
/// product does not overflow).
uint64_t dataBytes(const NpyHeader &header);

/// Refuses a Fortran-order array, with the fix.
void checkCOrder(const NpyHeader &header, const std::string &origin);

/// Reverses each `size`-byte element of `data` in place.
void swapBytes(unsigned char *data, uint64_t bytes, size_t size);

/// A view of `header`'s data at `data`, which the caller checked holds
/// dataBytes(header) bytes; a big-endian array is swapped into a copy.
ArrayView viewOf(const NpyHeader &header, const unsigned char *data,
                 std::shared_ptr<const void> owner, std::string origin);

} // namespace detail
} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_LIB_DATA_NPYDETAIL_H
