//===- PlanWorkspace.cpp - a step's temporaries in one caller-owned buffer ===//
//
// After bufferization a step mallocs every temporary it needs and frees it
// before it returns: dozens of allocations per step, megabytes each. This
// pass gives each public function of the module (the artifact's entry
// points) a last argument, `memref<?xi8>`, the workspace the caller owns,
// and makes every planned allocation a `memref.view` of it. The caller
// learns how many bytes to pass from a function the pass adds beside each
// entry point, `<name>_workspace_bytes`, which takes the entry point's
// other arguments and returns the size (it depends on the dynamic sizes of
// the arguments: the batch). The runtime allocates the workspace once, for
// the largest batch, so a step allocates nothing.
//
// Planning: an allocation in the function's entry block whose every alias
// (through view-like ops) is used only in ops that neither return nor
// create new memrefs from it is live from its position to the last op of
// the entry block that uses an alias. Allocations of the same byte size
// (equal static byte count and the same dynamic dimensions of the same
// arguments) share a slot when their live ranges do not overlap; slots are
// laid out one after another, each 64-byte aligned. An allocation is left
// to malloc when it sits in a nested region, its layout is not the
// identity, its element type has no byte size, a dynamic size is not a
// `memref.dim` of an argument at a constant index or a product of such
// (affine.apply or arith.muli: the B * T rows of a token batch's
// activations; constant factors too: the M * B sequences of M models), or
// an alias escapes.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <map>

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTPLANWORKSPACE
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {

constexpr int64_t kSlotAlignment = 64;
constexpr llvm::StringLiteral kSizeFunctionSuffix = "_workspace_bytes";

/// A dynamic size the prologue can recompute: dimension `dim` of argument
/// `arg` of the entry point.
using ArgDim = std::pair<unsigned, int64_t>;

/// What an allocation's byte size is: a static byte count times the
/// product of some argument dimensions.
struct ByteSize {
  int64_t staticBytes = 0;
  SmallVector<ArgDim> dynamicDims;
  bool operator<(const ByteSize &other) const {
    return std::tie(staticBytes, dynamicDims) <
           std::tie(other.staticBytes, other.dynamicDims);
  }
};

struct Slot {
  ByteSize size;
  /// Position, in the entry block, of the last use of its current tenant.
  int64_t busyUntil = -1;
};

struct PlannedAlloc {
  memref::AllocOp alloc;
  unsigned slot;
};

/// The argument dimension `v` is (`memref.dim %argN, <constant>` with %argN
/// an argument of `entry`), if it is one.
std::optional<ArgDim> argDimOf(Value v, Block &entry) {
  auto dim = v.getDefiningOp<memref::DimOp>();
  if (!dim)
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(dim.getSource());
  std::optional<int64_t> index = dim.getConstantIndex();
  if (!arg || arg.getOwner() != &entry || !index)
    return std::nullopt;
  return ArgDim{arg.getArgNumber(), *index};
}

/// Multiplies `size` by the product `expr` is of argument dimensions and
/// positive constants, over the operands of an affine.apply; false when it
/// is not such a product.
bool appendProductDims(AffineExpr expr, ValueRange dimOperands,
                       ValueRange symbolOperands, Block &entry, ByteSize &size);

/// Multiplies `size` by `v`, where `v` is a product of argument
/// dimensions (one, or several that a collapse of a [B, T, ...] buffer
/// into [B * T, ...] computes) and positive constants (a collapse of
/// [M, B, ...] with M models); false when it is not such a product.
bool appendArgDims(Value v, Block &entry, ByteSize &size) {
  if (std::optional<ArgDim> argDim = argDimOf(v, entry)) {
    size.dynamicDims.push_back(*argDim);
    return true;
  }
  if (std::optional<int64_t> constant = getConstantIntValue(v)) {
    size.staticBytes *= *constant;
    return *constant > 0;
  }
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    return appendArgDims(mul.getLhs(), entry, size) &&
           appendArgDims(mul.getRhs(), entry, size);
  auto apply = v.getDefiningOp<affine::AffineApplyOp>();
  if (!apply)
    return false;
  AffineMap map = apply.getAffineMap();
  return appendProductDims(map.getResult(0), apply.getDimOperands(),
                           apply.getSymbolOperands(), entry, size);
}

bool appendProductDims(AffineExpr expr, ValueRange dimOperands,
                       ValueRange symbolOperands, Block &entry,
                       ByteSize &size) {
  if (auto d = dyn_cast<AffineDimExpr>(expr))
    return appendArgDims(dimOperands[d.getPosition()], entry, size);
  if (auto s = dyn_cast<AffineSymbolExpr>(expr))
    return appendArgDims(symbolOperands[s.getPosition()], entry, size);
  if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
    size.staticBytes *= constant.getValue();
    return constant.getValue() > 0;
  }
  auto mul = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!mul || mul.getKind() != AffineExprKind::Mul)
    return false;
  return appendProductDims(mul.getLHS(), dimOperands, symbolOperands, entry,
                           size) &&
         appendProductDims(mul.getRHS(), dimOperands, symbolOperands, entry,
                           size);
}

