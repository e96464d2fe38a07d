//===- MLIRGenBuiltins.cpp - mbt ops for calls of builtins ----------------===//
//
// Most builtins are one mbt op. The others are compositions whose
// gradients follow from their parts: mean is reduce_sum / count, softmax
// exp(x - logsumexp(x)), log_softmax x - logsumexp(x), and label smoothing
// mixes the cross-entropy with the mean over classes of -log_softmax, as
// torch.nn.functional.cross_entropy does.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/MLIRGenBuiltins.h"

#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mbt;
using namespace mlir::mbt;

namespace {

class BuiltinGen {
public:
  BuiltinGen(mlir::OpBuilder &b, mlir::Location loc,
             mlir::FloatType elementType, const CallExprAST &call,
             int64_t &randomSites)
      : b(b), loc(loc), elementType(elementType), call(call),
        randomSites(randomSites) {}

  /// `tensorOptions` holds the values of the call's tensor options.
  mlir::Value gen(llvm::ArrayRef<mlir::Value> args,
                  const llvm::StringMap<mlir::Value> &tensorOptions);

private:
  static int64_t rank(mlir::Value v) {
    return llvm::cast<mlir::RankedTensorType>(v.getType()).getRank();
  }
  /// The IR axis of the call's `axis` option for its first argument.
  int64_t irAxis() const {
    int64_t axis = call.builtinOptions.find("axis")->second.intValue;
    return axis + (call.builtinArgs[0]->type.batched ? 1 : 0);
  }
  /// The IR axes a reduction covers: the option's, or every axis.
  llvm::SmallVector<int64_t> reductionAxes(mlir::Value x) const {
    if (call.builtinOptions.count("axis"))
      return {irAxis()};
    llvm::SmallVector<int64_t> all;
    for (int64_t d = 0; d < rank(x); ++d)
      all.push_back(d);
    return all;
  }
  mlir::DenseI64ArrayAttr axesAttr(llvm::ArrayRef<int64_t> axes) {
    return b.getDenseI64ArrayAttr(axes);
  }
  mlir::Value scalar(double value) {
    auto type = mlir::RankedTensorType::get({}, elementType);
    return b.create<ConstantOp>(
        loc, type,
        mlir::DenseElementsAttr::get(type, b.getFloatAttr(elementType, value)));
  }
  mlir::Value mean(mlir::Value x, llvm::ArrayRef<int64_t> axes) {
    mlir::Value sum = b.create<ReduceSumOp>(loc, x, axesAttr(axes));
    mlir::Value count = b.create<CountOp>(loc, x, axesAttr(axes));
    return b.create<DivOp>(loc, sum, count);
  }
  /// (x - mean) / sqrt(variance + eps) over the last axis (the biased
  /// variance, as torch.nn.functional.layer_norm), each statistic
  /// broadcast back along it.
  mlir::Value normalize(mlir::Value x, double eps) {
    int64_t axis = rank(x) - 1;
    auto wide = [&](mlir::Value v) {
      return b.create<BroadcastOp>(loc, v, x, axesAttr({axis})).getResult();
    };
    mlir::Value centered = b.create<SubOp>(loc, x, wide(mean(x, {axis})));
    mlir::Value squares = b.create<MulOp>(loc, centered, centered);
    mlir::Value variance = mean(squares, {axis});
    auto type = llvm::cast<mlir::RankedTensorType>(variance.getType());
    mlir::Value epsilon = b.create<ReshapeOp>(
        loc,
        mlir::RankedTensorType::get(
            llvm::SmallVector<int64_t>(type.getRank(), 1), elementType),
        scalar(eps));
    mlir::Value deviation =
        b.create<SqrtOp>(loc, b.create<AddOp>(loc, variance, epsilon));
    return b.create<DivOp>(loc, centered, wide(deviation));
  }
  /// x - logsumexp(x) over `axis`, broadcast back.
  mlir::Value logSoftmax(mlir::Value x, int64_t axis) {
    mlir::Value lse = b.create<LogSumExpOp>(loc, x, axesAttr({axis}));
    mlir::Value wide = b.create<BroadcastOp>(loc, lse, x, axesAttr({axis}));
    return b.create<SubOp>(loc, x, wide);
  }
  mlir::Value crossEntropy(mlir::Value logits, mlir::Value labels,
                           mlir::Value smoothingValue);

  mlir::OpBuilder &b;
  mlir::Location loc;
  /// The model's float type.
  mlir::FloatType elementType;
  const CallExprAST &call;
  int64_t &randomSites;
};

} // namespace

