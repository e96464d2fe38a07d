//===- TorchCheckpoint.cpp - Read a state dict from a .pt file ------------===//
//
// The pickle is run on a small stack machine over the opcodes that
// torch.save's pickler emits (protocols 2 to 5); its values are only those
// a state dict is made of. A storage is the zip member's bytes, in place in
// the mapping; a tensor is a view of one. Every count, offset and length in
// the pickle is checked against the bytes that remain before it is used,
// so a corrupt file is named, never a cause of a large allocation.
//
//===----------------------------------------------------------------------===//

#include "mbt/runtime/data/TorchCheckpoint.h"

#include "mbt/runtime/Error.h"

#include "ZipArchive.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <set>

namespace mbt {
namespace runtime {

namespace {

using detail::ZipArchive;
using detail::ZipMember;

/// A value of the pickle: what a state dict is made of.
struct PyValue {
  enum class Kind {
    None,
    Bool,
    Int,
    Float,
    String,
    Tuple,
    List,
    Dict,
    Global,
    Storage,
    Tensor
  };
  Kind kind = Kind::None;
  int64_t integer = 0;
  double real = 0;
  /// A string, or a global's "module.name".
  std::string text;
  /// A tuple's or list's items; a dict's keys and values, alternating.
  std::vector<std::shared_ptr<PyValue>> items;
  /// A storage (1-D, all its elements) or a tensor.
  ArrayView array;
};
using PyRef = std::shared_ptr<PyValue>;

PyRef make(PyValue::Kind kind) {
  auto value = std::make_shared<PyValue>();
  value->kind = kind;
  return value;
}

const char *kindName(PyValue::Kind kind) {
  static const char *const names[] = {
      "None",   "a bool", "an int",   "a float",   "a string", "a tuple",
      "a list", "a dict", "a global", "a storage", "a tensor"};
  return names[static_cast<int>(kind)];
}

/// torch's storage classes and the element types mbt converts.
const std::map<std::string, ElementType> kStorageTypes = {
    {"torch.FloatStorage", ElementType::F32},
    {"torch.DoubleStorage", ElementType::F64},
    {"torch.HalfStorage", ElementType::F16},
    {"torch.BFloat16Storage", ElementType::BF16},
    {"torch.LongStorage", ElementType::I64},
    {"torch.IntStorage", ElementType::I32},
    {"torch.ShortStorage", ElementType::I16},
    {"torch.CharStorage", ElementType::I8},
    {"torch.ByteStorage", ElementType::U8},
    {"torch.BoolStorage", ElementType::Bool}};

/// Who writes .pt archives, for the message about a compressed member.
constexpr const char *kWriter = "torch.save writes";

/// The globals a state dict's pickle may name; anything else is refused.
const char *const kAllowedGlobals[] = {
    "collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
    "torch._utils._rebuild_parameter",
    // LibTorch's pickler (torch::pickle_save) tags a dict with its type.
    "torch.jit._pickle.restore_type_tag"};

/// The pickle of one archive, run to its STOP.
class Unpickler {
public:
  Unpickler(const ZipArchive &zip, std::string prefix, const unsigned char *at,
            uint64_t size)
      : zip(zip), prefix(std::move(prefix)), bytes(at), size(size) {}