/// The byte size of `alloc` in terms of argument dimensions, if it has one.
std::optional<ByteSize> byteSizeOf(memref::AllocOp alloc, Block &entry) {
  MemRefType type = alloc.getType();
  Type element = type.getElementType();
  if (!type.getLayout().isIdentity() || !element.isIntOrFloat() ||
      !alloc.getSymbolOperands().empty())
    return std::nullopt;
  ByteSize size;
  size.staticBytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  for (int64_t extent : type.getShape())
    if (!ShapedType::isDynamic(extent))
      size.staticBytes *= extent;
  for (Value dynamic : alloc.getDynamicSizes())
    if (!appendArgDims(dynamic, entry, size))
      return std::nullopt;
  // [B, T] and [T, B] buffers of the same element count share slots.
  llvm::sort(size.dynamicDims);
  return size;
}

/// Whether `op` is a view of `source`: a view-like op, or memref.transpose
/// (which mbt-linalg-to-blas makes of a matmul's operands and does not
/// implement ViewLikeOpInterface).
bool isViewOf(Operation *op, Value source) {
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource() == source;
  auto transpose = dyn_cast<memref::TransposeOp>(op);
  return transpose && transpose.getIn() == source;
}

/// The position in `entry` of the last op that uses `alloc` or a view of
/// it, or nullopt when an alias escapes: returned, or taken by an op that
/// makes memrefs of it without being a view.
std::optional<int64_t>
lastUseOf(memref::AllocOp alloc, Block &entry,
          const DenseMap<Operation *, int64_t> &positions) {
  int64_t last = positions.lookup(alloc);
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value alias = worklist.pop_back_val();
    for (OpOperand &use : alias.getUses()) {
      Operation *user = use.getOwner();
      if (isa<func::ReturnOp>(user))
        return std::nullopt;
      if (isViewOf(user, alias)) {
        for (Value result : user->getResults())
          worklist.push_back(result);
      } else if (llvm::any_of(user->getResultTypes(),
                              llvm::IsaPred<BaseMemRefType>)) {
        return std::nullopt;
      }
      Operation *ancestor = entry.findAncestorOpInBlock(*user);
      if (!ancestor)
        return std::nullopt;
      last = std::max(last, positions.lookup(ancestor));
    }
  }
  return last;
}

/// Emits, at the builder's point, the byte size of `size` for the entry
/// point whose arguments are `args`, reusing `dims` for dimensions already
/// read.
Value emitByteSize(OpBuilder &b, Location loc, const ByteSize &size,
                   ValueRange args, std::map<ArgDim, Value> &dims) {
  Value bytes = b.create<arith::ConstantIndexOp>(loc, size.staticBytes);
  for (const ArgDim &argDim : size.dynamicDims) {
    Value &dim = dims[argDim];
    if (!dim)
      dim = b.create<memref::DimOp>(loc, args[argDim.first], argDim.second);
    bytes = b.create<arith::MulIOp>(loc, bytes, dim);
  }
  return bytes;
}

/// Emits the offset of every slot and, last, the total size.
SmallVector<Value> emitLayout(OpBuilder &b, Location loc, ArrayRef<Slot> slots,
                              ValueRange args) {
  std::map<ArgDim, Value> dims;
  Value padding = b.create<arith::ConstantIndexOp>(loc, kSlotAlignment - 1);
  Value mask = b.create<arith::ConstantIndexOp>(loc, -kSlotAlignment);
  SmallVector<Value> offsets{b.create<arith::ConstantIndexOp>(loc, 0)};
  for (const Slot &slot : slots) {
    Value bytes = emitByteSize(b, loc, slot.size, args, dims);
    Value padded = b.create<arith::AndIOp>(
        loc, b.create<arith::AddIOp>(loc, bytes, padding), mask);
    offsets.push_back(b.create<arith::AddIOp>(loc, offsets.back(), padded));
  }
  return offsets;
}

