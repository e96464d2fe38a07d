//===- SafetensorsTest.cpp - .safetensors files: good and broken ----------===//
//
// Each case writes its own file: an 8-byte length, the JSON header, the
// data. The layout follows the format's documentation
// (huggingface/safetensors, README "Format"); the header is written by hand
// so that every inconsistency can be produced exactly.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/Safetensors.h"
#include "mbt/runtime/Error.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

template <typename T> std::string raw(std::initializer_list<T> values) {
  std::string bytes;
  for (T value : values)
    bytes.append(reinterpret_cast<const char *>(&value), sizeof(T));
  return bytes;
}

std::string safetensors(const std::string &header, const std::string &data) {
  std::string out;
  for (int i = 0; i < 8; ++i)
    out += char((uint64_t(header.size()) >> (8 * i)) & 0xff);
  return out + header + data;
}

std::vector<float> floatsOf(const ArrayView &view) {
  std::vector<float> out(view.elements());
  convertToFloat(view.type, view.data, out.size(), out.data());
  return out;
}

/// Two tensors: "b" F32 [2, 3] at [0, 24), "a" I64 [2] at [24, 40), and
/// metadata, with a header padded by spaces as the Python writer pads it.
const std::string kGoodHeader =
    R"({"__metadata__":{"format":"pt"},)"
    R"("b":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
    R"("a":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}}    )";

std::string goodData() {
  return raw<float>({1, 2, 3, 4, 5, 6.5f}) + raw<int64_t>({-7, 9});
}

class SafetensorsTest : public ::testing::Test {
protected:
  std::string write(const std::string &bytes) {
    std::ofstream(path(), std::ios::binary) << bytes;
    return path();
  }
  std::string path() const { return dir.file("m.safetensors"); }
  /// The error reading tensor "a" from a file of `header` and `data`.
  std::string errorFor(const std::string &header, const std::string &data) {
    write(safetensors(header, data));
    return errorOf([&] { readSafetensor(path(), "a"); });
  }

  TempDir dir;
};

TEST_F(SafetensorsTest, ReadsTensorsAndSkipsMetadata) {
  write(safetensors(kGoodHeader, goodData()));
  EXPECT_THAT(safetensorNames(path()), ElementsAre("a", "b"));
  ArrayView b = readSafetensor(path(), "b");
  EXPECT_EQ(b.origin, "'" + path() + "': tensor 'b'");
  EXPECT_EQ(b.type, ElementType::F32);
  EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(floatsOf(b), ElementsAre(1, 2, 3, 4, 5, 6.5f));
  ArrayView a = readSafetensor(path(), "a");
  EXPECT_EQ(a.type, ElementType::I64);
  EXPECT_THAT(floatsOf(a), ElementsAre(-7, 9));
}

TEST_F(SafetensorsTest, ReadsEveryDtype) {
  struct Case {
    const char *dtype;
    ElementType type;
    std::string bytes;
    float first;
  } cases[] = {
      {"BOOL", ElementType::Bool, "\x01", 1},
      {"U8", ElementType::U8, "\xc8", 200},
      {"I8", ElementType::I8, "\xff", -1},
      {"U16", ElementType::U16, raw<uint16_t>({60000}), 60000},
      {"I16", ElementType::I16, raw<int16_t>({-300}), -300},
      {"U32", ElementType::U32, raw<uint32_t>({70000}), 70000},
      {"I32", ElementType::I32, raw<int32_t>({-70000}), -70000},
      {"U64", ElementType::U64, raw<uint64_t>({1}), 1},
      {"I64", ElementType::I64, raw<int64_t>({-2}), -2},
      {"F16", ElementType::F16, raw<uint16_t>({0x3c00}), 1},
      {"BF16", ElementType::BF16, raw<uint16_t>({0xc040}), -3},
      {"F32", ElementType::F32, raw<float>({0.75f}), 0.75f},
      {"F64", ElementType::F64, raw<double>({-0.5}), -0.5f},
  };
  for (const Case &c : cases) {
    write(safetensors(std::string(R"({"a":{"dtype":")") + c.dtype +
                          R"(","shape":[1],"data_offsets":[0,)" +
                          std::to_string(c.bytes.size()) + "]}}",
                      c.bytes));
    ArrayView a = readSafetensor(path(), "a");
    EXPECT_EQ(a.type, c.type) << c.dtype;
    EXPECT_THAT(floatsOf(a), ElementsAre(c.first)) << c.dtype;
  }
}

TEST_F(SafetensorsTest, MissingNameListsTheNames) {
  write(safetensors(kGoodHeader, goodData()));
  EXPECT_EQ(errorOf([&] { readSafetensor(path(), "weights"); }),
            "'" + path() + "' holds no tensor 'weights': it holds 'a', 'b'");
  write(safetensors("{}", ""));
  EXPECT_THAT(errorOf([&] { readSafetensor(path(), "x"); }),
              HasSubstr("it holds no tensors"));
}

