//===- FloatBufferTest.cpp - buffers of the model's float type ------------===//
//
// The runtime's params, state, x and out buffers hold f32 or f64 by the
// manifest's dtype: typed access checks the type, and the element-wise
// conversions (data samples in, outputs out) are exact widenings.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/FloatBuffer.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace mbt;
using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::HasSubstr;

namespace {

TEST(FloatBufferTest, ZeroedAlignedAndTyped) {
  for (DType type : {DType::F32, DType::F64}) {
    FloatBuffer buffer(type, 5, "params");
    EXPECT_EQ(buffer.dtype(), type);
    EXPECT_EQ(buffer.size(), 5);
    for (int64_t i = 0; i < 5; ++i)
      EXPECT_EQ(buffer.get(i), 0.0);
    const void *data = type == DType::F64
                           ? static_cast<const void *>(buffer.as<double>())
                           : static_cast<const void *>(buffer.as<float>());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % kBufferAlignment, 0u);
  }
}

TEST(FloatBufferTest, StoreWidensExactlyAtItsOffset) {
  const float sample[3] = {0.1f, 1.0f / 3.0f, 255.0f / 255.0f};
  FloatBuffer f64(DType::F64, 6);
  f64.store(0, sample, 3);
  f64.store(3, sample, 3);
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(f64.as<double>()[i], static_cast<double>(sample[i % 3]));
  FloatBuffer f32(DType::F32, 6);
  f32.store(3, sample, 3);
  EXPECT_EQ(f32.get(4), static_cast<double>(sample[1]));
  EXPECT_EQ(f32.get(0), 0.0);
}

TEST(FloatBufferTest, ReadingAsTheOtherTypeIsAnError) {
  FloatBuffer buffer(DType::F64, 2);
  EXPECT_THAT(errorOf([&] { buffer.as<float>(); }),
              HasSubstr("a buffer of f64 elements was read as f32"));
}

} // namespace
