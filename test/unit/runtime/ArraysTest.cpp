//===- ArraysTest.cpp - Typed arrays to a Dataset -------------------------===//
//
// datasetFromArrays on views of in-memory bytes: the conversions of every
// element type (f16 and bf16 bit for bit), the per-sample shape rule, the
// label and target checks with their messages, and that several threads
// give the result and the error one thread gives.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/Arrays.h"
#include "mbt/runtime/Error.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

/// A view of `values` (kept alive by the view) as `type` with `shape`.
template <typename T>
ArrayView view(const std::string &origin, ElementType type,
               std::vector<int64_t> shape, const std::vector<T> &values) {
  auto bytes = std::make_shared<std::vector<T>>(values);
  ArrayView result;
  result.origin = origin;
  result.type = type;
  result.shape = std::move(shape);
  result.data = bytes->data();
  result.owner = bytes;
  return result;
}

ArrayView labels(std::vector<int64_t> values) {
  int64_t n = values.size();
  return view("'y.npy'", ElementType::I64, {n}, values);
}

SampleLayout classes(std::vector<int64_t> inputShape, int64_t count) {
  SampleLayout layout;
  layout.inputShape = std::move(inputShape);
  layout.classes = count;
  return layout;
}

SampleLayout values(std::vector<int64_t> inputShape, int64_t width) {
  SampleLayout layout;
  layout.inputShape = std::move(inputShape);
  layout.target = SampleLayout::Target::Values;
  layout.targetWidth = width;
  return layout;
}

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

std::vector<float> convert(ElementType type, const void *data, size_t n) {
  std::vector<float> out(n);
  convertToFloat(type, data, n, out.data());
  return out;
}

TEST(ArraysTest, ConvertsBytesAndLabelsAsTheyAre) {
  ArrayView x = view<uint8_t>("'x.npy'", ElementType::U8, {2, 2, 2},
                              {0, 1, 2, 3, 255, 128, 7, 9});
  Dataset data =
      datasetFromArrays(x, labels({1, 0}), classes({2, 2}, 2), "mine");
  EXPECT_EQ(data.name, "mine");
  EXPECT_EQ(data.count, 2);
  EXPECT_EQ(data.numFeatures, 4);
  EXPECT_EQ(data.numClasses, 2);
  EXPECT_EQ(data.x, (std::vector<float>{0, 1, 2, 3, 255, 128, 7, 9}));
  EXPECT_EQ(data.y, (std::vector<int32_t>{1, 0}));
  EXPECT_FALSE(data.regression());
  EXPECT_TRUE(data.targets.empty());
}

// borrowX reads a float32 x where it is (the Python module's arrays): the
// Dataset's samples are the caller's memory, kept alive by the view's
// owner, and still checked for NaN; any other type is converted as ever.
TEST(ArraysTest, BorrowsAFloat32InputInPlace) {
  ArrayView x =
      view<float>("x", ElementType::F32, {2, 3}, {0.5f, 1, 2, 3, 4, 5});
  Dataset data =
      datasetFromArrays(x, labels({1, 0}), classes({3}, 2), "mine", true);
  EXPECT_TRUE(data.x.empty());
  EXPECT_EQ(data.sample(1), static_cast<const float *>(x.data) + 3);
  EXPECT_EQ(data.storedFeatures(), 6u);
  EXPECT_EQ(data.borrowedOwner, x.owner);

  ArrayView nan =
      view<float>("x", ElementType::F32, {2, 3}, {0, 1, 2, 3, NAN, 5});
  EXPECT_THAT(errorOf([&] {
                datasetFromArrays(nan, labels({1, 0}), classes({3}, 2), "m",
                                  true);
              }),
              HasSubstr("sample 1 holds NaN at element 1"));

  ArrayView wide =
      view<double>("x", ElementType::F64, {2, 3}, {0.5, 1, 2, 3, 4, 5});
  Dataset copied =
      datasetFromArrays(wide, labels({1, 0}), classes({3}, 2), "m", true);
  EXPECT_EQ(copied.borrowed, nullptr);
  EXPECT_EQ(copied.x, (std::vector<float>{0.5f, 1, 2, 3, 4, 5}));
}

