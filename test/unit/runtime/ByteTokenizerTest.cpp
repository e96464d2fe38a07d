//===- ByteTokenizerTest.cpp - Plain text to byte tokens and back ---------===//

#include "mbt/runtime/ByteTokenizer.h"
#include "mbt/runtime/Error.h"

#include <gtest/gtest.h>

using namespace mbt::runtime;

TEST(ByteTokenizer, EveryByteRoundTrips) {
  std::string all;
  for (int b = 0; b < 256; ++b)
    all.push_back(static_cast<char>(b));
  std::vector<int32_t> tokens = encodeBytes(all);
  ASSERT_EQ(tokens.size(), 256u);
  for (int b = 0; b < 256; ++b)
    EXPECT_EQ(tokens[b], kFirstByteToken + b);
  EXPECT_EQ(decodeBytes(tokens.data(), 256), all);
}

TEST(ByteTokenizer, Utf8IsOneTokenPerByte) {
  std::vector<int32_t> tokens = encodeBytes("h\xc3\xa9"); // "hé"
  EXPECT_EQ(tokens,
            (std::vector<int32_t>{kFirstByteToken + 'h', kFirstByteToken + 0xc3,
                                  kFirstByteToken + 0xa9}));
}

TEST(ByteTokenizer, ReservedTokensDecodeToNothing) {
  std::vector<int32_t> tokens = {kBeginToken, kFirstByteToken + 'a', kPadToken,
                                 kFirstByteToken + 'b', kEndToken};
  EXPECT_EQ(decodeBytes(tokens.data(), 5), "ab");
}

TEST(ByteTokenizer, TokenOutsideTheVocabularyIsAnError) {
  std::vector<int32_t> tokens = {kFirstByteToken, kByteVocabSize};
  try {
    decodeBytes(tokens.data(), 2);
    FAIL() << "expected a RuntimeError";
  } catch (const RuntimeError &error) {
    EXPECT_NE(std::string(error.what()).find("token 259 at position 1"),
              std::string::npos)
        << error.what();
  }
}
