//===- ManifestTest.cpp - Manifest parsing and validation -----------------===//
//
// One good manifest (the example of docs/abi.md, shrunk to 2 models), then
// one test per rule: each breaks exactly one field and checks that the error
// names that field.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Manifest.h"
#include "mbt/runtime/Error.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace mbt;
using namespace mbt::runtime;
using mbt::test::errorOf;
using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

json goodManifest() {
  return json::parse(R"({
    "abi_version": 17, "dtype": "f32", "model": "mlp", "models": 2,
    "params": [
      {"name": "w1", "shape": [784, 128], "offset": 0, "size": 100352,
       "init": {"kind": "normal", "mean": 0.0, "std": 0.05}},
      {"name": "b1", "shape": [128], "offset": 100352, "size": 128,
       "init": {"kind": "zeros"}},
      {"name": "w2", "shape": [128, 10], "offset": 100480, "size": 1280,
       "init": {"kind": "kaiming_uniform"}},
      {"name": "b2", "shape": [10], "offset": 101760, "size": 10,
       "init": {"kind": "uniform", "low": -0.1, "high": 0.1}}
    ],
    "param_count": 101770,
    "input": {"name": "x", "shape": [28, 28], "features": 784},
    "target": {"name": "y", "classes": 10},
    "optimizer": {"rule": "adam", "slots": ["m", "v"],
                  "hyper": ["lr", "beta1", "beta2", "eps", "weight_decay"]},
    "hyper_values": [[0.0001, 0.9, 0.999, 1e-08, 0.0],
                     [0.001, 0.9, 0.999, 1e-08, 0.0]],
    "seeds": [0, 18446744073709551615],
    "outputs": ["loss", "acc"],
    "data": {"name": "fashion_mnist", "batch": 128, "shuffle_seed": 0},
    "epochs": 2
  })");
}

/// The error parsing `manifest` gives ("(no error)" if it parses).
std::string errorFor(const json &manifest) {
  return errorOf([&] { parseManifest(manifest.dump(), "model.so"); });
}

TEST(ManifestTest, ParsesTheAbiExample) {
  Manifest m = parseManifest(goodManifest().dump(), "model.so");
  EXPECT_EQ(m.abiVersion, kAbiVersion);
  EXPECT_EQ(m.dtype, DType::F32);
  EXPECT_EQ(m.model, "mlp");
  EXPECT_EQ(m.models, 2);
  ASSERT_EQ(m.params.size(), 4u);
  EXPECT_EQ(m.params[0].name, "w1");
  EXPECT_EQ(m.params[0].shape, (std::vector<int64_t>{784, 128}));
  EXPECT_EQ(m.params[0].init.kind, InitSpec::Kind::Normal);
  EXPECT_DOUBLE_EQ(m.params[0].init.stddev, 0.05);
  EXPECT_EQ(m.params[2].init.kind, InitSpec::Kind::KaimingUniform);
  EXPECT_DOUBLE_EQ(m.params[3].init.low, -0.1);
  EXPECT_EQ(m.paramCount, 101770);
  EXPECT_EQ(m.features, 784);
  EXPECT_EQ(m.inputShape, (std::vector<int64_t>{28, 28}));
  EXPECT_EQ(m.classes, 10);
  EXPECT_EQ(m.optimizerRule, "adam");
  EXPECT_EQ(m.numSlots(), 2);
  EXPECT_EQ(m.numHyper(), 5);
  EXPECT_DOUBLE_EQ(m.hyperValues[1][0], 0.001);
  EXPECT_EQ(m.seeds[1], UINT64_MAX);
  EXPECT_EQ(m.outputs, (std::vector<std::string>{"loss", "acc"}));
  EXPECT_EQ(m.data.name, "fashion_mnist");
  EXPECT_EQ(m.data.batch, 128);
  EXPECT_EQ(m.epochs, 2);
}

/// Whether every key of `part`, in objects at any depth, is in `whole` with
/// an equal value; reports the first one that is not.
void expectContains(const json &whole, const json &part,
                    const std::string &path) {
  if (!part.is_object() || !whole.is_object()) {
    EXPECT_EQ(whole, part) << path;
    return;
  }
  for (auto it = part.begin(); it != part.end(); ++it) {
    ASSERT_TRUE(whole.contains(it.key())) << path << "." << it.key();
    expectContains(whole.at(it.key()), it.value(), path + "." + it.key());
  }
}

