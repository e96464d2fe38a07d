//===- Checkpoint.cpp - Serialize and parse a run's state -----------------===//
//
// Layout (all integers little-endian int64 unless noted):
//   "MBTRUN\0\0" | version | manifest digest (u64) | M | P | P_t | Q | S | K |
//   element bytes | step | epochs started | batch in epoch |
//   running samples | metrics bytes | running sums (M*K f64) |
//   diverged step (M) | stopped step (M) |
//   stop reason (M strings: length, bytes) | best validation loss (M f64) |
//   evaluations since best (M) | params (M*P elements) |
//   state (S*M*P_t elements) | buffers (M*Q elements) |
//   CRC-32 of all the above (u32)
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/Checkpoint.h"

#include "mbt/runtime/Error.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace mbt {
namespace runtime {

namespace {

constexpr char kMagic[8] = {'M', 'B', 'T', 'R', 'U', 'N', '\0', '\0'};
constexpr int64_t kVersion = 5;

class Writer {
public:
  void bytes(const void *data, size_t n) {
    out.append(static_cast<const char *>(data), n);
  }
  void i64(int64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i)
      b[i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
    bytes(b, 8);
  }
  void f64(double v) {
    int64_t bits;
    std::memcpy(&bits, &v, 8);
    i64(bits);
  }
  std::string out;
};

class Reader {
public:
  Reader(const std::string &data, const std::string &path)
      : data(data), path(path) {}
  void fail(const std::string &what) const {
    throw RuntimeError("checkpoint '" + path + "': " + what);
  }
  const char *take(size_t n, const char *what) {
    if (n > data.size() - pos)
      fail(fmt::format("truncated at byte {} (reading {} at byte {})",
                       data.size(), what, pos));
    const char *p = data.data() + pos;
    pos += n;
    return p;
  }
  int64_t i64(const char *what) {
    const auto *b = reinterpret_cast<const uint8_t *>(take(8, what));
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(b[i]) << (8 * i);
    return static_cast<int64_t>(v);
  }
  /// A count that must lie in [0, max].
  int64_t count(const char *what, int64_t max) {
    int64_t v = i64(what);
    if (v < 0 || v > max)
      fail(fmt::format("bad {} {}", what, v));
    return v;
  }
  double f64(const char *what) {
    int64_t bits = i64(what);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  size_t position() const { return pos; }

private:
  const std::string &data;
  const std::string &path;
  size_t pos = 0;
};

/// a * b for sizes read from a file, failing on overflow past `limit`.
int64_t product(Reader &r, int64_t a, int64_t b, int64_t limit,
                const char *what) {
  if (a != 0 && b > limit / a)
    r.fail(std::string(what) + " is too large");
  return a * b;
}

uint32_t crcOf(const char *data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) {
    uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef *>(data), chunk);
    data += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

} // namespace

uint64_t manifestDigest(const std::string &manifestJson) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : manifestJson) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string serializeCheckpoint(const RunCheckpoint &c) {
  Writer w;
  w.bytes(kMagic, sizeof(kMagic));
  w.i64(kVersion);
  w.i64(static_cast<int64_t>(c.manifestDigest));
  for (int64_t v : {c.models, c.paramCount, c.trainableCount, c.bufferCount,
                    c.slots, c.outputs, c.elementBytes, c.step, c.epochsStarted,
                    c.batchInEpoch, c.runningWeight, c.metricsBytes})
    w.i64(v);
  for (double v : c.runningSums)
    w.f64(v);
  for (int64_t v : c.divergedStep)
    w.i64(v);
  for (int64_t v : c.stoppedStep)
    w.i64(v);
  for (const std::string &reason : c.stopReason) {
    w.i64(static_cast<int64_t>(reason.size()));
    w.bytes(reason.data(), reason.size());
  }
  for (double v : c.bestValidationLoss)
    w.f64(v);
  for (int64_t v : c.evaluationsSinceBest)
    w.i64(v);
  w.bytes(c.params.data(), c.params.size());
  w.bytes(c.state.data(), c.state.size());
  w.bytes(c.buffers.data(), c.buffers.size());
  uint32_t crc = crcOf(w.out.data(), w.out.size());
  uint8_t b[4];
  for (int i = 0; i < 4; ++i)
    b[i] = static_cast<uint8_t>(crc >> (8 * i));
  w.bytes(b, 4);
  return std::move(w.out);
}

RunCheckpoint parseCheckpoint(const std::string &bytes,
                              const std::string &path) {
  Reader r(bytes, path);
  if (bytes.size() < sizeof(kMagic) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    r.fail("not an mbt run checkpoint (bad magic)");
  r.take(sizeof(kMagic), "the magic");
  int64_t version = r.i64("the version");
  if (version != kVersion)
    r.fail(fmt::format("version {}, this runtime reads {}", version, kVersion));
  // The checksum first: any damage below is reported as such, not as a
  // strange size.
  if (bytes.size() < r.position() + 4)
    r.fail(fmt::format("truncated at byte {}", bytes.size()));
  size_t body = bytes.size() - 4;
  uint32_t stored = 0;
  for (int i = 0; i < 4; ++i)
    stored |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[body + i]))
              << (8 * i);
  if (crcOf(bytes.data(), body) != stored)
    r.fail(fmt::format(
        "checksum mismatch: the file is truncated or corrupt ({} bytes)",
        bytes.size()));