  PyRef run();

private:
  [[noreturn]] void fail(const std::string &message) const {
    throw RuntimeError(fmt::format("'{}': {}data.pkl, byte {}: {}", zip.path(),
                                   prefix, opcodeAt, message));
  }
  const unsigned char *take(uint64_t count) {
    if (count > size - pos)
      fail(fmt::format("the pickle ends early ({} more bytes expected, {} "
                       "left)",
                       count, size - pos));
    const unsigned char *at = bytes + pos;
    pos += count;
    return at;
  }
  uint64_t little(int count) {
    const unsigned char *at = take(count);
    uint64_t value = 0;
    for (int i = count - 1; i >= 0; --i)
      value = value << 8 | at[i];
    return value;
  }
  std::string line() {
    const unsigned char *start = bytes + pos;
    const void *end = std::memchr(start, '\n', size - pos);
    if (!end)
      fail("a global's name runs to the end of the pickle");
    uint64_t length = static_cast<const unsigned char *>(end) - start;
    take(length + 1);
    return std::string(reinterpret_cast<const char *>(start), length);
  }
  PyRef pop() {
    if (stack.size() <= (marks.empty() ? 0 : marks.back()))
      fail("the pickle pops from an empty stack");
    PyRef value = std::move(stack.back());
    stack.pop_back();
    return value;
  }
  PyRef &top() {
    if (stack.size() <= (marks.empty() ? 0 : marks.back()))
      fail("the pickle reads an empty stack");
    return stack.back();
  }
  std::vector<PyRef> popMark() {
    if (marks.empty())
      fail("the pickle closes a MARK it never opened");
    std::vector<PyRef> items(stack.begin() + marks.back(), stack.end());
    stack.resize(marks.back());
    marks.pop_back();
    return items;
  }
  void push(PyRef value) { stack.push_back(std::move(value)); }
  void pushInt(int64_t value) {
    PyRef v = make(PyValue::Kind::Int);
    v->integer = value;
    push(v);
  }
  void pushString(uint64_t length) {
    PyRef v = make(PyValue::Kind::String);
    const unsigned char *at = take(length);
    v->text.assign(reinterpret_cast<const char *>(at), length);
    push(v);
  }
  void pushTuple(std::vector<PyRef> items) {
    PyRef v = make(PyValue::Kind::Tuple);
    v->items = std::move(items);
    push(v);
  }
  void pushGlobal(const std::string &module, const std::string &name);
  void memoPut(uint64_t key) { memo[key] = top(); }
  void memoGet(uint64_t key) {
    auto found = memo.find(key);
    if (found == memo.end())
      fail(fmt::format("the pickle reads memo entry {}, never written", key));
    push(found->second);
  }
  bool step(unsigned char opcode);
  bool stepData(unsigned char opcode);
  void setItems(PyRef &dict, std::vector<PyRef> items);
  void reduce();
  void build();
  void persistentLoad();
  PyRef rebuildTensor(const std::vector<PyRef> &args);
  int64_t intOf(const PyRef &value, const char *what);
  std::vector<int64_t> intsOf(const PyRef &value, const char *what);

