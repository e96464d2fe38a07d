//===- FloatBuffer.h - An aligned array of the model's float type -*- C++ -*-//
//
// The params, state, x and out buffers hold the model's float type, which
// only the manifest knows (its `dtype`: f32 or f64). A FloatBuffer is an
// AlignedBuffer of either, with typed access that checks the type and
// conversions for the few places that read or fill it element by element
// (outputs, data samples, initial values, reports).
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_FLOATBUFFER_H
#define MBT_RUNTIME_FLOATBUFFER_H

#include "mbt/common/Abi.h"
#include "mbt/runtime/AlignedBuffer.h"
#include "mbt/runtime/Error.h"

#include <cstring>
#include <string>
#include <vector>

namespace mbt {
namespace runtime {

class FloatBuffer {
public:
  FloatBuffer() = default;
  /// `count` zeroed elements of `type`.
  FloatBuffer(DType type, int64_t count, const std::string &what = "buffer")
      : type(type) {
    if (type == DType::F64)
      f64 = AlignedBuffer<double>(count, what);
    else
      f32 = AlignedBuffer<float>(count, what);
  }

  DType dtype() const { return type; }
  int64_t size() const { return type == DType::F64 ? f64.size() : f32.size(); }
  /// The storage, untyped (for copies to and from a device).
  void *raw() {
    return type == DType::F64 ? static_cast<void *>(f64.data())
                              : static_cast<void *>(f32.data());
  }
  size_t bytes() const {
    return static_cast<size_t>(size()) *
           (type == DType::F64 ? sizeof(double) : sizeof(float));
  }

  /// The elements as T; throws RuntimeError unless T is the buffer's type.
  template <typename T> T *as() {
    check(dtypeOf<T>());
    if constexpr (std::is_same_v<T, double>)
      return f64.data();
    else
      return f32.data();
  }
  template <typename T> const T *as() const {
    return const_cast<FloatBuffer *>(this)->as<T>();
  }

  /// Element `i`, widened to double.
  double get(int64_t i) const {
    return type == DType::F64 ? f64[i] : static_cast<double>(f32[i]);
  }

  /// Elements [offset, offset + n), widened to double.
  std::vector<double> load(int64_t offset, int64_t n) const {
    std::vector<double> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      out[i] = get(offset + i);
    return out;
  }

  /// Writes `src[0, n)`, converted to the buffer's type, at `offset`.
  void store(int64_t offset, const float *src, int64_t n) {
    if (n == 0) // src may be null (an empty vector's data())
      return;
    if (type == DType::F32) {
      std::memcpy(f32.data() + offset, src, sizeof(float) * n);
      return;
    }
    double *dst = f64.data() + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = static_cast<double>(src[i]);
  }

  /// Writes `src[0, n)`, rounded to the buffer's type, at `offset`.
  void store(int64_t offset, const double *src, int64_t n) {
    if (n == 0) // src may be null (an empty vector's data())
      return;
    if (type == DType::F64) {
      std::memcpy(f64.data() + offset, src, sizeof(double) * n);
      return;
    }
    float *dst = f32.data() + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = static_cast<float>(src[i]);
  }

private:
  void check(DType requested) const {
    if (requested != type)
      throw RuntimeError(std::string("a buffer of ") + dtypeName(type) +
                         " elements was read as " + dtypeName(requested));
  }

  DType type = DType::F32;
  AlignedBuffer<float> f32;
  AlignedBuffer<double> f64;
};

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_FLOATBUFFER_H