/// Every key of the ABI example survives reading and writing with its value
/// (the writer adds the defaults it left out): the compiler writes what the
/// runtime reads (ManifestRoundTripTest goes field by field).
TEST(ManifestTest, WritingTheAbiExampleKeepsEveryKey) {
  json example = goodManifest();
  json again =
      json::parse(writeManifest(parseManifest(example.dump(), "model.so")));
  expectContains(again, example, "manifest");
}

TEST(ManifestTest, RejectsTextThatIsNotJson) {
  EXPECT_THAT(errorOf([] { parseManifest("{\"abi_version\": ", "model.so"); }),
              AllOf(HasSubstr("model.so"), HasSubstr("not valid JSON")));
}

TEST(ManifestTest, RejectsNonObjectTopLevel) {
  EXPECT_THAT(errorOf([] { parseManifest("[1, 2]", "model.so"); }),
              HasSubstr("JSON object"));
}

TEST(ManifestTest, NamesEachMissingTopLevelField) {
  for (const char *field :
       {"abi_version", "dtype", "model", "models", "params", "param_count",
        "input", "target", "optimizer", "hyper_values", "seeds", "outputs",
        "data", "epochs"}) {
    json m = goodManifest();
    m.erase(field);
    EXPECT_THAT(errorFor(m), AllOf(HasSubstr("model.so"),
                                   HasSubstr("field '" + std::string(field) +
                                             "': missing")));
  }
}

TEST(ManifestTest, NamesMissingNestedField) {
  json m = goodManifest();
  m["params"][1].erase("offset");
  EXPECT_THAT(errorFor(m), HasSubstr("field 'params[1].offset': missing"));
  m = goodManifest();
  m["data"].erase("batch");
  EXPECT_THAT(errorFor(m), HasSubstr("field 'data.batch': missing"));
}

TEST(ManifestTest, RejectsWrongJsonType) {
  json m = goodManifest();
  m["models"] = "16";
  EXPECT_THAT(errorFor(m),
              HasSubstr("field 'models': expected an integer, got string"));
}

TEST(ManifestTest, RejectsUnknownAbiVersion) {
  json m = goodManifest();
  m["abi_version"] = 99;
  EXPECT_THAT(errorFor(m),
              HasSubstr("version " + std::to_string(kAbiVersion) + ", got 99"));
}

TEST(ManifestTest, ReadsDtype) {
  json m = goodManifest();
  EXPECT_EQ(parseManifest(m.dump(), "model.so").dtype, DType::F32);
  m["dtype"] = "f64";
  EXPECT_EQ(parseManifest(m.dump(), "model.so").dtype, DType::F64);
}

TEST(ManifestTest, ReadsDeviceDefaultingToCpu) {
  json m = goodManifest();
  m.erase("device");
  EXPECT_EQ(parseManifest(m.dump(), "model.so").device, Manifest::Device::CPU);
  m["device"] = "cuda";
  EXPECT_EQ(parseManifest(m.dump(), "model.so").device, Manifest::Device::CUDA);
  m["device"] = "tpu";
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("field 'device'"),
                    HasSubstr("\"cpu\" or \"cuda\", got \"tpu\"")));
}

TEST(ManifestTest, RejectsUnknownDtype) {
  json m = goodManifest();
  m["dtype"] = "bf16";
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("field 'dtype'"),
                    HasSubstr("\"f32\" or \"f64\", got \"bf16\"")));
}

TEST(ManifestTest, RejectsNonContiguousOffsets) {
  json m = goodManifest();
  m["params"][1]["offset"] = 100353;
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("params[1].offset"), HasSubstr("expected 100352"),
                    HasSubstr("after 'w1'")));
}

TEST(ManifestTest, RejectsFirstOffsetOtherThanZero) {
  json m = goodManifest();
  m["params"][0]["offset"] = 4;
  EXPECT_THAT(errorFor(m), HasSubstr("params[0].offset"));
}

TEST(ManifestTest, RejectsSizeThatDisagreesWithShape) {
  json m = goodManifest();
  m["params"][1]["size"] = 127;
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("params[1].size"), HasSubstr("shape holds 128")));
}

TEST(ManifestTest, RejectsParamCountThatIsNotTheSumOfSizes) {
  json m = goodManifest();
  m["param_count"] = 101771;
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("param_count"), HasSubstr("sum to 101770")));
}

TEST(ManifestTest, RejectsHyperValuesWithWrongRowCount) {
  json m = goodManifest();
  m["hyper_values"].erase(1);
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("hyper_values"), HasSubstr("one per model (2)")));
}

