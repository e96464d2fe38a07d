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
// This pass gives such a loop lanes of accumulators in registers: element
// j goes to lane (j - lb) mod L, in order, the lanes are combined by a
// fixed tree, and the result is combined with the value the buffer held
// before the loop. Where the body is elementwise and reads the element
// from the innermost dimension (a softmax's row, a loss's classes), the
// lanes are one vector of L = 16: the body runs on 16 elements at once and
// the last partial group is one masked step. Other bodies (a column of a
// row-major buffer) keep L = 4 scalar lanes and one copy of the body per
// lane, which LLVM's SLP vectorizer packs 4 wide at best: the cross-
// entropy's sum of exponentials over the byte-level LM's 259 classes ran
// its exp in 4-wide vectors until it got the vector form.
//
// The order of the additions is a function of the element index alone,
// not of the trip count, so:
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
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTREDUCTIONLANES
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {

/// Scalar lanes: 8 (an add's latency of 4 cycles times 2 ports) measured
/// no faster than 4 on the transformer example.
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

/// An op of `like`'s kind and attributes on `operands`, of result type
/// `type`: an elementwise op on scalars or on vectors of lanes.
Value createLike(OpBuilder &b, Operation *like, ValueRange operands,
                 Type type) {
  OperationState state(like->getLoc(), like->getName());
  state.addOperands(operands);
  state.addTypes(type);
  state.addAttributes(like->getAttrs());
  return b.create(state)->getResult(0);
}

/// combine(x, y) by the reduction's combining op, on scalars or on vectors
/// of lanes.
Value combineTwo(OpBuilder &b, Reduction r, Value x, Value y) {
  return createLike(b, r.combine, {x, y}, x.getType());
}

/// lb + the whole groups of `width` elements in [lb, ub): where the last,
/// partial group starts.
Value wholeGroupsEnd(OpBuilder &b, Location loc, Value lb, Value ub,
                     Value width) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value count =
      b.create<arith::MaxSIOp>(loc, b.create<arith::SubIOp>(loc, ub, lb), zero);
  Value whole = b.create<arith::MulIOp>(
      loc, b.create<arith::DivUIOp>(loc, count, width), width);
  return b.create<arith::AddIOp>(loc, lb, whole);
}

/// Stores the buffer's value before the loop combined with the lanes'
/// `total`.
void storeCombined(OpBuilder &b, Location loc, Reduction r, Value total) {
  memref::StoreOp store = r.accumulator.store;
  Value before =
      b.create<memref::LoadOp>(loc, store.getMemRef(), store.getIndices());
  Value combined = combineTwo(b, r, before, total);
  b.create<memref::StoreOp>(loc, combined, store.getMemRef(),
                            store.getIndices());
}

/// The scalar form, for a body that does not vectorize: kLanes copies of
/// the body per group, the rest each into its lane by selects.
void rewriteInScalarLanes(Reduction r) {
  scf::ForOp loop = r.loop;
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  Value lanes = b.create<arith::ConstantIndexOp>(loc, kLanes);
  Value mainEnd = wholeGroupsEnd(b, loc, lb, ub, lanes);
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
  storeCombined(b, loc, r, lane[0]);
  loop.erase();
}

//===----------------------------------------------------------------------===//
// Vector lanes
//===----------------------------------------------------------------------===//

/// Lanes of the vector form: one AVX-512 register of f32, two of AVX2's.
constexpr int64_t kVectorLanes = 16;

/// How a reduction's body computes kVectorLanes elements at once. The
/// values that depend on the element (`varying`: the induction variable,
/// the accumulator and what is computed from them) become vectors, the
/// others stay scalars. A body vectorizes when each varying op is
/// elementwise (arith, math) or a load whose last index is the element and
/// whose other indices do not depend on it.
struct VectorBody {
  DenseSet<Value> varying;
  /// Every varying load reads a dimension of unit stride, and every varying
  /// op may run on lanes past the end (no integer division by what such a
  /// lane would hold): the last partial group is then one masked step.
  bool maskable = true;
};

bool hasUnitInnermostStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() > 0 &&
         succeeded(getStridesAndOffset(type, strides, offset)) &&
         strides.back() == 1;
}

VectorType lanesOf(Type element) {
  return VectorType::get({kVectorLanes}, element);
}

