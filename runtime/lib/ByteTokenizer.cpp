//===- ByteTokenizer.cpp - Plain text to tokens, byte by byte -------------===//

#include "mbt/runtime/ByteTokenizer.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>

namespace mbt {
namespace runtime {

std::vector<int32_t> encodeBytes(std::string_view text) {
  std::vector<int32_t> tokens(text.size());
  for (size_t i = 0; i < text.size(); ++i)
    tokens[i] = kFirstByteToken + static_cast<unsigned char>(text[i]);
  return tokens;
}

std::string decodeBytes(const int32_t *tokens, int64_t count) {
  std::string text;
  text.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int32_t token = tokens[i];
    if (token < 0 || token >= kByteVocabSize)
      throw RuntimeError(fmt::format(
          "token {} at position {} is not a byte token (vocabulary [0, {}))",
          token, i, kByteVocabSize));
    if (token >= kFirstByteToken)
      text.push_back(static_cast<char>(token - kFirstByteToken));
  }
  return text;
}

} // namespace runtime
} // namespace mbt