TEST(ManifestTest, RejectsHyperRowWithWrongLength) {
  json m = goodManifest();
  m["hyper_values"][1].erase(4);
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("hyper_values[1]"), HasSubstr("expected 5")));
}

TEST(ManifestTest, ParsesOptionalModelArguments) {
  json m = goodManifest();
  EXPECT_TRUE(parseManifest(m.dump(), "model.so").modelArgNames.empty());
  m["model_args"] = json::parse(
      R"({"names": ["gain", "hidden"], "values": [[0.5, 64], [2.0, 64]]})");
  Manifest parsed = parseManifest(m.dump(), "model.so");
  EXPECT_EQ(parsed.modelArgNames, (std::vector<std::string>{"gain", "hidden"}));
  ASSERT_EQ(parsed.modelArgValues.size(), 2u);
  EXPECT_EQ(parsed.modelArgValues[1], (std::vector<double>{2.0, 64}));
}

TEST(ManifestTest, RejectsModelArgumentRowWithWrongLength) {
  json m = goodManifest();
  m["model_args"] =
      json::parse(R"({"names": ["gain"], "values": [[0.5], [2.0, 1.0]]})");
  EXPECT_THAT(errorFor(m), AllOf(HasSubstr("model_args.values[1]"),
                                 HasSubstr("expected 1")));
}

TEST(ManifestTest, ParsesOptionalClipNorm) {
  json m = goodManifest();
  m["clip_norm"] = nullptr;
  EXPECT_TRUE(parseManifest(m.dump(), "model.so").clipNorm.empty());
  m["clip_norm"] = json::parse("[1.0, 0.5]");
  EXPECT_EQ(parseManifest(m.dump(), "model.so").clipNorm,
            (std::vector<double>{1.0, 0.5}));
  m["clip_norm"] = json::parse("[1.0]");
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("clip_norm"), HasSubstr("one per model (2)")));
}

TEST(ManifestTest, ParsesOptionalSchedule) {
  json m = goodManifest();
  m["schedule"] = nullptr;
  EXPECT_TRUE(parseManifest(m.dump(), "model.so").scheduleName.empty());
  m["schedule"] = json::parse(R"({"name": "step",
      "params": ["step_size", "gamma"], "values": [[30, 0.5], [10, 0.1]]})");
  Manifest parsed = parseManifest(m.dump(), "model.so");
  EXPECT_EQ(parsed.scheduleName, "step");
  EXPECT_EQ(parsed.scheduleValues[1], (std::vector<double>{10, 0.1}));
  m["schedule"]["values"].erase(1);
  EXPECT_THAT(errorFor(m), AllOf(HasSubstr("schedule.values"),
                                 HasSubstr("one per model (2)")));
}

TEST(ManifestTest, ParsesOptionalDecayFlags) {
  json m = goodManifest();
  EXPECT_TRUE(parseManifest(m.dump(), "model.so").params[1].decay);
  m["params"][1]["decay"] = false;
  EXPECT_FALSE(parseManifest(m.dump(), "model.so").params[1].decay);
  m["params"][1]["decay"] = 0;
  EXPECT_THAT(errorFor(m), HasSubstr("params[1].decay"));
}

/// Frozen parameters (the sweep's freeze) follow the trainable ones: with
/// w1 frozen, b1, w2, b2 take columns [0, 1418) and w1 the rest.
TEST(ManifestTest, PlacesFrozenParametersAfterTheTrainableOnes) {
  json m = goodManifest();
  EXPECT_EQ(parseManifest(m.dump(), "model.so").trainableCount, 101770);
  m["params"][0]["trainable"] = false;
  m["params"][0]["offset"] = 1418;
  m["params"][1]["offset"] = 0;
  m["params"][2]["offset"] = 128;
  m["params"][3]["offset"] = 1408;
  Manifest parsed = parseManifest(m.dump(), "model.so");
  EXPECT_FALSE(parsed.params[0].trainable);
  EXPECT_TRUE(parsed.params[1].trainable);
  EXPECT_EQ(parsed.trainableCount, 1418);
  EXPECT_EQ(parsed.paramCount, 101770);
  m["trainable_count"] = 1418;
  EXPECT_EQ(parseManifest(m.dump(), "model.so").trainableCount, 1418);

  json wrongCount = m;
  wrongCount["trainable_count"] = 101770;
  EXPECT_THAT(errorFor(wrongCount), AllOf(HasSubstr("field 'trainable_count'"),
                                          HasSubstr("sizes sum to 1418")));
  // The frozen one where it would be without freeze.
  json inOrder = goodManifest();
  inOrder["params"][0]["trainable"] = false;
  EXPECT_THAT(errorFor(inOrder),
              AllOf(HasSubstr("params[0].offset"), HasSubstr("expected 1418"),
                    HasSubstr("after the 1418 trainable columns")));
  json notABool = m;
  notABool["params"][0]["trainable"] = "no";
  EXPECT_THAT(errorFor(notABool), HasSubstr("params[0].trainable"));
  json frozenBuffer = m;
  frozenBuffer["buffers"] = json::parse(R"([
      {"name": "bn.running_mean", "shape": [4], "offset": 0, "size": 4,
       "init": {"kind": "zeros"}, "trainable": false}])");
  frozenBuffer["buffer_count"] = 4;
  EXPECT_THAT(errorFor(frozenBuffer),
              AllOf(HasSubstr("buffers[0].trainable"),
                    HasSubstr("a buffer cannot be frozen")));
}