TEST(ArraysTest, HalfAndBfloatConvertBitForBit) {
  // f16 bits -> the f32 bits numpy's astype(np.float32) gives.
  std::vector<uint16_t> halves = {0x0000, 0x8000, 0x3c00, 0xc000,
                                  0x7bff, 0x0001, 0x03ff, 0x0400,
                                  0x3555, 0x7c00, 0xfc00};
  std::vector<uint32_t> expected = {
      0x00000000, 0x80000000, 0x3f800000, 0xc0000000, 0x477fe000, 0x33800000,
      0x387fc000, 0x38800000, 0x3eaaa000, 0x7f800000, 0xff800000};
  std::vector<float> out = convert(ElementType::F16, halves.data(), 11);
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &out[i], 4);
    EXPECT_EQ(bits, expected[i]) << "f16 0x" << std::hex << halves[i];
  }
  EXPECT_TRUE(std::isnan(convert(ElementType::F16, "\x01\x7e", 1)[0]));
  std::vector<uint16_t> brains = {0x3f80, 0xc049, 0x0001, 0x7f80};
  EXPECT_THAT(convert(ElementType::BF16, brains.data(), 4),
              ElementsAre(1.0f, bitsToFloat(0xc0490000),
                          bitsToFloat(0x00010000),
                          std::numeric_limits<float>::infinity()));
}

TEST(ArraysTest, ConvertsUnalignedElements) {
  // A stored .npz member or a safetensors tensor may start at any byte.
  unsigned char bytes[1 + 2 * 8] = {0};
  double twoValues[2] = {0.5, -3.0};
  std::memcpy(bytes + 1, twoValues, 16);
  EXPECT_THAT(convert(ElementType::F64, bytes + 1, 2),
              ElementsAre(0.5f, -3.0f));
  EXPECT_THAT(convert(ElementType::Bool, "\x00\x01\x02", 3),
              ElementsAre(0.0f, 1.0f, 1.0f));
}

TEST(ArraysTest, DimsOfOneAreForgivenOnBothSides) {
  ArrayView x = view<float>("'x.npy'", ElementType::F32, {2, 1, 2, 2},
                            {1, 2, 3, 4, 5, 6, 7, 8});
  for (std::vector<int64_t> input :
       {std::vector<int64_t>{2, 2}, {1, 2, 2}, {2, 1, 2}, {1, 2, 2, 1}}) {
    Dataset data = datasetFromArrays(x, labels({0, 1}), classes(input, 2), "d");
    EXPECT_EQ(data.numFeatures, 4);
    EXPECT_EQ(data.x[7], 8.0f);
  }
}

TEST(ArraysTest, ShapeMismatchShowsBothShapesAndAFix) {
  ArrayView x = view<float>("'x.npy'", ElementType::F32, {2, 2, 3},
                            std::vector<float>(12));
  EXPECT_EQ(errorOf([&] {
              datasetFromArrays(x, labels({0, 1}), classes({6}, 2), "d");
            }),
            "'x.npy' holds samples of shape [2, 3] but the input is f32[6]: "
            "declare the input as 'f32[2, 3]' or save the array reshaped to "
            "(n, 6)");
  // Another element count: reshaping cannot help, so it is not suggested.
  EXPECT_THAT(errorOf([&] {
                datasetFromArrays(x, labels({0, 1}), classes({3, 2}, 2), "d");
              }),
              AllOf(HasSubstr("shape [2, 3] but the input is f32[3, 2]"),
                    HasSubstr("declare the input as 'f32[2, 3]'")));
  EXPECT_THAT(errorOf([&] {
                datasetFromArrays(x, labels({0, 1}), classes({7}, 2), "d");
              }),
              Not(HasSubstr("reshaped")));
}

