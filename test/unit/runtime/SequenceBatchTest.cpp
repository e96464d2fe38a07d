//===- SequenceBatchTest.cpp - Gathering a step into a padded block -------===//

#include "mbt/runtime/SequenceBatch.h"
#include "mbt/runtime/ByteTokenizer.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/LengthBatching.h"

#include <gtest/gtest.h>

using namespace mbt::runtime;

namespace {
SequenceDataset threeTexts() {
  SequenceDataset data;
  data.name = "three";
  data.vocabSize = kByteVocabSize;
  for (auto [text, label] :
       {std::pair<std::string, int32_t>{"abc", 2}, {"hello", 0}, {"z", 1}}) {
    std::vector<int32_t> tokens = encodeBytes(text);
    data.append(tokens.data(), static_cast<int64_t>(tokens.size()), label);
  }
  return data;
}
} // namespace

TEST(SequenceBatch, RowsArePaddedAfterTheirSamplesInStepOrder) {
  SequenceDataset data = threeTexts();
  LengthGroup step;
  step.samples = {1, 2, 0};
  step.paddedLength = 5;
  SequenceBatch batch = gatherSequenceBatch(data, step);
  EXPECT_EQ(batch.rows, 3);
  EXPECT_EQ(batch.width, 5);
  EXPECT_EQ(batch.lengths, (std::vector<int32_t>{5, 1, 3}));
  EXPECT_EQ(batch.labels, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(batch.realTokens(), 9);
  EXPECT_EQ(decodeBytes(batch.tokens.data(), 5), "hello");
  EXPECT_EQ(decodeBytes(batch.tokens.data() + 5, 5), "z");
  EXPECT_EQ(batch.tokens[6], kPadToken);
  EXPECT_EQ(batch.tokens[9], kPadToken);
  EXPECT_EQ(decodeBytes(batch.tokens.data() + 10, 5), "abc");
}

TEST(SequenceBatch, EveryPlannedStepGathers) {
  SequenceDataset data = threeTexts();
  BatchingOptions options;
  options.tokenBudget = 10;
  options.window = 3;
  int64_t rows = 0;
  for (const LengthGroup &step : planEpoch(data.lengths(), options, 0)) {
    SequenceBatch batch = gatherSequenceBatch(data, step);
    EXPECT_LE(batch.rows * batch.width, 10);
    rows += batch.rows;
  }
  EXPECT_EQ(rows, 3);
}

TEST(SequenceBatch, StepsThatDoNotFitTheDataAreErrors) {
  SequenceDataset data = threeTexts();
  LengthGroup step;
  step.samples = {1};
  step.paddedLength = 4; // "hello" has 5
  EXPECT_THROW(gatherSequenceBatch(data, step), RuntimeError);
  step.samples = {3};
  step.paddedLength = 8;
  EXPECT_THROW(gatherSequenceBatch(data, step), RuntimeError);
}

TEST(SequenceBatch, LanguageModelSamplesAreFramedAndCutAfterFraming) {
  SequenceDataset data = threeTexts();
  SequenceDataset framed = frameForNextTokens(data, 0);
  ASSERT_NO_THROW(framed.validate());
  EXPECT_EQ(framed.lengths(), (std::vector<int64_t>{5, 7, 3}));
  EXPECT_EQ(framed.labels, data.labels);
  EXPECT_EQ(framed.sample(1)[0], kBeginToken);
  EXPECT_EQ(decodeBytes(framed.sample(1), 7), "hello");
  EXPECT_EQ(framed.sample(1)[6], kEndToken);
  // Cut to max_length + 1 = 4 tokens: "hello" keeps its next byte 'l' as
  // its last target, not an end; "z" fits with its end.
  SequenceDataset cut = frameForNextTokens(data, 3);
  EXPECT_EQ(cut.lengths(), (std::vector<int64_t>{4, 4, 3}));
  EXPECT_EQ(cut.sample(1)[0], kBeginToken);
  EXPECT_EQ(decodeBytes(cut.sample(1), 4), "hel");
  EXPECT_EQ(cut.sample(2)[2], kEndToken);
}
