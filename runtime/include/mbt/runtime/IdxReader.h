//===- IdxReader.h - Reader for idx (MNIST-style) files ---------*- C++ -*-===//
//
// The idx format (LeCun's MNIST distribution, reused by Fashion-MNIST): a
// big-endian magic 0x0000TTNN (TT = element type, 0x08 = unsigned byte;
// NN = number of dims), NN big-endian uint32 dims, then the elements. Files
// may be gzipped or plain; zlib reads both transparently.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_IDXREADER_H
#define MBT_RUNTIME_IDXREADER_H

#include <cstdint>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

/// An unsigned-byte idx array: its dims and row-major elements.
struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;
};

/// Magic numbers of the two idx files Fashion-MNIST uses.
constexpr uint32_t kIdxImagesMagic = 0x00000803; // ubyte, 3 dims
constexpr uint32_t kIdxLabelsMagic = 0x00000801; // ubyte, 1 dim

/// Reads an idx file (gzipped or plain) and checks that its magic equals
/// `expectedMagic` and that it holds exactly the bytes its header
/// advertises. Throws RuntimeError naming `path` (and, for a short file, the
/// byte offset where data ended).
IdxArray readIdxFile(const std::string &path, uint32_t expectedMagic);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_IDXREADER_H