TEST(ArraysTest, SampleCountsMustAgree) {
  ArrayView x = view<float>("'x.npy'", ElementType::F32, {3, 1}, {1, 2, 3});
  EXPECT_EQ(errorOf([&] {
              datasetFromArrays(x, labels({0, 1}), classes({1}, 2), "d");
            }),
            "'x.npy' holds 3 samples but 'y.npy' holds 2");
  ArrayView none = view<float>("'x.npy'", ElementType::F32, {0, 1}, {});
  EXPECT_THAT(errorOf([&] {
                datasetFromArrays(none, labels({}), classes({1}, 2), "d");
              }),
              HasSubstr("'x.npy' holds no samples"));
  ArrayView scalar = view<float>("'x.npy'", ElementType::F32, {}, {1});
  EXPECT_THAT(errorOf([&] {
                datasetFromArrays(scalar, labels({0}), classes({1}, 2), "d");
              }),
              HasSubstr("'x.npy' is a scalar"));
}

TEST(ArraysTest, LabelsOutsideTheClassesNameTheSample) {
  ArrayView x = view<float>("'x.npy'", ElementType::F32, {4, 1}, {0, 0, 0, 0});
  EXPECT_EQ(errorOf([&] {
              datasetFromArrays(x, labels({0, 9, 2, 10}), classes({1}, 10),
                                "d");
            }),
            "'y.npy': label 10 of sample 3 is outside the spec's 10 classes "
            "(class[10])");
  EXPECT_THAT(errorOf([&] {
                datasetFromArrays(x, labels({0, -1, 2, 3}), classes({1}, 10),
                                  "d");
              }),
              HasSubstr("label -1 of sample 1"));
  ArrayView huge =
      view<uint64_t>("'y.npy'", ElementType::U64, {4}, {0, 0, ~uint64_t(0), 0});
  EXPECT_THAT(
      errorOf([&] { datasetFromArrays(x, huge, classes({1}, 10), "d"); }),
      HasSubstr("label 18446744073709551615 of sample 2"));
  // Exactly classes - 1 is fine, in every integer type.
  ArrayView bytes =
      view<int8_t>("'y.npy'", ElementType::I8, {4, 1}, {9, 0, 1, 2});
  EXPECT_EQ(datasetFromArrays(x, bytes, classes({1}, 10), "d").y,
            (std::vector<int32_t>{9, 0, 1, 2}));
  ArrayView flags =
      view<uint8_t>("'y.npy'", ElementType::Bool, {4}, {0, 1, 0, 1});
  EXPECT_EQ(datasetFromArrays(x, flags, classes({1}, 2), "d").y,
            (std::vector<int32_t>{0, 1, 0, 1}));
}

TEST(ArraysTest, LabelsMustBeOneIntegerPerSample) {
  ArrayView x = view<float>("'x.npy'", ElementType::F32, {2, 1}, {0, 0});
  ArrayView floats = view<float>("'y.npy'", ElementType::F32, {2}, {0, 1});
  EXPECT_THAT(
      errorOf([&] { datasetFromArrays(x, floats, classes({1}, 2), "d"); }),
      AllOf(HasSubstr("'y.npy' holds f32 labels"), HasSubstr("astype")));
  ArrayView wide =
      view<int64_t>("'y.npy'", ElementType::I64, {2, 2}, {0, 1, 1, 0});
  EXPECT_THAT(
      errorOf([&] { datasetFromArrays(x, wide, classes({1}, 2), "d"); }),
      HasSubstr("'y.npy' holds labels of shape [2, 2]"));
}

