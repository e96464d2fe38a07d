//===- ConvPatterns.cpp - conv2d and its adjoints to im2col + GEMM --------===//
//
// Every convolution here is one "pass" over an image that is already padded:
//   image  = spread(x)            zero padding (and, for the input's adjoint,
//                                 zeros between the gradient's rows)
//   cols   = im2col(image)        [M, G, C/G, KH, KW, B, OH, OW], a copy
//                                 through an affine map
//   y      = filter · cols        [M*G, O/G, B*OH*OW], one batched GEMM
//   out    = y permuted           [M, B, O, OH, OW]
// so the model dimension (and the groups) become the batch of one GEMM,
// which mbt-linalg-to-blas or cuBLAS runs, and the only index arithmetic
// per element is in spread's gather over the (small) image. The adjoints:
//   dW = dy · colsᵀ               the forward's cols (CSE merges them)
//   dx = whichever moves fewer column entries: the pass over spread(dy)
//        (zeros between rows for a stride, padded by dilation (K-1) -
//        padding) with the filter flipped and its in/out channels swapped,
//        a transposed convolution as a forward one; or col2im of Wᵀ · dy,
//        a gather over the taps that read each input element. Neither
//        scatters (no atomics on the GPU).
// A value without the model dimension ([B, C, H, W], as in a model's own
// function) gets a unit one for the lowering.
//
// With `kernelCalls` (the CPU), an f32 convolution instead becomes a call
// to the runtime's kernel for its pass (mbt_rt_conv2d_f32,
// _grad_input_f32, _grad_filter_f32, and their `_bf16` forms, which round
// the operands of a product marked mbt.round_operands_to; docs/abi.md):
// oneDNN's direct convolution, which moves no column matrix through
// memory. At the tensor level the call reads its operands'
// buffers (bufferization.to_memref read_only) and writes a new one, which
// becomes the result (bufferization.to_tensor restrict): the kernel
// writes its output whole, so nothing else holds that buffer.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"
#include "compiler/Conversion/MBTToLinalg/PopulatePatterns.h"
#include "compiler/Conversion/MBTToLinalg/WindowBuilders.h"
#include "compiler/Conversion/Utils/BatchMatmul.h"
#include "compiler/Conversion/Utils/RuntimeKernels.h"
#include "dialects/MBT/IR/ConvShapes.h"
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mbt;

namespace {

/// The sizes of one conv2d op, from its input and filter with the model dim.
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
};

/// One convolution pass without padding over an image [M, B, G * in, H,
/// W]: output [M, B, G * out, oh, ow].
struct ConvPass {
  int64_t models, groups, in, out, kh, kw, sh, sw, dh, dw, oh, ow;
  int64_t columns() const { return in * kh * kw; }
};

/// `v` with a leading unit model dim when it has rank `rank` - 1.
Value withModelDim(OpBuilder &b, Location loc, Value v, int64_t rank) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == rank)
    return v;
  SmallVector<int64_t> shape{1};
  llvm::append_range(shape, type.getShape());
  return expandUnitDims(
      b, loc, v, RankedTensorType::get(shape, type.getElementType()), {0});
}

/// `v` shaped as `type`, dropping the unit model dim added above.
Value asType(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  if (v.getType() == type)
    return v;
  auto vType = cast<RankedTensorType>(v.getType());
  return b.create<tensor::CollapseShapeOp>(loc, type, v,
                                           unitDimGroups(vType, {0}));
}

/// The image [M, B, C, H, W] spread onto a zero [M, B, C, height, width]
/// plane: element (i, j) of the plane holds x[(i - lowH) / strideH, (j -
/// lowW) / strideW] where those are whole positions of x, zero elsewhere.
/// Padding is low = p, stride 1; the input adjoint's gradient image puts
/// stride - 1 zeros between rows. The identity spread is x itself.
Value spread(OpBuilder &b, Location loc, Value x, int64_t lowH, int64_t lowW,
             int64_t strideH, int64_t strideW, int64_t height, int64_t width) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t h = xType.getDimSize(3), w = xType.getDimSize(4);
  if (lowH == 0 && lowW == 0 && strideH == 1 && strideW == 1 && height == h &&
      width == w)
    return x;
  auto type = RankedTensorType::get({xType.getDimSize(0), xType.getDimSize(1),
                                     xType.getDimSize(2), height, width},
                                    xType.getElementType());
  return buildGather(
      b, loc, type, batchSizeFrom(x, 1, 5), {}, {},
      [&](OpBuilder &nb, Location l, ValueRange) {
        SmallVector<Value> i = loopIndices(nb, l, 5);
        // tapReader with tap 0: the position q with q * stride + low = i.
        auto [row, rowOk] = tapReader(nb, l, i[3], 0, strideH, 1, -lowH, h);
        auto [col, colOk] = tapReader(nb, l, i[4], 0, strideW, 1, -lowW, w);
        Value v = nb.create<tensor::ExtractOp>(
            l, x, ValueRange{i[0], i[1], i[2], row, col});
        Value ok = nb.create<arith::AndIOp>(l, rowOk, colOk);
        return nb
            .create<arith::SelectOp>(
                l, ok, v, floatConstant(nb, l, xType.getElementType(), 0.0))
            .getResult();
      });
}

