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
// On the CPU, a linalg.generic that is a matmul with several batch dims
// (attention's products over models, sequences and heads, whose operands
// are strided views of the heads' layout) becomes a call to the kernel of
// its rank, `mbt_rt_batch_matmul_f32_5d` and the like, on transposed views
// of its operands: no copy, since the runtime reads any strides.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/Utils/BatchMatmul.h"
#include "compiler/Conversion/Utils/RuntimeKernels.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTLINALGTOBLAS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

/// The runtime kernel for matmuls of rank `rank` (3: one batch dim; 4 to 6:
/// more) and `element` (f32 or f64) on `device`'s
/// buffers (cpu or cuda). On a GPU, f32 operands that hold bf16 or f16
/// values (`format`, from kOperandsFormatAttr) go to a kernel that
/// multiplies them in that format on the tensor cores, accumulating in f32:
/// the same exact products, several times the f32 throughput. On the CPU,
/// `format` is set only for a product that rounds its operands
/// (kRoundOperandsAttr): the kernel rounds them to bf16 as it packs them
/// and multiplies them in bf16 where the CPU can. Other CPU products of
/// rounded operands go to the f32 kernel, which computes the same values.
static std::string kernelName(int64_t rank, Type element, StringRef device,
                              std::optional<Type> format) {
  std::string name =
      device == "cuda" ? "mbt_rt_cuda_batch_matmul_" : "mbt_rt_batch_matmul_";
  name += element.isF64() ? "f64" : "f32";
  if (element.isF32() && format)
    name += format->isBF16() ? "_bf16" : "_f16";
  if (rank != 3)
    name += "_" + std::to_string(rank) + "d";
  return name;
}

static func::FuncOp getOrDeclareKernel(OpBuilder &b, ModuleOp module,
                                       int64_t rank, Type element,
                                       StringRef device,
                                       std::optional<Type> format) {
  MemRefType m = anyStridedMemRef(rank, element);
  auto type = b.getFunctionType(
      {m, m, m, b.getI64Type(), b.getI64Type(), b.getI64Type()}, {});
  return lookupOrDeclareKernel(b, module,
                               kernelName(rank, element, device, format), type);
}

namespace {
struct LinalgToBlasPass
    : public mlir::mbt::impl::MBTLinalgToBlasBase<LinalgToBlasPass> {
  using MBTLinalgToBlasBase::MBTLinalgToBlasBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (device != "cpu" && device != "cuda") {
      module.emitError("mbt-linalg-to-blas: device must be cpu or cuda, got '")
          << device << "'";
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (isReplaced(op))
        matmuls.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : matmuls) {
      Operation *zeroing = zeroingBefore(op);
      rewriter.setInsertionPoint(op);
      func::CallOp call =
          isa<linalg::GenericOp>(op)
              ? callForGeneric(rewriter, cast<linalg::GenericOp>(op), zeroing)
              : callForNamed(rewriter, op, zeroing);
      if (remarks)
        reportCall(op, call, zeroing);
      if (zeroing)
        rewriter.eraseOp(zeroing);
      rewriter.eraseOp(op);
    }
    // The rounding such a product owes is done by no other lowering.
    WalkResult unreplaced = module.walk([](linalg::LinalgOp op) {
      if (!op->hasAttr(kRoundOperandsAttr))
        return WalkResult::advance();
      op.emitOpError("rounds its operands (mbt.round_operands_to), which "
                     "only a BLAS kernel call does, but is not a batched "
                     "matmul mbt-linalg-to-blas replaces");
      return WalkResult::interrupt();
    });
    if (unreplaced.wasInterrupted())
      signalPassFailure();
  }

  /// The largest generic matmul the runtime takes: four batch dims.
  static constexpr unsigned kMaxLoops = 7;

