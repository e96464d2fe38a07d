//===- ConvPatterns.cpp - conv2d and its adjoints to im2col + GEMM --------===//
//
// conv2d of x [M, B, C, H, W] with w [M, O, C/G, KH, KW] in G groups:
//   cols = im2col(x)            [M, G, B, OH, OW, C/G, KH, KW]  (a gather)
//   y    = cols · w^T           [M*G, B*OH*OW, O/G]   one batched GEMM
//   out  = y permuted           [M, B, O, OH, OW]
// so the model dimension (and the groups) become the batch of one GEMM,
// which mbt-linalg-to-blas or cuBLAS runs. The adjoints reuse the pieces:
//   dW    = dyᵀ · cols          [M*G, O/G, C/G*KH*KW]
//   dcols = dy · W, dx = col2im(dcols), a gather over the columns that read
//   each input element (so the GPU needs no atomics).
// cols of the forward pass and of dW are the same op on the same tensor,
// which CSE merges. A value without the model dimension ([B, C, H, W], as
// in a model's own function) gets a unit one for the lowering.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/WindowBuilders.h"
#include "dialects/MBT/IR/ConvShapes.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// The sizes of one conv2d, from its input and filter with the model dim.
struct ConvGeometry {
  int64_t models, channels, height, width;
  int64_t out, groups, perGroupIn, perGroupOut, kh, kw;
  int64_t sh, sw, ph, pw, dh, dw, oh, ow;

  template <typename OpTy>
  static ConvGeometry of(OpTy op, RankedTensorType input,
                         RankedTensorType filter) {
    ConvGeometry g;
    g.models = input.getDimSize(0);
    g.channels = input.getDimSize(2);
    g.height = input.getDimSize(3);
    g.width = input.getDimSize(4);
    g.out = filter.getDimSize(1);
    g.groups = op.getGroups();
    g.perGroupIn = filter.getDimSize(2);
    g.perGroupOut = g.out / g.groups;
    g.kh = filter.getDimSize(3);
    g.kw = filter.getDimSize(4);
    g.sh = op.getStride()[0];
    g.sw = op.getStride()[1];
    g.ph = op.getPadding()[0];
    g.pw = op.getPadding()[1];
    g.dh = op.getDilation()[0];
    g.dw = op.getDilation()[1];
    g.oh = windowPositions(g.height, g.kh, g.sh, g.ph, g.dh);
    g.ow = windowPositions(g.width, g.kw, g.sw, g.pw, g.dw);
    return g;
  }
  int64_t columns() const { return perGroupIn * kh * kw; }
};

/// `v` with a leading unit model dim when it has rank `rank` - 1.
Value withModelDim(OpBuilder &b, Location loc, Value v, int64_t rank) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == rank)
    return v;
  SmallVector<int64_t> shape{1};
  llvm::append_range(shape, type.getShape());
  return expandUnitDims(b, loc, v,
                        RankedTensorType::get(shape, type.getElementType()),
                        {0});
}

/// `v` shaped as `type`, dropping the unit model dim added above.
Value asType(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  if (v.getType() == type)
    return v;
  auto vType = cast<RankedTensorType>(v.getType());
  return b.create<tensor::CollapseShapeOp>(loc, type, v,
                                           unitDimGroups(vType, {0}));
}

/// im2col: cols[m, group, b, oh, ow, c, kh, kw] = x[m, b, group * C/G + c,
/// oh * sh + kh * dh - ph, ow * sw + kw * dw - pw], 0 in the padding.
Value buildColumns(OpBuilder &b, Location loc, Value x,
                   const ConvGeometry &g) {
  auto xType = cast<RankedTensorType>(x.getType());
  Type element = xType.getElementType();
  auto type = RankedTensorType::get({g.models, g.groups, xType.getDimSize(1),
                                     g.oh, g.ow, g.perGroupIn, g.kh, g.kw},
                                    element);
  return buildGather(
      b, loc, type, batchSizeFrom(x, 1, 8), {}, {}, [&](OpBuilder &nb, Location l, ValueRange) {
        SmallVector<Value> i = loopIndices(nb, l, 8);
        Value c = nb.create<arith::AddIOp>(
            l,
            nb.create<arith::MulIOp>(l, i[1],
                                     indexConstant(nb, l, g.perGroupIn)),
            i[5]);
        Value offH = nb.create<arith::MulIOp>(l, i[6], indexConstant(nb, l, g.dh));
        Value offW = nb.create<arith::MulIOp>(l, i[7], indexConstant(nb, l, g.dw));
        auto [row, rowInside] = tapSource(nb, l, i[3], g.sh, offH, g.ph, g.height);
        auto [col, colInside] = tapSource(nb, l, i[4], g.sw, offW, g.pw, g.width);
        Value inside = nb.create<arith::AndIOp>(l, rowInside, colInside);
        Value v = nb.create<tensor::ExtractOp>(
            l, x, ValueRange{i[0], i[2], c, row, col});
        return nb.create<arith::SelectOp>(l, inside, v,
                                          floatConstant(nb, l, element, 0.0))
            .getResult();
      });
}