TEST(ManifestTest, ParsesOptionalBuffers) {
  json m = goodManifest();
  EXPECT_TRUE(parseManifest(m.dump(), "model.so").buffers.empty());
  m["buffers"] = json::parse(R"([
      {"name": "bn.running_mean", "shape": [4], "offset": 0, "size": 4,
       "init": {"kind": "zeros"}},
      {"name": "bn.running_var", "shape": [4], "offset": 4, "size": 4,
       "init": {"kind": "ones"}}])");
  m["buffer_count"] = 8;
  Manifest parsed = parseManifest(m.dump(), "model.so");
  ASSERT_EQ(parsed.buffers.size(), 2u);
  EXPECT_EQ(parsed.bufferCount, 8);
  EXPECT_EQ(parsed.buffers[1].name, "bn.running_var");
  EXPECT_EQ(parsed.buffers[1].offset, 4);
  EXPECT_EQ(parsed.buffers[1].init.kind, InitSpec::Kind::Ones);

  m["buffer_count"] = 9;
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("buffer_count"), HasSubstr("sum to 8")));
  m["buffer_count"] = 8;
  m["buffers"][1]["offset"] = 5;
  EXPECT_THAT(errorFor(m), HasSubstr("buffers[1].offset"));
  m["buffers"][1]["offset"] = 4;
  m["buffers"][1]["name"] = m["params"][0]["name"];
  EXPECT_THAT(errorFor(m), HasSubstr("duplicate parameter or buffer name"));
}

TEST(ManifestTest, RejectsSeedCountOtherThanModels) {
  json m = goodManifest();
  m["seeds"].push_back(3);
  EXPECT_THAT(errorFor(m), HasSubstr("field 'seeds'"));
}

TEST(ManifestTest, RejectsNegativeSeed) {
  json m = goodManifest();
  m["seeds"][0] = -1;
  EXPECT_THAT(errorFor(m), HasSubstr("seeds[0]"));
}

TEST(ManifestTest, RejectsUnknownInitKind) {
  json m = goodManifest();
  m["params"][0]["init"]["kind"] = "orthogonal";
  EXPECT_THAT(errorFor(m), AllOf(HasSubstr("params[0].init.kind"),
                                 HasSubstr("'orthogonal'")));
}

TEST(ManifestTest, RejectsNormalWithoutStd) {
  json m = goodManifest();
  m["params"][0]["init"].erase("std");
  EXPECT_THAT(errorFor(m), HasSubstr("params[0].init.std': missing"));
}

TEST(ManifestTest, RejectsUniformWithLowAboveHigh) {
  json m = goodManifest();
  m["params"][3]["init"]["low"] = 1.0;
  EXPECT_THAT(errorFor(m), HasSubstr("params[3].init"));
}

TEST(ManifestTest, RejectsKaimingOnAScalar) {
  json m = goodManifest();
  m["params"][3]["shape"] = json::array();
  m["params"][3]["size"] = 1;
  m["params"][3]["init"] = {{"kind", "kaiming_uniform"}};
  m["param_count"] = 101761;
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("params[3].init"), HasSubstr("fan-in")));
}

TEST(ManifestTest, RejectsDuplicateParamNames) {
  json m = goodManifest();
  m["params"][1]["name"] = "w1";
  EXPECT_THAT(errorFor(m),
              HasSubstr("duplicate parameter or buffer name 'w1'"));
}

