//===- ElideCopies.cpp - buffers computed where their copy would go -------===//
//
// One-shot bufferization gives every gradient its own allocation, and the
// gather of the gradients into the flat [M, P] buffer of the fused update
// becomes one memref.copy per parameter: at MLP-S with 64 models, 26 MB
// copied every step. When an allocation is written, read, and finally
// copied whole (directly or through a collapse_shape) into a view of
// another buffer, this pass makes the allocation that view: the producers
// write in place and the copy goes away.
//
// It applies when, in one block:
//   - the copy's source is the allocation or a collapse_shape of it, and
//     nothing uses the allocation after the copy;
//   - the destination is a chain of subviews of a buffer (or the buffer),
//     each either defined above the allocation or movable above it (its
//     operands are);
//   - between the allocation and the copy nothing else touches the
//     destination's root buffer, except through views provably disjoint
//     from the destination: static boxes that do not overlap (other
//     gradients' columns), or subviews of one buffer that take disjoint
//     static ranges of one dimension (a recurrence's gates at position t,
//     each in its own columns of the rows at t);
//   - every user of the allocation (nested ones too) comes before the copy
//     and accepts the view's strided layout: linalg ops, memref.dim,
//     loads and stores (an embedding's gradient, scattered), memref.copy
//     (an initial value copied in), memref.cast to a compatible type, and
//     the views transpose, subview,
//     expand_shape and collapse_shape, rebuilt on the view, whose own users
//     accept their new layouts (an attention block's product, written
//     through a transpose of its buffer, and the block rows it fills).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTELIDECOPIES
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// The static rectangle a value's elements lie in, in the coordinates of
/// the buffer it views (its root): offsets and sizes per root dimension.
struct Region {
  Value root;
  SmallVector<int64_t> offsets, sizes;
};

/// Whether `op` is a view: it accesses no memory, and its result's
/// elements are elements of its first operand.
bool isView(Operation *op) {
  return isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
             memref::CastOp>(op);
}

/// Whether `subview` selects a static, unit-stride, rank-preserving box.
bool isStaticBox(memref::SubViewOp subview) {
  return subview.hasUnitStride() && subview.getOffsets().empty() &&
         subview.getSizes().empty() &&
         subview.getSourceType().getRank() == subview.getType().getRank();
}

/// The buffer `v` views (through any views), or `v`.
Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// The region of its root that `v` covers, when it is known statically:
/// reshapes and casts keep their source's elements, static boxes narrow
/// them (a box of a reshape has no rectangle in root coordinates, so it
/// is unknown). The root must have a static shape.
std::optional<Region> regionOf(Value v) {
  SmallVector<memref::SubViewOp> boxes;
  while (Operation *def = v.getDefiningOp()) {
    if (auto subview = dyn_cast<memref::SubViewOp>(def)) {
      if (!isStaticBox(subview))
        return std::nullopt;
      boxes.push_back(subview);
    } else if (isView(def)) {
      if (!boxes.empty())
        return std::nullopt;
    } else {
      break;
    }
    v = def->getOperand(0);
  }
  auto rootType = dyn_cast<MemRefType>(v.getType());
  if (!rootType || !rootType.hasStaticShape())
    return std::nullopt;
  Region region{v, SmallVector<int64_t>(rootType.getRank(), 0),
                SmallVector<int64_t>(rootType.getShape())};
  for (memref::SubViewOp subview : llvm::reverse(boxes))
    for (int64_t d = 0; d < rootType.getRank(); ++d) {
      region.offsets[d] += subview.getStaticOffsets()[d];
      region.sizes[d] = subview.getStaticSizes()[d];
    }
  return region;
}

bool overlap(const Region &a, const Region &b) {
  for (size_t d = 0; d < a.offsets.size(); ++d)
    if (a.offsets[d] + a.sizes[d] <= b.offsets[d] ||
        b.offsets[d] + b.sizes[d] <= a.offsets[d])
      return false;
  return true;
}

