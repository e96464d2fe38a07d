//===- SplitSharedFills.cpp - each writer of a fill gets its own ----------===//
//
// The lowering starts every accumulation (a matmul's product, a sum) from
// `linalg.fill` of 0 into a `tensor.empty`, and CSE merges the equal fills
// of a step into one. One-Shot Bufferize then gives the fill one buffer
// and, for each op that writes into it, a copy of it: the two-block
// language model's step copied a [4, B T, 64] buffer of zeros 9 times, the
// 12-block transformer's 119 times, reading and writing 4 MB each. Given a
// fill of its own, each writer fills its buffer and writes in place.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTSPLITSHAREDFILLS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {

/// The uses of `fill`'s result as the destination of an op that writes
/// into it, in program order (a use inside a loop at the loop's place).
SmallVector<OpOperand *> writerUses(linalg::FillOp fill) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : fill.getResult(0).getUses()) {
    auto writer = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
    if (writer && writer.isDpsInit(&use))
      uses.push_back(&use);
  }
  Block *block = fill->getBlock();
  llvm::stable_sort(uses, [&](OpOperand *a, OpOperand *b) {
    Operation *x = block->findAncestorOpInBlock(*a->getOwner());
    Operation *y = block->findAncestorOpInBlock(*b->getOwner());
    return x != y && x->isBeforeInBlock(y);
  });
  return uses;
}

/// Gives every writer of `fill` but the first, if `fill` has more than one
/// use, a copy of the fill (and of its tensor.empty) just before it; the
/// first keeps `fill` unless other ops read it too.
void split(linalg::FillOp fill) {
  auto empty =
      fill.getDpsInitOperand(0)->get().getDefiningOp<tensor::EmptyOp>();
  if (!empty || fill.getResult(0).hasOneUse())
    return;
  SmallVector<OpOperand *> uses = writerUses(fill);
  bool readersToo = uses.size() != llvm::range_size(fill->getUses());
  for (OpOperand *use : ArrayRef(uses).drop_front(readersToo ? 0 : 1)) {
    OpBuilder b(use->getOwner());
    IRMapping map;
    map.map(empty.getResult(), b.clone(*empty)->getResult(0));
    use->set(b.clone(*fill, map)->getResult(0));
  }
}

struct SplitSharedFillsPass
    : public mlir::mbt::impl::MBTSplitSharedFillsBase<SplitSharedFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills)
      split(fill);
  }
};

} // namespace