TEST(ManifestTest, RejectsFeaturesThatDisagreeWithInputShape) {
  json m = goodManifest();
  m["input"]["features"] = 785;
  EXPECT_THAT(errorFor(m), HasSubstr("input.features"));
}

TEST(ManifestTest, RejectsNonPositiveModelsAndBatch) {
  json m = goodManifest();
  m["models"] = 0;
  EXPECT_THAT(errorFor(m), HasSubstr("field 'models'"));
  m = goodManifest();
  m["data"]["batch"] = 0;
  EXPECT_THAT(errorFor(m), HasSubstr("field 'data.batch'"));
}

TEST(ManifestTest, RejectsEmptyOutputs) {
  json m = goodManifest();
  m["outputs"] = json::array();
  EXPECT_THAT(errorFor(m), HasSubstr("field 'outputs'"));
}

} // namespace

namespace {

TEST(ManifestTest, ParsesKFoldRouting) {
  json m = goodManifest();
  m["data"]["routing"] = "kfold";
  m["data"]["folds"] = 3;
  m["data"]["fold"] = {2, 0};
  Manifest parsed = parseManifest(m.dump(), "model.so");
  EXPECT_EQ(parsed.data.routing, DataSpec::Routing::KFold);
  EXPECT_EQ(parsed.data.folds, 3);
  EXPECT_EQ(parsed.data.fold, (std::vector<int64_t>{2, 0}));
}

TEST(ManifestTest, RejectsAFoldIndexOutOfRange) {
  json m = goodManifest();
  m["data"]["routing"] = "kfold";
  m["data"]["folds"] = 3;
  m["data"]["fold"] = {2, 3};
  EXPECT_THAT(errorFor(m), HasSubstr("must be in [0, 3), got 3"));
}

TEST(ManifestTest, ParsesAValidationFractionAndRejectsBadOnes) {
  json m = goodManifest();
  EXPECT_EQ(parseManifest(m.dump(), "model.so").data.validation, 0.0);
  m["data"]["validation"] = 0.25;
  EXPECT_EQ(parseManifest(m.dump(), "model.so").data.validation, 0.25);
  m["data"]["validation"] = 1.0;
  EXPECT_THAT(errorFor(m), HasSubstr("must be a fraction in [0, 1)"));
  m["data"]["validation"] = 0.1;
  m["data"]["routing"] = "kfold";
  m["data"]["folds"] = 3;
  m["data"]["fold"] = {2, 0};
  EXPECT_THAT(errorFor(m), HasSubstr("cannot be combined with kfold routing"));
}

TEST(ManifestTest, ParsesAugmentationOfImagesOnly) {
  json m = goodManifest(); // input [28, 28]
  EXPECT_FALSE(parseManifest(m.dump(), "model.so").data.augments());
  m["data"]["crop"] = 4;
  m["data"]["flip"] = true;
  Manifest parsed = parseManifest(m.dump(), "model.so");
  EXPECT_EQ(parsed.data.crop, 4);
  EXPECT_TRUE(parsed.data.flip);
  m["data"]["flip"] = 1;
  EXPECT_THAT(errorFor(m),
              HasSubstr("field 'data.flip': must be true or false"));
  m["data"]["flip"] = false;
  m["data"]["crop"] = -1;
  EXPECT_THAT(errorFor(m), HasSubstr("data.crop"));
  m["data"]["crop"] = 2;
  m["input"]["shape"] = {784};
  EXPECT_THAT(errorFor(m), HasSubstr("crop and flip augment images, but the "
                                     "input's shape has rank 1"));
}

TEST(ManifestTest, ReadsTheUsersOwnFilesAndRejectsWhatTheirKindLacks) {
  json m = goodManifest();
  m["data"]["name"] = "csv";
  EXPECT_THAT(errorFor(m), HasSubstr("field 'data.source': missing"));
  m["data"]["source"] = {{"train", "/d/train.csv"}};
  EXPECT_THAT(errorFor(m), HasSubstr("needs the target column"));
  m["data"]["source"]["target"] = "label";
  Manifest parsed = parseManifest(m.dump(), "model.so");
  EXPECT_EQ(parsed.data.source.train, "/d/train.csv");
  EXPECT_EQ(parsed.data.source.target, "label");
  EXPECT_TRUE(parsed.data.source.header);
  m["data"]["source"]["x"] = "images";
  EXPECT_THAT(errorFor(m), HasSubstr("field 'data.source.x': is not a "
                                     "setting of csv data"));
  m["data"]["source"].erase("x");
  m["data"]["source"]["delimiter"] = ";;";
  EXPECT_THAT(errorFor(m), HasSubstr("must be one character"));
  m["data"]["source"].erase("delimiter");
  m["data"]["source"]["missing"] = "mean";
  EXPECT_EQ(parseManifest(m.dump(), "model.so").data.source.missing, "mean");
  m["data"]["source"]["missing"] = "median";
  EXPECT_THAT(errorFor(m), HasSubstr("field 'data.source.missing': must be "
                                     "\"zero\" or \"mean\", got \"median\""));
  m["data"]["source"].erase("missing");

  m["data"]["name"] = "npy";
  m["data"]["source"] = {
      {"train_x", "/x.npy"}, {"train_y", "/y.npy"}, {"test_x", "/tx.npy"}};
  EXPECT_THAT(errorFor(m), HasSubstr("needs both test_x and test_y"));

  m["data"]["name"] = "image_folder";
  m["data"]["source"] = {{"train", "/photos"}, {"mean", {0.5, 0.5}}};
  EXPECT_THAT(errorFor(m), HasSubstr("field 'data.source.mean': has 2 "
                                     "values for an input of 1 channels"));

  m["data"]["name"] = "fashion_mnist";
  EXPECT_THAT(errorFor(m), HasSubstr("belongs to a data set of files"));
}

TEST(ManifestTest, RankByMustNameAnOutput) {
  json m = goodManifest(); // outputs loss, acc
  m["rank_by"] = "acc";
  EXPECT_EQ(parseManifest(m.dump(), "model.so").rankBy, "acc");
  m["rank_by"] = "r2";
  EXPECT_THAT(errorFor(m), HasSubstr("field 'rank_by': names 'r2', which is "
                                     "not an output"));
}

// Mutations caught: a split output not read or not written (the round
// trip), its columns not counted in numColumns, and each check dropped.
TEST(ManifestTest, ReadsSplitOutputsAndTheirColumns) {
  json m = goodManifest(); // outputs loss, acc
  m["outputs"] = {"loss", "rmse", "acc", "r2"};
  m["split_outputs"] = {{{"name", "r2"}, {"reduce", "r2"}, {"width", 2}},
                        {{"name", "rmse"}, {"reduce", "rmse"}, {"width", 3}}};
  Manifest parsed = parseManifest(m.dump(), "model.so");
  ASSERT_EQ(parsed.splitOutputs.size(), 2u);
  EXPECT_EQ(parsed.splitOutputs[0].reduce, SplitOutput::Reduce::R2);
  EXPECT_EQ(parsed.columnsOf("r2"), 6);
  EXPECT_EQ(parsed.columnsOf("rmse"), 3);
  EXPECT_EQ(parsed.columnsOf("acc"), 1);
  EXPECT_EQ(parsed.numOutputs(), 4);
  EXPECT_EQ(parsed.numColumns(), 1 + 3 + 1 + 6);
  Manifest again = parseManifest(writeManifest(parsed), "again");
  EXPECT_EQ(again.numColumns(), parsed.numColumns());
  EXPECT_EQ(again.splitOutputs[1].name, "rmse");

  json bad = m;
  bad["split_outputs"][0]["name"] = "loss";
  EXPECT_THAT(errorFor(bad), HasSubstr("field 'split_outputs[0].name': names "
                                       "'loss', which is not a metric"));
  bad["split_outputs"][0]["name"] = "rmse";
  EXPECT_THAT(errorFor(bad), HasSubstr("field 'split_outputs[1].name': names "
                                       "'rmse' a second time"));
  bad = m;
  bad["split_outputs"][0]["reduce"] = "mean";
  EXPECT_THAT(errorFor(bad), HasSubstr("must be \"rmse\" or \"r2\", got "
                                       "\"mean\""));
  bad = m;
  bad["split_outputs"][1]["width"] = 0;
  EXPECT_THAT(errorFor(bad), HasSubstr("field 'split_outputs[1].width': must "
                                       "be between 1 and 2^20"));
}

// Mutations caught: init_checkpoint not written or not read, fileOf not
// picking the model's own file, and each check dropped.
TEST(ManifestTest, ReadsAnInitCheckpoint) {
  json m = goodManifest(); // 2 models; params w1 [784, 128], b1 [128], ...
  m["init_checkpoint"] = {{"files", {"/a.safetensors", "/b.safetensors"}},
                          {"transpose", {"w1"}},
                          {"partial", true}};
  Manifest parsed = parseManifest(m.dump(), "model.so");
  ASSERT_TRUE(parsed.initCheckpoint.has_value());
  EXPECT_EQ(parsed.initCheckpoint->fileOf(1), "/b.safetensors");
  EXPECT_TRUE(parsed.initCheckpoint->partial);
  Manifest again = parseManifest(writeManifest(parsed), "again");
  EXPECT_EQ(again.initCheckpoint->files, parsed.initCheckpoint->files);
  EXPECT_EQ(again.initCheckpoint->transpose, std::vector<std::string>{"w1"});
  EXPECT_TRUE(again.initCheckpoint->partial);

  json bad = m;
  bad["init_checkpoint"]["files"] = {"/a", "/b", "/c"};
  EXPECT_THAT(errorFor(bad), HasSubstr("field 'init_checkpoint.files': has 3 "
                                       "files, expected one or one per "
                                       "model (2)"));
  bad = m;
  bad["init_checkpoint"]["transpose"] = {"b1"};
  EXPECT_THAT(errorFor(bad), HasSubstr("names 'b1', which is not a parameter "
                                       "of two dimensions"));
  bad = m;
  bad["init_checkpoint"]["partial"] = 1;
  EXPECT_THAT(errorFor(bad), HasSubstr("field 'init_checkpoint.partial': "
                                       "must be true or false"));
}

TEST(ManifestTest, RejectsAnUnknownRouting) {
  json m = goodManifest();
  m["data"]["routing"] = "stratified";
  EXPECT_THAT(
      errorFor(m),
      HasSubstr("must be shared, kfold or bootstrap, got 'stratified'"));
}

} // namespace

