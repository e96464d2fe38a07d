//===- Philox.h - Counter-based Philox4x32-10 random numbers ----*- C++ -*-===//
//
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as
// easy as 1, 2, 3", SC'11), with the constants of Random123, cuRAND and
// PyTorch. A counter-based generator maps (counter, key) to random bits with
// no hidden state, so a draw can be addressed by *what it is for* (model seed,
// parameter, element) instead of by how many draws came before it. That is
// what keeps model m's random numbers independent of the batch size M.
//
// The counters of mbt's streams (word 3 names the purpose, so that streams
// for different purposes never overlap; "block" counts 4-word blocks):
//
//   parameter init   key model seed    {block lo, block hi, param, INIT}
//   data shuffling   key shuffle seed  {block lo, block hi, epoch, SHUF}
//   sweep draws      key draw seed     {model, draw, 0, DRAW}   (compiler)
//   dropout masks    key model seed    {element, site, step, DROP} (artifact)
//
//===----------------------------------------------------------------------===//

#ifndef MBT_COMMON_PHILOX_H
#define MBT_COMMON_PHILOX_H

#include <array>
#include <cstdint>

namespace mbt {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// Domain words (counter word 3) of the runtime's random streams.
constexpr uint32_t kInitDomain = 0x494E4954;    // "INIT"
constexpr uint32_t kShuffleDomain = 0x53485546; // "SHUF"
/// Domain of the compiler's seeded sweep draws (uniform, loguniform, ...).
constexpr uint32_t kSweepDrawDomain = 0x44524157; // "DRAW"
/// Domain of the dropout masks the compiled train step draws.
constexpr uint32_t kDropoutDomain = 0x44524F50; // "DROP"

/// One Philox4x32-10 block: 10 rounds over `counter` under `key`. The round
/// function follows Random123's philox.h: each round multiplies counter
/// words 0 and 2 by M0 and M1 into 64-bit products and mixes the high halves
/// with the other words and the key; the key is bumped by the Weyl
/// constants W0, W1 between rounds. Inline, so that code which does not
/// link the runtime (the compiler's sweep draws) uses the same generator.
inline PhiloxCounter philox4x32x10(PhiloxCounter counter, PhiloxKey key) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;
  constexpr uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    uint64_t prod0 = static_cast<uint64_t>(kM0) * counter[0];
    uint64_t prod1 = static_cast<uint64_t>(kM1) * counter[2];
    counter = {static_cast<uint32_t>(prod1 >> 32) ^ counter[1] ^ key[0],
               static_cast<uint32_t>(prod1),
               static_cast<uint32_t>(prod0 >> 32) ^ counter[3] ^ key[1],
               static_cast<uint32_t>(prod0)};
  }
  return counter;
}

/// Splits a 64-bit seed into a Philox key, low word first.
inline PhiloxKey makePhiloxKey(uint64_t seed) {
  return {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
}

/// The random word of element `element` (row-major, within one model's
/// tensor) of dropout call `site` at train step `step` of the model with
/// seed `seed`: what mbt.dropout's lowering computes. The element is kept
/// when uniformFloat(word) >= rate.
inline uint32_t dropoutBits(uint64_t seed, uint32_t site, uint32_t step,
                            uint32_t element) {
  return philox4x32x10({element, site, step, kDropoutDomain},
                       makePhiloxKey(seed))[0];
}

/// Uniform float in [0, 1) from the top 24 bits of `bits` (a float holds 24
/// significant bits, so every value k * 2^-24 is exact and 1 is unreachable).
inline float uniformFloat(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

/// Two standard normal draws from two words by Box-Muller. The radius uses a
/// uniform in (0, 1] so that log never sees 0. Computed in double precision
/// for accuracy; the result depends only on the two words.
void boxMuller(uint32_t a, uint32_t b, float &z0, float &z1);

/// Four standard normals from one Philox block: words (0,1) give lanes 0 and
/// 1, words (2,3) give lanes 2 and 3.
std::array<float, 4> normalsFromBlock(const PhiloxCounter &block);

/// A sequential view of one Philox stream: consecutive words of blocks
/// {0, 1, 2, ...} in counter words 0-1, with counter words 2-3 fixed. Used
/// where the number of draws is data-dependent (rejection sampling).
class PhiloxStream {
public:
  PhiloxStream(PhiloxKey key, uint32_t counterWord2, uint32_t counterWord3)
      : key(key), word2(counterWord2), word3(counterWord3) {}

  /// Next 32 random bits of the stream.
  uint32_t next();

  /// Unbiased integer in [0, range), range >= 1 (Lemire's multiply-shift
  /// with rejection, so every value is equally likely).
  uint32_t nextBelow(uint32_t range);

private:
  PhiloxKey key;
  uint32_t word2, word3;
  uint64_t block = 0;
  PhiloxCounter buffer{};
  unsigned lane = 4; // 4 = buffer exhausted
};

} // namespace mbt

#endif // MBT_COMMON_PHILOX_H