struct PlanWorkspacePass
    : public mlir::mbt::impl::MBTPlanWorkspaceBase<PlanWorkspacePass> {
  using MBTPlanWorkspaceBase::MBTPlanWorkspaceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entryPoints;
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isDeclaration() &&
          !func.getName().ends_with(kSizeFunctionSuffix) &&
          !module.lookupSymbol(sizeFunctionName(func)))
        entryPoints.push_back(func);
    for (func::FuncOp func : entryPoints)
      planFunction(func);
  }

  /// The plan of `func`, as a remark the user asks for with `remarks`:
  /// what shares the workspace and what still mallocs (before planning,
  /// every allocation of the function does).
  static void reportPlan(func::FuncOp func, size_t planned, size_t slots) {
    size_t allocations = 0;
    func.walk([&](memref::AllocOp) { ++allocations; });
    func.emitRemark() << "workspace of '" << func.getName() << "': " << planned
                      << (planned == 1 ? " temporary" : " temporaries")
                      << " in " << slots
                      << (slots == 1 ? " slot, " : " slots, ")
                      << allocations - planned << " left to malloc";
  }

  static std::string sizeFunctionName(func::FuncOp func) {
    return (func.getName() + kSizeFunctionSuffix).str();
  }

  void planFunction(func::FuncOp func) {
    Block &entry = func.getBody().front();
    DenseMap<Operation *, int64_t> positions;
    for (auto [index, op] : llvm::enumerate(entry))
      positions[&op] = index;

    // First fit, in program order, among the slots of the same size.
    SmallVector<Slot> slots;
    std::map<ByteSize, SmallVector<unsigned>> slotsOfSize;
    SmallVector<PlannedAlloc> planned;
    for (auto alloc : entry.getOps<memref::AllocOp>()) {
      if (!plan)
        break;
      std::optional<ByteSize> size = byteSizeOf(alloc, entry);
      if (!size)
        continue;
      std::optional<int64_t> last = lastUseOf(alloc, entry, positions);
      if (!last)
        continue;
      int64_t start = positions.lookup(alloc);
      SmallVector<unsigned> &candidates = slotsOfSize[*size];
      auto free = llvm::find_if(candidates, [&](unsigned slot) {
        return slots[slot].busyUntil < start;
      });
      unsigned slot;
      if (free != candidates.end()) {
        slot = *free;
      } else {
        slot = slots.size();
        slots.push_back({*size});
        candidates.push_back(slot);
      }
      slots[slot].busyUntil = *last;
      planned.push_back({alloc, slot});
    }

    if (remarks)
      reportPlan(func, planned.size(), slots.size());

    // The size function: the entry point's arguments in, bytes out.
    Location loc = func.getLoc();
    OpBuilder b(func);
    b.setInsertionPointAfter(func);
    auto sizeType = b.getFunctionType(func.getArgumentTypes(), b.getI64Type());
    auto sizeFunc =
        b.create<func::FuncOp>(loc, sizeFunctionName(func), sizeType);
    sizeFunc->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    Block *sizeBody = sizeFunc.addEntryBlock();
    b.setInsertionPointToStart(sizeBody);
    Value total = emitLayout(b, loc, slots, sizeBody->getArguments()).back();
    b.create<func::ReturnOp>(loc, ValueRange{b.create<arith::IndexCastOp>(
                                      loc, b.getI64Type(), total)});

    // The workspace argument, and every planned allocation a view of it.
    auto workspaceType =
        MemRefType::get({ShapedType::kDynamic}, b.getIntegerType(8));
    func.insertArgument(func.getNumArguments(), workspaceType, DictionaryAttr(),
                        loc);
    Value workspace = func.getArguments().back();
    b.setInsertionPointToStart(&entry);
    SmallVector<Value> offsets =
        emitLayout(b, loc, slots, func.getArguments().drop_back());
    for (PlannedAlloc &p : planned) {
      b.setInsertionPoint(p.alloc);
      auto view = b.create<memref::ViewOp>(p.alloc.getLoc(), p.alloc.getType(),
                                           workspace, offsets[p.slot],
                                           p.alloc.getDynamicSizes());
      p.alloc.replaceAllUsesWith(view.getResult());
      p.alloc.erase();
    }
  }
};

} // namespace