/// im2col of a padded image, as a copy through an affine map, in the
/// channels-first ("col buffer") layout whose last dims are the output
/// positions: cols[m, g, c, kh, kw, b, oh, ow] = image[m, b, g * in + c,
/// oh * sh + kh * dh, ow * sw + kw * dw], collapsed to [M * G, in * KH * KW,
/// B * OH * OW]. The innermost loop walks an image row (a strided copy the
/// vectorizer takes, contiguous at stride 1) instead of a 3- or 5-wide tap.
Value columns(OpBuilder &b, Location loc, Value image, const ConvPass &p) {
  auto imageType = cast<RankedTensorType>(image.getType());
  MLIRContext *ctx = b.getContext();
  auto type = RankedTensorType::get({p.models, p.groups, p.in, p.kh, p.kw,
                                     imageType.getDimSize(1), p.oh, p.ow},
                                    imageType.getElementType());
  AffineExpr m, g, c, kh, kw, bb, oh, ow;
  bindDims(ctx, m, g, c, kh, kw, bb, oh, ow);
  auto map = AffineMap::get(
      8, 0, {m, bb, g * p.in + c, oh * p.sh + kh * p.dh, ow * p.sw + kw * p.dw},
      ctx);
  Value cols = buildGather(
      b, loc, type, batchSizeFrom(image, 1, 8), {image}, {map},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
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
      loc, expanded, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3, 4, 5}});
}

/// The filter of the input's adjoint: flipped in both kernel dims, with its
/// in and out channels swapped, as [M * G, C/G, O/G * KH * KW]:
/// f[m, g, c, o, kh, kw] = w[m, g * O/G + o, c, KH - 1 - kh, KW - 1 - kw].
Value flippedFilterMatrix(OpBuilder &b, Location loc, Value w,
                          const ConvGeometry &g) {
  auto wType = cast<RankedTensorType>(w.getType());
  MLIRContext *ctx = b.getContext();
  auto type = RankedTensorType::get(
      {g.models, g.groups, g.perGroupIn, g.perGroupOut, g.kh, g.kw},
      wType.getElementType());
  AffineExpr m, grp, c, o, kh, kw;
  bindDims(ctx, m, grp, c, o, kh, kw);
  auto map = AffineMap::get(
      6, 0, {m, grp * g.perGroupOut + o, c, (g.kh - 1) - kh, (g.kw - 1) - kw},
      ctx);
  Value flipped = buildGather(
      b, loc, type, batchSizeFrom(w, 0, 6), {w}, {map},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  return b.create<tensor::CollapseShapeOp>(
      loc, flipped, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3, 4, 5}});
}

/// A zero-filled [M * G, rows, B * positions] GEMM result whose batch size
/// B is `source`'s dim 1. It is allocated as [M * G, rows, B, positions]
/// and collapsed: a buffer whose only dynamic size is a plain batch size is
/// one that mbt-plan-workspace can place in the workspace (a size like
/// B * 784 would be left to malloc, a fresh mapping and its page faults
/// every step).
Value gemmResult(OpBuilder &b, Location loc, Type element, int64_t batches,
                 int64_t rows, Value source, int64_t positions) {
  auto expanded = RankedTensorType::get(
      {batches, rows, ShapedType::kDynamic, positions}, element);
  Value empty = buildEmpty(b, loc, expanded, batchSizeFrom(source, 1, 4));
  Value matrix = b.create<tensor::CollapseShapeOp>(
      loc, empty, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value zero = b.create<arith::ConstantOp>(loc, b.getFloatAttr(element, 0.0));
  return b.create<linalg::FillOp>(loc, zero, matrix).getResult(0);
}

/// A zero-filled GEMM result of static `type`.
Value zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  return buildFilled(b, loc, type, {},
                     b.getFloatAttr(type.getElementType(), 0.0));
}