/// The views from `v`'s root down to `v`: root first.
SmallVector<Value> viewsFromRoot(Value v) {
  SmallVector<Value> chain{v};
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = def->getOperand(0);
    chain.push_back(v);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

/// Whether subviews `a` and `b` of one buffer select disjoint static
/// ranges of one of its dimensions, whatever their other offsets and
/// sizes.
bool selectDisjointRanges(memref::SubViewOp a, memref::SubViewOp b) {
  for (int64_t d = 0; d < a.getSourceType().getRank(); ++d) {
    int64_t ao = a.getStaticOffsets()[d], as = a.getStaticSizes()[d],
            at = a.getStaticStrides()[d], bo = b.getStaticOffsets()[d],
            bs = b.getStaticSizes()[d], bt = b.getStaticStrides()[d];
    if (ShapedType::isDynamic(ao) || ShapedType::isDynamic(as) ||
        ShapedType::isDynamic(at) || ShapedType::isDynamic(bo) ||
        ShapedType::isDynamic(bs) || ShapedType::isDynamic(bt))
      continue;
    if (as == 0 || bs == 0 || ao + (as - 1) * at < bo ||
        bo + (bs - 1) * bt < ao)
      return true;
  }
  return false;
}

/// Whether views `a` and `b` of one root provably share no element.
bool disjoint(Value a, Value b) {
  std::optional<Region> ra = regionOf(a), rb = regionOf(b);
  if (ra && rb)
    return !overlap(*ra, *rb);
  // Where their chains of views part, two subviews of one value.
  SmallVector<Value> ca = viewsFromRoot(a), cb = viewsFromRoot(b);
  size_t i = 0;
  while (i < ca.size() && i < cb.size() && ca[i] == cb[i])
    ++i;
  if (i == 0 || i == ca.size() || i == cb.size())
    return false;
  auto sa = ca[i].getDefiningOp<memref::SubViewOp>();
  auto sb = cb[i].getDefiningOp<memref::SubViewOp>();
  return sa && sb && selectDisjointRanges(sa, sb);
}

/// Whether `op` may read or write the destination `dst`: one of its
/// operands views dst's root and is not provably disjoint from `dst`.
/// Views and allocations access no memory.
bool touchesDestination(Operation *op, Value dst, Value dstRoot) {
  if (isView(op) || isa<memref::AllocOp>(op))
    return false;
  for (Value operand : op->getOperands())
    if (isa<BaseMemRefType>(operand.getType()) && rootOf(operand) == dstRoot &&
        !disjoint(operand, dst))
      return true;
  return false;
}

/// The type view `user` gives when rebuilt on a value of `type`, or null
/// where it cannot take one (a collapse of dimensions that may not be
/// contiguous in `type`, or not a view this pass rebuilds).
MemRefType reboundViewType(Operation *user, MemRefType type) {
  if (auto transpose = dyn_cast<memref::TransposeOp>(user)) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(getStridesAndOffset(type, strides, offset)))
      return {};
    AffineMap permutation = transpose.getPermutation();
    return MemRefType::Builder(type)
        .setShape(applyPermutationMap<int64_t>(permutation, type.getShape()))
        .setLayout(StridedLayoutAttr::get(
            type.getContext(), offset,
            applyPermutationMap<int64_t>(permutation, strides)));
  }
  if (auto subview = dyn_cast<memref::SubViewOp>(user))
    return cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
        subview.getType().getShape(), type, subview.getStaticOffsets(),
        subview.getStaticSizes(), subview.getStaticStrides()));
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(user)) {
    FailureOr<MemRefType> expanded = memref::ExpandShapeOp::computeExpandedType(
        type, expand.getResultType().getShape(),
        expand.getReassociationIndices());
    return succeeded(expanded) ? *expanded : MemRefType();
  }
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(user)) {
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups))
      return {};
    return memref::CollapseShapeOp::computeCollapsedType(type, groups);
  }
  return {};
}