std::optional<VectorBody> matchVectorBody(Reduction r) {
  VectorBody body;
  Value element = r.loop.getInductionVar();
  body.varying.insert(element);
  body.varying.insert(r.accumulator.load.getResult());
  auto isVarying = [&](Value v) { return body.varying.contains(v); };
  for (Operation &op : r.loop.getBody()->without_terminator()) {
    if (&op == r.accumulator.load || &op == r.accumulator.store ||
        llvm::none_of(op.getOperands(), isVarying))
      continue;
    if (op.getNumResults() != 1 ||
        !op.getResult(0).getType().isIntOrIndexOrFloat())
      return std::nullopt;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      ValueRange indices = load.getIndices();
      if (indices.empty() || indices.back() != element ||
          llvm::any_of(indices.drop_back(), isVarying))
        return std::nullopt;
      body.maskable &= hasUnitInnermostStride(load.getMemRefType());
    } else if (OpTrait::hasElementwiseMappableTraits(&op)) {
      body.maskable &= isSpeculatable(&op);
    } else {
      return std::nullopt;
    }
    body.varying.insert(op.getResult(0));
  }
  return body;
}

/// The element indices j, j + 1, ..., j + kVectorLanes - 1.
Value elementIndices(OpBuilder &b, Location loc, Value j) {
  auto offsets = llvm::to_vector(llvm::seq<int64_t>(0, kVectorLanes));
  Value base = b.create<vector::BroadcastOp>(loc, lanesOf(b.getIndexType()), j);
  Value steps = b.create<arith::ConstantOp>(loc, b.getIndexVectorAttr(offsets));
  return b.create<arith::AddIOp>(loc, base, steps);
}

/// One step of a vector body: the elements j, j + 1, ... combined into
/// the lanes, the varying ops on vectors, the others cloned as scalars.
class VectorStep {
public:
  VectorStep(OpBuilder &b, Location loc, Reduction r, const VectorBody &body)
      : b(b), loc(loc), r(r), body(body) {}

  /// The lanes after the step; with `mask`, only the lanes it keeps take
  /// an element, and loads read those alone.
  Value build(Value j, Value lanes, Value mask) {
    scalars.map(r.loop.getInductionVar(), j);
    vectors[r.accumulator.load.getResult()] = lanes;
    for (Operation &op : r.loop.getBody()->without_terminator()) {
      if (&op == r.accumulator.load || &op == r.accumulator.store)
        continue;
      if (op.getNumResults() != 1 || !body.varying.contains(op.getResult(0))) {
        b.clone(op, scalars);
        continue;
      }
      auto load = dyn_cast<memref::LoadOp>(op);
      vectors[op.getResult(0)] =
          load ? vectorLoad(load, j, mask) : elementwise(op);
    }
    Value next = vectors.lookup(r.combine->getResult(0));
    return mask ? b.create<arith::SelectOp>(loc, mask, next, lanes) : next;
  }

private:
  /// `v` as a vector: its lanes if it varies, else its value broadcast.
  Value vectorOf(Value v) {
    if (Value known = vectors.lookup(v))
      return known;
    Value vector =
        v == r.loop.getInductionVar()
            ? elementIndices(b, loc, scalars.lookup(v))
            : b.create<vector::BroadcastOp>(loc, lanesOf(v.getType()),
                                            scalars.lookupOrDefault(v));
    vectors[v] = vector;
    return vector;
  }

  Value vectorLoad(memref::LoadOp load, Value j, Value mask) {
    SmallVector<Value> indices;
    for (Value index : load.getIndices().drop_back())
      indices.push_back(scalars.lookupOrDefault(index));
    indices.push_back(j);
    Value memref = scalars.lookupOrDefault(load.getMemRef());
    VectorType type = lanesOf(load.getType());
    if (hasUnitInnermostStride(load.getMemRefType()) && !mask)
      return b.create<vector::LoadOp>(loc, type, memref, indices);
    Value zeros = b.create<arith::ConstantOp>(loc, b.getZeroAttr(type));
    if (mask)
      return b.create<vector::MaskedLoadOp>(loc, type, memref, indices, mask,
                                            zeros);
    // A strided dimension: one element at a time.
    Value gathered = zeros;
    for (int64_t k = 0; k < kVectorLanes; ++k) {
      indices.back() = b.create<arith::AddIOp>(
          loc, j, b.create<arith::ConstantIndexOp>(loc, k));
      Value x = b.create<memref::LoadOp>(loc, memref, indices);
      gathered = b.create<vector::InsertOp>(loc, x, gathered, k);
    }
    return gathered;
  }

  Value elementwise(Operation &op) {
    SmallVector<Value> operands;
    for (Value operand : op.getOperands())
      operands.push_back(vectorOf(operand));
    return createLike(b, &op, operands, lanesOf(op.getResult(0).getType()));
  }

