//===- LinalgToBlas.cpp - batched matmuls on memrefs to the runtime BLAS --===//
//
// After bufferization the batched matmuls of the train step read strided
// views of the flat parameter buffer. This pass replaces each with a call
// to `mbt_rt_batch_matmul_f32` (or `_f64` in an f64 model; docs/abi.md),
// passing fully dynamic strided memrefs, so the runtime can hand every
// model's product to sgemm (dgemm). linalg
// accumulates into C; the kernel does too when asked, and when the op just
// before zero-filled C, the fill is dropped and the kernel overwrites C
// (sgemm with beta = 0), which saves a pass over C.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"

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

/// The linalg.fill of 0.0 into `op`'s output right before `op`, or null.
static linalg::FillOp zeroFillBefore(linalg::LinalgOp op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || fill.getOutputs()[0] != op.getDpsInitOperand(0)->get())
    return nullptr;
  auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto value = constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
  if (!value || !value.getValue().isZero())
    return nullptr;
  return fill;
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
      linalg::FillOp fill = zeroFillBefore(op);
      rewriter.setInsertionPoint(op);
      Location loc = op.getLoc();
      SmallVector<Value> args;
      for (Value v : op->getOperands())
        args.push_back(rewriter.create<memref::CastOp>(loc, dyn, v));
      args.push_back(rewriter.create<arith::ConstantIntOp>(loc, ta, 64));
      args.push_back(rewriter.create<arith::ConstantIntOp>(loc, tb, 64));
      args.push_back(rewriter.create<arith::ConstantIntOp>(loc, !fill, 64));
      rewriter.create<func::CallOp>(loc, kernel, args);
      if (fill)
        rewriter.eraseOp(fill);
      rewriter.eraseOp(op);
    }
  }
};
} // namespace
