//===- VectorMatmuls.cpp - batched matmuls as generated vector kernels ----===//
//
// Replaces a batched matmul on memrefs, C[b] (+)= op(A[b]) * B[b] with B not
// transposed, by loops of vector code: a register-blocked kernel in the
// style of a BLAS micro-kernel, without packing (each model's B fits in the
// L2 cache at the sizes of a model batch, and packing it for every model is
// what costs OpenBLAS most on them).
//
//   scf.parallel over b (the models; OpenMP runs it on every core)
//     for each panel of R rows x V vectors of C (W lanes each):
//       acc[R][V] = 0 (or C when the matmul accumulates)
//       for k: load V vectors of row k of B; for each row r, broadcast
//              A[r, k] and acc[r][v] = fma(a, B[k, v], acc[r][v])
//       store acc
//
// The accumulators stay in registers across k (R * V of them, plus V for
// B and one broadcast: 6 x 4 + 4 + 1 of AVX-512's 32 registers, 6 x 2 + 2
// + 1 of AVX2's 16; 6 rows measured faster than 4 or 8 at MLP-S, and
// blocking the contraction for the L1 cache did not help, see
// docs/benchmarks.md). Column panels left over at the right edge use
// one masked vector, rows left over at the bottom a one-row kernel, so any
// shape (the batch dimension is dynamic) is computed in place. Each element
// of C is a chain of fused multiply-adds in the order of k, the same code
// for every model: model i's product does not depend on the batch size.
// When the op just before zero-fills C, the fill goes away and the
// accumulators start at zero, as with the BLAS call.
//
// A transposed B (the gradient of a layer's input) would need a strided
// gather per vector; those matmuls are left for mbt-linalg-to-blas.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/Passes.h"
#include "compiler/Conversion/Utils/BatchMatmul.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mbt {
#define GEN_PASS_DEF_MBTVECTORMATMULS
#include "compiler/Conversion/Passes.h.inc"
} // namespace mlir::mbt

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// The register blocking of the kernels for one matmul.
struct Blocking {
  int64_t lanes;   // W: elements per vector
  int64_t vectors; // V: vectors per row of a full panel
  int64_t rows;    // R: rows of a full panel
  int64_t kBlock;  // contraction steps per pass over C (0: all of them)
};

/// What every kernel of one matmul reads and writes.
struct MatmulOperands {
  Value a, b, c;
  bool transposeA;
  bool zeroInit;      // C starts at zero (its zero fill was folded)
  Value batch;        // the model index
  Value kBegin, kEnd; // the contraction steps of this pass over C
  VectorType vectorType;
};

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return b.create<arith::ConstantIndexOp>(loc, value);
}

/// C[i : i + rows, j : j + vectors * W] (+)= A[i : i + rows, :] * B[:, j ...],
/// the last vector masked to `mask` when there is one.
void emitKernel(OpBuilder &b, Location loc, const MatmulOperands &m, Value i,
                Value j, int64_t rows, int64_t vectors, Value mask) {
  VectorType vt = m.vectorType;
  int64_t lanes = vt.getNumElements();
  SmallVector<Value> cols, rowIdx;
  for (int64_t v = 0; v < vectors; ++v)
    cols.push_back(v == 0 ? j
                          : b.create<arith::AddIOp>(
                                loc, j, indexConstant(b, loc, v * lanes)));
  for (int64_t r = 0; r < rows; ++r)
    rowIdx.push_back(
        r == 0 ? i : b.create<arith::AddIOp>(loc, i, indexConstant(b, loc, r)));
  Value zero = b.create<arith::ConstantOp>(loc, vt, b.getZeroAttr(vt));
  auto load = [&](OpBuilder &ob, Value base, ValueRange idx,
                  int64_t v) -> Value {
    if (mask && v == vectors - 1)
      return ob.create<vector::MaskedLoadOp>(loc, vt, base, idx, mask, zero);
    return ob.create<vector::LoadOp>(loc, vt, base, idx);
  };

  SmallVector<Value> init;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < vectors; ++v)
      init.push_back(
          m.zeroInit ? zero : load(b, m.c, {m.batch, rowIdx[r], cols[v]}, v));

  Value c1 = indexConstant(b, loc, 1);
  auto loop = b.create<scf::ForOp>(
      loc, m.kBegin, m.kEnd, c1, init,
      [&](OpBuilder &lb, Location l, Value kk, ValueRange acc) {
        SmallVector<Value> bRow;
        for (int64_t v = 0; v < vectors; ++v)
          bRow.push_back(load(lb, m.b, {m.batch, kk, cols[v]}, v));
        SmallVector<Value> next;
        for (int64_t r = 0; r < rows; ++r) {
          SmallVector<Value> aIdx =
              m.transposeA ? SmallVector<Value>{m.batch, kk, rowIdx[r]}
                           : SmallVector<Value>{m.batch, rowIdx[r], kk};
          Value a = lb.create<memref::LoadOp>(l, m.a, aIdx);
          Value splat = lb.create<vector::BroadcastOp>(l, vt, a);
          for (int64_t v = 0; v < vectors; ++v)
            next.push_back(lb.create<vector::FMAOp>(l, splat, bRow[v],
                                                    acc[r * vectors + v]));
        }
        lb.create<scf::YieldOp>(l, next);
      });

  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < vectors; ++v) {
      Value value = loop.getResult(r * vectors + v);
      SmallVector<Value> idx{m.batch, rowIdx[r], cols[v]};
      if (mask && v == vectors - 1)
        b.create<vector::MaskedStoreOp>(loc, m.c, idx, mask, value);
      else
        b.create<vector::StoreOp>(loc, value, m.c, idx);
    }
}

