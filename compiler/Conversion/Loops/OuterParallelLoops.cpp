//===- OuterParallelLoops.cpp - one parallel dimension per loop nest ------===//
//
// convert-linalg-to-parallel-loops makes every parallel dimension of every
// linalg op an scf.parallel dimension, with nested scf.parallel under the
// scf.for of a reduction. Handed to convert-scf-to-openmp as they are,
// every dimension is collapsed into one OpenMP iteration space (the inner
// loops lose their vectorization to the index arithmetic) and the nested
// loops open parallel regions inside parallel regions: in a prototype, the
// MLP-S step was no faster on two threads than with serial loops, and 1.6x
// slower on one. This pass keeps only the outermost
// dimension of an outermost loop nest parallel (the model dimension, in
// every loop of a batched step), when the nest has enough work to pay for
// waking threads (more of it inside a sequential loop, whose every
// iteration opens a region), and makes every other scf.parallel dimension
// an scf.for. A nest the estimate leaves serial but one of whose sizes is
// known only at run time (outside a sequential loop) gets both forms
// under an scf.if on its real iteration count.
// Each iteration of the parallel dimension then runs exactly the serial
// code for its model, so model i's numbers do not depend on the threads.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTOUTERPARALLELLOOPS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// A dynamic trip count is assumed to be this (a batch of samples).
constexpr int64_t kAssumedDynamicTrips = 128;

/// How much more work a nest inside a sequential loop needs to run in
/// parallel: measured on the GRU example (2 threads), whose per-position
/// regions of 4 x B x 96 elements made the step 2.6x slower than serial.
constexpr int64_t kInLoopWorkFactor = 16;

/// Iteration estimates stop growing here (far above any threshold).
constexpr int64_t kIterationCap = INT64_MAX / 1024;

/// a * b for non-negative counts, capped at kIterationCap.
int64_t cappedProduct(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product) || product > kIterationCap)
    return kIterationCap;
  return product;
}

int64_t tripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb),
                         u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return kAssumedDynamicTrips;
  return std::max<int64_t>(0, (*u - *l + *s - 1) / *s);
}

int64_t estimatedIterations(Operation *op);

/// The iterations of the largest loop nest in `op`'s body.
int64_t innerIterations(Operation *op) {
  int64_t inner = 1;
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      if (isa<scf::ParallelOp, scf::ForOp>(nested))
        inner = std::max(inner, estimatedIterations(&nested));
  return inner;
}

/// The iterations of `op`'s nest: its own, times the largest of the loops
/// in its body, capped at kIterationCap.
int64_t estimatedIterations(Operation *op) {
  int64_t own = 1;
  if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
    for (auto [lb, ub, step] :
         llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                   parallel.getStep()))
      own = cappedProduct(own, tripCount(lb, ub, step));
  } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
    own = tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  }
  return cappedProduct(own, innerIterations(op));
}

/// Whether one of `op`'s own trip counts is known only at run time.
bool hasDynamicTrips(scf::ParallelOp op) {
  for (auto [lb, ub, step] :
       llvm::zip(op.getLowerBound(), op.getUpperBound(), op.getStep()))
    if (!getConstantIntValue(lb) || !getConstantIntValue(ub) ||
        !getConstantIntValue(step))
      return true;
  return false;
}

/// Replaces `op` (no reductions) by scf.for loops over its dimensions,
/// the first `keepParallel` of them (0 or 1) staying an scf.parallel.
void toLoops(scf::ParallelOp op, unsigned keepParallel,
             RewriterBase &rewriter) {
  Location loc = op.getLoc();
  SmallVector<Value> lbs(op.getLowerBound()), ubs(op.getUpperBound()),
      steps(op.getStep());
  Block &body = *op.getBody();
  auto cloneBody = [&](OpBuilder &b, ValueRange ivs) {
    IRMapping mapping;
    mapping.map(body.getArguments(), ivs);
    for (Operation &inner : body.without_terminator())
      b.clone(inner, mapping);
  };
  rewriter.setInsertionPoint(op);
  if (keepParallel) {
    rewriter.create<scf::ParallelOp>(
        loc, ValueRange{lbs[0]}, ValueRange{ubs[0]}, ValueRange{steps[0]},
        [&](OpBuilder &b, Location l, ValueRange outer) {
          scf::buildLoopNest(b, l, ArrayRef(lbs).drop_front(),
                             ArrayRef(ubs).drop_front(),
                             ArrayRef(steps).drop_front(),
                             [&](OpBuilder &nb, Location, ValueRange rest) {
                               SmallVector<Value> ivs{outer[0]};
                               llvm::append_range(ivs, rest);
                               cloneBody(nb, ivs);
                             });
        });
  } else {
    scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps,
        [&](OpBuilder &b, Location, ValueRange ivs) { cloneBody(b, ivs); });
  }
  rewriter.eraseOp(op);
}

