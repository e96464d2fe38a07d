//===- InitCheckpointTest.cpp - models that start from a file's tensors ---===//
//
// loadInitCheckpoint against files written by safetensorsFile: which
// values land where, for every model, in either float type.
//
//===----------------------------------------------------------------------===//
#include "mbt/runtime/InitCheckpoint.h"

#include "mbt/runtime/Error.h"
#include "mbt/runtime/data/Safetensors.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

using namespace mbt;
using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::HasSubstr;

namespace {

/// Two models of w [2, 3] then b [3], and a buffer s [1].
Manifest twoModels(DType dtype = DType::F32) {
  Manifest m;
  m.model = "m";
  m.models = 2;
  m.dtype = dtype;
  m.params = {{"w", {2, 3}, 0, 6, {}}, {"b", {3}, 6, 3, {}}};
  m.paramCount = 9;
  m.buffers = {{"s", {1}, 0, 1, {}}};
  m.bufferCount = 1;
  return m;
}

class InitCheckpointTest : public ::testing::Test {
protected:
  /// Writes `tensors` (float32 values) to NAME in the temp dir.
  std::string
  file(const std::string &name,
       const std::vector<std::pair<std::string, std::vector<int64_t>>> &shapes,
       const std::vector<std::vector<float>> &values) {
    std::vector<NamedTensor> tensors;
    for (size_t i = 0; i < shapes.size(); ++i)
      tensors.push_back(
          {shapes[i].first, shapes[i].second, DType::F32, values[i].data()});
    std::string path = dir.file(name);
    std::ofstream(path, std::ios::binary) << safetensorsFile(tensors);
    return path;
  }
  /// Params filled with 100 + i and buffers with -1, as if initialized.
  void initialized(const Manifest &m) {
    params = FloatBuffer(m.dtype, m.models * m.paramCount);
    buffers = FloatBuffer(m.dtype, m.models * m.bufferCount);
    for (int64_t i = 0; i < m.models * m.paramCount; ++i) {
      float v = 100.0f + static_cast<float>(i);
      params.store(i, &v, 1);
    }
    for (int64_t i = 0; i < m.models * m.bufferCount; ++i) {
      float v = -1.0f;
      buffers.store(i, &v, 1);
    }
  }

  TempDir dir;
  FloatBuffer params, buffers;
};

const std::vector<float> kW = {1, 2, 3, 4, 5, 6}, kWt = {1, 4, 2, 5, 3, 6},
                         kB = {7, 8, 9}, kS = {0.5f};

} // namespace

// Mutations caught: a tensor copied to another parameter's place, only
// model 0 loaded, a transpose not applied (or applied to the wrong one), a
// buffer left out.
TEST_F(InitCheckpointTest, EveryModelGetsTheFilesTensors) {
  Manifest m = twoModels();
  std::string path = file(
      "a.safetensors", {{"w", {3, 2}}, {"b", {3}}, {"s", {1}}}, {kWt, kB, kS});
  m.initCheckpoint = InitCheckpointSpec{{path}, {"w"}, false};
  initialized(m);
  loadInitCheckpoint(m, params, buffers);
  for (int64_t model = 0; model < 2; ++model) {
    for (int64_t i = 0; i < 6; ++i)
      EXPECT_EQ(params.get(model * 9 + i), kW[i]) << model << " w " << i;
    for (int64_t i = 0; i < 3; ++i)
      EXPECT_EQ(params.get(model * 9 + 6 + i), kB[i]) << model << " b " << i;
    EXPECT_EQ(buffers.get(model), 0.5);
  }
}

// One file per model; partial keeps each model's own initial values where
// its file has nothing, and ignores the file's other tensors.
TEST_F(InitCheckpointTest, OneFilePerModelAndPartial) {
  Manifest m = twoModels();
  std::string a =
      file("a.safetensors", {{"b", {3}}, {"head", {2}}}, {kB, {1, 1}});
  std::string b = file("b.safetensors", {{"w", {2, 3}}}, {kW});
  m.initCheckpoint = InitCheckpointSpec{{a, b}, {}, true};
  initialized(m);
  loadInitCheckpoint(m, params, buffers);
  EXPECT_EQ(params.get(0), 100.0);     // model 0's w: its own
  EXPECT_EQ(params.get(6), 7.0);       // model 0's b: file a's
  EXPECT_EQ(params.get(9 + 5), 6.0);   // model 1's w: file b's
  EXPECT_EQ(params.get(9 + 6), 115.0); // model 1's b: its own
  EXPECT_EQ(buffers.get(1), -1.0);
}

// An f64 model gets F32 values exactly, and F64 ones bit for bit.
TEST_F(InitCheckpointTest, F64ModelsReadExactly) {
  Manifest m = twoModels(DType::F64);
  std::vector<double> b64 = {0.1, 1e-300, -2.5};
  std::vector<NamedTensor> tensors = {{"w", {2, 3}, DType::F32, kW.data()},
                                      {"b", {3}, DType::F64, b64.data()},
                                      {"s", {1}, DType::F32, kS.data()}};
  std::string path = dir.file("f64.safetensors");
  std::ofstream(path, std::ios::binary) << safetensorsFile(tensors);
  m.initCheckpoint = InitCheckpointSpec{{path}, {}, false};
  initialized(m);
  loadInitCheckpoint(m, params, buffers);
  EXPECT_EQ(params.get(9 + 1), 2.0);
  EXPECT_EQ(params.get(9 + 6), 0.1);
  EXPECT_EQ(params.get(9 + 7), 1e-300);
}

TEST_F(InitCheckpointTest, ErrorsNameTheFileAndTheTensor) {
  Manifest m = twoModels();
  initialized(m);
  auto errorWith = [&](const std::string &path,
                       std::vector<std::string> transpose = {}) {
    m.initCheckpoint = InitCheckpointSpec{{path}, transpose, false};
    return errorOf([&] { loadInitCheckpoint(m, params, buffers); });
  };
  std::string lacks =
      file("lacks.safetensors", {{"w", {2, 3}}, {"s", {1}}}, {kW, kS});
  EXPECT_THAT(errorWith(lacks), HasSubstr("lacks.safetensors' has no tensor "
                                          "'b' for model 'm'"));
  std::string extra = file("extra.safetensors",
                           {{"w", {2, 3}}, {"b", {3}}, {"s", {1}}, {"x", {1}}},
                           {kW, kB, kS, {0}});
  EXPECT_THAT(errorWith(extra), HasSubstr("holds tensors that are not "
                                          "parameters or buffers of model "
                                          "'m': 'x'"));
  std::string flipped =
      file("flipped.safetensors", {{"w", {3, 2}}, {"b", {3}}, {"s", {1}}},
           {kWt, kB, kS});
  EXPECT_THAT(errorWith(flipped),
              HasSubstr("tensor 'w' has shape [3, 2], but 'w' of model 'm' "
                        "is [2, 3] (it looks transposed, as nn.Linear's [out, "
                        "in]: checkpoint(..., transpose = [\"w\"]))"));
  std::string nan =
      file("nan.safetensors", {{"w", {2, 3}}, {"b", {3}}, {"s", {1}}},
           {kW, {1, std::nanf(""), 3}, kS});
  EXPECT_THAT(errorWith(nan), HasSubstr("tensor 'b' holds nan at element 1"));
  EXPECT_THAT(errorWith(dir.file("none.safetensors")),
              HasSubstr("none.safetensors"));
}
