//===- OptimizerOps.cpp - update rules and the ops that name them ---------===//
//
// mbt.optimizer holds an update rule in two regions (per-model scalars in
// double, then per element in float); mbt.update, mbt.fused_update and
// mbt.sweep name one. Their verifiers check that the rule exists and that
// the number of state slots and hyperparameters agree with it.
//
//===----------------------------------------------------------------------===//
#include "dialects/MBT/IR/MBTOps.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::mbt;

int OptimizerOp::getHyperIndex(StringRef name) {
  for (auto [i, h] : llvm::enumerate(getHyper()))
    if (cast<StringAttr>(h).getValue() == name)
      return static_cast<int>(i);
  return -1;
}

LogicalResult OptimizerOp::verify() {
  Block &scalars = getScalars().front();
  Block &elements = getElements().front();
  unsigned numHyper = getNumHyper(), numSlots = getNumSlots();
  Type f64 = Float64Type::get(getContext());
  Type i1 = IntegerType::get(getContext(), 1);
  llvm::StringSet<> names;
  for (Attribute a : getHyper())
    if (!names.insert(cast<StringAttr>(a).getValue()).second)
      return emitOpError("hyperparameter '")
             << cast<StringAttr>(a).getValue() << "' is named twice";
  if (scalars.getNumArguments() != numHyper + 1)
    return emitOpError("scalars region takes the ")
           << numHyper << " hyperparameters and the step, got "
           << scalars.getNumArguments() << " arguments";
  for (Type t : scalars.getArgumentTypes())
    if (t != f64)
      return emitOpError("scalars region arguments must be f64, got ") << t;
  // The element type is the float type the rule updates (the model's); the
  // scalars it yields are rounded to it where they meet the elements.
  if (elements.getNumArguments() < 2)
    return emitOpError("elements region takes grad, param, the state slots ")
           << "and the yielded scalars, got " << elements.getNumArguments()
           << " arguments";
  Type element = getElementType();
  if (!isa<Float32Type, Float64Type>(element))
    return emitOpError("elements region argument 0 must be f32 or f64, got ")
           << element;
  TypeRange scalarTypes = getScalarsYield()->getOperandTypes();
  for (Type t : scalarTypes)
    if (t != element && t != i1)
      return emitOpError("scalars region must yield ")
             << element << " or i1 values, got " << t;
  unsigned expected = 2 + numSlots + scalarTypes.size();
  if (elements.getNumArguments() != expected)
    return emitOpError("elements region takes grad, param, ")
           << numSlots << " state slots and the " << scalarTypes.size()
           << " yielded scalars, got " << elements.getNumArguments()
           << " arguments";
  for (unsigned i = 0; i < 2 + numSlots; ++i)
    if (elements.getArgument(i).getType() != element)
      return emitOpError("elements region argument ")
             << i << " must be " << element << ", got "
             << elements.getArgument(i).getType();
  for (auto [i, t] : llvm::enumerate(scalarTypes))
    if (elements.getArgument(2 + numSlots + i).getType() != t)
      return emitOpError("elements region argument ")
             << 2 + numSlots + i << " must have the yielded scalar's type "
             << t;
  Operation *yield = elements.getTerminator();
  if (yield->getNumOperands() != 1 + numSlots ||
      llvm::any_of(yield->getOperandTypes(),
                   [&](Type t) { return t != element; }))
    return emitOpError("elements region must yield the new parameter and ")
           << numSlots << " state slots (" << element << ")";
  for (Region *region : {&getScalars(), &getElements()}) {
    WalkResult walk = region->walk([&](Operation *op) {
      if (isMemoryEffectFree(op))
        return WalkResult::advance();
      op->emitOpError("has side effects, but an update rule may only compute");
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  return success();
}

/// Looks up the rule `rule` named by `user` and checks its counts.
static FailureOr<OptimizerOp> lookupRule(Operation *user,
                                         FlatSymbolRefAttr rule,
                                         SymbolTableCollection &symbols) {
  auto optimizer =
      symbols.lookupNearestSymbolFrom<OptimizerOp>(user, rule.getAttr());
  if (!optimizer)
    return user->emitOpError("names the optimizer ")
           << rule << ", which is not an mbt.optimizer of the module";
  return optimizer;
}

static LogicalResult checkCounts(Operation *user, OptimizerOp rule,
                                 int64_t numSlots, RankedTensorType hyper,
                                 Type paramType) {
  Type element = getElementTypeOrSelf(paramType);
  if (rule.getElementType() != element)
    return user->emitOpError("rule '")
           << rule.getSymName() << "' updates " << rule.getElementType()
           << " elements, got parameters of " << element;
  if (rule.getNumSlots() != numSlots)
    return user->emitOpError("rule '")
           << rule.getSymName() << "' has " << rule.getNumSlots()
           << " state slots, got " << numSlots;
  if (hyper.getDimSize(hyper.getRank() - 1) != rule.getNumHyper())
    return user->emitOpError("rule '")
           << rule.getSymName() << "' takes " << rule.getNumHyper()
           << " hyperparameters, got hyper of size "
           << hyper.getDimSize(hyper.getRank() - 1);
  return success();
}

LogicalResult UpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<OptimizerOp> rule = lookupRule(*this, getRuleAttr(), symbols);
  if (failed(rule))
    return failure();
  return checkCounts(*this, *rule, getState().size(), getHyper().getType(),
                     getParam().getType());
}

LogicalResult FusedUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<OptimizerOp> rule = lookupRule(*this, getRuleAttr(), symbols);
  if (failed(rule))
    return failure();
  if (getDecayMask() && rule->getHyperIndex("weight_decay") < 0)
    return emitOpError("has a decay_mask, but rule '")
           << rule->getSymName() << "' has no weight_decay hyperparameter";
  return checkCounts(*this, *rule, getState().size(), getHyper().getType(),
                     getParams().getType());
}

LogicalResult SweepOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<OptimizerOp> rule = lookupRule(*this, getOptimizerAttr(), symbols);
  if (failed(rule))
    return failure();
  if (getHyperNames() != rule->getHyper())
    return emitOpError("hyper_names must be the hyperparameters of '")
           << rule->getSymName() << "' in order: " << rule->getHyper();
  if (getNoDecay() && rule->getHyperIndex("weight_decay") < 0)
    return emitOpError("has no_decay, but optimizer '")
           << rule->getSymName() << "' has no weight_decay hyperparameter";
  if (getSchedule() && rule->getHyperIndex("lr") < 0)
    return emitOpError("has a schedule, but optimizer '")
           << rule->getSymName() << "' has no lr hyperparameter";
  // Mixed precision rounds f32 values: the model computes in f32.
  if (getPrecision() && !rule->getElementType().isF32())
    return emitOpError("precision ")
           << stringifyPrecision(*getPrecision()) << " needs an f32 model, got "
           << rule->getElementType();
  return success();
}
