//===- Safetensors.h - Hugging Face .safetensors files ----------*- C++ -*-===//
//
// A .safetensors file: a u64 little-endian N, N bytes of JSON mapping each
// tensor's name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin,
// end]} (offsets relative to the byte after the JSON) plus an optional
// "__metadata__" object, then the tensors' bytes, little-endian, C order.
// The format promises that the tensors tile the data exactly, without gaps
// or overlaps (no hidden bytes, no polyglot files); the reader checks that
// and every offset, size and shape before a name is looked up, so a bad
// file is refused whichever tensor is asked for. The file is mapped and
// tensors point into the mapping.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_DATA_SAFETENSORS_H
#define MBT_RUNTIME_DATA_SAFETENSORS_H

#include "mbt/runtime/TorchStateDict.h"
#include "mbt/runtime/data/Arrays.h"

#include <memory>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

struct SafetensorsFile;

/// An open .safetensors file: its header parsed and checked once, its
/// tensors views into the mapping, which lives as long as any of them.
/// The constructor throws RuntimeError naming the path (and the byte
/// offset or tensor) for a file that is not a consistent safetensors file.
class SafetensorsArchive {
public:
  explicit SafetensorsArchive(const std::string &path);
  /// Sorted, without "__metadata__".
  std::vector<std::string> names() const;
  /// As readSafetensor.
  ArrayView tensor(const std::string &name) const;

private:
  std::shared_ptr<const SafetensorsFile> file;
};

/// The tensors' names, sorted (without "__metadata__"). Throws RuntimeError
/// naming the path (and the byte offset or tensor) for a file that is not
/// a consistent safetensors file.
std::vector<std::string> safetensorNames(const std::string &path);

/// The tensor `name`, pointing into the file's mapping. Its dtype must be
/// one of BOOL, U8, I8, U16, I16, U32, I32, U64, I64, F16, BF16, F32, F64
/// (the file's other tensors may also be fp8). A missing name is an error
/// listing the names the file holds.
ArrayView readSafetensor(const std::string &path, const std::string &name);

/// The bytes of a .safetensors file holding `tensors` (F32 or F64), their
/// data in the given order without gaps, the header padded with spaces to
/// a multiple of 8 bytes (as the safetensors library writes it, so that
/// every tensor is aligned in a mapping) and `{"format": "pt"}` as its
/// metadata. safetensors.torch.load_file reads it; so does
/// readSafetensor. Names must be unique and not "__metadata__".
std::string safetensorsFile(const std::vector<NamedTensor> &tensors);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_DATA_SAFETENSORS_H