/// `op` (inner loops already serial) as an scf.if on its real iteration
/// count, its own trip counts at run time times its body's estimate: at
/// least `needed`, the first dimension parallel, else all serial. Both
/// branches run the same serial code for each model.
void chooseAtRunTime(scf::ParallelOp op, int64_t needed,
                     RewriterBase &rewriter) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value count =
      rewriter.create<arith::ConstantIndexOp>(loc, innerIterations(op));
  for (auto [lb, ub, step] :
       llvm::zip(op.getLowerBound(), op.getUpperBound(), op.getStep())) {
    Value span = rewriter.createOrFold<arith::SubIOp>(loc, ub, lb);
    Value trips = rewriter.createOrFold<arith::CeilDivSIOp>(loc, span, step);
    count = rewriter.createOrFold<arith::MulIOp>(loc, count, trips);
  }
  Value enough = rewriter.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::sge, count,
      rewriter.create<arith::ConstantIndexOp>(loc, needed));
  auto choice = rewriter.create<scf::IfOp>(loc, enough, /*withElse=*/true);
  rewriter.setInsertionPoint(choice.thenBlock()->getTerminator());
  auto parallel = cast<scf::ParallelOp>(rewriter.clone(*op));
  rewriter.setInsertionPoint(choice.elseBlock()->getTerminator());
  auto serial = cast<scf::ParallelOp>(rewriter.clone(*op));
  rewriter.eraseOp(op);
  if (parallel.getNumLoops() > 1)
    toLoops(parallel, 1, rewriter);
  toLoops(serial, 0, rewriter);
}

struct OuterParallelLoopsPass
    : public mlir::mbt::impl::MBTOuterParallelLoopsBase<
          OuterParallelLoopsPass> {
  using MBTOuterParallelLoopsBase::MBTOuterParallelLoopsBase;

  void runOnOperation() override {
    // Outermost nests first, so that a nest is judged before its inner
    // loops are rewritten (a rewrite clones the body).
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk<WalkOrder::PreOrder>([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>())
        outermost.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp op : outermost) {
      if (!op.getInitVals().empty())
        continue; // reductions are not ours to change
      // Worth waking threads: enough work, and more than one model. A
      // nest inside a sequential loop (a recurrence's positions) opens a
      // parallel region at every iteration of that loop, and each must
      // pay for waking the threads on its own: it needs
      // kInLoopWorkFactor times the work.
      bool inLoop = op->getParentOfType<LoopLikeOpInterface>() != nullptr;
      int64_t needed = inLoop ? cappedProduct(minIterations, kInLoopWorkFactor)
                              : int64_t(minIterations);
      bool models = tripCount(op.getLowerBound()[0], op.getUpperBound()[0],
                              op.getStep()[0]) >= 2;
      bool parallel = estimatedIterations(op) >= needed && models;
      // Below the estimate with a size known only at run time (the
      // [M, B T, D] rows of a product, whose B T is thousands where it
      // counts 128): decided on the real count, once per call. Inside a
      // sequential loop, whose nests are small, the estimate stands.
      bool atRunTime = !parallel && models && !inLoop && hasDynamicTrips(op);
      // Inner parallel loops become serial loops (innermost first).
      SmallVector<scf::ParallelOp> nested;
      op.getBody()->walk([&](scf::ParallelOp inner) {
        if (inner.getInitVals().empty())
          nested.push_back(inner);
      });
      for (scf::ParallelOp inner : nested)
        toLoops(inner, 0, rewriter);
      if (atRunTime)
        chooseAtRunTime(op, needed, rewriter);
      else if (op.getNumLoops() > 1 || !parallel)
        toLoops(op, parallel ? 1 : 0, rewriter);
    }
  }
};

} // namespace