/// Whether `user` takes a memref of any layout in place of its operand, as
/// it is: linalg ops, memref.dim, loads and stores, and memref.copy (an
/// initial value copied in).
bool takesAnyLayout(Operation *user) {
  return isa<linalg::LinalgOp, memref::DimOp, memref::CopyOp, memref::LoadOp,
             memref::StoreOp>(user);
}

/// Whether every user of `v` but `skip` lies before `copy` in its block
/// (or inside an op that does) and accepts a value of `type` in v's place:
/// the ops that take any layout, casts to a compatible type, and views
/// rebuilt on it whose users accept their new types.
bool usersAccept(Value v, MemRefType type, memref::CopyOp copy,
                 ArrayRef<Operation *> skip) {
  Block *block = copy->getBlock();
  for (Operation *user : v.getUsers()) {
    if (llvm::is_contained(skip, user))
      continue;
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock || !inBlock->isBeforeInBlock(copy))
      return false;
    if (takesAnyLayout(user))
      continue;
    if (auto cast = dyn_cast<memref::CastOp>(user)) {
      if (!memref::CastOp::areCastCompatible(TypeRange{type},
                                             TypeRange{cast.getType()}))
        return false;
      continue;
    }
    MemRefType rebound = reboundViewType(user, type);
    if (!rebound || !usersAccept(user->getResult(0), rebound, copy, {}))
      return false;
  }
  return true;
}

/// Makes every user of `from` but `skip` use `to` instead, rebuilding the
/// views among them on it (usersAccept said they can be).
void retarget(Value from, Value to, ArrayRef<Operation *> skip,
              RewriterBase &rewriter) {
  for (OpOperand &use : llvm::make_early_inc_range(from.getUses())) {
    Operation *user = use.getOwner();
    if (llvm::is_contained(skip, user))
      continue;
    if (takesAnyLayout(user) || isa<memref::CastOp>(user)) {
      rewriter.modifyOpInPlace(user, [&] { use.set(to); });
      continue;
    }
    rewriter.setInsertionPoint(user);
    Location loc = user->getLoc();
    auto type = cast<MemRefType>(to.getType());
    Value rebuilt;
    if (auto transpose = dyn_cast<memref::TransposeOp>(user))
      rebuilt = rewriter.create<memref::TransposeOp>(
          loc, to, transpose.getPermutationAttr());
    else if (auto subview = dyn_cast<memref::SubViewOp>(user))
      rebuilt = rewriter.create<memref::SubViewOp>(
          loc, reboundViewType(user, type), to, subview.getMixedOffsets(),
          subview.getMixedSizes(), subview.getMixedStrides());
    else if (auto expand = dyn_cast<memref::ExpandShapeOp>(user))
      rebuilt = rewriter.create<memref::ExpandShapeOp>(
          loc, reboundViewType(user, type), to,
          expand.getReassociationIndices(),
          getMixedValues(expand.getStaticOutputShape(), expand.getOutputShape(),
                         rewriter));
    else
      rebuilt = rewriter.create<memref::CollapseShapeOp>(
          loc, to,
          cast<memref::CollapseShapeOp>(user).getReassociationIndices());
    retarget(user->getResult(0), rebuilt, {}, rewriter);
    rewriter.eraseOp(user);
  }
}

/// Whether `root` is a buffer no other value aliases but through views of
/// it: an allocation or an argument of the function.
bool isDistinctBuffer(Value root) {
  if (auto arg = dyn_cast<BlockArgument>(root))
    return isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
      root.getDefiningOp());
}