/// The columns as GEMM operands: [M * G, B * OH * OW, C/G * KH * KW].
Value columnsMatrix(OpBuilder &b, Location loc, Value cols) {
  return b.create<tensor::CollapseShapeOp>(
      loc, cols,
      SmallVector<ReassociationIndices>{{0, 1}, {2, 3, 4}, {5, 6, 7}});
}

/// The filter [M, O, C/G, KH, KW] as [M * G, O/G, C/G * KH * KW].
Value filterMatrix(OpBuilder &b, Location loc, Value w, const ConvGeometry &g) {
  auto wType = cast<RankedTensorType>(w.getType());
  auto grouped = RankedTensorType::get(
      {g.models, g.groups, g.perGroupOut, g.perGroupIn, g.kh, g.kw},
      wType.getElementType());
  Value expanded = b.create<tensor::ExpandShapeOp>(
      loc, grouped, w,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}, {5}});
  return b.create<tensor::CollapseShapeOp>(
      loc, expanded,
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3, 4, 5}});
}

/// The result's adjoint [M, B, O, OH, OW] as [M * G, B * OH * OW, O/G].
Value gradRows(OpBuilder &b, Location loc, Value dy, const ConvGeometry &g) {
  auto dyType = cast<RankedTensorType>(dy.getType());
  MLIRContext *ctx = b.getContext();
  auto type = RankedTensorType::get({g.models, g.groups, dyType.getDimSize(1),
                                     g.oh, g.ow, g.perGroupOut},
                                    dyType.getElementType());
  AffineExpr m, grp, bb, oh, ow, og;
  bindDims(ctx, m, grp, bb, oh, ow, og);
  auto map = AffineMap::get(6, 0, {m, bb, grp * g.perGroupOut + og, oh, ow},
                            ctx);
  Value rows = buildGather(b, loc, type, batchSizeFrom(dy, 1, 6), {dy}, {map},
                           [](OpBuilder &, Location, ValueRange args) {
                             return args[0];
                           });
  return b.create<tensor::CollapseShapeOp>(
      loc, rows, SmallVector<ReassociationIndices>{{0, 1}, {2, 3, 4}, {5}});
}

/// A zero-filled [rows-of-`a` x ...] GEMM result of `type`, its dynamic
/// dim 1 read from `source` dim `dim`.
Value zeros(OpBuilder &b, Location loc, RankedTensorType type, Value source,
            int64_t dim) {
  SmallVector<std::pair<Value, int64_t>> sources(type.getRank(), {source, dim});
  return buildFilled(b, loc, type, sources,
                     b.getFloatAttr(type.getElementType(), 0.0));
}

struct Conv2dPattern : public OpRewritePattern<Conv2dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Conv2dOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = withModelDim(rewriter, loc, op.getInput(), 5);
    Value w = withModelDim(rewriter, loc, op.getFilter(), 5);
    auto g = ConvGeometry::of(op, cast<RankedTensorType>(x.getType()),
                              cast<RankedTensorType>(w.getType()));
    Type element = op.getType().getElementType();
    Value cols = columnsMatrix(rewriter, loc, buildColumns(rewriter, loc, x, g));
    Value wMat = filterMatrix(rewriter, loc, w, g);
    auto yType = RankedTensorType::get(
        {g.models * g.groups, ShapedType::kDynamic, g.perGroupOut}, element);
    Value y = rewriter
                  .create<linalg::BatchMatmulTransposeBOp>(
                      loc, TypeRange{yType}, ValueRange{cols, wMat},
                      ValueRange{zeros(rewriter, loc, yType, cols, 1)})
                  .getResult(0);
    auto xType = cast<RankedTensorType>(x.getType());
    auto y6Type = RankedTensorType::get({g.models, g.groups,
                                         xType.getDimSize(1), g.oh, g.ow,
                                         g.perGroupOut},
                                        element);
    Value y6 = rewriter.create<tensor::ExpandShapeOp>(
        loc, y6Type, y,
        SmallVector<ReassociationIndices>{{0, 1}, {2, 3, 4}, {5}});
    // out[m, b, o, oh, ow] = y6[m, o / (O/G), b, oh, ow, o % (O/G)].
    MLIRContext *ctx = rewriter.getContext();
    AffineExpr m, bb, o, oh, ow;
    bindDims(ctx, m, bb, o, oh, ow);
    auto map = AffineMap::get(
        5, 0,
        {m, o.floorDiv(g.perGroupOut), bb, oh, ow, o % g.perGroupOut}, ctx);
    auto outType = RankedTensorType::get(
        {g.models, xType.getDimSize(1), g.out, g.oh, g.ow}, element);
    Value out = buildGather(rewriter, loc, outType, batchSizeFrom(x, 1, 5),
                            {y6}, {map},
                            [](OpBuilder &, Location, ValueRange args) {
                              return args[0];
                            });
    rewriter.replaceOp(op, asType(rewriter, loc, out, op.getType()));
    return success();
  }
};