/// What a convolution's GEMM inherits from it: the format its operands
/// hold (kOperandsFormatAttr) and the one it rounds them to
/// (kRoundOperandsAttr), where set. The GEMM's operands are the
/// convolution's, moved (columns, padding zeros, flipped filters), so they
/// hold, or are to be rounded to, the same format.
using ProductFormat = SmallVector<NamedAttribute, 2>;

ProductFormat productFormatOf(Operation *conv) {
  ProductFormat format;
  for (StringRef name : {kOperandsFormatAttr, kRoundOperandsAttr})
    if (Attribute attr = conv->getAttr(name))
      format.push_back(
          NamedAttribute(StringAttr::get(conv->getContext(), name), attr));
  return format;
}

void markOperandsFormat(Operation *gemm, const ProductFormat &format) {
  for (const NamedAttribute &attr : format)
    gemm->setAttr(attr.getName(), attr.getValue());
}

/// The pass over `image` with `filter` ([M * G, out, in * KH * KW]):
/// y = filter · cols, [M * G, out, B * OH * OW], permuted into
/// [M, B, G * out, OH, OW] (rows of OW stay contiguous on both sides).
/// `format`: what the operands hold or are rounded to (productFormatOf).
Value convolve(OpBuilder &b, Location loc, Value image, Value filter,
               const ConvPass &p, const ProductFormat &format) {
  auto imageType = cast<RankedTensorType>(image.getType());
  Type element = imageType.getElementType();
  Value cols = columns(b, loc, image, p);
  auto yType = RankedTensorType::get(
      {p.models * p.groups, p.out, ShapedType::kDynamic}, element);
  auto gemm = b.create<linalg::BatchMatmulOp>(
      loc, TypeRange{yType}, ValueRange{filter, cols},
      ValueRange{gemmResult(b, loc, element, p.models * p.groups, p.out, image,
                            p.oh * p.ow)});
  markOperandsFormat(gemm, format);
  Value y = gemm.getResult(0);
  auto y6Type = RankedTensorType::get(
      {p.models, p.groups, p.out, imageType.getDimSize(1), p.oh, p.ow},
      element);
  Value y6 = b.create<tensor::ExpandShapeOp>(
      loc, y6Type, y,
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3, 4, 5}});
  // out[m, b, o, oh, ow] = y6[m, o / out, o % out, b, oh, ow].
  MLIRContext *ctx = b.getContext();
  AffineExpr m, bb, o, oh, ow;
  bindDims(ctx, m, bb, o, oh, ow);
  auto map =
      AffineMap::get(5, 0, {m, o.floorDiv(p.out), o % p.out, bb, oh, ow}, ctx);
  auto outType = RankedTensorType::get(
      {p.models, imageType.getDimSize(1), p.groups * p.out, p.oh, p.ow},
      element);
  return buildGather(
      b, loc, outType, batchSizeFrom(image, 1, 5), {y6}, {map},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

/// The forward pass of `g` and its padded input image.
ConvPass forwardPass(const ConvGeometry &g) {
  return {g.models, g.groups, g.perGroupIn, g.perGroupOut, g.kh, g.kw,
          g.sh,     g.sw,     g.dh,         g.dw,          g.oh, g.ow};
}
Value paddedInput(OpBuilder &b, Location loc, Value x, const ConvGeometry &g) {
  return spread(b, loc, x, g.ph, g.pw, 1, 1, g.height + 2 * g.ph,
                g.width + 2 * g.pw);
}

/// The result's adjoint [M, B, O, OH, OW] as [M * G, O/G, B * OH * OW].
Value gradRows(OpBuilder &b, Location loc, Value dy, const ConvGeometry &g) {
  auto dyType = cast<RankedTensorType>(dy.getType());
  MLIRContext *ctx = b.getContext();
  auto type = RankedTensorType::get(
      {g.models, g.groups, g.perGroupOut, dyType.getDimSize(1), g.oh, g.ow},
      dyType.getElementType());
  AffineExpr m, grp, og, bb, oh, ow;
  bindDims(ctx, m, grp, og, bb, oh, ow);
  auto map =
      AffineMap::get(6, 0, {m, bb, grp * g.perGroupOut + og, oh, ow}, ctx);
  Value rows = buildGather(
      b, loc, type, batchSizeFrom(dy, 1, 6), {dy}, {map},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  return b.create<tensor::CollapseShapeOp>(
      loc, rows, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3, 4, 5}});
}