TEST(ArraysTest, RegressionTargetsBecomeFloats) {
  ArrayView x = view<float>("'x.npy'", ElementType::F32, {2, 1}, {1, 2});
  ArrayView y =
      view<double>("'y.npy'", ElementType::F64, {2, 2}, {0.25, -1, 3, 1e10});
  Dataset data = datasetFromArrays(x, y, values({1}, 2), "d");
  EXPECT_TRUE(data.regression());
  EXPECT_EQ(data.targetWidth, 2);
  EXPECT_EQ(data.targets, (std::vector<float>{0.25f, -1, 3, 1e10f}));
  EXPECT_TRUE(data.y.empty());
  ArrayView one = view<int32_t>("'y.npy'", ElementType::I32, {2}, {5, -6});
  EXPECT_EQ(datasetFromArrays(x, one, values({1}, 1), "d").targets,
            (std::vector<float>{5, -6}));
  EXPECT_THAT(errorOf([&] { datasetFromArrays(x, y, values({1}, 3), "d"); }),
              AllOf(HasSubstr("'y.npy' holds targets of shape [2, 2]"),
                    HasSubstr("target has 3 values")));
}

TEST(ArraysTest, NonFiniteValuesNameTheSample) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  ArrayView x =
      view<float>("'x.npy'", ElementType::F32, {3, 2}, {0, 1, 2, 3, 4, nan});
  EXPECT_EQ(errorOf([&] {
              datasetFromArrays(x, labels({0, 0, 0}), classes({2}, 1), "d");
            }),
            "'x.npy': the input of sample 2 holds NaN at element 1; mbt "
            "trains on finite values only");
  ArrayView halves =
      view<uint16_t>("'x.npy'", ElementType::F16, {2, 1}, {0x3c00, 0xfc00});
  EXPECT_THAT(errorOf([&] {
                datasetFromArrays(halves, labels({0, 0}), classes({1}, 1), "d");
              }),
              HasSubstr("sample 1 holds -infinity"));
  ArrayView big = view<double>("'x.npy'", ElementType::F64, {2, 1}, {1, 1e300});
  EXPECT_THAT(errorOf([&] {
                datasetFromArrays(big, labels({0, 0}), classes({1}, 1), "d");
              }),
              HasSubstr("sample 1 holds 1e+300 (beyond f32's range)"));
  ArrayView good = view<float>("'x.npy'", ElementType::F32, {2, 1}, {1, 2});
  ArrayView y = view<float>("'y.npy'", ElementType::F32, {2, 1}, {nan, 1});
  EXPECT_THAT(errorOf([&] { datasetFromArrays(good, y, values({1}, 1), "d"); }),
              HasSubstr("'y.npy': the target of sample 0 holds NaN"));
}

TEST(ArraysTest, ThreadsGiveOneThreadsResultAndError) {
  // 4096 x 512 = 2M elements: converted in several ranges where there are
  // several cores. Values of every magnitude, in f16 to exercise a real
  // conversion.
  int64_t n = 4096, f = 512;
  std::vector<uint16_t> bits(n * f);
  for (size_t i = 0; i < bits.size(); ++i)
    bits[i] = uint16_t((i * 2654435761u) >> 7) & 0x7bff;
  ArrayView x = view("'x.npy'", ElementType::F16, {n, f}, bits);
  ArrayView y = labels(std::vector<int64_t>(n, 0));
  Dataset data = datasetFromArrays(x, y, classes({f}, 1), "d");
  EXPECT_EQ(data.x, convert(ElementType::F16, bits.data(), bits.size()));
  // NaNs in a late range and an early one: the earliest sample is named.
  bits[(n - 10) * f + 3] = 0x7e00;
  bits[(n / 8) * f + 5] = 0x7e00;
  ArrayView bad = view("'x.npy'", ElementType::F16, {n, f}, bits);
  EXPECT_THAT(errorOf([&] { datasetFromArrays(bad, y, classes({f}, 1), "d"); }),
              HasSubstr("sample 512 holds NaN at element 5"));
}

} // namespace