  const ZipArchive &zip;
  std::string prefix;
  const unsigned char *bytes;
  uint64_t size, pos = 0, opcodeAt = 0;
  std::vector<PyRef> stack;
  std::vector<size_t> marks;
  std::map<uint64_t, PyRef> memo;
};

PyRef Unpickler::run() {
  while (true) {
    opcodeAt = pos;
    unsigned char opcode = *take(1);
    if (opcode == '.') // STOP
      break;
    if (!step(opcode) && !stepData(opcode))
      fail(fmt::format("opcode 0x{:02x} is not one a state dict's pickle "
                       "uses",
                       opcode));
  }
  if (stack.size() != 1 || !marks.empty())
    fail(fmt::format("the pickle stops with {} values on its stack, not one",
                     stack.size()));
  return stack.back();
}

/// The opcodes that structure the pickle: protocol, framing, marks, memo,
/// containers, globals and calls. False for any other.
bool Unpickler::step(unsigned char opcode) {
  switch (opcode) {
  case 0x80: // PROTO
    if (*take(1) > 5)
      fail("the pickle's protocol is newer than 5");
    return true;
  case 0x95: // FRAME: its length only groups the opcodes that follow
    take(8);
    return true;
  case '(': // MARK
    marks.push_back(stack.size());
    return true;
  case '0': // POP
    pop();
    return true;
  case '1': // POP_MARK
    popMark();
    return true;
  case '2': // DUP
    push(top());
    return true;
  case 'q': // BINPUT
    memoPut(little(1));
    return true;
  case 'r': // LONG_BINPUT
    memoPut(little(4));
    return true;
  case 0x94: // MEMOIZE
    memoPut(memo.size());
    return true;
  case 'h': // BINGET
    memoGet(little(1));
    return true;
  case 'j': // LONG_BINGET
    memoGet(little(4));
    return true;
  case ')': // EMPTY_TUPLE
    pushTuple({});
    return true;
  case 't': // TUPLE
    pushTuple(popMark());
    return true;
  case 0x85:   // TUPLE1
  case 0x86:   // TUPLE2
  case 0x87: { // TUPLE3
    std::vector<PyRef> items(opcode - 0x84);
    for (size_t i = items.size(); i > 0; --i)
      items[i - 1] = pop();
    pushTuple(std::move(items));
    return true;
  }
  case '}': // EMPTY_DICT
    push(make(PyValue::Kind::Dict));
    return true;
  case ']': // EMPTY_LIST
    push(make(PyValue::Kind::List));
    return true;
  case 's': { // SETITEM
    PyRef value = pop(), key = pop();
    setItems(top(), {key, value});
    return true;
  }
  case 'u': { // SETITEMS
    std::vector<PyRef> items = popMark();
    setItems(top(), std::move(items));
    return true;
  }
  case 'a': { // APPEND
    PyRef value = pop();
    if (top()->kind != PyValue::Kind::List)
      fail(fmt::format("APPEND to {}", kindName(top()->kind)));
    top()->items.push_back(value);
    return true;
  }
  case 'e': { // APPENDS
    std::vector<PyRef> items = popMark();
    if (top()->kind != PyValue::Kind::List)
      fail(fmt::format("APPENDS to {}", kindName(top()->kind)));
    top()->items.insert(top()->items.end(), items.begin(), items.end());
    return true;
  }
  case 'c': { // GLOBAL
    std::string module = line();
    pushGlobal(module, line());
    return true;
  }
  case 0x93: { // STACK_GLOBAL
    PyRef name = pop(), module = pop();
    if (name->kind != PyValue::Kind::String ||
        module->kind != PyValue::Kind::String)
      fail("STACK_GLOBAL of values that are not strings");
    pushGlobal(module->text, name->text);
    return true;
  }
  case 'R': // REDUCE
    reduce();
    return true;
  case 'b': // BUILD
    build();
    return true;
  case 'Q': // BINPERSID
    persistentLoad();
    return true;
  default:
    return false;
  }
}

/// The opcodes that push a constant. False for any other.
bool Unpickler::stepData(unsigned char opcode) {
  switch (opcode) {
  case 'N': // NONE
    push(make(PyValue::Kind::None));
    return true;
  case 0x88:   // NEWTRUE
  case 0x89: { // NEWFALSE
    PyRef v = make(PyValue::Kind::Bool);
    v->integer = opcode == 0x88;
    push(v);
    return true;
  }
  case 'K': // BININT1
    pushInt(static_cast<int64_t>(little(1)));
    return true;
  case 'M': // BININT2
    pushInt(static_cast<int64_t>(little(2)));
    return true;
  case 'J': // BININT
    pushInt(static_cast<int32_t>(little(4)));
    return true;
  case 0x8a: { // LONG1
    uint64_t count = little(1);
    if (count > 8)
      fail(fmt::format("an integer of {} bytes", count));
    uint64_t value = count ? little(static_cast<int>(count)) : 0;
    if (count > 0 && count < 8 && (value >> (8 * count - 1)) & 1)
      value |= ~uint64_t(0) << (8 * count); // sign-extend
    pushInt(static_cast<int64_t>(value));
    return true;
  }
  case 'G': { // BINFLOAT, big-endian
    uint64_t raw = 0;
    for (const unsigned char *at = take(8), *end = at + 8; at < end; ++at)
      raw = raw << 8 | *at;
    PyRef v = make(PyValue::Kind::Float);
    std::memcpy(&v->real, &raw, sizeof raw);
    push(v);
    return true;
  }
  case 'X': // BINUNICODE
    pushString(little(4));
    return true;
  case 0x8c: // SHORT_BINUNICODE
    pushString(little(1));
    return true;
  case 0x8d: // BINUNICODE8
    pushString(little(8));
    return true;
  default:
    return false;
  }
}

void Unpickler::setItems(PyRef &dict, std::vector<PyRef> items) {
  if (dict->kind != PyValue::Kind::Dict)
    fail(fmt::format("SETITEMS on {}, not a dict", kindName(dict->kind)));
  if (items.size() % 2)
    fail("SETITEMS with a key and no value");
  dict->items.insert(dict->items.end(), items.begin(), items.end());
}

void Unpickler::pushGlobal(const std::string &module, const std::string &name) {
  std::string full = module + "." + name;
  bool storage = module == "torch" && name.size() > 7 &&
                 name.compare(name.size() - 7, 7, "Storage") == 0;
  if (storage && !kStorageTypes.count(full))
    fail(fmt::format("a tensor of {}, which mbt does not convert (it reads "
                     "float, integer and bool tensors)",
                     full));
  bool known = storage;
  for (const char *allowed : kAllowedGlobals)
    known = known || full == allowed;
  if (!known)
    fail(fmt::format("the pickle names '{}', which a state dict of tensors "
                     "does not hold; mbt reads a file saved as "
                     "torch.save(module.state_dict(), path)",
                     full));
  PyRef v = make(PyValue::Kind::Global);
  v->text = full;
  push(v);
}

/// A call: OrderedDict() (a dict) or the rebuilding of a tensor.
void Unpickler::reduce() {
  PyRef args = pop(), callable = pop();
  if (callable->kind != PyValue::Kind::Global ||
      args->kind != PyValue::Kind::Tuple)
    fail(fmt::format("REDUCE calls {} with {}", kindName(callable->kind),
                     kindName(args->kind)));
  const std::string &name = callable->text;
  if (name == "collections.OrderedDict") {
    if (!args->items.empty())
      fail("OrderedDict(...) with arguments");
    push(make(PyValue::Kind::Dict));
  } else if (name == "torch._utils._rebuild_tensor_v2") {
    push(rebuildTensor(args->items));
  } else if (name == "torch._utils._rebuild_parameter") {
    if (args->items.empty() || args->items[0]->kind != PyValue::Kind::Tensor)
      fail("_rebuild_parameter without a tensor");
    push(args->items[0]);
  } else if (name == "torch.jit._pickle.restore_type_tag") {
    if (args->items.size() != 2)
      fail("restore_type_tag without (value, type)");
    push(args->items[0]);
  } else {
    fail(fmt::format("REDUCE calls '{}'", name));
  }
}

/// An object's state: a state dict's `_metadata` (the modules' versions),
/// which loading the tensors does not need.
void Unpickler::build() {
  pop();
  if (top()->kind != PyValue::Kind::Dict)
    fail(fmt::format("BUILD on {}", kindName(top()->kind)));
}

int64_t Unpickler::intOf(const PyRef &value, const char *what) {
  if (value->kind != PyValue::Kind::Int)
    fail(fmt::format("{} is {}, not an int", what, kindName(value->kind)));
  return value->integer;
}

std::vector<int64_t> Unpickler::intsOf(const PyRef &value, const char *what) {
  if (value->kind != PyValue::Kind::Tuple)
    fail(fmt::format("{} is {}, not a tuple", what, kindName(value->kind)));
  std::vector<int64_t> ints;
  for (const PyRef &item : value->items)
    ints.push_back(intOf(item, what));
  return ints;
}

/// ('storage', torch.FloatStorage, KEY, LOCATION, NUMEL) -> the storage,
/// whose bytes are the member PREFIX/data/KEY.
void Unpickler::persistentLoad() {
  PyRef id = pop();
  if (id->kind != PyValue::Kind::Tuple || id->items.size() != 5 ||
      id->items[0]->text != "storage" ||
      id->items[1]->kind != PyValue::Kind::Global ||
      id->items[2]->kind != PyValue::Kind::String)
    fail("a persistent id that is not ('storage', TYPE, KEY, LOCATION, "
         "NUMEL)");
  auto type = kStorageTypes.find(id->items[1]->text);
  if (type == kStorageTypes.end())
    fail(fmt::format("a storage of type '{}'", id->items[1]->text));
  int64_t numel = intOf(id->items[4], "a storage's element count");
  std::string member = prefix + "data/" + id->items[2]->text;
  const ZipMember *found = zip.find(member);
  std::string origin = fmt::format("'{}': member '{}'", zip.path(), member);
  if (!found)
    fail(fmt::format("the storage '{}' has no member '{}' in the archive",
                     id->items[2]->text, member));
  const unsigned char *data = zip.storedBytes(*found, origin, kWriter);
  uint64_t elementBytes = elementSize(type->second);
  if (numel < 0 || found->size / elementBytes != uint64_t(numel) ||
      found->size % elementBytes)
    fail(fmt::format("the storage '{}' of {} elements of {} has a member of "
                     "{} bytes",
                     id->items[2]->text, numel, elementTypeName(type->second),
                     found->size));
  PyRef storage = make(PyValue::Kind::Storage);
  storage->array.origin = origin;
  storage->array.type = type->second;
  storage->array.shape = {numel};
  storage->array.data = data;
  storage->array.owner = zip.file().owner;
  push(storage);
}

/// Copies the strided view `tensor` of `storage` out in C order.
ArrayView gathered(const ArrayView &storage, int64_t offset,
                   const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &stride) {
  size_t width = elementSize(storage.type);
  int64_t count = std::accumulate(shape.begin(), shape.end(), int64_t(1),
                                  std::multiplies<int64_t>());
  std::shared_ptr<unsigned char[]> out(new unsigned char[count * width + 1]);
  std::vector<int64_t> index(shape.size(), 0);
  const auto *from = static_cast<const unsigned char *>(storage.data);
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = offset;
    for (size_t d = 0; d < shape.size(); ++d)
      at += index[d] * stride[d];
    std::memcpy(out.get() + i * width, from + at * width, width);
    for (size_t d = shape.size(); d-- > 0;)
      if (++index[d] < shape[d])
        break;
      else
        index[d] = 0;
  }
  ArrayView view = storage;
  view.shape = shape;
  view.data = out.get();
  view.owner = out;
  return view;
}

/// _rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
/// backward_hooks[, metadata]): a view of the storage, which must lie in
/// it and not overlap itself (so copying it out never takes more than the
/// storage's bytes).
PyRef Unpickler::rebuildTensor(const std::vector<PyRef> &args) {
  if (args.size() < 6 || args[0]->kind != PyValue::Kind::Storage)
    fail("_rebuild_tensor_v2 without (storage, offset, size, stride, ...)");
  const ArrayView &storage = args[0]->array;
  int64_t offset = intOf(args[1], "a tensor's storage offset");
  std::vector<int64_t> shape = intsOf(args[2], "a tensor's size");
  std::vector<int64_t> stride = intsOf(args[3], "a tensor's stride");
  if (shape.size() != stride.size())
    fail("a tensor's size and stride differ in length");
  // Sorted by stride, each dimension must step past all the elements of
  // the smaller ones: then the view does not overlap itself, and `extent`
  // (one past the last element it reaches) bounds its element count.
  std::vector<size_t> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return stride[a] < stride[b]; });
  int64_t available = storage.shape[0], extent = 1, elements = 1;
  for (size_t d : order) {
    if (shape[d] < 0 || stride[d] < 0)
      fail("a tensor with a negative size or stride");
    if (shape[d] == 0)
      elements = 0;
    if (shape[d] <= 1)
      continue;
    if (stride[d] < extent)
      fail("a tensor whose elements overlap (an expanded view)");
    if (shape[d] - 1 > available / stride[d])
      fail("a tensor larger than its storage");
    extent += stride[d] * (shape[d] - 1);
    elements *= shape[d];
  }
  if (offset < 0 || (elements > 0 && extent > available - offset))
    fail(fmt::format("a tensor of size {} at offset {} runs past its "
                     "storage of {} elements",
                     formatShape(shape), offset, available));
  PyRef tensor = make(PyValue::Kind::Tensor);
  bool dense = true; // C order without gaps
  int64_t cStride = 1;
  for (size_t d = shape.size(); dense && d-- > 0; cStride *= shape[d])
    dense = shape[d] <= 1 || stride[d] == cStride;
  if (dense || elements == 0) {
    tensor->array = storage;
    tensor->array.shape = shape;
    tensor->array.data = static_cast<const unsigned char *>(storage.data) +
                         offset * elementSize(storage.type);
  } else {
    tensor->array = gathered(storage, offset, shape, stride);
  }
  return tensor;
}