/// goodManifest() with an input of token ids and a sequence data set.
json tokensManifest() {
  json m = goodManifest();
  m["input"] = json::parse(R"({"name": "x", "kind": "tokens", "vocab": 259,
                               "shape": [null], "features": 0})");
  m["data"] = json::parse(R"({"name": "fortunes", "batch": 0,
      "shuffle_seed": 3, "routing": "shared",
      "batching": {"strategy": "dynamic", "token_budget": 4096,
                   "window": 256, "max_length": 1000}})");
  return m;
}

TEST(ManifestTest, ParsesTokenInputAndSequenceBatching) {
  Manifest m = parseManifest(tokensManifest().dump(), "model.so");
  EXPECT_EQ(m.inputKind, Manifest::InputKind::Tokens);
  EXPECT_EQ(m.vocab, 259);
  EXPECT_EQ(m.features, 0);
  EXPECT_TRUE(m.inputShape.empty());
  ASSERT_TRUE(m.data.sequences());
  EXPECT_EQ(m.data.batching.strategy, "dynamic");
  EXPECT_EQ(m.data.batching.tokenBudget, 4096);
  EXPECT_EQ(m.data.batching.window, 256);
  EXPECT_EQ(m.data.batching.maxLength, 1000);
  EXPECT_EQ(m.data.batch, 0); // the budget over the longest sample
  // Without "kind", x holds float features, as before version 8.
  EXPECT_EQ(parseManifest(goodManifest().dump(), "model.so").inputKind,
            Manifest::InputKind::Features);
}

