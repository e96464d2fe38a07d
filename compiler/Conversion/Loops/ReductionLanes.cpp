//===- ReductionLanes.cpp - innermost reductions in register lanes --------===//
//
// convert-linalg-to-loops makes a reduction over the innermost dimension
// (a softmax's row sum, attention's row dot products, a layer norm's
// moments) a loop that loads its accumulator, adds one element and stores
// it back at every iteration. LLVM keeps that accumulator in memory (the
// buffers might alias) and cannot reorder the additions (no fast-math), so
// the loop runs at one element per add latency plus a store forwarding:
// once attention's weights stay in the cache, those loops took half of its
// time.
//
// This pass gives such a loop kLanes accumulators in registers: element j
// goes to lane (j - lb) mod kLanes, in order, the lanes are combined by a
// fixed tree, and the result is combined with the value the buffer held
// before the loop. The order of the additions is a function of the element
// index alone, not of the trip count, so:
// - a model's sums are the same alone and in a batch (the model loop is
//   outside), and
// - elements past the real ones that add exactly 0 (padded keys, padded
//   tokens) do not change a sum's bits, so a dynamic step still equals a
//   padded one.
// Only f32 is rewritten: the f64 models exist for checks against finite
// differences, whose sums stay in the plain order.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTREDUCTIONLANES
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {

/// Independent additions in flight: 8 (an add's latency of 4 cycles times
/// 2 ports) measured no faster than 4 on the transformer example.
constexpr int64_t kLanes = 4;

/// Static loops shorter than this are left alone (a layer norm's features,
/// a loss's classes): the lanes' extra code costs compile time (4 copies of
/// the body) for little speed. Dynamic ones (a sequence's positions and
/// keys) are always rewritten.
constexpr int64_t kMinStaticTrips = 256;

/// An innermost loop `for j { acc = load m[i]; store combine(acc, x(j)),
/// m[i] }` with `i` defined outside it.
struct Reduction {
  scf::ForOp loop;
  memref::LoadOp load;
  Operation *combine; // arith.addf or arith.maximumf
  memref::StoreOp store;
};

bool isCombine(Operation *op) {
  return isa<arith::AddFOp, arith::MaximumFOp>(op) &&
         op->getResult(0).getType().isF32();
}

/// The identity of `combine`: -0 for a sum (x + -0 is x, -0 included),
/// -inf for a maximum.
Value identity(OpBuilder &b, Location loc, Operation *combine) {
  auto type = cast<FloatType>(combine->getResult(0).getType());
  APFloat value = isa<arith::AddFOp>(combine)
                      ? APFloat::getZero(type.getFloatSemantics(), true)
                      : APFloat::getInf(type.getFloatSemantics(), true);
  return b.create<arith::ConstantFloatOp>(loc, value, type);
}

/// The loop's only write, if the loop has the shape of a Reduction whose
/// body reads memory and computes, nothing else.
std::optional<Reduction> matchReduction(scf::ForOp loop) {
  if (loop.getNumResults() != 0 || getConstantIntValue(loop.getStep()) != 1)
    return std::nullopt;
  std::optional<int64_t> trips = constantTripCount(
      loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  if (trips && *trips < kMinStaticTrips)
    return std::nullopt;
  memref::StoreOp store;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0)
      return std::nullopt;
    if (auto s = dyn_cast<memref::StoreOp>(op)) {
      if (store)
        return std::nullopt;
      store = s;
      continue;
    }
    if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op))
      return std::nullopt;
  }
  if (!store || !llvm::all_of(store.getIndices(), [&](Value index) {
        return loop.isDefinedOutsideOfLoop(index);
      }))
    return std::nullopt;
  Operation *combine = store.getValue().getDefiningOp();
  if (!combine || combine->getBlock() != loop.getBody() ||
      !isCombine(combine) || !combine->hasOneUse())
    return std::nullopt;
  memref::LoadOp accumulator;
  for (Value operand : combine->getOperands()) {
    auto load = operand.getDefiningOp<memref::LoadOp>();
    if (load && load->getBlock() == loop.getBody() &&
        load.getMemRef() == store.getMemRef() &&
        load.getIndices() == store.getIndices() && load->hasOneUse())
      accumulator = load;
  }
  if (!accumulator || combine->getOperand(0) == combine->getOperand(1))
    return std::nullopt;
  // Another read of the accumulator's buffer would see partial sums.
  for (Operation &op : loop.getBody()->without_terminator())
    if (auto load = dyn_cast<memref::LoadOp>(op))
      if (load != accumulator && load.getMemRef() == store.getMemRef())
        return std::nullopt;
  return Reduction{loop, accumulator, combine, store};
}