/// The archive's prefix: the folder of its one data.pkl ("archive/" or the
/// file's stem).
std::string picklePrefix(const ZipArchive &zip) {
  std::vector<std::string> found;
  for (const ZipMember &member : zip.members()) {
    const std::string &name = member.name;
    size_t slash = name.find('/');
    if (slash != std::string::npos && name.substr(slash + 1) == "data.pkl")
      found.push_back(name.substr(0, slash + 1));
  }
  if (found.size() != 1)
    throw RuntimeError(fmt::format(
        "'{}' is a zip archive but not a torch.save file: it holds {} "
        "PREFIX/data.pkl members, not one",
        zip.path(), found.size()));
  return found[0];
}

/// The dict at the pickle's top, checked to map names to tensors.
StateDict stateDictOf(const PyRef &top, const std::string &path) {
  if (top->kind != PyValue::Kind::Dict)
    throw RuntimeError(fmt::format(
        "'{}' holds {}, not a state dict (a dict from names to tensors, as "
        "torch.save(module.state_dict(), path) writes)",
        path, kindName(top->kind)));
  StateDict tensors;
  std::set<std::string> names;
  for (size_t i = 0; i < top->items.size(); i += 2) {
    const PyRef &key = top->items[i], &value = top->items[i + 1];
    if (key->kind != PyValue::Kind::String)
      throw RuntimeError(
          fmt::format("'{}' holds a dict with a key that is {}, not a name",
                      path, kindName(key->kind)));
    if (value->kind != PyValue::Kind::Tensor)
      throw RuntimeError(fmt::format(
          "'{}': entry '{}' is {}, not a tensor: the file is not a state "
          "dict{}",
          path, key->text, kindName(value->kind),
          value->kind == PyValue::Kind::Dict
              ? " (a checkpoint holding one? save its state dict alone: "
                "torch.save(checkpoint['" +
                    key->text + "'], path))"
              : ""));
    if (!names.insert(key->text).second)
      throw RuntimeError(fmt::format("'{}' holds '{}' twice", path, key->text));
    ArrayView view = value->array;
    view.origin = fmt::format("'{}': tensor '{}'", path, key->text);
    tensors.emplace_back(key->text, view);
  }
  return tensors;
}