TEST(ManifestTest, RejectsBadTokenInputs) {
  json m = tokensManifest();
  m["input"]["kind"] = "bytes";
  EXPECT_THAT(errorFor(m), AllOf(HasSubstr("input.kind"),
                                 HasSubstr("\"features\" or \"tokens\"")));
  m = tokensManifest();
  m["input"]["vocab"] = 0;
  EXPECT_THAT(errorFor(m), HasSubstr("input.vocab"));
  m = tokensManifest();
  m["data"]["batching"]["strategy"] = "sorted";
  EXPECT_THAT(errorFor(m), AllOf(HasSubstr("data.batching.strategy"),
                                 HasSubstr("'sorted'")));
  m = tokensManifest();
  m["data"]["batching"]["window"] = 0;
  EXPECT_THAT(errorFor(m), HasSubstr("token_budget and window"));
}

TEST(ManifestTest, ParsesNextTokenTargets) {
  json m = tokensManifest();
  EXPECT_EQ(parseManifest(m.dump(), "model.so").targetKind,
            Manifest::TargetKind::Classes);
  m["target"] = json::parse(R"({"name": "y", "kind": "next_tokens",
                                "classes": 259})");
  EXPECT_EQ(parseManifest(m.dump(), "model.so").targetKind,
            Manifest::TargetKind::NextTokens);
  m["target"]["kind"] = "tags";
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("target.kind"),
                    HasSubstr("\"classes\", \"next_tokens\" or \"values\"")));
  // Next tokens are the input's: the same vocabulary, token ids in.
  m["target"]["kind"] = "next_tokens";
  m["target"]["classes"] = 10;
  EXPECT_THAT(errorFor(m),
              AllOf(HasSubstr("target.kind"), HasSubstr("vocabulary (10)")));
  json features = goodManifest();
  features["target"]["kind"] = "next_tokens";
  EXPECT_THAT(errorFor(features), HasSubstr("needs an input of token ids"));
}