  /// Whether `op` becomes a kernel call: a named batched matmul, or on the
  /// CPU a generic one of at most four batch dims.
  bool isReplaced(linalg::LinalgOp op) const {
    // Only the CPU has a kernel that rounds its operands, for named
    // batched matmuls.
    if (op->hasAttr(kRoundOperandsAttr) &&
        (device != "cpu" || isa<linalg::GenericOp>(op)))
      return false;
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic)
      return matchBatchMatmul(op, device == "cpu").has_value();
    return device == "cpu" && generic.hasPureBufferSemantics() &&
           generic.getNumLoops() <= kMaxLoops &&
           matchGenericMatmul(generic).has_value();
  }

  /// The 16-bit format `op`'s kernel multiplies in: on a GPU the one its
  /// operands hold, on the CPU the one it rounds them to (named matmuls
  /// only); none for the f32 (f64) kernel.
  std::optional<Type> formatOf(linalg::LinalgOp op) const {
    if (isa<linalg::GenericOp>(op))
      return std::nullopt;
    StringRef name =
        device == "cuda" ? kOperandsFormatAttr : kRoundOperandsAttr;
    auto attr = op->getAttrOfType<TypeAttr>(name);
    if (attr && (attr.getValue().isBF16() || attr.getValue().isF16()))
      return attr.getValue();
    return std::nullopt;
  }

  /// The kernel's trailing arguments: the transposes and whether it adds
  /// to C.
  static void appendFlags(IRRewriter &rewriter, Location loc,
                          SmallVectorImpl<Value> &args, bool transposeA,
                          bool transposeB, Operation *zeroing) {
    args.push_back(rewriter.create<arith::ConstantIntOp>(loc, transposeA, 64));
    args.push_back(rewriter.create<arith::ConstantIntOp>(loc, transposeB, 64));
    args.push_back(rewriter.create<arith::ConstantIntOp>(loc, !zeroing, 64));
  }

  func::CallOp callForNamed(IRRewriter &rewriter, linalg::LinalgOp op,
                            Operation *zeroing) {
    BatchMatmulKind kind = *matchBatchMatmul(op, device == "cpu");
    Type element = getElementTypeOrSelf(op->getOperand(0).getType());
    func::FuncOp kernel = getOrDeclareKernel(rewriter, getOperation(), 3,
                                             element, device, formatOf(op));
    MemRefType dyn = anyStridedMemRef(3, element);
    Location loc = op.getLoc();
    SmallVector<Value> args;
    for (Value v : op->getOperands())
      args.push_back(rewriter.create<memref::CastOp>(loc, dyn, v));
    appendFlags(rewriter, loc, args, kind.transposeA, kind.transposeB, zeroing);
    return rewriter.create<func::CallOp>(loc, kernel, args);
  }

  /// A generic matmul's operands as views in the kernel's order of dims
  /// (memref.transpose: no copy), whatever their strides.
  func::CallOp callForGeneric(IRRewriter &rewriter, linalg::GenericOp op,
                              Operation *zeroing) {
    GenericMatmul matmul = *matchGenericMatmul(op);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    int64_t rank = matmul.batch.size() + 2;
    Type element = getElementTypeOrSelf(op->getOperand(0).getType());
    func::FuncOp kernel = getOrDeclareKernel(rewriter, getOperation(), rank,
                                             element, device, formatOf(op));
    MemRefType dyn = anyStridedMemRef(rank, element);
    Location loc = op.getLoc();
    std::pair<unsigned, unsigned> matrixLoops[] = {
        {matmul.m, matmul.k}, {matmul.k, matmul.n}, {matmul.m, matmul.n}};
    SmallVector<Value> args;
    for (auto [operand, map, loops] :
         llvm::zip(op->getOperands(), maps, matrixLoops)) {
      SmallVector<unsigned> dims =
          matmul.permutation(map, loops.first, loops.second);
      Value view = operand;
      if (!llvm::equal(dims, llvm::seq<unsigned>(0, rank)))
        view = rewriter.create<memref::TransposeOp>(
            loc, operand,
            AffineMapAttr::get(
                AffineMap::getPermutationMap(dims, rewriter.getContext())));
      args.push_back(rewriter.create<memref::CastOp>(loc, dyn, view));
    }
    appendFlags(rewriter, loc, args, false, false, zeroing);
    return rewriter.create<func::CallOp>(loc, kernel, args);
  }

  /// The decision for `op`, as a remark the user asks for with `remarks`.
  static void reportCall(linalg::LinalgOp op, func::CallOp call,
                         Operation *zeroing) {
    auto remark = op.emitRemark() << (isa<linalg::GenericOp>(op)
                                          ? "matmul in a linalg.generic: "
                                          : "batched matmul: ")
                                  << call.getCallee();
    std::optional<BatchMatmulKind> kind = matchBatchMatmul(op, true);
    if (kind && kind->transposeA)
      remark << ", A transposed";
    if (kind && kind->transposeB)
      remark << ", B transposed";
    remark << (zeroing ? ", overwrites C (its zero fill is dropped)"
                       : ", accumulates into C");
  }
};
} // namespace
