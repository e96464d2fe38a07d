//===- MapLoopsToGpu.cpp - tile parallel loops into blocks of threads -----===//
//
// Every outermost scf.parallel becomes a loop over blocks around a loop over
// one block's threads, with the mapping attributes parallel-loops-to-gpu
// reads. Unlike upstream's scf-parallel-loop-tiling + gpu-map-parallel-loops
// (one tile size list for every rank; the outermost dimension on x), the
// innermost dimension goes to x, at both levels:
//
//  - coalescing: consecutive threads of a warp (x fastest) touch
//    consecutive elements of a row-major buffer;
//  - grid limits: only x may exceed 65,535 blocks. The innermost dimension
//    is the long one (a model's parameters, a layer's columns); the
//    outermost is the models.
//
// Blocks are `threads-x` along the innermost dimension and `threads-y`
// along the one outside it (fewer where the loop is statically shorter),
// one along the others; dimensions beyond three run as loops inside the
// kernel.
//
// Every buffer of a CUDA artifact is in device memory, so no load or store
// may stay in host code. Some do after the canonicalizer: a sweep of one
// model has unit loops over the models, which it folds away, leaving the
// reduction loops of a loss on the host. Such code (runs of loads, stores,
// the arithmetic between them and loops of them) is first wrapped in a
// one-iteration scf.parallel: a kernel of one thread.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTMAPLOOPSTOGPU
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;

namespace {

/// Gives dimension i of `loop` processor `ids[k]` where k counts from the
/// innermost dimension; dimensions past the ids stay sequential.
void mapInnermostFirst(scf::ParallelOp loop, ArrayRef<gpu::Processor> ids) {
  Builder b(loop.getContext());
  unsigned n = loop.getNumLoops();
  SmallVector<gpu::ParallelLoopDimMappingAttr> attrs;
  for (unsigned i = 0; i < n; ++i) {
    unsigned fromInnermost = n - 1 - i;
    gpu::Processor id = fromInnermost < ids.size() ? ids[fromInnermost]
                                                   : gpu::Processor::Sequential;
    attrs.push_back(b.getAttr<gpu::ParallelLoopDimMappingAttr>(
        id, b.getDimIdentityMap(), b.getDimIdentityMap()));
  }
  (void)gpu::setMappingAttr(loop, attrs);
}

/// The static trip count of dimension `i`, or nullopt.
std::optional<int64_t> staticTripCount(scf::ParallelOp loop, unsigned i) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[i]);
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[i]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[i]);
  if (!lb || !ub || !step || *step <= 0)
    return std::nullopt;
  return (*ub - *lb + *step - 1) / *step;
}

/// True for a load or store, or an op whose regions hold one and nothing
/// that must stay on the host (calls, allocations, parallel loops).
bool touchesDeviceMemory(Operation *op) {
  if (isa<memref::LoadOp, memref::StoreOp>(op))
    return true;
  if (op->getNumRegions() == 0)
    return false;
  bool memory = false, hostOnly = false;
  op->walk([&](Operation *inner) {
    if (isa<memref::LoadOp, memref::StoreOp>(inner))
      memory = true;
    else if (isa<func::CallOp, memref::AllocOp, memref::AllocaOp,
                 memref::DeallocOp, scf::ParallelOp, gpu::LaunchOp>(inner))
      hostOnly = true;
  });
  return memory && !hostOnly;
}