  OpBuilder &b;
  Location loc;
  Reduction r;
  const VectorBody &body;
  IRMapping scalars;
  DenseMap<Value, Value> vectors;
};

/// The elements from `restStart` to `ub` (fewer than kVectorLanes), each
/// into its lane: one masked step where the body allows, else one scalar
/// copy of the body per element, selected into its lane.
Value addRest(OpBuilder &b, Location loc, Reduction r, const VectorBody &body,
              Value restStart, Value ub, Value lanes) {
  Value count = b.create<arith::SubIOp>(loc, ub, restStart);
  if (body.maskable) {
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value any =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, count, zero);
    auto step = b.create<scf::IfOp>(
        loc, any,
        [&](OpBuilder &nb, Location l) {
          Value mask = nb.create<vector::CreateMaskOp>(
              l, lanesOf(nb.getI1Type()), ValueRange{count});
          VectorStep vectorStep(nb, l, r, body);
          nb.create<scf::YieldOp>(l, vectorStep.build(restStart, lanes, mask));
        },
        [&](OpBuilder &nb, Location l) { nb.create<scf::YieldOp>(l, lanes); });
    return step.getResult(0);
  }
  Value start = identity(b, loc, r.combine);
  Value lane = elementIndices(b, loc, restStart);
  auto rest = b.create<scf::ForOp>(
      loc, restStart, ub, b.create<arith::ConstantIndexOp>(loc, 1), lanes,
      [&](OpBuilder &nb, Location l, Value j, ValueRange carried) {
        Value element = cloneStep(nb, r, j, start);
        Value mine = nb.create<arith::CmpIOp>(
            l, arith::CmpIPredicate::eq, lane,
            nb.create<vector::BroadcastOp>(l, lane.getType(), j));
        Value added = combineTwo(nb, r, carried[0],
                                 nb.create<vector::BroadcastOp>(
                                     l, lanesOf(element.getType()), element));
        nb.create<scf::YieldOp>(l, ValueRange{nb.create<arith::SelectOp>(
                                       l, mine, added, carried[0])});
      });
  return rest.getResult(0);
}

/// The lanes combined by a fixed tree: the upper half into the lower one,
/// down to one.
Value combineLanes(OpBuilder &b, Location loc, Reduction r, Value lanes) {
  for (int64_t width = kVectorLanes / 2; width >= 1; width /= 2) {
    Value low = b.create<vector::ExtractStridedSliceOp>(
        loc, lanes, ArrayRef<int64_t>{0}, ArrayRef<int64_t>{width},
        ArrayRef<int64_t>{1});
    Value high = b.create<vector::ExtractStridedSliceOp>(
        loc, lanes, ArrayRef<int64_t>{width}, ArrayRef<int64_t>{width},
        ArrayRef<int64_t>{1});
    lanes = combineTwo(b, r, low, high);
  }
  return b.create<vector::ExtractOp>(loc, lanes, 0);
}

/// The vector form: groups of kVectorLanes elements, element j into lane
/// (j - lb) mod kVectorLanes, then the rest, each into its lane.
void rewriteInVectorLanes(Reduction r, const VectorBody &body) {
  scf::ForOp loop = r.loop;
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value ub = loop.getUpperBound();
  Value width = b.create<arith::ConstantIndexOp>(loc, kVectorLanes);
  Value groupsEnd = wholeGroupsEnd(b, loc, loop.getLowerBound(), ub, width);
  Value start = b.create<vector::BroadcastOp>(
      loc, lanesOf(r.combine->getResult(0).getType()),
      identity(b, loc, r.combine));
  auto groups = b.create<scf::ForOp>(
      loc, loop.getLowerBound(), groupsEnd, width, ValueRange{start},
      [&](OpBuilder &nb, Location l, Value j, ValueRange lanes) {
        VectorStep step(nb, l, r, body);
        nb.create<scf::YieldOp>(l, step.build(j, lanes[0], Value()));
      });
  Value lanes = addRest(b, loc, r, body, groupsEnd, ub, groups.getResult(0));
  storeCombined(b, loc, r, combineLanes(b, loc, r, lanes));
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
      std::optional<Reduction> r = matchReduction(loop, accumulators);
      if (!r)
        promote(loop, accumulators);
      else if (std::optional<VectorBody> body = matchVectorBody(*r))
        rewriteInVectorLanes(*r, *body);
      else
        rewriteInScalarLanes(*r);
    }
  }
};

} // namespace