// A target of values (regression): "width" values per sample, no classes.
TEST(ManifestTest, ParsesValueTargets) {
  json m = goodManifest();
  m["target"] = json::parse(R"({"name": "price", "kind": "values",
                                "width": 3})");
  Manifest parsed = parseManifest(m.dump(), "model.so");
  EXPECT_EQ(parsed.targetKind, Manifest::TargetKind::Values);
  EXPECT_EQ(parsed.targetWidth, 3);
  EXPECT_EQ(parsed.classes, 0);
  m["target"]["width"] = 0;
  EXPECT_THAT(errorFor(m), AllOf(HasSubstr("target.width"),
                                 HasSubstr("must be at least 1")));
  m["target"].erase("width");
  EXPECT_THAT(errorFor(m), HasSubstr("width"));
}

TEST(ManifestTest, RejectsDataThatDoesNotFitTheInput) {
  json m = tokensManifest();
  m["data"].erase("batching");
  EXPECT_THAT(errorFor(m), HasSubstr("needs a batching for an input of token "
                                     "ids"));
  m = goodManifest();
  m["data"]["batching"] = tokensManifest()["data"]["batching"];
  EXPECT_THAT(errorFor(m), HasSubstr("the input takes float features"));
  m = tokensManifest();
  m["data"]["routing"] = "bootstrap";
  EXPECT_THAT(errorFor(m), HasSubstr("shared routing only"));
}

namespace {

TEST(ManifestTest, ParsesALossScaleAndTheBuffersOfItsState) {
  json m = goodManifest();
  EXPECT_FALSE(parseManifest(m.dump(), "model.so").lossScale.has_value());
  m["buffers"] = json::parse(R"([
      {"name": "amp.loss_scale", "shape": [], "offset": 0, "size": 1,
       "init": {"kind": "constant", "value": 1024.0}},
      {"name": "amp.good_steps", "shape": [], "offset": 1, "size": 1,
       "init": {"kind": "zeros"}},
      {"name": "amp.skipped_steps", "shape": [], "offset": 2, "size": 1,
       "init": {"kind": "zeros"}}])");
  m["buffer_count"] = 3;
  m["precision"] = "f16";
  m["loss_scale"] = json::parse(R"({
      "init_scale": 1024.0, "growth_factor": 2.0, "backoff_factor": 0.5,
      "growth_interval": 2000,
      "buffers": {"scale": "amp.loss_scale", "good_steps": "amp.good_steps",
                  "skipped_steps": "amp.skipped_steps"}})");
  Manifest parsed = parseManifest(m.dump(), "model.so");
  EXPECT_EQ(parsed.buffers[0].init.kind, InitSpec::Kind::Constant);
  EXPECT_EQ(parsed.buffers[0].init.value, 1024.0);
  ASSERT_TRUE(parsed.lossScale.has_value());
  EXPECT_EQ(parsed.lossScale->growthInterval, 2000);
  EXPECT_EQ(parsed.lossScale->scaleBuffer, 0);
  EXPECT_EQ(parsed.lossScale->skippedStepsBuffer, 2);
  EXPECT_TRUE(parsed.lossScale->holds(1));

  m["loss_scale"]["buffers"]["good_steps"] = "amp.steps";
  EXPECT_THAT(errorFor(m), AllOf(HasSubstr("loss_scale.buffers.good_steps"),
                                 HasSubstr("'amp.steps'")));
  m["loss_scale"]["buffers"]["good_steps"] = "amp.good_steps";
  m["loss_scale"].erase("growth_interval");
  EXPECT_THAT(errorFor(m), HasSubstr("growth_interval"));
  m["buffers"][0]["init"].erase("value");
  EXPECT_THAT(errorFor(m), HasSubstr("buffers[0].init.value"));
}

} // namespace
