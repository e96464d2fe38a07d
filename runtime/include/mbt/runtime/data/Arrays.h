//===- Arrays.h - Typed arrays from data files, and their Dataset -*- C++
//-*-===//
//
// The array formats (.npy, .npz, .safetensors; Numpy.h, Safetensors.h) all
// come down to the same thing: an element type, a shape and a C-order block
// of little-endian elements. A reader returns such a block as an ArrayView
// into memory it does not copy (a file mapping, or the buffer a deflated
// member was inflated into), and datasetFromArrays converts an x and a y
// view to the Dataset the spec asks for, once, so a large file costs one
// pass of conversion and no intermediate copy. The per-sample shape check
// forgives dims of size 1 on either side ([n, 1, 28, 28] feeds an input
// [1, 28, 28] or [28, 28]); anything else must match exactly, because a
// silently reinterpreted image trains, just badly.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DATA_ARRAYS_H
#define MBT_RUNTIME_DATA_ARRAYS_H

#include "mbt/runtime/Dataset.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// Element types a data file may hold (npy/safetensors spellings in
/// Arrays.cpp and the readers).
enum class ElementType {
  Bool,
  U8,
  I8,
  U16,
  I16,
  U32,
  I32,
  U64,
  I64,
  F16,
  BF16,
  F32,
  F64
};

/// "bool", "u8", ..., "bf16", "f32", "f64" (numpy-like short names).
const char *elementTypeName(ElementType type);
/// "[2, 3]" ("[]" for a scalar): a shape as messages show it.
std::string formatShape(const std::vector<int64_t> &shape);

/// Bytes per element: 1, 2, 4 or 8.
size_t elementSize(ElementType type);

/// A C-order, little-endian array in memory that somebody else owns (a file
/// mapping or an inflated buffer, kept alive by `owner`).
struct ArrayView {
  /// For messages, e.g. "'x.npy'" or "'train.npz': array 'images'".
  std::string origin;
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  std::shared_ptr<const void> owner;

  /// The product of the shape (1 for a scalar).
  int64_t elements() const;
};

/// x [n, ...] and y [n] / [n, 1] (class labels) or [n] / [n, K] (regression
/// targets) -> a Dataset as `layout` asks; `name` names the Dataset. Every
/// element is converted to float as it is (u8 255 becomes 255.0f: scaling is
/// the spec's business, not the file's). Throws RuntimeError naming the
/// array at fault: sample counts that differ, a per-sample shape that is not
/// the input's, labels that are not integers or not in [0, classes), a NaN
/// or infinity in x or in the targets (with the sample's index).
/// With `borrowX`, an x of F32 elements is read where it is, not copied
/// (Dataset::borrowed; `x.owner` keeps it alive): what the caller changes
/// in it later, training sees.
Dataset datasetFromArrays(const ArrayView &x, const ArrayView &y,
                          const SampleLayout &layout, const std::string &name,
                          bool borrowX = false);

/// Checks that arrays of `shape` ([n, ...]) hold samples of the input's
/// shape, dims of size 1 aside; else throws RuntimeError "ORIGIN holds
/// samples of shape [...] but the input is f32[...]: " and the fix.
void checkSampleShape(const std::string &origin,
                      const std::vector<int64_t> &shape,
                      const SampleLayout &layout);

/// `count` elements of `type` at `data` (little-endian, any alignment) as
/// floats: integers rounded to nearest, f16 and bf16 exactly, f64 rounded to
/// nearest (a finite f64 beyond f32's range becomes infinity).
void convertToFloat(ElementType type, const void *data, size_t count,
                    float *out);

/// A read-only, private mapping of a whole file (empty for an empty file).
struct FileMapping {
  const unsigned char *bytes = nullptr;
  size_t size = 0;
  /// Unmaps when the last copy dies; ArrayViews into the file share it.
  std::shared_ptr<const void> owner;
};

/// Maps `path` (mmap, MAP_PRIVATE, PROT_READ). Throws RuntimeError "cannot
/// open 'PATH': REASON" for a missing, unreadable or non-regular file.
FileMapping mapFile(const std::string &path);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DATA_ARRAYS_H