struct Conv2dGradFilterPattern : public OpRewritePattern<Conv2dGradFilterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Conv2dGradFilterOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = withModelDim(rewriter, loc, op.getInput(), 5);
    Value dy = withModelDim(rewriter, loc, op.getGrad(), 5);
    Value w = withModelDim(rewriter, loc, op.getLike(), 5);
    auto wType = cast<RankedTensorType>(w.getType());
    auto g = ConvGeometry::of(op, cast<RankedTensorType>(x.getType()), wType);
    Type element = wType.getElementType();
    Value cols = columnsMatrix(rewriter, loc, buildColumns(rewriter, loc, x, g));
    Value rows = gradRows(rewriter, loc, dy, g);
    auto dwType = RankedTensorType::get(
        {g.models * g.groups, g.perGroupOut, g.columns()}, element);
    Value dw = rewriter
                   .create<linalg::BatchMatmulTransposeAOp>(
                       loc, TypeRange{dwType}, ValueRange{rows, cols},
                       ValueRange{zeros(rewriter, loc, dwType, rows, 1)})
                   .getResult(0);
    auto grouped = RankedTensorType::get(
        {g.models, g.groups, g.perGroupOut, g.perGroupIn, g.kh, g.kw}, element);
    Value dw6 = rewriter.create<tensor::ExpandShapeOp>(
        loc, grouped, dw,
        SmallVector<ReassociationIndices>{{0, 1}, {2}, {3, 4, 5}});
    Value dw5 = rewriter.create<tensor::CollapseShapeOp>(
        loc, wType, dw6,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}, {5}});
    rewriter.replaceOp(op, asType(rewriter, loc, dw5, op.getType()));
    return success();
  }
};

struct Conv2dGradInputPattern : public OpRewritePattern<Conv2dGradInputOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Conv2dGradInputOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dy = withModelDim(rewriter, loc, op.getGrad(), 5);
    Value w = withModelDim(rewriter, loc, op.getFilter(), 5);
    Value x = withModelDim(rewriter, loc, op.getLike(), 5);
    auto xType = cast<RankedTensorType>(x.getType());
    auto g = ConvGeometry::of(op, xType, cast<RankedTensorType>(w.getType()));
    Type element = xType.getElementType();
    Value rows = gradRows(rewriter, loc, dy, g);
    Value wMat = filterMatrix(rewriter, loc, w, g);
    auto dcolsType = RankedTensorType::get(
        {g.models * g.groups, ShapedType::kDynamic, g.columns()}, element);
    Value dcols = rewriter
                      .create<linalg::BatchMatmulOp>(
                          loc, TypeRange{dcolsType}, ValueRange{rows, wMat},
                          ValueRange{zeros(rewriter, loc, dcolsType, rows, 1)})
                      .getResult(0);
    auto dy5Type = cast<RankedTensorType>(dy.getType());
    auto cols8Type = RankedTensorType::get(
        {g.models, g.groups, dy5Type.getDimSize(1), g.oh, g.ow, g.perGroupIn,
         g.kh, g.kw},
        element);
    Value cols8 = rewriter.create<tensor::ExpandShapeOp>(
        loc, cols8Type, dcols,
        SmallVector<ReassociationIndices>{{0, 1}, {2, 3, 4}, {5, 6, 7}});
    // col2im as a gather: dx[m, b, c, ih, iw] sums the columns of every
    // tap (kh, kw) whose window position reads (ih, iw).
    auto dxType = RankedTensorType::get(
        {g.models, dy5Type.getDimSize(1), g.channels, g.height, g.width},
        element);
    Value dx = buildGather(
        rewriter, loc, dxType, batchSizeFrom(dy, 1, 5), {}, {},
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> i = loopIndices(b, l, 5);
          Value perGroup = indexConstant(b, l, g.perGroupIn);
          Value group = b.create<arith::DivUIOp>(l, i[2], perGroup);
          Value c = b.create<arith::RemUIOp>(l, i[2], perGroup);
          Value zero = floatConstant(b, l, element, 0.0);
          Value sum = zero;
          for (int64_t kh = 0; kh < g.kh; ++kh) {
            auto [oh, rowOk] =
                tapReader(b, l, i[3], kh, g.sh, g.dh, g.ph, g.oh);
            for (int64_t kw = 0; kw < g.kw; ++kw) {
              auto [ow, colOk] =
                  tapReader(b, l, i[4], kw, g.sw, g.dw, g.pw, g.ow);
              Value v = b.create<tensor::ExtractOp>(
                  l, cols8,
                  ValueRange{i[0], group, i[1], oh, ow, c,
                             indexConstant(b, l, kh), indexConstant(b, l, kw)});
              Value ok = b.create<arith::AndIOp>(l, rowOk, colOk);
              sum = b.create<arith::AddFOp>(
                  l, sum, b.create<arith::SelectOp>(l, ok, v, zero));
            }
          }
          return sum;
        });
    rewriter.replaceOp(op, asType(rewriter, loc, dx, op.getType()));
    return success();
  }
};

} // namespace

void mlir::mbt::populateConvPatterns(RewritePatternSet &patterns) {
  patterns.add<Conv2dPattern, Conv2dGradFilterPattern, Conv2dGradInputPattern>(
      patterns.getContext());
}