struct Conv2dPattern : public OpConversionPattern<Conv2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = withModelDim(rewriter, loc, adaptor.getInput(), 5);
    Value w = withModelDim(rewriter, loc, adaptor.getFilter(), 5);
    auto g = ConvGeometry::of(op, cast<RankedTensorType>(x.getType()),
                              cast<RankedTensorType>(w.getType()));
    Value out = convolve(rewriter, loc, paddedInput(rewriter, loc, x, g),
                         filterMatrix(rewriter, loc, w, g), forwardPass(g),
                         productFormatOf(op));
    rewriter.replaceOp(op, asType(rewriter, loc, out, op.getType()));
    return success();
  }
};

struct Conv2dGradFilterPattern
    : public OpConversionPattern<Conv2dGradFilterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2dGradFilterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = withModelDim(rewriter, loc, adaptor.getInput(), 5);
    Value dy = withModelDim(rewriter, loc, adaptor.getGrad(), 5);
    Value w = withModelDim(rewriter, loc, adaptor.getLike(), 5);
    auto wType = cast<RankedTensorType>(w.getType());
    auto g = ConvGeometry::of(op, cast<RankedTensorType>(x.getType()), wType);
    Type element = wType.getElementType();
    Value cols = columns(rewriter, loc, paddedInput(rewriter, loc, x, g),
                         forwardPass(g));
    Value rows = gradRows(rewriter, loc, dy, g);
    auto dwType = RankedTensorType::get(
        {g.models * g.groups, g.perGroupOut, g.perGroupIn * g.kh * g.kw},
        element);
    // dW = rows · colsᵀ over the output positions.
    auto gemm = rewriter.create<linalg::BatchMatmulTransposeBOp>(
        loc, TypeRange{dwType}, ValueRange{rows, cols},
        ValueRange{zeros(rewriter, loc, dwType)});
    markOperandsFormat(gemm, productFormatOf(op));
    Value dw = gemm.getResult(0);
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

/// dx as the stride-1 pass over dy spread `stride` apart and shifted by
/// dilation (K - 1) - padding, with the kernel flipped (kh -> K - 1 - kh):
/// dx[ih] sums dy[oh] w[kh] over oh * s + kh * d - p = ih. Its columns hold
/// B * H * W * O/G * KH * KW elements.
Value gradInputByTransposedPass(OpBuilder &b, Location loc, Value dy, Value w,
                                const ConvGeometry &g,
                                const ProductFormat &format) {
  Value image = spread(
      b, loc, dy, g.dh * (g.kh - 1) - g.ph, g.dw * (g.kw - 1) - g.pw, g.sh,
      g.sw, g.height + g.dh * (g.kh - 1), g.width + g.dw * (g.kw - 1));
  ConvPass pass{
      g.models, g.groups, g.perGroupOut, g.perGroupIn, g.kh,     g.kw,
      1,        1,        g.dh,          g.dw,         g.height, g.width};
  return convolve(b, loc, image, flippedFilterMatrix(b, loc, w, g), pass,
                  format);
}

/// The sum of `terms` as a balanced tree, ((t0 + t1) + (t2 + t3)) + ...:
/// a fixed order, so a model's bits do not depend on the batch, whose
/// chain of dependent additions is log2 of the count long instead of the
/// count (a 5x5 filter's 25 taps: 25 additions of latency per element, 13%
/// of LeNet's step, against 5).
Value buildPairwiseSum(OpBuilder &b, Location loc, ArrayRef<Value> terms) {
  SmallVector<Value> level(terms);
  while (level.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(b.create<arith::AddFOp>(loc, level[i], level[i + 1]));
    if (level.size() % 2)
      next.push_back(level.back());
    level = std::move(next);
  }
  return level.front();
}