TEST_F(SafetensorsTest, BadOffsetsAreReported) {
  std::string f32 = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":)";
  EXPECT_THAT(errorFor(f32 + "[0,12]}}", std::string(8, '\0')),
              AllOf(HasSubstr("tensor 'a'"), HasSubstr("[0,12]"),
                    HasSubstr("within the 8 bytes of data")));
  EXPECT_THAT(errorFor(f32 + "[8,0]}}", std::string(8, '\0')),
              HasSubstr("are not [begin, end]"));
  EXPECT_THAT(errorFor(f32 + "[0,4]}}", std::string(4, '\0')),
              HasSubstr("hold 4 bytes but shape [2] of F32 needs 8"));
  EXPECT_THAT(errorFor(f32 + "[0,-8]}}", std::string(8, '\0')),
              HasSubstr("are not [begin, end]"));
  EXPECT_THAT(errorFor(f32 + "[0]}}", std::string(8, '\0')),
              HasSubstr("are not [begin, end]"));
  // Bytes no tensor owns, before or after: the data must be tiled exactly.
  EXPECT_THAT(errorFor(f32 + "[4,12]}}", std::string(12, '\0')),
              HasSubstr("starts at byte 4 of the data, but the tensors "
                        "before it end at byte 0"));
  EXPECT_THAT(errorFor(f32 + "[0,8]}}", std::string(9, '\0')),
              HasSubstr("the tensors cover 8 bytes of data but the file "
                        "holds 9"));
  // Two tensors sharing bytes.
  std::string overlap =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  EXPECT_THAT(errorFor(overlap, std::string(8, '\0')),
              AllOf(HasSubstr("tensor 'b'"), HasSubstr("without gaps or "
                                                       "overlaps")));
}

TEST_F(SafetensorsTest, BadShapesAndDtypesAreReported) {
  EXPECT_THAT(
      errorFor(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})",
               ""),
      HasSubstr("\"shape\" holds -1, not a size"));
  EXPECT_THAT(errorFor(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],)"
                       R"("data_offsets":[0,0]}})",
                       ""),
              HasSubstr("too large"));
  EXPECT_THAT(
      errorFor(R"({"a":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})",
               std::string(8, '\0')),
      HasSubstr("unknown dtype \"C64\""));
  EXPECT_THAT(errorFor(R"({"a":{"dtype":"F32","shape":[1]}})", ""),
              HasSubstr("expected an object with"));
  // An fp8 tensor is sized and checked, but only the others can be read.
  write(safetensors(
      R"({"a":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]},)"
      R"("b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})",
      "\x01\x02\x03"));
  EXPECT_THAT(floatsOf(readSafetensor(path(), "b")), ElementsAre(3.0f));
  EXPECT_THAT(errorOf([&] { readSafetensor(path(), "a"); }),
              HasSubstr("is F8_E4M3, which mbt does not convert"));
}

TEST_F(SafetensorsTest, BrokenHeadersAreReported) {
  write(std::string("\x10\x00\x00", 3));
  EXPECT_THAT(errorOf([&] { safetensorNames(path()); }),
              AllOf(HasSubstr(path()), HasSubstr("holds 3 bytes")));
  write(safetensors(kGoodHeader, goodData()).substr(0, 20));
  EXPECT_THAT(errorOf([&] { safetensorNames(path()); }),
              AllOf(HasSubstr("truncated"), HasSubstr("holds 12")));
  EXPECT_THAT(errorFor(R"({"a":{"dtype":"F32",,}})", ""),
              AllOf(HasSubstr("byte offset 28: invalid JSON header"),
                    HasSubstr("syntax error")));
  EXPECT_THAT(errorFor("[1, 2]", ""),
              HasSubstr("the JSON header must be an object"));
  EXPECT_THAT(errorOf([] { safetensorNames("/nonexistent.safetensors"); }),
              HasSubstr("cannot open '/nonexistent.safetensors'"));
}

} // namespace

// Mutations caught: data offsets that do not tile (the reader refuses the
// file), an f64 tensor written as f32 (its bytes differ), a header not
// padded to 8 bytes, a length written big-endian, and a repeated name.
TEST_F(SafetensorsTest, WrittenFilesReadBackBitForBit) {
  std::vector<float> weight = {1.5f, -2.0f, 3.25f, 1e-30f, -0.0f, 7.0f};
  std::vector<double> bias = {0.1, -1e300};
  std::vector<float> scalar = {42.0f};
  std::vector<NamedTensor> tensors = {
      {"fc.w", {2, 3}, mbt::DType::F32, weight.data()},
      {"fc.b", {2}, mbt::DType::F64, bias.data()},
      {"bn.count", {}, mbt::DType::F32, scalar.data()}};
  std::string bytes = safetensorsFile(tensors);
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = headerSize << 8 | static_cast<uint8_t>(bytes[i]);
  EXPECT_EQ(headerSize % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + headerSize + 6 * 4 + 2 * 8 + 4);
  write(bytes);
  EXPECT_THAT(safetensorNames(path()), ElementsAre("bn.count", "fc.b", "fc.w"));
  ArrayView w = readSafetensor(path(), "fc.w");
  EXPECT_EQ(w.type, ElementType::F32);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(w.data, weight.data(), 6 * sizeof(float)), 0);
  ArrayView b = readSafetensor(path(), "fc.b");
  EXPECT_EQ(b.type, ElementType::F64);
  EXPECT_EQ(std::memcmp(b.data, bias.data(), 2 * sizeof(double)), 0);
  ArrayView s = readSafetensor(path(), "bn.count");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_THAT(floatsOf(s), ElementsAre(42.0f));

  tensors.push_back(tensors[0]);
  EXPECT_THAT(errorOf([&] { safetensorsFile(tensors); }),
              HasSubstr("cannot write tensor 'fc.w' to a safetensors file "
                        "twice"));
}
