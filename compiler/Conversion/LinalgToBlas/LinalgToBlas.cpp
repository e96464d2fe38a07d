//===- LinalgToBlas.cpp - batched matmuls on memrefs to the runtime BLAS --===//
//
// After bufferization the batched matmuls of the train step read strided
// views of the flat parameter buffer. This pass replaces each with a call
// to `mbt_rt_batch_matmul_f32` (or `_f64` in an f64 model; docs/abi.md),
// passing fully dynamic strided memrefs, so the runtime can hand every
// model's product to sgemm (dgemm). linalg
// accumulates into C; the kernel does too when asked, and when the op just
// before zero-filled C (a fill, or a copy of a zero-filled buffer), that op
// is dropped and the kernel overwrites C (sgemm with beta = 0), which saves
// a pass over C.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTLINALGTOBLAS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

/// The runtime kernel for matmuls of `element` (f32 or f64).
static std::string kernelName(Type element) {
  return element.isF64() ? "mbt_rt_batch_matmul_f64" : "mbt_rt_batch_matmul_f32";
}

static MemRefType dynamicStrided3D(Type element) {
  int64_t dyn = ShapedType::kDynamic;
  auto layout =
      StridedLayoutAttr::get(element.getContext(), dyn, {dyn, dyn, dyn});
  return MemRefType::get({dyn, dyn, dyn}, element, layout);
}

static func::FuncOp getOrDeclareKernel(ModuleOp module, Type element) {
  std::string name = kernelName(element);
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  MemRefType m = dynamicStrided3D(element);
  auto type = b.getFunctionType(
      {m, m, m, b.getI64Type(), b.getI64Type(), b.getI64Type()}, {});
  auto f = b.create<func::FuncOp>(module.getLoc(), name, type);
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

/// Whether `op` is a batched f32 or f64 matmul on memrefs with unit inner
/// strides, and which operands it transposes.
static bool matchBatchMatmul(linalg::LinalgOp op, bool &ta, bool &tb) {
  if (isa<linalg::BatchMatmulOp>(op))
    ta = false, tb = false;
  else if (isa<linalg::BatchMatmulTransposeAOp>(op))
    ta = true, tb = false;
  else if (isa<linalg::BatchMatmulTransposeBOp>(op))
    ta = false, tb = true;
  else
    return false;
  Type element = getElementTypeOrSelf(op->getOperand(0).getType());
  if (!element.isF32() && !element.isF64())
    return false;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || type.getElementType() != element)
      return false;
    int64_t offset;
    SmallVector<int64_t> strides;
    if (failed(getStridesAndOffset(type, strides, offset)) ||
        strides.back() != 1)
      return false;
  }
  return true;
}

/// Whether `op` is a linalg.fill of 0.0.
static bool isZeroFill(Operation *op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op);
  if (!fill)
    return false;
  auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto value = constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
  return value && value.getValue().isZero();
}

/// The previous op that may read or write memory (not a view, a constant
/// or an allocation), or null.
static Operation *previousAccess(Operation *op) {
  Operation *prev = op->getPrevNode();
  while (prev && (isMemoryEffectFree(prev) || isa<memref::AllocOp>(prev)))
    prev = prev->getPrevNode();
  return prev;
}

/// The op that zeroes `op`'s output right before `op`, which the kernel can
/// replace by overwriting the output; null when there is none. Either a
/// zero fill of the output, or a copy into it of a buffer that a zero fill
/// wrote, with nothing else touching that buffer in between (CSE merges the
/// zero-filled inits of two matmuls into one tensor, and bufferization
/// then copies it for the first).
static Operation *zeroingBefore(linalg::LinalgOp op) {
  Value out = op.getDpsInitOperand(0)->get();
  Operation *prev = previousAccess(op);
  if (isZeroFill(prev))
    return cast<linalg::FillOp>(prev).getOutputs()[0] == out ? prev : nullptr;
  auto copy = dyn_cast_or_null<memref::CopyOp>(prev);
  if (!copy || copy.getTarget() != out)
    return nullptr;
  Operation *filler = previousAccess(copy);
  if (!isZeroFill(filler) ||
      cast<linalg::FillOp>(filler).getOutputs()[0] != copy.getSource())
    return nullptr;
  return copy;
}

namespace {
struct LinalgToBlasPass
    : public mlir::mbt::impl::MBTLinalgToBlasBase<LinalgToBlasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      bool ta, tb;
      if (matchBatchMatmul(op, ta, tb))
        matmuls.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : matmuls) {
      bool ta, tb;
      matchBatchMatmul(op, ta, tb);
      Type element = getElementTypeOrSelf(op->getOperand(0).getType());
      func::FuncOp kernel = getOrDeclareKernel(module, element);
      MemRefType dyn = dynamicStrided3D(element);
      Operation *zeroing = zeroingBefore(op);
      rewriter.setInsertionPoint(op);
      Location loc = op.getLoc();
      SmallVector<Value> args;
      for (Value v : op->getOperands())
        args.push_back(rewriter.create<memref::CastOp>(loc, dyn, v));
      args.push_back(rewriter.create<arith::ConstantIntOp>(loc, ta, 64));
      args.push_back(rewriter.create<arith::ConstantIntOp>(loc, tb, 64));
      args.push_back(rewriter.create<arith::ConstantIntOp>(loc, !zeroing, 64));
      rewriter.create<func::CallOp>(loc, kernel, args);
      if (zeroing)
        rewriter.eraseOp(zeroing);
      rewriter.eraseOp(op);
    }
  }
};
} // namespace
