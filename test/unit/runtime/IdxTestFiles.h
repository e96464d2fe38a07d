//===- IdxTestFiles.h - Write small idx files for tests ---------*- C++ -*-===//
//
// Builds idx byte streams (plain or gzipped) so tests can produce every kind
// of damage exactly, without needing a real data set.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_TEST_UNIT_RUNTIME_IDXTESTFILES_H
#define MBT_TEST_UNIT_RUNTIME_IDXTESTFILES_H

#include "mbt/runtime/IdxReader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <string>
#include <vector>

namespace mbt {
namespace test {

using runtime::kIdxImagesMagic;
using runtime::kIdxLabelsMagic;

using Bytes = std::vector<uint8_t>;

inline void appendBigEndian(Bytes &out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<uint8_t>(value >> shift));
}

/// An idx byte stream with the given magic and dims, followed by `data`.
inline Bytes idxBytes(uint32_t magic, const std::vector<uint32_t> &dims,
                      const Bytes &data) {
  Bytes out;
  appendBigEndian(out, magic);
  for (uint32_t d : dims)
    appendBigEndian(out, d);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

inline void writePlain(const std::string &path, const Bytes &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

inline void writeGzip(const std::string &path, const Bytes &bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  gzclose(file);
}

/// Two 2x3 images with pixels 0..11 and their labels.
inline Bytes twoImages() {
  Bytes pixels(12);
  for (int i = 0; i < 12; ++i)
    pixels[i] = static_cast<uint8_t>(i * 20);
  return idxBytes(kIdxImagesMagic, {2, 2, 3}, pixels);
}
inline Bytes twoLabels(uint8_t first = 3, uint8_t second = 9) {
  return idxBytes(kIdxLabelsMagic, {2}, {first, second});
}

} // namespace test
} // namespace mbt

#endif // MBT_TEST_UNIT_RUNTIME_IDXTESTFILES_H
