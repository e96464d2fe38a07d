//===- NumpyTest.cpp - .npy headers and files, .npz archives --------------===//
//
// Files are written by the tests: a few byte for byte as numpy 1.24 wrote
// them (np.save, np.savez, np.savez_compressed; embedded below, so no
// Python is needed), the rest by small writers here (npy(), zipArchive())
// that can also produce each kind of damage. The npy writer is checked to
// reproduce numpy's bytes exactly, so its files stand for numpy's.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/Numpy.h"
#include "mbt/runtime/Error.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>

using namespace mbt::runtime;
using namespace mbt::test;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// np.save(f, np.array([[0.5, -1.25, 3.0], [1e-3, 2.0, -0.0]], np.float32))
const char kNumpyF32[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': "
    "(2, 3), }                                                          \n"
    "\x00\x00\x00?\x00\x00\xa0\xbf\x00\x00@@o\x12\x83:\x00\x00\x00@\x00\x00"
    "\x00\x80";
// np.lib.format.write_array(f, np.array([1, 2], '<i2'), version=(3, 0))
const char kNumpyV3[] =
    "\x93NUMPY\x03\x00t\x00\x00\x00{'descr': '<i2', 'fortran_order': False, "
    "'shape': (2,), }                                                      "
    "    \n\x01\x00\x02\x00";
// np.save(f, np.array([1, 2], '>i4'))
const char kNumpyBigEndian[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '>i4', 'fortran_order': False, 'shape': "
    "(2,), }                                                            \n"
    "\x00\x00\x00\x01\x00\x00\x00\x02";

// np.savez(f, x=np.arange(6, dtype=np.uint8).reshape(3, 2),
//          y=np.array([2, 0, 1], np.int64)): stored members with zip64
// extra fields in their local headers, as numpy writes them.
const char kSavezHex[] =
    "504b0304140000000000000021001bfa7d61860000008600000005001400782e6e707901"
    "00100086000000000000008600000000000000934e554d5059010076007b276465736372"
    "273a20277c7531272c2027666f727472616e5f6f72646572273a2046616c73652c202773"
    "68617065273a2028332c2032292c207d2020202020202020202020202020202020202020"
    "202020202020202020202020202020202020202020202020202020202020202020202020"
    "20200a000102030405504b0304140000000000000021008a1ace13980000009800000005"
    "001400792e6e70790100100098000000000000009800000000000000934e554d50590100"
    "76007b276465736372273a20273c6938272c2027666f727472616e5f6f72646572273a20"
    "46616c73652c20277368617065273a2028332c292c207d20202020202020202020202020"
    "202020202020202020202020202020202020202020202020202020202020202020202020"
    "20202020202020202020200a020000000000000000000000000000000100000000000000"
    "504b01021403140000000000000021001bfa7d6186000000860000000500000000000000"
    "00000000800100000000782e6e7079504b01021403140000000000000021008a1ace1398"
    "000000980000000500000000000000000000008001bd000000792e6e7079504b05060000"
    "000002000200660000008c0100000000";
// The same arrays through np.savez_compressed: deflated members.
const char kSavezCompressedHex[] =
    "504b0304140000000800000021001bfa7d614c0000008600000005001400782e6e707901"
    "00100086000000000000004c000000000000009bec17ea1b10c9c850c650ad9e925a9c5c"
    "a46ea5a05e536aa8aea3a09e965f54529498179f5f94920a12774bcc294e058a17672416"
    "a402f91ac63a0a469a3a0ab50a64032e06462666165600504b0304140000000800000021"
    "008a1ace134a0000009800000005001400792e6e70790100100098000000000000004a00"
    "0000000000009bec17ea1b10c9c850c650ad9e925a9c5ca46ea5a06e9369a1aea3a09e96"
    "5f54529498179f5f94920a12774bcc294e058a17672416a402f91ac63a9a3a0ab50a1400"
    "2e260654c008a501504b01021403140000000800000021001bfa7d614c00000086000000"
    "050000000000000000000000800100000000782e6e7079504b0102140314000000080000"
    "0021008a1ace134a00000098000000050000000000000000000000800183000000792e6e"
    "7079504b0506000000000200020066000000040100000000";

std::string fromHex(const char *hex) {
  std::string bytes;
  for (size_t i = 0; hex[i] && hex[i + 1]; i += 2)
    bytes.push_back(
        static_cast<char>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  return bytes;
}

template <size_t N> std::string literal(const char (&text)[N]) {
  return std::string(text, N - 1);
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

template <typename T> std::string raw(std::initializer_list<T> values) {
  std::string bytes;
  for (T value : values)
    bytes.append(reinterpret_cast<const char *>(&value), sizeof(T));
  return bytes;
}

/// numpy's header dict for `descr` and `shape` (a Python tuple's text).
std::string dict(const std::string &descr, const std::string &shape,
                 bool fortran = false) {
  return "{'descr': '" + descr +
         "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

/// A .npy file as numpy writes it: the header padded with spaces and a
/// '\n' to a multiple of 64 bytes.
std::string npy(const std::string &header, const std::string &data,
                int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string text = header;
  text.append((64 - (prefix + text.size() + 1) % 64) % 64, ' ');
  text += '\n';
  std::string out("\x93NUMPY", 6);
  out += char(major);
  out += char(0);
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += char((text.size() >> (8 * i)) & 0xff);
  return out + text + data;
}

std::vector<float> floatsOf(const ArrayView &view) {
  std::vector<float> out(view.elements());
  convertToFloat(view.type, view.data, out.size(), out.data());
  return out;
}

ArrayView readBytes(const TempDir &dir, const std::string &bytes) {
  writeFile(dir.file("a.npy"), bytes);
  return readNpy(dir.file("a.npy"));
}

std::string errorOfBytes(const TempDir &dir, const std::string &bytes) {
  writeFile(dir.file("a.npy"), bytes);
  return errorOf([&] { readNpy(dir.file("a.npy")); });
}

//===----------------------------------------------------------------------===//
// A zip writer for .npz archives, with zip64 records on request.
//===----------------------------------------------------------------------===//

std::string le(uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i)
    out += char((value >> (8 * i)) & 0xff);
  return out;
}

std::string deflateRaw(const std::string &in) {
  z_stream stream{};
  deflateInit2(&stream, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, in.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  stream.avail_in = in.size();
  stream.next_out = reinterpret_cast<Bytef *>(out.data());
  stream.avail_out = out.size();
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

struct ZipEntry {
  std::string name;
  std::string data;
  bool deflated = false;
  uint32_t crcFlip = 0;     // XORed into the CRC: a corrupt member
  uint64_t claimedSize = 0; // the uncompressed size to claim; 0: the truth
  size_t cut = 0;           // bytes cut off the end of the stored data
};

std::string zipArchive(const std::vector<ZipEntry> &entries,
                       bool zip64 = false) {
  std::string out, central;
  for (const ZipEntry &entry : entries) {
    std::string payload = entry.deflated ? deflateRaw(entry.data) : entry.data;
    payload.resize(payload.size() - entry.cut);
    uint32_t crc = crc32(0, reinterpret_cast<const Bytef *>(entry.data.data()),
                         entry.data.size()) ^
                   entry.crcFlip;
    uint64_t size = entry.claimedSize ? entry.claimedSize : entry.data.size();
    std::string fields =
        le(zip64 ? 45 : 20, 2) + le(0, 2) + le(entry.deflated ? 8 : 0, 2) +
        le(0, 2) + le(0x21, 2) + le(crc, 4) +
        le(zip64 ? 0xffffffff : payload.size(), 4) +
        le(zip64 ? 0xffffffff : size, 4) + le(entry.name.size(), 2);
    // zip64: the local extra field holds the sizes, the directory's the
    // sizes and the local header's offset.
    std::string sizes = le(size, 8) + le(payload.size(), 8);
    std::string localExtra = zip64 ? le(1, 2) + le(16, 2) + sizes : "";
    std::string centralExtra =
        zip64 ? le(1, 2) + le(24, 2) + sizes + le(out.size(), 8) : "";
    central += le(0x02014b50, 4) + le(45, 2) + fields +
               le(centralExtra.size(), 2) + le(0, 6) + le(0, 4) +
               le(zip64 ? 0xffffffff : out.size(), 4) + entry.name +
               centralExtra;
    out += le(0x04034b50, 4) + fields + le(localExtra.size(), 2) + entry.name +
           localExtra + payload;
  }
  uint64_t centralOffset = out.size();
  out += central;
  uint64_t n = entries.size();
  if (zip64) {
    uint64_t record = out.size();
    out += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 8) +
           le(n, 8) + le(n, 8) + le(central.size(), 8) + le(centralOffset, 8);
    out += le(0x07064b50, 4) + le(0, 4) + le(record, 8) + le(1, 4);
  }
  out += le(0x06054b50, 4) + le(0, 4) + le(zip64 ? 0xffff : n, 2) +
         le(zip64 ? 0xffff : n, 2) +
         le(zip64 ? 0xffffffff : central.size(), 4) +
         le(zip64 ? 0xffffffff : centralOffset, 4) + le(0, 2);
  return out;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

TEST(NumpyTest, WriterReproducesNumpysBytes) {
  EXPECT_EQ(npy(dict("<f4", "(2, 3)"),
                raw<float>({0.5f, -1.25f, 3.0f, 1e-3f, 2.0f, -0.0f})),
            literal(kNumpyF32));
  EXPECT_EQ(npy(dict("<i2", "(2,)"), raw<int16_t>({1, 2}), 3),
            literal(kNumpyV3));
}

TEST(NumpyTest, ReadsFileWrittenByNumpy) {
  TempDir dir;
  ArrayView view = readBytes(dir, literal(kNumpyF32));
  EXPECT_EQ(view.type, ElementType::F32);
  EXPECT_EQ(view.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(view.origin, "'" + dir.file("a.npy") + "'");
  EXPECT_THAT(floatsOf(view),
              ElementsAre(0.5f, -1.25f, 3.0f, 1e-3f, 2.0f, -0.0f));
}

TEST(NumpyTest, ReadsVersions1To3Alike) {
  TempDir dir;
  for (int major : {1, 2, 3}) {
    std::string bytes =
        npy(dict("<f8", "(1, 2)"), raw<double>({1.5, -2.0}), major);
    NpyHeader header = parseNpyHeader(bytes.data(), bytes.size(), "'v'");
    EXPECT_EQ(header.dataOffset, 128u) << major;
    ArrayView view = readBytes(dir, bytes);
    EXPECT_EQ(view.shape, (std::vector<int64_t>{1, 2})) << major;
    EXPECT_THAT(floatsOf(view), ElementsAre(1.5f, -2.0f)) << major;
  }
  EXPECT_THAT(floatsOf(readBytes(dir, literal(kNumpyV3))),
              ElementsAre(1.0f, 2.0f));
  // A version 2.0 header longer than version 1.0's u16 allows.
  std::string longHeader = "{'descr': '<u1', 'fortran_order': False, " +
                           std::string(70000, ' ') + "'shape': (2,)}";
  EXPECT_THAT(floatsOf(readBytes(dir, npy(longHeader, "\x07\x09", 2))),
              ElementsAre(7.0f, 9.0f));
}

struct DtypeCase {
  const char *descr;
  ElementType type;
  std::string data;
  std::vector<float> values;
};

TEST(NumpyTest, ReadsEveryDtype) {
  const DtypeCase cases[] = {
      {"|b1", ElementType::Bool, std::string("\x00\x01", 2), {0, 1}},
      {"|u1", ElementType::U8, std::string("\x00\xff", 2), {0, 255}},
      {"|i1", ElementType::I8, "\x80\x7f", {-128, 127}},
      {"<u2", ElementType::U16, raw<uint16_t>({0, 65535}), {0, 65535}},
      {"<i2", ElementType::I16, raw<int16_t>({-32768, 7}), {-32768, 7}},
      {"<u4",
       ElementType::U32,
       raw<uint32_t>({1, 4294967295u}),
       {1, 4294967296.0f}},
      {"<i4",
       ElementType::I32,
       raw<int32_t>({-5, 16777217}),
       {-5, 16777216.0f}},
      {"<u8",
       ElementType::U64,
       raw<uint64_t>({3, ~uint64_t(0)}),
       {3, 18446744073709551616.0f}},
      {"<i8",
       ElementType::I64,
       raw<int64_t>({-3, INT64_MIN}),
       {-3, -9223372036854775808.0f}},
      // f16: 65504 (largest), 2^-24 (smallest subnormal), -2, 1/3 rounded.
      {"<f2",
       ElementType::F16,
       raw<uint16_t>({31743, 1, 49152, 13653}),
       {65504.0f, 0x1p-24f, -2.0f, 0.333251953125f}},
      {"<f4", ElementType::F32, raw<float>({0.1f, -7.5f}), {0.1f, -7.5f}},
      {"<f8", ElementType::F64, raw<double>({0.1, 1e-50}), {0.1f, 0.0f}},
  };
  TempDir dir;
  for (const DtypeCase &c : cases) {
    std::string shape = "(" + std::to_string(c.values.size()) + ",)";
    ArrayView view = readBytes(dir, npy(dict(c.descr, shape), c.data));
    EXPECT_EQ(view.type, c.type) << c.descr;
    EXPECT_EQ(floatsOf(view), c.values) << c.descr;
  }
}

TEST(NumpyTest, BigEndianArraysAreSwapped) {
  TempDir dir;
  ArrayView ints = readBytes(dir, literal(kNumpyBigEndian));
  EXPECT_EQ(ints.type, ElementType::I32);
  EXPECT_THAT(floatsOf(ints), ElementsAre(1.0f, 2.0f));
  // np.array([1.0, -2.5], '>f8') and '>f2'
  ArrayView doubles = readBytes(
      dir, npy(dict(">f8", "(2,)"),
               std::string("?\xf0\x00\x00\x00\x00\x00\x00\xc0\x04\x00\x00"
                           "\x00\x00\x00\x00",
                           16)));
  EXPECT_THAT(floatsOf(doubles), ElementsAre(1.0f, -2.5f));
  ArrayView halves =
      readBytes(dir, npy(dict(">f2", "(2,)"), std::string("<\x00\xc1\x00", 4)));
  EXPECT_THAT(floatsOf(halves), ElementsAre(1.0f, -2.5f));
}

TEST(NumpyTest, HeaderIsParsedAsPythonLiteral) {
  struct Case {
    std::string header;
    std::vector<int64_t> shape;
  } cases[] = {
      {"{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}", {2}},
      {"{ \"descr\" : \"<f4\" , \"fortran_order\":False,\"shape\":( 2 , ) , }",
       {2}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2)}", {1, 2}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }", {2}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", {2}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 2, }", {2}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", {}},
  };
  for (const Case &c : cases) {
    std::string bytes = npy(c.header, "");
    NpyHeader header = parseNpyHeader(bytes.data(), bytes.size(), "'h'");
    EXPECT_EQ(header.type, ElementType::F32) << c.header;
    EXPECT_EQ(header.shape, c.shape) << c.header;
  }
}

TEST(NumpyTest, ParsesHeaderWithoutTheData) {
  std::string bytes = npy(dict("<f4", "(60000, 28, 28)"), "");
  NpyHeader header = parseNpyHeader(bytes.data(), bytes.size(), "'x.npy'");
  EXPECT_EQ(header.shape, (std::vector<int64_t>{60000, 28, 28}));
  EXPECT_EQ(header.dataOffset, bytes.size());
  EXPECT_FALSE(header.bigEndian);
  EXPECT_FALSE(header.fortranOrder);
}

TEST(NumpyTest, FortranOrderIsRefusedWithTheFix) {
  TempDir dir;
  std::string error =
      errorOfBytes(dir, npy(dict("<f4", "(2, 1)", true), raw<float>({1, 2})));
  EXPECT_THAT(error,
              AllOf(HasSubstr(dir.file("a.npy")), HasSubstr("Fortran order"),
                    HasSubstr("np.ascontiguousarray(a)")));
  std::string bytes = npy(dict("<f4", "(2, 1)", true), "");
  EXPECT_TRUE(parseNpyHeader(bytes.data(), bytes.size(), "'f'").fortranOrder);
}

TEST(NumpyTest, TruncatedFileNamesExpectedAndFoundBytes) {
  TempDir dir;
  std::string bytes = literal(kNumpyF32);
  bytes.resize(bytes.size() - 5);
  EXPECT_THAT(errorOfBytes(dir, bytes),
              AllOf(HasSubstr(dir.file("a.npy")), HasSubstr("truncated"),
                    HasSubstr("promises 24 bytes"), HasSubstr("offset 128"),
                    HasSubstr("holds 19")));
  EXPECT_THAT(
      errorOfBytes(dir, literal(kNumpyF32) + "x"),
      AllOf(HasSubstr("holds 25 bytes of data"), HasSubstr("promises 24")));
  EXPECT_THAT(errorOfBytes(dir, literal(kNumpyF32).substr(0, 60)),
              AllOf(HasSubstr("truncated"), HasSubstr("header needs 128 bytes"),
                    HasSubstr("holds 60")));
}

TEST(NumpyTest, BadMagicAndVersionAreReported) {
  TempDir dir;
  EXPECT_THAT(
      errorOfBytes(dir, "PK\x03\x04 not an npy"),
      AllOf(HasSubstr(dir.file("a.npy")), HasSubstr("not a .npy file")));
  EXPECT_THAT(errorOfBytes(dir, ""), HasSubstr("not a .npy file"));
  std::string bytes = literal(kNumpyF32);
  bytes[6] = 4;
  EXPECT_THAT(errorOfBytes(dir, bytes),
              AllOf(HasSubstr("byte offset 6"), HasSubstr("version 4.0")));
  EXPECT_THAT(errorOf([] { readNpy("/nonexistent/x.npy"); }),
              HasSubstr("cannot open '/nonexistent/x.npy'"));
}

TEST(NumpyTest, UnsupportedDtypesAreNamed) {
  TempDir dir;
  for (const char *descr : {"<c8", "|O", "<U5", "|S3", "<M8[ns]", "|V2"})
    EXPECT_THAT(errorOfBytes(dir, npy(dict(descr, "(0,)"), "")),
                AllOf(HasSubstr("dtype '" + std::string(descr) + "'"),
                      HasSubstr("not supported")))
        << descr;
  std::string structured = "{'descr': [('a', '<f4'), ('b', '<i4')], "
                           "'fortran_order': False, 'shape': (1,), }";
  EXPECT_THAT(errorOfBytes(dir, npy(structured, std::string(8, '\0'))),
              AllOf(HasSubstr("structured dtype [('a', '<f4'), ('b', '<i4')]"),
                    HasSubstr("byte offset 20")));
}

TEST(NumpyTest, MalformedHeadersNameTheByteOffset) {
  struct Case {
    std::string header;
    std::string message;
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': False}", "no 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
       "byte offset 66: npy header: unknown key 'x'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",
       "'fortran_order' must be True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1)}",
       "byte offset 64: npy header: 'shape' holds '-1', not a size"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': -3}",
       "'shape' holds '-3', not a size"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
       "expected ',' or '}'"},
      {"{'descr: '<f4'}", "expected ':' after a key"},
      {"{'descr': '<f4', 'fortran_order': Maybe}", "unknown name 'Maybe'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999,)}",
       "does not fit in 64 bits"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(4294967296, 4294967296)}",
       "too large"},
      {"['descr']", "not a dict"},
      {"{} {}", "unexpected text after the header's dict"},
      {std::string(40, '(') + std::string(40, ')'), "nested too deeply"},
  };
  TempDir dir;
  for (const Case &c : cases)
    EXPECT_THAT(errorOfBytes(dir, npy(c.header, "")),
                AllOf(HasSubstr(dir.file("a.npy")), HasSubstr(c.message)))
        << c.header;
}

//===----------------------------------------------------------------------===//
// .npz
//===----------------------------------------------------------------------===//

void expectSavezArrays(const std::string &path) {
  EXPECT_THAT(npzArrayNames(path), ElementsAre("x", "y"));
  ArrayView x = readNpzArray(path, "x");
  EXPECT_EQ(x.origin, "'" + path + "': array 'x'");
  EXPECT_EQ(x.type, ElementType::U8);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_THAT(floatsOf(x), ElementsAre(0, 1, 2, 3, 4, 5));
  ArrayView y = readNpzArray(path, "y");
  EXPECT_EQ(y.type, ElementType::I64);
  EXPECT_THAT(floatsOf(y), ElementsAre(2, 0, 1));
}

TEST(NumpyTest, ReadsNumpySavez) {
  TempDir dir;
  writeFile(dir.file("d.npz"), fromHex(kSavezHex));
  expectSavezArrays(dir.file("d.npz"));
}

TEST(NumpyTest, ReadsNumpySavezCompressed) {
  TempDir dir;
  writeFile(dir.file("d.npz"), fromHex(kSavezCompressedHex));
  expectSavezArrays(dir.file("d.npz"));
}

TEST(NumpyTest, ReadsAMembersHeaderWithoutItsData) {
  // The compiler checks shapes from the header alone, of stored and of
  // deflated members (inflated only as far as the header); a missing
  // array is an error naming the ones there are.
  TempDir dir;
  std::string x = npy(dict("<f4", "(2, 3)"), std::string(24, '\x01'));
  for (bool deflated : {false, true}) {
    std::string path = dir.file("h.npz");
    std::string archive = zipArchive({{"x.npy", x, deflated}}, false);
    writeFile(path, archive);
    NpyHeader header = readNpzArrayHeader(path, "x");
    EXPECT_EQ(header.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(header.type, ElementType::F32);
    EXPECT_THAT(errorOf([&] { readNpzArrayHeader(path, "images"); }),
                HasSubstr("x"));
  }
}

TEST(NumpyTest, ReadsStoredDeflatedAndZip64MembersAlike) {
  TempDir dir;
  std::string x =
      npy(dict("|u1", "(3, 2)"), std::string("\x00\x01\x02\x03\x04\x05", 6));
  std::string y =
      npy(dict(">i8", "(3,)"), std::string("\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0\0"
                                           "\0\0\0\0\0\0\0\x01",
                                           24));
  for (bool deflated : {false, true})
    for (bool zip64 : {false, true}) {
      std::string path = dir.file("d.npz");
      writeFile(
          path,
          zipArchive({{"x.npy", x, deflated}, {"y.npy", y, deflated}}, zip64));
      SCOPED_TRACE(testing::Message()
                   << "deflated " << deflated << " zip64 " << zip64);
      expectSavezArrays(path);
    }
}

TEST(NumpyTest, MissingArrayListsTheNames) {
  TempDir dir;
  writeFile(dir.file("d.npz"), fromHex(kSavezHex));
  EXPECT_THAT(errorOf([&] { readNpzArray(dir.file("d.npz"), "labels"); }),
              AllOf(HasSubstr(dir.file("d.npz")),
                    HasSubstr("no array 'labels'"),
                    HasSubstr("it holds 'x', 'y'")));
}

TEST(NumpyTest, CorruptArchivesAreReported) {
  TempDir dir;
  std::string path = dir.file("d.npz");
  std::string x = npy(dict("<f4", "(1000,)"), std::string(4000, '\0'));
  auto error = [&](const std::vector<ZipEntry> &entries, bool zip64 = false) {
    writeFile(path, zipArchive(entries, zip64));
    return errorOf([&] { readNpzArray(path, "x"); });
  };
  EXPECT_THAT(error({{"x.npy", x, true, 0x1234}}),
              AllOf(HasSubstr("array 'x'"), HasSubstr("CRC mismatch")));
  EXPECT_THAT(
      error({{"x.npy", x, true, 0, 0, 5}}),
      AllOf(HasSubstr("array 'x': byte offset"), HasSubstr("ends early")));
  EXPECT_THAT(error({{"x.npy", x + "more", true, 0, x.size()}}),
              HasSubstr("byte offset 4128 of the member: the deflated data "
                        "holds more than the zip directory says"));
  // A claim of 1 TB from a few deflated bytes: refused, not allocated.
  EXPECT_THAT(error({{"x.npy", x, true, 0, uint64_t(1) << 40}}, true),
              HasSubstr("more than deflate can expand to"));
  // The zip's size and the npy header's disagree.
  std::string shortX = npy(dict("<f4", "(1001,)"), std::string(4000, '\0'));
  EXPECT_THAT(error({{"x.npy", shortX, true}}),
              HasSubstr("the member holds 4128 bytes but its npy header "
                        "promises 4132"));
  EXPECT_THAT(error({{"x.npy", shortX, false}}), HasSubstr("promises 4132"));
  EXPECT_THAT(error({{"x.npy", npy(dict("<f4", "(1,)", true), "abcd"), true}}),
              HasSubstr("Fortran order"));
  writeFile(path, "not a zip at all");
  EXPECT_THAT(errorOf([&] { npzArrayNames(path); }),
              AllOf(HasSubstr(path), HasSubstr("not a zip archive")));
}

} // namespace