/// (1 - e) * CE + e * mean over the batch of mean over classes of
/// -log_softmax(logits), with e the label smoothing: a number, or a scalar
/// tensor (`smoothingValue`, e.g. a per-model argument).
mlir::Value BuiltinGen::crossEntropy(mlir::Value logits, mlir::Value labels,
                                     mlir::Value smoothingValue) {
  mlir::Value ce = b.create<CrossEntropyOp>(loc, logits, labels);
  // Sema stored either the number (the default included) or the tensor.
  double smoothing =
      smoothingValue
          ? 0.0
          : call.builtinOptions.find("label_smoothing")->second.floatValue;
  if (!smoothingValue && smoothing == 0.0)
    return ce;
  int64_t classAxis = rank(logits) - 1;
  mlir::Value uniform =
      b.create<NegOp>(loc, mean(logSoftmax(logits, classAxis), {classAxis}));
  mlir::Value perBatch = mean(uniform, {0});
  mlir::Value keep, weight;
  if (smoothingValue) {
    weight = smoothingValue;
    keep = b.create<SubOp>(loc, scalar(1.0), smoothingValue);
  } else {
    weight = scalar(smoothing);
    keep = scalar(1.0 - smoothing);
  }
  mlir::Value kept = b.create<MulOp>(loc, keep, ce);
  mlir::Value smoothed = b.create<MulOp>(loc, weight, perBatch);
  return b.create<AddOp>(loc, kept, smoothed);
}

