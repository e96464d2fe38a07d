//===- Numpy.h - NumPy .npy and .npz files ----------------------*- C++ -*-===//
//
// .npy (numpy.save): the magic "\x93NUMPY", a major and a minor version
// byte, the header's length (u16 little-endian in version 1.0, u32 in 2.0
// and 3.0, whose header is UTF-8), then the header: a Python dict literal
// such as {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 28, 28), }
// padded with spaces and a '\n', then the elements. The header is parsed as
// a small Python literal (keys in any order, tuples with or without a
// trailing comma, `()` for a scalar) rather than matched as text, because
// writers other than numpy space it differently.
//
// .npz (numpy.savez, savez_compressed) is a zip archive of .npy members,
// stored or deflated, with zip64 records whenever numpy writes them. minizip
// finds and walks its directory over our own mapping of the file; the
// entries and members are read from the mapping (Npz.cpp says why): a
// stored member is used in place, a deflated one is inflated into a buffer
// of its own.
//
// Arrays are mapped, never read: a 2 GB array costs no memory until
// datasetFromArrays converts it. Big-endian arrays ('>i4', '>f8') are
// byte-swapped once into a buffer of their own, so every ArrayView is
// little-endian. Fortran-order arrays are refused with the fix
// (np.ascontiguousarray), as are dtypes other than bool, integers and
// floats (structured, object, string, complex, datetime).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DATA_NUMPY_H
#define MBT_RUNTIME_DATA_NUMPY_H

#include "mbt/runtime/data/Arrays.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// What a .npy header says (the compiler uses it to check shapes without
/// reading data).
struct NpyHeader {
  ElementType type = ElementType::F32;
  bool bigEndian = false;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  /// Where the elements start: the magic, version, length and header.
  uint64_t dataOffset = 0;
};

/// Parses the header at the start of `bytes` (`size` bytes of a .npy file;
/// the data need not be there). `origin` names the file in messages, e.g.
/// "'x.npy'". Throws RuntimeError "ORIGIN: ..." for a bad magic or version,
/// a truncated or malformed header, an unsupported dtype, or a shape whose
/// byte size overflows 64 bits.
NpyHeader parseNpyHeader(const void *bytes, size_t size,
                         const std::string &origin);

/// Maps a .npy file (mmap, MAP_PRIVATE, PROT_READ) and checks that it holds
/// exactly the header and shape-product * itemsize bytes. Throws
/// RuntimeError naming the path.
ArrayView readNpy(const std::string &path);

/// The arrays of a .npz file, in archive order: "images" for the member
/// "images.npy" (other members keep their whole name).
std::vector<std::string> npzArrayNames(const std::string &path);

/// The array `name` of a .npz file. A missing name is an error listing the
/// names the archive holds.
ArrayView readNpzArray(const std::string &path, const std::string &name);

/// The npy header of array `name` of a .npz file, read without its data
/// (a deflated member is inflated only as far as its header): what the
/// compiler checks shapes with.
NpyHeader readNpzArrayHeader(const std::string &path, const std::string &name);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DATA_NUMPY_H