/// How a legacy torch.save file starts: PROTO 2, then torch's magic number
/// 0x1950a86a20f9469cfc6c as a LONG1 of 10 bytes.
const std::string
    kLegacyMagic("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19",
                 14);

/// The file's first `count` bytes (fewer for a shorter or unreadable file).
std::string leadingBytes(const std::string &path, size_t count) {
  std::ifstream in(path, std::ios::binary);
  std::string head(count, '\0');
  in.read(head.data(), static_cast<std::streamsize>(count));
  head.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return head;
}

} // namespace

bool isTorchFile(const std::string &path) {
  std::string head = leadingBytes(path, kLegacyMagic.size());
  return head.compare(0, 4, "PK\3\4") == 0 || head == kLegacyMagic;
}

StateDict readTorchStateDict(const std::string &path) {
  if (leadingBytes(path, kLegacyMagic.size()) == kLegacyMagic)
    throw RuntimeError(fmt::format(
        "'{}' is a legacy torch.save file (written with "
        "_use_new_zipfile_serialization=False or by torch before 1.6); "
        "mbt reads the zip format: load it in PyTorch and save it again "
        "with torch.save(state_dict, path)",
        path));
  ZipArchive zip(path, "a .pt file (torch.save writes a zip archive)");
  std::string prefix = picklePrefix(zip);
  const ZipMember &pickle = *zip.find(prefix + "data.pkl");
  if (const ZipMember *order = zip.find(prefix + "byteorder")) {
    const unsigned char *text = zip.storedBytes(
        *order, fmt::format("'{}': member '{}'", path, order->name), kWriter);
    if (std::string(reinterpret_cast<const char *>(text), order->size) !=
        "little")
      throw RuntimeError(fmt::format(
          "'{}' was saved on a big-endian host, which mbt does not read",
          path));
  }
  std::string origin = fmt::format("'{}': member '{}'", path, pickle.name);
  Unpickler unpickler(zip, prefix, zip.storedBytes(pickle, origin, kWriter),
                      pickle.size);
  return stateDictOf(unpickler.run(), path);
}

} // namespace runtime
} // namespace mbt