/// Every row of the column panel at `j`: full blocks of `rows` rows, then
/// single rows.
void emitPanel(OpBuilder &b, Location loc, const MatmulOperands &m, Value j,
               Value rowsEnd, Value rowsFullEnd, int64_t rows, int64_t vectors,
               Value mask) {
  Value c1 = indexConstant(b, loc, 1);
  b.create<scf::ForOp>(loc, indexConstant(b, loc, 0), rowsFullEnd,
                       indexConstant(b, loc, rows), ValueRange{},
                       [&](OpBuilder &lb, Location l, Value i, ValueRange) {
                         emitKernel(lb, l, m, i, j, rows, vectors, mask);
                         lb.create<scf::YieldOp>(l);
                       });
  b.create<scf::ForOp>(loc, rowsFullEnd, rowsEnd, c1, ValueRange{},
                       [&](OpBuilder &lb, Location l, Value i, ValueRange) {
                         emitKernel(lb, l, m, i, j, 1, vectors, mask);
                         lb.create<scf::YieldOp>(l);
                       });
}

/// `value` rounded down to a multiple of `multiple`.
Value roundDown(OpBuilder &b, Location loc, Value value, int64_t multiple) {
  Value m = indexConstant(b, loc, multiple);
  return b.create<arith::SubIOp>(loc, value,
                                 b.create<arith::RemUIOp>(loc, value, m));
}