/// The ops that define `target` (a chain of subviews and what they view,
/// root first) and do not dominate `alloc`, if each can move above it: its
/// operands dominate `alloc` or are results of the ops that move before it.
FailureOr<SmallVector<Operation *>>
destinationOpsToHoist(Value target, memref::AllocOp alloc,
                      DominanceInfo &dominance) {
  SmallVector<Operation *> chain;
  for (Value v = target; Operation *def = v.getDefiningOp();) {
    chain.push_back(def);
    auto subview = dyn_cast<memref::SubViewOp>(def);
    if (!subview)
      break;
    v = subview.getSource();
  }
  SmallVector<Operation *> toHoist;
  for (Operation *op : llvm::reverse(chain)) {
    if (dominance.properlyDominates(op, alloc))
      continue;
    if (op->getBlock() != alloc->getBlock() || op->getNumRegions() ||
        !isa<memref::SubViewOp, memref::AllocOp>(op))
      return failure();
    for (Value operand : op->getOperands())
      if (!dominance.properlyDominates(operand, alloc) &&
          !llvm::is_contained(toHoist, operand.getDefiningOp()))
        return failure();
    toHoist.push_back(op);
  }
  return toHoist;
}

/// Tries to make the allocation behind `copy`'s source the destination.
LogicalResult elide(memref::CopyOp copy, IRRewriter &rewriter,
                    DominanceInfo &dominance) {
  Value source = copy.getSource();
  auto collapse = source.getDefiningOp<memref::CollapseShapeOp>();
  Value allocated = collapse ? collapse.getSrc() : source;
  auto alloc = allocated.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != copy->getBlock() ||
      (collapse && !collapse->hasOneUse()))
    return failure();
  Value target = copy.getTarget(), root = rootOf(target);
  if (root == allocated || !isDistinctBuffer(root))
    return failure();
  FailureOr<SmallVector<Operation *>> toHoist =
      destinationOpsToHoist(target, alloc, dominance);
  if (failed(toHoist))
    return failure();

  // Users of the allocation: before the copy, and of a type the view fits.
  // The new value: the destination, or its expand_shape back to the
  // allocation's shape.
  auto allocType = cast<MemRefType>(allocated.getType());
  MemRefType viewType = cast<MemRefType>(target.getType());
  if (collapse) {
    FailureOr<MemRefType> expanded = memref::ExpandShapeOp::computeExpandedType(
        viewType, allocType.getShape(), collapse.getReassociationIndices());
    if (failed(expanded))
      return failure();
    viewType = *expanded;
  } else if (viewType.getShape() != allocType.getShape()) {
    return failure();
  }
  SmallVector<Operation *> replaced{copy};
  if (collapse)
    replaced.push_back(collapse);
  if (!usersAccept(allocated, viewType, copy, replaced))
    return failure();
  // Between the allocation and the copy, nothing (nested ops included) may
  // touch the destination: its writes would now meet the allocation's.
  bool touched = false;
  for (Operation *op = alloc->getNextNode(); op != copy; op = op->getNextNode())
    op->walk([&](Operation *inner) {
      touched |= touchesDestination(inner, target, root);
    });
  if (touched)
    return failure();

  // Move the destination above the allocation (root first), then build the
  // view there.
  for (Operation *op : *toHoist)
    op->moveBefore(alloc);
  rewriter.setInsertionPoint(alloc);
  Value view = target;
  if (collapse)
    view = rewriter.create<memref::ExpandShapeOp>(
        alloc.getLoc(), viewType, view, collapse.getReassociationIndices(),
        getMixedValues(allocType.getShape(), alloc.getDynamicSizes(),
                       rewriter));
  retarget(allocated, view, replaced, rewriter);
  rewriter.eraseOp(copy);
  if (collapse)
    rewriter.eraseOp(collapse);
  rewriter.eraseOp(alloc);
  return success();
}

struct ElideCopiesPass
    : public mlir::mbt::impl::MBTElideCopiesBase<ElideCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(getOperation());
    for (memref::CopyOp copy : copies)
      (void)elide(copy, rewriter, dominance);
  }
};

} // namespace
