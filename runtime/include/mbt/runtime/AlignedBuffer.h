//===- AlignedBuffer.h - Zeroed, 64-byte aligned arrays ---------*- C++ -*-===//
//
// Buffers handed to the artifact are 64-byte aligned (a cache line, and the
// widest vector load the compiled code may use) and zero-filled, so that the
// optimizer state starts at zero and no uninitialized memory is ever read.
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_ALIGNEDBUFFER_H
#define MBT_RUNTIME_ALIGNEDBUFFER_H

#include "mbt/runtime/Error.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace mbt {
namespace runtime {

constexpr size_t kBufferAlignment = 64;

template <typename T> class AlignedBuffer {
public:
  AlignedBuffer() = default;
  /// `count` zeroed elements. Never null, even for count == 0, so a
  /// descriptor always carries a valid pointer.
  explicit AlignedBuffer(int64_t count, const std::string &what = "buffer")
      : length(count) {
    if (count < 0 ||
        static_cast<uint64_t>(count) > SIZE_MAX / sizeof(T) - kBufferAlignment)
      throw RuntimeError("cannot allocate " + what + " of " +
                         std::to_string(count) + " elements");
    size_t bytes = static_cast<size_t>(count) * sizeof(T);
    // aligned_alloc wants a multiple of the alignment.
    size_t rounded =
        (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    if (rounded == 0)
      rounded = kBufferAlignment;
    void *memory = std::aligned_alloc(kBufferAlignment, rounded);
    if (!memory)
      throw RuntimeError("out of memory allocating " + what + " (" +
                         std::to_string(rounded) + " bytes)");
    std::memset(memory, 0, rounded);
    storage.reset(static_cast<T *>(memory));
  }

  T *data() { return storage.get(); }
  const T *data() const { return storage.get(); }
  int64_t size() const { return length; }
  T &operator[](int64_t i) { return storage.get()[i]; }
  const T &operator[](int64_t i) const { return storage.get()[i]; }

private:
  struct Free {
    void operator()(T *p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> storage;
  int64_t length = 0;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_ALIGNEDBUFFER_H
