//===- DynamicExpandShapes.cpp - expand_shape of two dynamic sizes --------===//
//
// mbt.split_rows reads a [M, B T, D] buffer as [M, B, T, D]: a
// memref.expand_shape whose middle group has two dynamic sizes. MLIR 19's
// expand-strided-metadata computes an expand_shape's sizes from its result
// type and crashes on such a group, so this pass writes the view out as
// the reinterpret_cast expand-strided-metadata would have built: the
// source's offset, the op's output sizes, and, inside each group, strides
// that multiply the source's stride by the sizes to their right.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTRESOLVEDYNAMICEXPANDSHAPES
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// Whether a group of `op` expands into more than one dynamic size.
bool splitsADynamicSize(memref::ExpandShapeOp op) {
  MemRefType type = op.getResultType();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) { return type.isDynamicDim(d); }) >
        1)
      return true;
  return false;
}

void resolve(memref::ExpandShapeOp op, RewriterBase &rewriter) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto metadata =
      rewriter.create<memref::ExtractStridedMetadataOp>(loc, op.getSrc());
  SmallVector<OpFoldResult> sizes =
      getMixedValues(op.getStaticOutputShape(), op.getOutputShape(), rewriter);
  SmallVector<OpFoldResult> strides(sizes.size());
  for (auto [source, group] : llvm::enumerate(op.getReassociationIndices())) {
    Value stride = metadata.getStrides()[source];
    for (int64_t d : llvm::reverse(group)) {
      strides[d] = stride;
      if (d != group.front())
        stride = rewriter.create<arith::MulIOp>(
            loc, stride,
            getValueOrCreateConstantIndexOp(rewriter, loc, sizes[d]));
    }
  }
  rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
      op, op.getResultType(), op.getSrc(), metadata.getOffset(), sizes,
      strides);
}

struct ResolveDynamicExpandShapesPass
    : public mlir::mbt::impl::MBTResolveDynamicExpandShapesBase<
          ResolveDynamicExpandShapesPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> ops;
    getOperation().walk([&](memref::ExpandShapeOp op) {
      if (splitsADynamicSize(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (memref::ExpandShapeOp op : ops)
      resolve(op, rewriter);
  }
};

} // namespace