/// Clones the reduction's body at element `j`, adding into `lane`; returns
/// the lane's new value.
Value cloneStep(OpBuilder &b, Reduction r, Value j, Value lane) {
  IRMapping map;
  map.map(r.loop.getInductionVar(), j);
  map.map(r.load.getResult(), lane);
  for (Operation &op : r.loop.getBody()->without_terminator())
    if (&op != r.load.getOperation() && &op != r.store.getOperation())
      b.clone(op, map);
  return map.lookup(r.combine->getResult(0));
}

/// combine(a, b), a clone of the reduction's combining op.
Value combineTwo(OpBuilder &b, Reduction r, Value x, Value y) {
  IRMapping map;
  map.map(r.combine->getOperand(0), x);
  map.map(r.combine->getOperand(1), y);
  return b.clone(*r.combine, map)->getResult(0);
}

void rewrite(Reduction r) {
  scf::ForOp loop = r.loop;
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  Value lanes = b.create<arith::ConstantIndexOp>(loc, kLanes);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value count =
      b.create<arith::MaxSIOp>(loc, b.create<arith::SubIOp>(loc, ub, lb), zero);
  Value whole = b.create<arith::MulIOp>(
      loc, b.create<arith::DivUIOp>(loc, count, lanes), lanes);
  Value mainEnd = b.create<arith::AddIOp>(loc, lb, whole);
  Value start = identity(b, loc, r.combine);
  SmallVector<Value> inits(kLanes, start);

  // The whole groups of kLanes elements: element j + k into lane k.
  auto main = b.create<scf::ForOp>(
      loc, lb, mainEnd, lanes, inits,
      [&](OpBuilder &nb, Location l, Value j, ValueRange lane) {
        SmallVector<Value> next;
        for (int64_t k = 0; k < kLanes; ++k) {
          Value at = k == 0
                         ? j
                         : nb.create<arith::AddIOp>(
                               l, j, nb.create<arith::ConstantIndexOp>(l, k));
          next.push_back(cloneStep(nb, r, at, lane[k]));
        }
        nb.create<scf::YieldOp>(l, next);
      });
  SmallVector<Value> lane(main.getResults());

  // The last count mod kLanes elements, each into its lane: one copy of
  // the body, whose element is added to every lane and kept in its own.
  auto rest = b.create<scf::ForOp>(
      loc, mainEnd, ub, b.create<arith::ConstantIndexOp>(loc, 1), lane,
      [&](OpBuilder &nb, Location l, Value j, ValueRange carried) {
        Value element = cloneStep(nb, r, j, start);
        Value which = nb.create<arith::SubIOp>(l, j, mainEnd);
        SmallVector<Value> next;
        for (int64_t k = 0; k < kLanes; ++k) {
          Value mine =
              nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, which,
                                       nb.create<arith::ConstantIndexOp>(l, k));
          next.push_back(nb.create<arith::SelectOp>(
              l, mine, combineTwo(nb, r, carried[k], element), carried[k]));
        }
        nb.create<scf::YieldOp>(l, next);
      });
  lane.assign(rest.getResults().begin(), rest.getResults().end());

  // A fixed tree: (0 1) (2 3) ..., then their pairs.
  for (int64_t width = kLanes; width > 1; width /= 2)
    for (int64_t k = 0; k < width / 2; ++k)
      lane[k] = combineTwo(b, r, lane[2 * k], lane[2 * k + 1]);
  Value before =
      b.create<memref::LoadOp>(loc, r.store.getMemRef(), r.store.getIndices());
  Value total = combineTwo(b, r, before, lane[0]);
  b.create<memref::StoreOp>(loc, total, r.store.getMemRef(),
                            r.store.getIndices());
  loop.erase();
}

struct ReductionLanesPass
    : public mlir::mbt::impl::MBTReductionLanesBase<ReductionLanesPass> {
  void runOnOperation() override {
    SmallVector<Reduction> reductions;
    getOperation().walk([&](scf::ForOp loop) {
      if (std::optional<Reduction> r = matchReduction(loop))
        reductions.push_back(*r);
    });
    for (Reduction r : reductions)
      rewrite(r);
  }
};

} // namespace
