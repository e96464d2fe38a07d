//===- MBTAttributes.cpp - the mbt dialect's attributes -------------------===//
#include "dialects/MBT/IR/InitRules.h"
#include "dialects/MBT/IR/MBTDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mbt;

#include "dialects/MBT/IR/MBTEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/MBT/IR/MBTAttributes.cpp.inc"

void MBTDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/MBT/IR/MBTAttributes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// InitAttr: #mbt.init<kind, name = value, ...>
//===----------------------------------------------------------------------===//

Attribute InitAttr::parse(AsmParser &parser, Type) {
  llvm::SMLoc kindLoc = parser.getCurrentLocation();
  std::string spelling;
  if (parser.parseLess() || parser.parseKeywordOrString(&spelling))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(spelling);
  if (!kind) {
    auto diag = parser.emitError(kindLoc, "unknown initializer '")
                << spelling << "' (expected one of: ";
    llvm::interleaveComma(allInitRules(), diag,
                          [&](const InitRule &rule) { diag << rule.name(); });
    diag << ")";
    return {};
  }
  const InitRule &rule = getInitRule(*kind);
  llvm::SmallVector<double, 2> args;
  for (llvm::StringLiteral param : rule.params) {
    if (failed(parser.parseOptionalComma())) {
      parser.emitError(parser.getCurrentLocation(), "initializer '")
          << rule.name() << "' needs '" << param << "'";
      return {};
    }
    double value;
    if (parser.parseKeyword(param) || parser.parseEqual() ||
        parser.parseFloat(value))
      return {};
    args.push_back(value);
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<InitAttr>(
      parser.getContext(), *kind,
      DenseF64ArrayAttr::get(parser.getContext(), args));
}

void InitAttr::print(AsmPrinter &printer) const {
  printer << '<' << stringifyInitKind(getKind());
  for (auto [param, value] :
       llvm::zip_equal(getInitRule(getKind()).params, getArgs().asArrayRef())) {
    printer << ", " << param << " = ";
    printer.printFloat(llvm::APFloat(value));
  }
  printer << '>';
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitKind kind, DenseF64ArrayAttr argsAttr) {
  if (!argsAttr)
    return emitError() << "an initializer needs its arguments (an array)";
  ArrayRef<double> args = argsAttr.asArrayRef();
  const InitRule &rule = getInitRule(kind);
  if (args.size() != rule.params.size())
    return emitError() << "initializer '" << rule.name() << "' takes "
                       << rule.params.size() << " arguments, got "
                       << args.size();
  if (llvm::any_of(args, [](double v) { return !std::isfinite(v); }))
    return emitError() << "the arguments of initializer '" << rule.name()
                       << "' must be finite";
  if (kind == InitKind::normal && args[1] < 0)
    return emitError() << "the std of initializer 'normal' must be "
                          "non-negative";
  if (kind == InitKind::uniform && args[0] > args[1])
    return emitError() << "initializer 'uniform' needs low <= high";
  return success();
}

double InitAttr::getArg(llvm::StringRef name) const {
  for (auto [param, value] :
       llvm::zip_equal(getInitRule(getKind()).params, getArgs().asArrayRef()))
    if (param == name)
      return value;
  llvm_unreachable("not an argument of this initializer");
}
