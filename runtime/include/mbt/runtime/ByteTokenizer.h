//===- ByteTokenizer.h - Plain text to tokens, byte by byte -----*- C++ -*-===//
//
// The tokenizer that makes plain text work out of the box: every byte of
// the UTF-8 text is one token, after three reserved ids. No vocabulary file,
// no unknown tokens, and decode(encode(s)) == s for every byte string.
//
//   0 padding   1 begin of sequence   2 end of sequence   3 + b  byte b
//
//===----------------------------------------------------------------------===//

#ifndef MBT_RUNTIME_BYTETOKENIZER_H
#define MBT_RUNTIME_BYTETOKENIZER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mbt {
namespace runtime {

constexpr int32_t kPadToken = 0;
constexpr int32_t kBeginToken = 1;
constexpr int32_t kEndToken = 2;
constexpr int32_t kFirstByteToken = 3;
constexpr int32_t kByteVocabSize = kFirstByteToken + 256;

/// The tokens of `text`, one per byte.
std::vector<int32_t> encodeBytes(std::string_view text);

/// The bytes of byte tokens; the reserved ids (padding, begin, end) are
/// dropped. Throws RuntimeError on a token outside the byte vocabulary.
std::string decodeBytes(const int32_t *tokens, int64_t count);

} // namespace runtime
} // namespace mbt

#endif // MBT_RUNTIME_BYTETOKENIZER_H