mlir::Value
BuiltinGen::gen(llvm::ArrayRef<mlir::Value> args,
                const llvm::StringMap<mlir::Value> &tensorOptions) {
  llvm::StringRef name = call.getCallee();
  mlir::Value x = args[0];
  if (name == "relu")
    return b.create<ReluOp>(loc, x);
  if (name == "tanh")
    return b.create<TanhOp>(loc, x);
  if (name == "sigmoid")
    return b.create<SigmoidOp>(loc, x);
  if (name == "silu")
    return b.create<SiluOp>(loc, x);
  if (name == "gelu")
    return b.create<GeluOp>(loc, x);
  if (name == "exp")
    return b.create<ExpOp>(loc, x);
  if (name == "log")
    return b.create<LogOp>(loc, x);
  if (name == "softplus")
    return b.create<SoftplusOp>(loc, x);
  if (name == "sqrt")
    return b.create<SqrtOp>(loc, x);
  if (name == "dropout" || name == "dropout2d") {
    // The evaluation form; mbt-autodiff keys the train step's copy. A
    // dropout2d draws once per channel: the plane [H, W] shares it.
    mlir::Value rate = tensorOptions.lookup("rate");
    if (!rate)
      rate = scalar(call.builtinOptions.find("rate")->second.floatValue);
    return b.create<DropoutOp>(loc, x.getType(), x, rate, mlir::ValueRange{},
                               b.getI64IntegerAttr(randomSites++),
                               b.getI64IntegerAttr(name == "dropout2d" ? 2 : 0));
  }
  if (name == "batch_norm") {
    // The evaluation form, with the running statistics (buffers);
    // mbt-autodiff turns the train step's copy into the training form.
    auto option = [&](llvm::StringRef key) {
      return b.getF64FloatAttr(call.builtinOptions.find(key)->second.floatValue);
    };
    return b.create<BatchNormOp>(loc, x.getType(), x, args[1], args[2],
                                 option("eps"), option("momentum"));
  }
  if (name == "conv2d") {
    auto pair = [&](llvm::StringRef key) {
      int64_t v = call.builtinOptions.find(key)->second.intValue;
      return b.getDenseI64ArrayAttr({v, v});
    };
    return b.create<Conv2dOp>(
        loc, args[0], args[1], pair("stride"), pair("padding"),
        pair("dilation"),
        b.getI64IntegerAttr(call.builtinOptions.find("groups")->second.intValue));
  }
  if (name == "max_pool2d" || name == "avg_pool2d") {
    int64_t kernel = call.builtinOptions.find("kernel")->second.intValue;
    auto strideIt = call.builtinOptions.find("stride");
    int64_t stride = strideIt == call.builtinOptions.end()
                         ? kernel
                         : strideIt->second.intValue;
    int64_t padding = call.builtinOptions.find("padding")->second.intValue;
    auto k = b.getDenseI64ArrayAttr({kernel, kernel});
    auto st = b.getDenseI64ArrayAttr({stride, stride});
    auto pad = b.getDenseI64ArrayAttr({padding, padding});
    if (name == "max_pool2d")
      return b.create<MaxPool2dOp>(loc, x, k, st, pad).getResult();
    return b.create<AvgPool2dOp>(loc, x, k, st, pad);
  }
  if (name == "transpose") {
    llvm::SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank(x); ++d)
      perm.push_back(d);
    std::swap(perm[perm.size() - 2], perm.back());
    return b.create<TransposeOp>(loc, x, axesAttr(perm));
  }
  if (name == "concat")
    return b.create<ConcatOp>(loc, args[0], args[1], irAxis());
  if (name == "slice") {
    auto option = [&](llvm::StringRef key) {
      return call.builtinOptions.find(key)->second.intValue;
    };
    return b.create<SliceOp>(loc, x, irAxis(), option("start"), option("end"));
  }
  if (name == "flatten" || name == "reshape") {
    // The batch dimension, if any, stays in front.
    llvm::SmallVector<int64_t> shape;
    if (call.builtinArgs[0]->type.batched)
      shape.push_back(
          llvm::cast<mlir::RankedTensorType>(x.getType()).getDimSize(0));
    shape.append(call.builtinShape.begin(), call.builtinShape.end());
    return b.create<ReshapeOp>(
        loc, mlir::RankedTensorType::get(shape, elementType), x);
  }
  if (name == "sum")
    return b.create<ReduceSumOp>(loc, x, axesAttr(reductionAxes(x)));
  if (name == "mean")
    return mean(x, reductionAxes(x));
  if (name == "max")
    return b.create<ReduceMaxOp>(loc, x, axesAttr(reductionAxes(x)));
  if (name == "logsumexp")
    return b.create<LogSumExpOp>(loc, x, axesAttr({irAxis()}));
  if (name == "log_softmax")
    return logSoftmax(x, irAxis());
  if (name == "softmax")
    return b.create<ExpOp>(loc, logSoftmax(x, irAxis()));
  if (name == "one_hot")
    return b.create<OneHotOp>(loc, x, call.builtinArgs[0]->type.numClasses,
                              mlir::TypeAttr::get(elementType));
  if (name == "attention") {
    int64_t heads = call.builtinOptions.find("heads")->second.intValue;
    bool causal = call.builtinOptions.find("causal")->second.boolValue;
    return b.create<AttentionOp>(loc, x.getType(), x, args[1], args[2],
                                 args[3], b.getI64IntegerAttr(heads),
                                 b.getBoolAttr(causal),
                                 /*format=*/mlir::TypeAttr());
  }
  if (name == "gru_scan" || name == "lstm_scan") {
    // [B, T, GH] projections, [H, GH] weight: [B, T, H] states (and, for
    // an LSTM, cells, which only its gradient reads).
    auto inputs = llvm::cast<mlir::RankedTensorType>(x.getType());
    auto weight = llvm::cast<mlir::RankedTensorType>(args[1].getType());
    llvm::SmallVector<int64_t> shape(inputs.getShape());
    shape.back() = weight.getDimSize(0);
    auto states = mlir::RankedTensorType::get(shape, inputs.getElementType());
    if (name == "lstm_scan")
      return b.create<LstmOp>(loc, states, states, x, args[1], args[2],
                              args[3])
          .getStates();
    return b.create<GruOp>(loc, states, x, args[1], args[2], args[3]);
  }
  if (name == "position_embedding") {
    // Row t of the table for position t: [B, T] positions, [B, T, D].
    mlir::Value positions = b.create<PositionsOp>(loc, x.getType(), x);
    auto table = llvm::cast<mlir::RankedTensorType>(args[1].getType());
    auto tokens = llvm::cast<mlir::RankedTensorType>(x.getType());
    llvm::SmallVector<int64_t> shape(tokens.getShape());
    shape.push_back(table.getDimSize(1));
    return b.create<EmbeddingOp>(
        loc, mlir::RankedTensorType::get(shape, table.getElementType()),
        args[1], positions);
  }
  if (name == "normalize")
    return normalize(x, call.builtinOptions.find("eps")->second.floatValue);
  if (name == "masked_mean") {
    // [B, T, D] rows, [B, T] tokens: [B, D].
    auto rows = llvm::cast<mlir::RankedTensorType>(x.getType());
    llvm::SmallVector<int64_t> shape(rows.getShape().drop_back(2));
    shape.push_back(rows.getShape().back());
    return b.create<MaskedMeanOp>(
        loc, mlir::RankedTensorType::get(shape, rows.getElementType()), x,
        args[1]);
  }
  if (name == "embedding") {
    // Indices [B] or [B, T] pick rows of the [V, D] table: [B, (T,) D].
    auto table = llvm::cast<mlir::RankedTensorType>(args[1].getType());
    auto indices = llvm::cast<mlir::RankedTensorType>(x.getType());
    llvm::SmallVector<int64_t> shape(indices.getShape());
    shape.push_back(table.getDimSize(1));
    return b.create<EmbeddingOp>(
        loc, mlir::RankedTensorType::get(shape, table.getElementType()),
        args[1], x);
  }
  // Next-token targets [B, T] (Sema allowed no smoothing and k = 1 only).
  if (rank(args[1]) == 2) {
    auto scalarType = mlir::RankedTensorType::get({}, elementType);
    if (name == "cross_entropy")
      return b.create<TokenCrossEntropyOp>(loc, scalarType, args[0], args[1]);
    return b.create<TokenAccuracyOp>(loc, scalarType, args[0], args[1]);
  }
  if (name == "cross_entropy")
    return crossEntropy(args[0], args[1],
                        tensorOptions.lookup("label_smoothing"));
  assert(name == "accuracy" && "unchecked call in MLIRGen");
  int64_t k = call.builtinOptions.find("k")->second.intValue;
  auto op = b.create<AccuracyOp>(loc, args[0], args[1]);
  if (k != 1)
    op.setTopK(k);
  return op;
}

mlir::Value
mbt::genBuiltinCall(mlir::OpBuilder &builder, mlir::Location loc,
                    mlir::FloatType elementType, const CallExprAST &call,
                    llvm::ArrayRef<mlir::Value> args,
                    const llvm::StringMap<mlir::Value> &tensorOptions,
                    int64_t &randomSites) {
  return BuiltinGen(builder, loc, elementType, call, randomSites)
      .gen(args, tensorOptions);
}