/// dx as col2im of dcols = dy · W: a gather summing, for each input
/// element, the column entries of the taps whose window reads it. Its
/// columns hold B * OH * OW * C/G * KH * KW elements.
Value gradInputByCol2im(OpBuilder &b, Location loc, Value dy, Value w,
                        const ConvGeometry &g, const ProductFormat &format) {
  auto dyType = cast<RankedTensorType>(dy.getType());
  Type element = dyType.getElementType();
  Value rows = gradRows(b, loc, dy, g);
  int64_t taps = g.perGroupIn * g.kh * g.kw;
  // dcols = Wᵀ · rows: [M * G, C/G * KH * KW, B * OH * OW].
  auto dcolsType = RankedTensorType::get(
      {g.models * g.groups, taps, ShapedType::kDynamic}, element);
  auto gemm = b.create<linalg::BatchMatmulTransposeAOp>(
      loc, TypeRange{dcolsType}, ValueRange{filterMatrix(b, loc, w, g), rows},
      ValueRange{gemmResult(b, loc, element, g.models * g.groups, taps, dy,
                            g.oh * g.ow)});
  markOperandsFormat(gemm, format);
  Value dcols = gemm.getResult(0);
  auto cols8Type =
      RankedTensorType::get({g.models, g.groups, g.perGroupIn, g.kh, g.kw,
                             dyType.getDimSize(1), g.oh, g.ow},
                            element);
  Value cols8 = b.create<tensor::ExpandShapeOp>(
      loc, cols8Type, dcols,
      SmallVector<ReassociationIndices>{{0, 1}, {2, 3, 4}, {5, 6, 7}});
  auto dxType = RankedTensorType::get(
      {g.models, dyType.getDimSize(1), g.channels, g.height, g.width}, element);
  return buildGather(
      b, loc, dxType, batchSizeFrom(dy, 1, 5), {}, {},
      [&](OpBuilder &nb, Location l, ValueRange) {
        SmallVector<Value> i = loopIndices(nb, l, 5);
        Value perGroup = indexConstant(nb, l, g.perGroupIn);
        Value group = nb.create<arith::DivUIOp>(l, i[2], perGroup);
        Value c = nb.create<arith::RemUIOp>(l, i[2], perGroup);
        Value zero = floatConstant(nb, l, element, 0.0);
        SmallVector<Value> terms;
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          auto [oh, rowOk] = tapReader(nb, l, i[3], kh, g.sh, g.dh, g.ph, g.oh);
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            auto [ow, colOk] =
                tapReader(nb, l, i[4], kw, g.sw, g.dw, g.pw, g.ow);
            // Consecutive iw read consecutive ow: rows of the col buffer.
            Value v = nb.create<tensor::ExtractOp>(
                l, cols8,
                ValueRange{i[0], group, c, indexConstant(nb, l, kh),
                           indexConstant(nb, l, kw), i[1], oh, ow});
            Value ok = nb.create<arith::AndIOp>(l, rowOk, colOk);
            terms.push_back(nb.create<arith::SelectOp>(l, ok, v, zero));
          }
        }
        return buildPairwiseSum(nb, l, terms);
      });
}

struct Conv2dGradInputPattern : public OpConversionPattern<Conv2dGradInputOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2dGradInputOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dy = withModelDim(rewriter, loc, adaptor.getGrad(), 5);
    Value w = withModelDim(rewriter, loc, adaptor.getFilter(), 5);
    Value x = withModelDim(rewriter, loc, adaptor.getLike(), 5);
    auto g = ConvGeometry::of(op, cast<RankedTensorType>(x.getType()),
                              cast<RankedTensorType>(w.getType()));
    // Both ways move their columns through memory twice (written, then read
    // by the GEMM or the gather); take the one with fewer: col2im when the
    // result positions times input channels are fewer than the input
    // positions times output channels (LeNet's second convolution: 5x).
    bool col2im =
        g.oh * g.ow * g.perGroupIn < g.height * g.width * g.perGroupOut;
    ProductFormat format = productFormatOf(op);
    Value dx = col2im
                   ? gradInputByCol2im(rewriter, loc, dy, w, g, format)
                   : gradInputByTransposedPass(rewriter, loc, dy, w, g, format);
    rewriter.replaceOp(op, asType(rewriter, loc, dx, op.getType()));
    return success();
  }
};

/// The runtime's convolution kernel `name`: three rank-5 f32 memrefs, then
/// the stride, padding and dilation (height, width) and the groups.
func::FuncOp convKernel(OpBuilder &b, ModuleOp module, StringRef name) {
  SmallVector<Type> inputs(3, anyStridedMemRef(5, b.getF32Type()));
  inputs.append(7, b.getI64Type());
  return lookupOrDeclareKernel(b, module, name, b.getFunctionType(inputs, {}));
}

/// Whether the kernels compute `op`: an f32 convolution, whose product
/// may round its operands to bf16 (the `_bf16` kernels do that), of static
/// shapes but for the batch.
bool onConvKernel(Operation *op, ArrayRef<Value> operands) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  auto rounding = op->getAttrOfType<TypeAttr>(kRoundOperandsAttr);
  if (!type.getElementType().isF32() ||
      (rounding && !rounding.getValue().isBF16()))
    return false;
  SmallVector<Value> values(operands);
  values.push_back(op->getResult(0));
  return llvm::all_of(values, [](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    int64_t batchDim = t.getRank() - 4;
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (t.isDynamicDim(d) && d != batchDim)
        return false;
    return true;
  });
}

