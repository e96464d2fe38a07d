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

#include "llvm/Support/ErrorHandling.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mbt;
using namespace mlir::mbt;

namespace {

class BuiltinGen {
public:
  BuiltinGen(mlir::OpBuilder &b, mlir::Location loc,
             mlir::FloatType elementType, const CallExprAST &call,
             const llvm::StringMap<mlir::Value> &tensorOptions,
             int64_t &randomSites)
      : b(b), loc(loc), elementType(elementType), call(call),
        tensorOptions(tensorOptions), randomSites(randomSites) {}

  /// Emits the call's builtin (its GEN in Builtins.def).
  mlir::Value gen(llvm::ArrayRef<mlir::Value> args);
  /// The per-step statistics of rmse or r2 (genSplitMetricColumns).
  llvm::SmallVector<mlir::Value> splitMetricColumns(mlir::Value prediction,
                                                    mlir::Value expected);

private:
  using Args = llvm::ArrayRef<mlir::Value>;
  // The IR of each builtin, one per GEN of Builtins.def.
  mlir::Value matmul(Args args) { return genMatmul(b, loc, args[0], args[1]); }
  template <typename OpTy> mlir::Value unary(Args args) {
    return b.create<OpTy>(loc, args[0]);
  }
  mlir::Value normalize(Args args) {
    return normalize(args[0],
                     call.builtinOptions.find("eps")->second.floatValue);
  }
  mlir::Value dropout(Args args);
  mlir::Value batchNorm(Args args);
  mlir::Value conv2d(Args args);
  mlir::Value pool2d(Args args);
  mlir::Value transpose(Args args);
  mlir::Value concat(Args args) {
    return b.create<ConcatOp>(loc, args[0], args[1], irAxis());
  }
  mlir::Value slice(Args args);
  mlir::Value reshape(Args args);
  mlir::Value sum(Args args) {
    return b.create<ReduceSumOp>(loc, args[0],
                                 axesAttr(reductionAxes(args[0])));
  }
  mlir::Value mean(Args args) { return mean(args[0], reductionAxes(args[0])); }
  mlir::Value max(Args args) {
    return b.create<ReduceMaxOp>(loc, args[0],
                                 axesAttr(reductionAxes(args[0])));
  }
  mlir::Value logSumExp(Args args) {
    return b.create<LogSumExpOp>(loc, args[0], axesAttr({irAxis()}));
  }
  mlir::Value logSoftmax(Args args) { return logSoftmax(args[0], irAxis()); }
  mlir::Value softmax(Args args) {
    return b.create<ExpOp>(loc, logSoftmax(args[0], irAxis()));
  }
  mlir::Value oneHot(Args args) {
    return b.create<OneHotOp>(loc, args[0],
                              call.builtinArgs[0]->type.numClasses,
                              mlir::TypeAttr::get(elementType));
  }
  mlir::Value embedding(Args args);
  mlir::Value maskedMean(Args args);
  mlir::Value attention(Args args);
  mlir::Value positionEmbedding(Args args);
  mlir::Value recurrentScan(Args args);
  mlir::Value crossEntropy(Args args);
  mlir::Value accuracy(Args args);
  mlir::Value splitMetric(Args) {
    llvm_unreachable("rmse and r2 give several results: "
                     "genSplitMetricColumns generates them");
  }

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
  /// The values of the call's options given as tensors.
  const llvm::StringMap<mlir::Value> &tensorOptions;
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

mlir::Value BuiltinGen::gen(Args args) {
  switch (call.builtin) {
#define BUILTIN(ID, SPELLING, TENSORS, OPTIONS, ARGS, CHECK, GEN)              \
  case BuiltinID::ID:                                                          \
    return GEN(args);
#include "compiler/Frontend/Builtins.def"
  case BuiltinID::None:
    break;
  }
  llvm_unreachable("unchecked call in MLIRGen");
}

/// The evaluation form; mbt-autodiff keys the train step's copy. A
/// dropout2d draws once per channel: the plane [H, W] shares it.
mlir::Value BuiltinGen::dropout(Args args) {
  mlir::Value x = args[0];
  mlir::Value rate = tensorOptions.lookup("rate");
  if (!rate)
    rate = scalar(call.builtinOptions.find("rate")->second.floatValue);
  bool channels = call.builtin == BuiltinID::Dropout2d;
  return b.create<DropoutOp>(loc, x.getType(), x, rate, mlir::ValueRange{},
                             b.getI64IntegerAttr(randomSites++),
                             b.getI64IntegerAttr(channels ? 2 : 0));
}

/// The evaluation form, with the running statistics (buffers);
/// mbt-autodiff turns the train step's copy into the training form.
mlir::Value BuiltinGen::batchNorm(Args args) {
  auto option = [&](llvm::StringRef key) {
    return b.getF64FloatAttr(call.builtinOptions.find(key)->second.floatValue);
  };
  return b.create<BatchNormOp>(loc, args[0].getType(), args[0], args[1],
                               args[2], option("eps"), option("momentum"));
}

mlir::Value BuiltinGen::conv2d(Args args) {
  auto pair = [&](llvm::StringRef key) {
    int64_t v = call.builtinOptions.find(key)->second.intValue;
    return b.getDenseI64ArrayAttr({v, v});
  };
  return b.create<Conv2dOp>(
      loc, args[0], args[1], pair("stride"), pair("padding"), pair("dilation"),
      b.getI64IntegerAttr(call.builtinOptions.find("groups")->second.intValue));
}

/// max_pool2d / avg_pool2d: the stride is the kernel's unless given.
mlir::Value BuiltinGen::pool2d(Args args) {
  int64_t kernel = call.builtinOptions.find("kernel")->second.intValue;
  auto strideIt = call.builtinOptions.find("stride");
  int64_t stride = strideIt == call.builtinOptions.end()
                       ? kernel
                       : strideIt->second.intValue;
  int64_t padding = call.builtinOptions.find("padding")->second.intValue;
  auto k = b.getDenseI64ArrayAttr({kernel, kernel});
  auto st = b.getDenseI64ArrayAttr({stride, stride});
  auto pad = b.getDenseI64ArrayAttr({padding, padding});
  if (call.builtin == BuiltinID::MaxPool2d)
    return b.create<MaxPool2dOp>(loc, args[0], k, st, pad).getResult();
  return b.create<AvgPool2dOp>(loc, args[0], k, st, pad);
}

mlir::Value BuiltinGen::transpose(Args args) {
  llvm::SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank(args[0]); ++d)
    perm.push_back(d);
  std::swap(perm[perm.size() - 2], perm.back());
  return b.create<TransposeOp>(loc, args[0], axesAttr(perm));
}

mlir::Value BuiltinGen::slice(Args args) {
  auto option = [&](llvm::StringRef key) {
    return call.builtinOptions.find(key)->second.intValue;
  };
  return b.create<SliceOp>(loc, args[0], irAxis(), option("start"),
                           option("end"));
}

/// flatten and reshape: the batch dimension, if any, stays in front.
mlir::Value BuiltinGen::reshape(Args args) {
  mlir::Value x = args[0];
  llvm::SmallVector<int64_t> shape;
  if (call.builtinArgs[0]->type.batched)
    shape.push_back(
        llvm::cast<mlir::RankedTensorType>(x.getType()).getDimSize(0));
  shape.append(call.builtinShape.begin(), call.builtinShape.end());
  return b.create<ReshapeOp>(
      loc, mlir::RankedTensorType::get(shape, elementType), x);
}

mlir::Value BuiltinGen::attention(Args args) {
  int64_t heads = call.builtinOptions.find("heads")->second.intValue;
  bool causal = call.builtinOptions.find("causal")->second.boolValue;
  return b.create<AttentionOp>(loc, args[0].getType(), args[0], args[1],
                               args[2], args[3], b.getI64IntegerAttr(heads),
                               b.getBoolAttr(causal),
                               /*format=*/mlir::TypeAttr());
}

/// gru_scan / lstm_scan: [B, T, GH] projections, [H, GH] weight: [B, T, H]
/// states (and gates, for an LSTM also cells, which only the gradient
/// reads).
mlir::Value BuiltinGen::recurrentScan(Args args) {
  auto inputs = llvm::cast<mlir::RankedTensorType>(args[0].getType());
  auto weight = llvm::cast<mlir::RankedTensorType>(args[1].getType());
  llvm::SmallVector<int64_t> shape(inputs.getShape());
  shape.back() = weight.getDimSize(0);
  auto states = mlir::RankedTensorType::get(shape, inputs.getElementType());
  if (call.builtin == BuiltinID::LstmScan)
    return b
        .create<LstmOp>(loc, states, states, inputs, args[0], args[1], args[2],
                        args[3])
        .getStates();
  shape.back() = 4 * weight.getDimSize(0);
  auto gates = mlir::RankedTensorType::get(shape, inputs.getElementType());
  return b.create<GruOp>(loc, states, gates, args[0], args[1], args[2], args[3])
      .getStates();
}

/// Row t of the table for position t: [B, T] positions, [B, T, D].
mlir::Value BuiltinGen::positionEmbedding(Args args) {
  mlir::Value x = args[0];
  mlir::Value positions = b.create<PositionsOp>(loc, x.getType(), x);
  auto table = llvm::cast<mlir::RankedTensorType>(args[1].getType());
  auto tokens = llvm::cast<mlir::RankedTensorType>(x.getType());
  llvm::SmallVector<int64_t> shape(tokens.getShape());
  shape.push_back(table.getDimSize(1));
  return b.create<EmbeddingOp>(
      loc, mlir::RankedTensorType::get(shape, table.getElementType()), args[1],
      positions);
}

/// [B, T, D] rows, [B, T] tokens: [B, D].
mlir::Value BuiltinGen::maskedMean(Args args) {
  auto rows = llvm::cast<mlir::RankedTensorType>(args[0].getType());
  llvm::SmallVector<int64_t> shape(rows.getShape().drop_back(2));
  shape.push_back(rows.getShape().back());
  return b.create<MaskedMeanOp>(
      loc, mlir::RankedTensorType::get(shape, rows.getElementType()), args[0],
      args[1]);
}

/// Indices [B] or [B, T] pick rows of the [V, D] table: [B, (T,) D].
mlir::Value BuiltinGen::embedding(Args args) {
  auto table = llvm::cast<mlir::RankedTensorType>(args[1].getType());
  auto indices = llvm::cast<mlir::RankedTensorType>(args[0].getType());
  llvm::SmallVector<int64_t> shape(indices.getShape());
  shape.push_back(table.getDimSize(1));
  return b.create<EmbeddingOp>(
      loc, mlir::RankedTensorType::get(shape, table.getElementType()), args[1],
      args[0]);
}

/// Next-token targets [B, T] take the token forms (Sema allowed no
/// smoothing and k = 1 only).
mlir::Value BuiltinGen::crossEntropy(Args args) {
  if (rank(args[1]) == 2)
    return b.create<TokenCrossEntropyOp>(
        loc, mlir::RankedTensorType::get({}, elementType), args[0], args[1]);
  return crossEntropy(args[0], args[1],
                      tensorOptions.lookup("label_smoothing"));
}

mlir::Value BuiltinGen::accuracy(Args args) {
  if (rank(args[1]) == 2)
    return b.create<TokenAccuracyOp>(
        loc, mlir::RankedTensorType::get({}, elementType), args[0], args[1]);
  int64_t k = call.builtinOptions.find("k")->second.intValue;
  auto op = b.create<AccuracyOp>(loc, args[0], args[1]);
  if (k != 1)
    op.setTopK(k);
  return op;
}

/// [B, K] x [K, N] and [M, K] x [K, N] map to mbt.matmul directly; a vector
/// [K] that is not batched becomes [1, K] and the result [N] again; a
/// sequence [B, T, K] becomes B * T rows [B * T, K] and the result
/// [B, T, N] again (one matrix product for every position).
mlir::Value mbt::genMatmul(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value lhs, mlir::Value rhs) {
  auto lhsType = llvm::cast<mlir::RankedTensorType>(lhs.getType());
  auto rhsType = llvm::cast<mlir::RankedTensorType>(rhs.getType());
  auto like = [](mlir::Value value, llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(
        shape, llvm::cast<mlir::ShapedType>(value.getType()).getElementType());
  };
  if (lhsType.getRank() == 3 && rhsType.getRank() == 2) {
    llvm::SmallVector<int64_t> rowsShape{mlir::ShapedType::kDynamic,
                                         lhsType.getDimSize(2)};
    mlir::Value rows = b.create<MergeRowsOp>(loc, like(lhs, rowsShape), lhs);
    mlir::Value product = b.create<MatmulOp>(loc, rows, rhs);
    llvm::SmallVector<int64_t> shape(lhsType.getShape().drop_back());
    shape.push_back(rhsType.getDimSize(1));
    return b.create<SplitRowsOp>(loc, like(product, shape), product, lhs);
  }
  if (lhsType.getRank() != 1)
    return b.create<MatmulOp>(loc, lhs, rhs);
  mlir::Value row =
      b.create<ReshapeOp>(loc, like(lhs, {1, lhsType.getDimSize(0)}), lhs);
  mlir::Value product = b.create<MatmulOp>(loc, row, rhs);
  auto productType = llvm::cast<mlir::RankedTensorType>(product.getType());
  return b.create<ReshapeOp>(
      loc, like(product, productType.getShape().drop_front()), product);
}

/// Column j of per-sample values [B, K] ([B] for one value) as [B, 1].
static mlir::Value column(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value values, int64_t j) {
  auto type = llvm::cast<mlir::RankedTensorType>(values.getType());
  if (type.getRank() == 1)
    return b.create<ReshapeOp>(
        loc,
        mlir::RankedTensorType::get({type.getDimSize(0), 1},
                                    type.getElementType()),
        values);
  return b.create<SliceOp>(loc, values, 1, j, j + 1);
}

/// Means over the step's samples, so that the runtime's sample-weighted
/// means over steps are the split's: the squared error of each column;
/// for r2 also the expected values' mean and their variance about it
/// (about the step's own mean, which keeps it exact in the model's float
/// type; the runtime adds the squared mean back in double).
llvm::SmallVector<mlir::Value>
BuiltinGen::splitMetricColumns(mlir::Value prediction, mlir::Value expected) {
  auto type = llvm::cast<mlir::RankedTensorType>(expected.getType());
  int64_t width = type.getRank() == 1 ? 1 : type.getDimSize(1);
  llvm::SmallVector<int64_t> all{0, 1};
  llvm::SmallVector<mlir::Value> squaredErrors, means, variances;
  mlir::Value error = b.create<SubOp>(loc, prediction, expected);
  for (int64_t j = 0; j < width; ++j) {
    mlir::Value e = column(b, loc, error, j);
    squaredErrors.push_back(mean(b.create<MulOp>(loc, e, e), all));
    if (call.builtin != BuiltinID::R2)
      continue;
    mlir::Value y = column(b, loc, expected, j);
    mlir::Value mu = mean(y, all);
    mlir::Value muRow = b.create<ReshapeOp>(
        loc, mlir::RankedTensorType::get({1, 1}, elementType), mu);
    mlir::Value centered = b.create<SubOp>(loc, y, muRow);
    means.push_back(mu);
    variances.push_back(mean(b.create<MulOp>(loc, centered, centered), all));
  }
  squaredErrors.append(means);
  squaredErrors.append(variances);
  return squaredErrors;
}

llvm::SmallVector<mlir::Value>
mbt::genSplitMetricColumns(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::FloatType elementType, const CallExprAST &call,
                           mlir::Value prediction, mlir::Value expected) {
  llvm::StringMap<mlir::Value> noTensorOptions;
  int64_t noRandomSites = 0;
  return BuiltinGen(builder, loc, elementType, call, noTensorOptions,
                    noRandomSites)
      .splitMetricColumns(prediction, expected);
}

mlir::Value mbt::genBuiltinCall(
    mlir::OpBuilder &builder, mlir::Location loc, mlir::FloatType elementType,
    const CallExprAST &call, llvm::ArrayRef<mlir::Value> args,
    const llvm::StringMap<mlir::Value> &tensorOptions, int64_t &randomSites) {
  return BuiltinGen(builder, loc, elementType, call, tensorOptions, randomSites)
      .gen(args);
}
