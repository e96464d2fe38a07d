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
// Only f32 sums and maxima of a dynamic trip count (a sequence's positions
// or keys) or of at least kMinStaticTrips get lanes: the f64 models exist
// for checks against finite differences, whose sums stay in the plain
// order. Every other innermost loop whose only writes are accumulators
// (shorter sums, f64 ones, an arg-max's value and index: 8% of the
// byte-level LM's step, in its accuracy over 259 logits) keeps them in
// registers in the plain order, which changes no bit.
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

/// A value an innermost loop keeps in memory across its iterations: loaded
/// and stored at the same indices, defined outside the loop.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

/// The accumulators of `loop`, if it is innermost, steps by 1, and
/// computes from loads, writing nothing but its accumulators. Its loops
/// come from linalg ops, whose outputs alias no input but as the same
/// operand, so only loads of an accumulator's own buffer could see it
/// change.
std::optional<SmallVector<Accumulator>> matchAccumulators(scf::ForOp loop) {
  if (loop.getNumResults() != 0 || getConstantIntValue(loop.getStep()) != 1)
    return std::nullopt;
  SmallVector<memref::StoreOp> stores;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0)
      return std::nullopt;
    if (auto store = dyn_cast<memref::StoreOp>(op))
      stores.push_back(store);
    else if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op))
      return std::nullopt;
  }
  if (stores.empty())
    return std::nullopt;
  SmallVector<Accumulator> accumulators;
  for (memref::StoreOp store : stores) {
    if (!llvm::all_of(store.getIndices(), [&](Value index) {
          return loop.isDefinedOutsideOfLoop(index);
        }))
      return std::nullopt;
    memref::LoadOp load;
    int64_t uses = 0;
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (auto other = dyn_cast<memref::StoreOp>(op))
        uses += other != store && other.getMemRef() == store.getMemRef();
      auto candidate = dyn_cast<memref::LoadOp>(op);
      if (!candidate || candidate.getMemRef() != store.getMemRef())
        continue;
      ++uses;
      load = candidate;
    }
    // One load of the buffer, the accumulator's, before its one store.
    if (uses != 1 || load.getIndices() != store.getIndices() ||
        !load->isBeforeInBlock(store))
      return std::nullopt;
    accumulators.push_back({load, store});
  }
  return accumulators;
}

/// An innermost loop `for j { acc = load m[i]; store combine(acc, x(j)),
/// m[i] }`, f32, long enough for lanes to pay.
struct Reduction {
  scf::ForOp loop;
  Accumulator accumulator;
  Operation *combine; // arith.addf or arith.maximumf
};

/// The identity of `combine`: -0 for a sum (x + -0 is x, -0 included),
/// -inf for a maximum.
Value identity(OpBuilder &b, Location loc, Operation *combine) {
  auto type = cast<FloatType>(combine->getResult(0).getType());
  APFloat value = isa<arith::AddFOp>(combine)
                      ? APFloat::getZero(type.getFloatSemantics(), true)
                      : APFloat::getInf(type.getFloatSemantics(), true);
  return b.create<arith::ConstantFloatOp>(loc, value, type);
}

std::optional<Reduction> matchReduction(scf::ForOp loop,
                                        ArrayRef<Accumulator> accumulators) {
  std::optional<int64_t> trips = constantTripCount(
      loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  if (accumulators.size() != 1 || (trips && *trips < kMinStaticTrips))
    return std::nullopt;
  auto [load, store] = accumulators.front();
  Operation *combine = store.getValue().getDefiningOp();
  // The load's one use is the combine's: it does not add the accumulator
  // to itself.
  if (!combine || !isa<arith::AddFOp, arith::MaximumFOp>(combine) ||
      !combine->getResult(0).getType().isF32() || !combine->hasOneUse() ||
      !load->hasOneUse() || *load->getUsers().begin() != combine)
    return std::nullopt;
  return Reduction{loop, accumulators.front(), combine};
}

/// Clones `loop`'s body at element `j`, without its accumulators' loads
/// and stores: each load's value is the matching one of `values`. The
/// mapping returned gives each accumulator's next value.
IRMapping cloneBody(OpBuilder &b, scf::ForOp loop, Value j,
                    ArrayRef<Accumulator> accumulators, ValueRange values) {
  IRMapping map;
  map.map(loop.getInductionVar(), j);
  SmallPtrSet<Operation *, 8> accumulatorOps;
  for (auto [accumulator, value] : llvm::zip_equal(accumulators, values)) {
    memref::LoadOp load = accumulator.load;
    map.map(load.getResult(), value);
    accumulatorOps.insert(load);
    accumulatorOps.insert(accumulator.store);
  }
  for (Operation &op : loop.getBody()->without_terminator())
    if (!accumulatorOps.contains(&op))
      b.clone(op, map);
  return map;
}

/// Keeps `loop`'s accumulators in registers (iter_args): each loaded
/// before the loop and stored after it, the additions in the same order,
/// so no bit changes.
void promote(scf::ForOp loop, ArrayRef<Accumulator> accumulators) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> inits;
  for (auto [load, store] : accumulators)
    inits.push_back(
        b.create<memref::LoadOp>(loc, store.getMemRef(), store.getIndices()));
  auto promoted = b.create<scf::ForOp>(
      loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(), inits,
      [&](OpBuilder &nb, Location l, Value j, ValueRange carried) {
        IRMapping map = cloneBody(nb, loop, j, accumulators, carried);
        SmallVector<Value> next;
        for (auto [load, store] : accumulators)
          next.push_back(map.lookupOrDefault(store.getValue()));
        nb.create<scf::YieldOp>(l, next);
      });
  for (auto [accumulator, result] :
       llvm::zip_equal(accumulators, promoted.getResults())) {
    memref::StoreOp store = accumulator.store;
    b.create<memref::StoreOp>(loc, result, store.getMemRef(),
                              store.getIndices());
  }
  loop.erase();
}

/// Clones the reduction's body at element `j`, adding into `lane`; returns
/// the lane's new value.
Value cloneStep(OpBuilder &b, Reduction r, Value j, Value lane) {
  return cloneBody(b, r.loop, j, r.accumulator, lane)
      .lookup(r.combine->getResult(0));
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
  memref::StoreOp store = r.accumulator.store;
  Value before =
      b.create<memref::LoadOp>(loc, store.getMemRef(), store.getIndices());
  Value total = combineTwo(b, r, before, lane[0]);
  b.create<memref::StoreOp>(loc, total, store.getMemRef(), store.getIndices());
  loop.erase();
}

struct ReductionLanesPass
    : public mlir::mbt::impl::MBTReductionLanesBase<ReductionLanesPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, SmallVector<Accumulator>>> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (std::optional<SmallVector<Accumulator>> accumulators =
              matchAccumulators(loop))
        loops.push_back({loop, *accumulators});
    });
    for (auto &[loop, accumulators] : loops) {
      if (std::optional<Reduction> r = matchReduction(loop, accumulators))
        rewrite(*r);
      else
        promote(loop, accumulators);
    }
  }
};

} // namespace