  RunCheckpoint c;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 8;
  c.manifestDigest = static_cast<uint64_t>(r.i64("the manifest digest"));
  c.models = r.count("model count", 1 << 30);
  c.paramCount = r.count("parameter count", kMax);
  c.trainableCount = r.count("trainable parameter count", c.paramCount);
  c.bufferCount = r.count("buffer count", kMax);
  c.slots = r.count("slot count", 64);
  c.outputs = r.count("output count", 1 << 20);
  c.elementBytes = r.i64("element width");
  if (c.elementBytes != 4 && c.elementBytes != 8)
    r.fail(fmt::format("bad element width {}", c.elementBytes));
  c.step = r.count("step", kMax);
  c.epochsStarted = r.count("epoch", kMax);
  c.batchInEpoch = r.count("batch", kMax);
  c.runningWeight = r.count("running weight", kMax);
  c.metricsBytes = r.count("metrics length", kMax);
  int64_t sums = product(r, c.models, c.outputs, kMax, "the running sums");
  if (sums * 8 > static_cast<int64_t>(body))
    r.fail(fmt::format("truncated: {} running sums do not fit", sums));
  c.runningSums.resize(sums);
  for (double &v : c.runningSums)
    v = r.f64("the running sums");
  c.divergedStep.resize(c.models);
  for (int64_t &v : c.divergedStep)
    v = r.count("a diverged step", kMax);
  c.stoppedStep.resize(c.models);
  for (int64_t &v : c.stoppedStep)
    v = r.count("a stopped step", kMax);
  c.stopReason.resize(c.models);
  for (std::string &reason : c.stopReason) {
    int64_t n = r.count("a stop reason's length", 4096);
    const char *text = r.take(n, "a stop reason");
    reason.assign(text, n);
  }
  c.bestValidationLoss.resize(c.models);
  for (double &v : c.bestValidationLoss)
    v = r.f64("a best validation loss");
  c.evaluationsSinceBest.resize(c.models);
  for (int64_t &v : c.evaluationsSinceBest)
    v = r.count("an evaluation count", kMax);
  int64_t paramBytes =
      product(r, product(r, c.models, c.paramCount, kMax, "params"),
              c.elementBytes, kMax, "params");
  int64_t stateBytes =
      product(r, c.slots,
              product(r, product(r, c.models, c.trainableCount, kMax, "state"),
                      c.elementBytes, kMax, "state"),
              kMax, "state");
  const char *params = r.take(paramBytes, "the parameters");
  c.params.assign(params, params + paramBytes);
  const char *state = r.take(stateBytes, "the optimizer state");
  c.state.assign(state, state + stateBytes);
  int64_t bufferBytes =
      product(r, product(r, c.models, c.bufferCount, kMax, "buffers"),
              c.elementBytes, kMax, "buffers");
  const char *buffers = r.take(bufferBytes, "the buffers");
  c.buffers.assign(buffers, buffers + bufferBytes);
  if (r.position() != body)
    r.fail(fmt::format("{} unexpected bytes before the checksum",
                       body - r.position()));
  return c;
}

bool isRunCheckpoint(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char head[sizeof(kMagic)] = {};
  in.read(head, sizeof(head));
  return in.gcount() == sizeof(head) &&
         std::memcmp(head, kMagic, sizeof(kMagic)) == 0;
}

RunCheckpoint readCheckpoint(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError("cannot read checkpoint '" + path +
                       "': " + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad())
    throw RuntimeError("cannot read checkpoint '" + path + "'");
  return parseCheckpoint(bytes.str(), path);
}

std::string rankCheckpointFile(int64_t rank, int64_t ranks) {
  return "checkpoint.rank" + std::to_string(rank) + "-of-" +
         std::to_string(ranks) + ".mbtrun";
}

int64_t ranksOfCheckpointFile(const std::string &name) {
  long long rank = 0, ranks = 0;
  int end = 0;
  if (std::sscanf(name.c_str(), "checkpoint.rank%lld-of-%lld.mbtrun%n", &rank,
                  &ranks, &end) != 2 ||
      static_cast<size_t>(end) != name.size() ||
      name != rankCheckpointFile(rank, ranks))
    return 0;
  return ranks;
}

} // namespace runtime
} // namespace mbt
