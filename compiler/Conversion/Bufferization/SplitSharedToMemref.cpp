//===- SplitSharedToMemref.cpp - each reader its own to_memref ------------===//
//
// The runtime's kernels (attention, convolution) read their tensor operands
// through `bufferization.to_memref`, built just before the call. That op is
// Pure, so CSE merges the forward's and the adjoint's to_memref of one
// tensor (the attention's query, read again by its adjoint) into the
// first. One-Shot Bufferize then sees the tensor read only there, and may
// let an op in between write its result into the tensor's buffer, in
// place: the adjoint's kernel read another tensor's values. Given a
// to_memref of its own just before it, each reader reads the tensor where
// it reads it, and the analysis keeps the buffer until then.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTSPLITSHAREDTOMEMREF
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {

/// Whether `user` only gives another view of `v`'s buffer (memref.cast,
/// a reshape, a subview): what the kernels' operands pass through between
/// to_memref and the call.
bool isViewOf(Operation *user, Value v) {
  auto view = dyn_cast<ViewLikeOpInterface>(user);
  return view && view.getViewSource() == v;
}

/// The uses of `toMemref`'s buffer by ops other than views (seen through
/// them), in program order (a use inside a region at its ancestor's place).
SmallVector<OpOperand *> readerUses(bufferization::ToMemrefOp toMemref) {
  SmallVector<OpOperand *> uses;
  SmallVector<Value> worklist{toMemref.getResult()};
  while (!worklist.empty())
    for (OpOperand &use : worklist.pop_back_val().getUses()) {
      Operation *user = use.getOwner();
      if (isViewOf(user, use.get()))
        worklist.push_back(user->getResult(0));
      else
        uses.push_back(&use);
    }
  Block *block = toMemref->getBlock();
  llvm::stable_sort(uses, [&](OpOperand *a, OpOperand *b) {
    Operation *x = block->findAncestorOpInBlock(*a->getOwner());
    Operation *y = block->findAncestorOpInBlock(*b->getOwner());
    return x && y && x != y && x->isBeforeInBlock(y);
  });
  return uses;
}

/// A copy of the chain from `toMemref` to `v` (the to_memref and the views
/// between), cloned just before `reader`; the copy of `v`.
Value cloneBefore(Operation *reader, Value v,
                  bufferization::ToMemrefOp toMemref) {
  SmallVector<Operation *> chain;
  for (Value link = v; link != toMemref.getResult();
       link = cast<ViewLikeOpInterface>(link.getDefiningOp()).getViewSource())
    chain.push_back(link.getDefiningOp());
  chain.push_back(toMemref);
  OpBuilder b(reader);
  IRMapping map;
  for (Operation *op : llvm::reverse(chain))
    b.clone(*op, map);
  return map.lookup(v);
}

/// Gives every reader of `toMemref`'s buffer but the first its own copy of
/// the chain to each value it reads (one per reader and value).
void split(bufferization::ToMemrefOp toMemref) {
  SmallVector<OpOperand *> uses = readerUses(toMemref);
  if (uses.empty())
    return;
  Operation *first = uses.front()->getOwner();
  DenseMap<std::pair<Operation *, Value>, Value> copies;
  for (OpOperand *use : uses) {
    Operation *reader = use->getOwner();
    if (reader == first)
      continue;
    Value &copy = copies[{reader, use->get()}];
    if (!copy)
      copy = cloneBefore(reader, use->get(), toMemref);
    use->set(copy);
  }
}

struct SplitSharedToMemrefPass
    : public mlir::mbt::impl::MBTSplitSharedToMemrefBase<
          SplitSharedToMemrefPass> {
  void runOnOperation() override {
    SmallVector<bufferization::ToMemrefOp> toMemrefs;
    getOperation().walk(
        [&](bufferization::ToMemrefOp op) { toMemrefs.push_back(op); });
    for (bufferization::ToMemrefOp toMemref : toMemrefs)
      split(toMemref);
  }
};

} // namespace