/// Moves ops [first, last] of one block into a one-iteration scf.parallel.
/// Fails, naming the value, when one of their results is used after them.
LogicalResult wrapInOneThread(Operation *first, Operation *last) {
  auto end = std::next(last->getIterator());
  // Host arithmetic that happens to sit inside the run (a size, an index)
  // and reads nothing of it goes before it, its users after it then too.
  for (auto it = std::next(first->getIterator()); it != end;) {
    Operation *op = &*it++;
    bool independent = llvm::all_of(op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return !def || def->getBlock() != first->getBlock() ||
             def->isBeforeInBlock(first);
    });
    if (op->getNumRegions() == 0 && isMemoryEffectFree(op) && independent)
      op->moveBefore(first);
  }
  auto usedAfter = [&](Operation *op) {
    return llvm::any_of(op->getUsers(), [&](Operation *user) {
      Operation *inBlock = first->getBlock()->findAncestorOpInBlock(*user);
      return !inBlock || last->isBeforeInBlock(inBlock);
    });
  };
  for (auto it = first->getIterator(); it != end; ++it)
    if (usedAfter(&*it))
      return it->emitOpError()
             << "computes from device memory a value that host code uses: "
                "the CUDA target cannot run it";
  OpBuilder b(first);
  Location loc = first->getLoc();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ParallelOp>(loc, ValueRange{zero}, ValueRange{one},
                                        ValueRange{one});
  Operation *terminator = loop.getBody()->getTerminator();
  SmallVector<Operation *> moved;
  for (auto it = first->getIterator(); it != end; ++it)
    moved.push_back(&*it);
  for (Operation *op : moved)
    op->moveBefore(terminator);
  return success();
}

/// Wraps each run of host code that touches device memory in `block` (and
/// in the blocks of its host control flow) in a one-thread parallel loop.
/// A run starts and ends at such an op and holds side-effect-free ops
/// between them.
LogicalResult wrapHostMemoryAccess(Block &block) {
  SmallVector<std::pair<Operation *, Operation *>> runs;
  Operation *first = nullptr, *last = nullptr;
  for (Operation &op : block.without_terminator()) {
    if (touchesDeviceMemory(&op)) {
      first = first ? first : &op;
      last = &op;
      continue;
    }
    if (first && op.getNumRegions() == 0 && isMemoryEffectFree(&op))
      continue;
    if (first)
      runs.push_back({first, last});
    first = last = nullptr;
    if (isa<scf::ParallelOp, gpu::LaunchOp>(op))
      continue;
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        if (failed(wrapHostMemoryAccess(inner)))
          return failure();
  }
  if (first)
    runs.push_back({first, last});
  for (auto [runFirst, runLast] : runs)
    if (failed(wrapInOneThread(runFirst, runLast)))
      return failure();
  return success();
}

struct MapLoopsToGpuPass
    : public mlir::mbt::impl::MBTMapLoopsToGpuBase<MapLoopsToGpuPass> {
  using MBTMapLoopsToGpuBase::MBTMapLoopsToGpuBase;

  void runOnOperation() override {
    if (threadsX < 1 || threadsY < 1 || threadsX * threadsY > 1024) {
      getOperation().emitError()
          << "mbt-map-loops-to-gpu: a block of " << int64_t(threadsX) << " x "
          << int64_t(threadsY) << " threads is not between 1 and 1024";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() &&
          failed(wrapHostMemoryAccess(func.getBody().front())))
        return signalPassFailure();
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          !loop->hasAttr(gpu::getMappingAttrName()))
        outermost.push_back(loop);
    });
    for (scf::ParallelOp loop : outermost) {
      unsigned n = loop.getNumLoops();
      SmallVector<int64_t> tile(n, 1);
      tile[n - 1] = threadsX;
      if (n >= 2)
        tile[n - 2] = threadsY;
      for (unsigned i = 0; i < n; ++i)
        if (std::optional<int64_t> trips = staticTripCount(loop, i))
          tile[i] = std::max<int64_t>(1, std::min(tile[i], *trips));
      auto [blocks, threads] =
          scf::tileParallelLoop(loop, tile, /*noMinMaxBounds=*/true);
      using gpu::Processor;
      mapInnermostFirst(
          blocks, {Processor::BlockX, Processor::BlockY, Processor::BlockZ});
      mapInnermostFirst(threads, {Processor::ThreadX, Processor::ThreadY,
                                  Processor::ThreadZ});
    }
  }
};

} // namespace