/// `op` as a call to the kernel of its pass, `pass` (`_bf16` where its
/// product rounds its operands), that reads `first` and `second` (with the
/// model dim) and writes a new [M, ...] buffer of `op`'s result type, whose
/// batch size, where dynamic, is `first`'s (dim 1).
template <typename OpTy>
Value callConvKernel(ConversionPatternRewriter &rewriter, OpTy op,
                     StringRef pass, Value first, Value second) {
  Location loc = op.getLoc();
  std::string name = ("mbt_rt_" + pass + "_f32").str();
  if (op->hasAttr(kRoundOperandsAttr))
    name += "_bf16";
  auto kernel =
      convKernel(rewriter, op->template getParentOfType<ModuleOp>(), name);
  MemRefType anyOperand = cast<MemRefType>(kernel.getArgumentTypes()[0]);
  SmallVector<Value> args;
  for (Value v : {first, second}) {
    auto type = cast<RankedTensorType>(v.getType());
    Value buffer = rewriter.create<bufferization::ToMemrefOp>(
        loc, anyStridedMemRef(type.getShape(), type.getElementType()), v,
        /*read_only=*/true);
    args.push_back(rewriter.create<memref::CastOp>(loc, anyOperand, buffer));
  }
  auto resultType = cast<RankedTensorType>(op.getType());
  SmallVector<int64_t> shape;
  if (resultType.getRank() == 4)
    shape.push_back(1);
  llvm::append_range(shape, resultType.getShape());
  SmallVector<Value> dynamicSizes;
  if (ShapedType::isDynamic(shape[1]))
    dynamicSizes.push_back(rewriter.create<tensor::DimOp>(loc, first, 1));
  auto bufferType = MemRefType::get(shape, resultType.getElementType());
  Value result =
      rewriter.create<memref::AllocOp>(loc, bufferType, dynamicSizes);
  args.push_back(rewriter.create<memref::CastOp>(loc, anyOperand, result));
  for (int64_t v : {op.getStride()[0], op.getStride()[1], op.getPadding()[0],
                    op.getPadding()[1], op.getDilation()[0],
                    op.getDilation()[1], int64_t(op.getGroups())})
    args.push_back(rewriter.create<arith::ConstantIntOp>(loc, v, 64));
  rewriter.create<func::CallOp>(loc, kernel, args);
  Value tensor = rewriter.create<bufferization::ToTensorOp>(
      loc, result, /*restrict=*/true, /*writable=*/true);
  return asType(rewriter, loc, tensor, op.getType());
}

/// mbt.conv2d or one of its adjoints as a call to the kernel of its pass,
/// which reads the op's first two operands (input and filter, the
/// result's adjoint and the filter, input and the result's adjoint).
/// Benefit 2: before the im2col patterns, for the ops the kernels compute.
template <typename OpTy>
struct ConvKernelPattern : public OpConversionPattern<OpTy> {
  ConvKernelPattern(MLIRContext *ctx, StringRef pass)
      : OpConversionPattern<OpTy>(ctx, /*benefit=*/2), pass(pass) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange operands = adaptor.getOperands();
    if (!onConvKernel(op, {operands[0], operands[1]}))
      return failure();
    Location loc = op.getLoc();
    Value first = withModelDim(rewriter, loc, operands[0], 5);
    Value second = withModelDim(rewriter, loc, operands[1], 5);
    rewriter.replaceOp(op, callConvKernel(rewriter, op, pass, first, second));
    return success();
  }

  StringRef pass;
};

} // namespace

void mlir::mbt::populateConvPatterns(RewritePatternSet &patterns,
                                     bool kernelCalls) {
  patterns.add<Conv2dPattern, Conv2dGradFilterPattern, Conv2dGradInputPattern>(
      patterns.getContext());
  if (!kernelCalls)
    return;
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ConvKernelPattern<Conv2dOp>>(ctx, "conv2d");
  patterns.add<ConvKernelPattern<Conv2dGradInputOp>>(ctx, "conv2d_grad_input");
  patterns.add<ConvKernelPattern<Conv2dGradFilterOp>>(ctx,
                                                      "conv2d_grad_filter");
}