void replaceWithKernels(linalg::LinalgOp op, const BatchMatmulKind &kind,
                        const Blocking &blocking, RewriterBase &rewriter) {
  Location loc = op.getLoc();
  Operation *zeroing = zeroingBefore(op);
  rewriter.setInsertionPoint(op);
  Value a = op->getOperand(0), bOperand = op->getOperand(1),
        c = op->getOperand(2);
  Type element = getElementTypeOrSelf(a.getType());
  auto dim = [&](Value v, int64_t d) -> Value {
    return rewriter.create<memref::DimOp>(loc, v, d);
  };
  Value batches = dim(c, 0), rowsEnd = dim(c, 1), colsEnd = dim(c, 2);
  Value k = dim(bOperand, 1);
  int64_t lanes = blocking.lanes;
  int64_t panel = lanes * blocking.vectors;
  Value rowsFullEnd = roundDown(rewriter, loc, rowsEnd, blocking.rows);
  Value colsFullEnd = roundDown(rewriter, loc, colsEnd, panel);
  VectorType vt = VectorType::get({lanes}, element);
  VectorType maskType = VectorType::get({lanes}, rewriter.getI1Type());

  // Every column panel of C, accumulating contraction steps [kBegin, kEnd).
  auto emitColumns = [&](OpBuilder &b, Location l, const MatmulOperands &m) {
    // Full panels of V vectors.
    b.create<scf::ForOp>(l, indexConstant(b, l, 0), colsFullEnd,
                         indexConstant(b, l, panel), ValueRange{},
                         [&](OpBuilder &pb, Location pl, Value j, ValueRange) {
                           emitPanel(pb, pl, m, j, rowsEnd, rowsFullEnd,
                                     blocking.rows, blocking.vectors, Value());
                           pb.create<scf::YieldOp>(pl);
                         });
    // The columns left: one vector at a time, masked to what is left.
    b.create<scf::ForOp>(
        l, colsFullEnd, colsEnd, indexConstant(b, l, lanes), ValueRange{},
        [&](OpBuilder &pb, Location pl, Value j, ValueRange) {
          Value left = pb.create<arith::SubIOp>(pl, colsEnd, j);
          Value mask =
              pb.create<vector::CreateMaskOp>(pl, maskType, ValueRange{left});
          emitPanel(pb, pl, m, j, rowsEnd, rowsFullEnd, blocking.rows, 1, mask);
          pb.create<scf::YieldOp>(pl);
        });
  };

  rewriter.create<scf::ParallelOp>(
      loc, ValueRange{indexConstant(rewriter, loc, 0)}, ValueRange{batches},
      ValueRange{indexConstant(rewriter, loc, 1)},
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value c0 = indexConstant(b, l, 0);
        MatmulOperands m{
            a,  bOperand, c, kind.transposeA, zeroing != nullptr, ivs[0],
            c0, k,        vt};
        if (blocking.kBlock <= 0) {
          emitColumns(b, l, m);
          return;
        }
        // Blocks of kBlock contraction steps, so that a panel's rows of B
        // stay in the L1 cache while every row of C passes over them. The
        // first block starts from zero (or C), the others from C: each
        // element is still one chain of FMAs in the order of k.
        Value kBlock = indexConstant(b, l, blocking.kBlock);
        m.kEnd = b.create<arith::MinUIOp>(l, k, kBlock);
        emitColumns(b, l, m);
        b.create<scf::ForOp>(
            l, kBlock, k, kBlock, ValueRange{},
            [&](OpBuilder &kb, Location kl, Value kBegin, ValueRange) {
              MatmulOperands rest = m;
              rest.zeroInit = false;
              rest.kBegin = kBegin;
              rest.kEnd = kb.create<arith::MinUIOp>(
                  kl, k, kb.create<arith::AddIOp>(kl, kBegin, kBlock));
              emitColumns(kb, kl, rest);
              kb.create<scf::YieldOp>(kl);
            });
      });
  if (zeroing)
    rewriter.eraseOp(zeroing);
  rewriter.eraseOp(op);
}

struct VectorMatmulsPass
    : public mlir::mbt::impl::MBTVectorMatmulsBase<VectorMatmulsPass> {
  using MBTVectorMatmulsBase::MBTVectorMatmulsBase;

  void runOnOperation() override {
    if (vectorBits < 64 || vectorBits % 64 != 0) {
      getOperation().emitError("mbt-vector-matmuls: vector-bits must be a "
                               "positive multiple of 64, got ")
          << static_cast<int64_t>(vectorBits);
      return signalPassFailure();
    }
    if (rows < 1 || vectors < 0 || kBlock < 0) {
      getOperation().emitError("mbt-vector-matmuls: rows must be positive, "
                               "vectors and k-block not negative");
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, BatchMatmulKind>> matmuls;
    getOperation().walk([&](linalg::LinalgOp op) {
      std::optional<BatchMatmulKind> kind = matchBatchMatmul(op);
      // A product that rounds its operands is the BLAS kernel's.
      if (kind && !kind->transposeB && !op->hasAttr(kRoundOperandsAttr))
        matmuls.push_back({op, *kind});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, kind] : matmuls) {
      Type element = getElementTypeOrSelf(op->getOperand(0).getType());
      // R x 4 vectors with 32 registers (AVX-512), R x 2 with 16.
      Blocking blocking{vectorBits / element.getIntOrFloatBitWidth(),
                        vectors > 0 ? vectors : (vectorBits >= 512 ? 4 : 2),
                        rows, kBlock};
      replaceWithKernels(op, kind, blocking, rewriter);
    }
  }
};

} // namespace
