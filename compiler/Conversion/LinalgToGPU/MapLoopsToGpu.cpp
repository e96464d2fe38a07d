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
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
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
