//===- RecurrentBuilder.h - the recurrent lowering --------------*- C++ -*-===//
//
// What mbt.gru and mbt.lstm (and their adjoints) lower with: the shapes of
// a layer whose projections hold `gates` gates of H columns each
// ([P..., B, T, gates H], P the model dimensions, none or one), slices at
// one position, the (batch) matmuls of a step, and the gates as views of
// their columns. Views rather than offset indexing maps: linalg takes a
// loop's range from the first operand indexed by that loop alone, which
// would be the whole gates x H columns.
//
//===----------------------------------------------------------------------===//
#ifndef MBT_COMPILER_CONVERSION_MBTTOLINALG_RECURRENTBUILDER_H
#define MBT_COMPILER_CONVERSION_MBTTOLINALG_RECURRENTBUILDER_H

#include "compiler/Conversion/MBTToLinalg/LinalgBuilders.h"

namespace mlir::mbt {

class RecurrentBuilder {
public:
  /// `inputs` [P..., B, T, gates H], `weight` [P..., H, gates H].
  RecurrentBuilder(OpBuilder &b, Location loc, Value inputs, Value weight,
                   int64_t gates);

  /// [P..., B, width] of the element type, and its sizes for tensor.empty.
  RankedTensorType rowsType(int64_t width);
  SmallVector<std::pair<Value, int64_t>> rowsSources();
  /// A zero-filled tensor of `type`.
  Value zeros(RankedTensorType type,
              ArrayRef<std::pair<Value, int64_t>> sources);
  /// A zero-filled tensor of the type and sizes of `like`.
  Value zerosLike(Value like);
  /// What an adjoint scan starts from: the inputs' adjoint (empty, each
  /// position written once), the weight's and the bias's (zeros, summed
  /// over the positions).
  SmallVector<Value> adjointInits(Value weight, Value bias);

  /// `body` run on `inputs` into `outputs` (the results' initial values),
  /// or, `enabled` and with a model dim P, once per model, inside an
  /// scf.forall over P that every input and output has: `body` then gets
  /// each one's slice at the model (its model dim of size 1) and returns
  /// that model's results, which the forall inserts at the model's index.
  /// The forall becomes the OpenMP loop over the models, so each thread
  /// runs its models' whole scans; over all models at once, a scan's loop
  /// over the positions runs on one thread, its ops too small to share. A
  /// model's numbers are the same either way (its products are the same
  /// GEMMs).
  SmallVector<Value>
  perModel(ValueRange inputs, ValueRange outputs, bool enabled,
           function_ref<SmallVector<Value>(ValueRange, ValueRange)> body);

  /// An empty [P..., B, T, H] tensor of `type` (the states' shape).
  Value emptyPositions(RankedTensorType type);
  /// The slice of `v` ([P..., B, T, ...]) at position t, without the
  /// position dimension; `dest` with `slice` put at position t.
  Value at(Value v, Value t);
  Value put(Value slice, Value dest, Value t);
  /// The slice of `all` at position t - 1, or `none` at t = 0.
  Value previous(Value all, Value t, Value none);

  /// An scf.for over the positions, t = 0 .. T - 1 or, `backward`,
  /// T - 1 .. 0, carrying `inits`; `body(t, carried)` builds a step at the
  /// builder's point and returns what it yields. Returns the loop's
  /// results.
  ValueRange loop(ValueRange inits, bool backward,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body);

  /// init + h [P..., B, H] @ weight [P..., H, gates H], or with
  /// `transposeWeight` init + g [P..., B, gates H] @ weight^T.
  Value matmul(Value lhs, Value weight, Value init, bool transposeWeight);
  /// init + h^T g: h [P..., B, H], g [P..., B, gates H] -> [P..., H, gates H].
  Value weightGradient(Value h, Value g, Value init);
  /// init + g summed over the batch: g [P..., B, gates H] -> [P..., gates H].
  Value biasGradient(Value g, Value init);

  /// The gates of a [..., k H] value, views of their H columns (k of them:
  /// `gates`, or more for what a forward pass keeps).
  SmallVector<Value> gatesOf(Value v);
  /// [P..., B, gates H] from one [P..., B, H] value per gate, inserted into
  /// `into` (a new tensor if null). Parts an op wrote into `into`'s gate
  /// views (gatesOf) are inserted where they are: in place, no copy.
  Value concat(ArrayRef<Value> parts, Value into = {});
  /// The gates of the input projections, of h W_hh and of the bias (3 x
  /// gates operands), and their maps over the (P..., B, j) loops.
  SmallVector<Value> gateOperands(Value gx, Value gh, Value bias);
  SmallVector<AffineMap> gateMaps();

  /// Maps of the (P..., B, j) loops: a [P..., B, H] row, a [P..., H] bias
  /// gate, the tokens' [P..., B].
  AffineMap row();
  AffineMap biasRow();
  AffineMap token();

  /// Whether a token id (i32) is real, not the pad token 0.
  static Value isReal(OpBuilder &nb, Location l, Value token);
  static Value sigmoid(OpBuilder &nb, Location l, Value x);
  Value constant(OpBuilder &nb, Location l, double v) {
    return floatConstant(nb, l, element, v);
  }

  OpBuilder &b;
  Location loc;
  Value inputs;
  int64_t gates, p = 0, hidden = 0;
  FloatType element;

private:
  SmallVector<AffineExpr> leading(int64_t count);
  void sliceAt(Value v, Value t, SmallVectorImpl<OpFoldResult> &offsets,
               SmallVectorImpl<OpFoldResult> &sizes,
               SmallVectorImpl<OpFoldResult> &strides);
};

} // namespace mlir::mbt

#endif // MBT_COMPILER_CONVERSION_MBTTOLINALG_RECURRENTBUILDER_H
