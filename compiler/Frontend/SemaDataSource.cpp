//===- SemaDataSource.cpp - the settings of the user's own data files -----===//
//
// `data = npz(...)`, `npy(...)`, `csv(...)`, `image_folder(...)` and
// `safetensors(...)` name files; their settings become the sweep's
// DataSource (common/include/mbt/common/Manifest.h), which the IR carries
// as `data_source` and the manifest as "data.source". Paths are resolved
// against the spec's folder, as imports are, and made absolute, so that
// the artifact finds its data wherever it is run from. A file that is not
// there yet is only a warning: an artifact may be compiled on one host and
// trained on another; the runtime reports it if it is still missing.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/SemaData.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mbt;

namespace {
/// The settings of each kind, before the ones every data set of samples
/// takes. The first is also the first positional argument.
llvm::SmallVector<llvm::StringRef> sourceParams(mlir::mbt::DataSet data) {
  switch (data) {
  case mlir::mbt::DataSet::npz:
  case mlir::mbt::DataSet::safetensors:
    return {"train", "x", "y", "test"};
  case mlir::mbt::DataSet::npy:
    return {"x", "y", "test_x", "test_y"};
  case mlir::mbt::DataSet::csv:
    return {"train",     "target",  "test",    "header",     "skip_rows",
            "delimiter", "columns", "missing", "standardize"};
  case mlir::mbt::DataSet::image_folder:
    return {"train", "test", "mean", "std"};
  default:
    return {};
  }
}

class SourceChecker {
public:
  SourceChecker(mlir::MLIRContext &ctx, SweepEvaluator &eval,
                ::mbt::DataSource &source)
      : ctx(ctx), eval(eval), source(source) {}

  void check(mlir::mbt::DataSet data, llvm::ArrayRef<llvm::StringRef> params,
             llvm::ArrayRef<const ExprAST *> args);
  bool ok = true;

private:
  void set(mlir::mbt::DataSet data, llvm::StringRef param,
           const ExprAST &value);
  std::optional<std::string> text(const ExprAST &value, llvm::StringRef what);
  std::optional<std::string> path(const ExprAST &value, llvm::StringRef what);
  std::optional<std::string> column(const ExprAST &value);
  std::optional<bool> flag(const ExprAST &value, llvm::StringRef what);
  std::optional<std::vector<double>> numbers(const ExprAST &value,
                                             llvm::StringRef what);

  mlir::InFlightDiagnostic error(const Location &loc) {
    ok = false;
    return emitError(ctx, loc);
  }

  mlir::MLIRContext &ctx;
  SweepEvaluator &eval;
  ::mbt::DataSource &source;
};

std::optional<std::string> SourceChecker::text(const ExprAST &value,
                                               llvm::StringRef what) {
  if (const auto *string = llvm::dyn_cast<StringExprAST>(&value))
    return string->getValue().str();
  error(value.loc()) << what << " must be a string";
  return std::nullopt;
}

/// A file or folder: absolute as given, else relative to the spec's
/// folder.
std::optional<std::string> SourceChecker::path(const ExprAST &value,
                                               llvm::StringRef what) {
  std::optional<std::string> given = text(value, what);
  if (!given)
    return std::nullopt;
  std::optional<std::string> resolved =
      resolveSpecPath(ctx, value.loc(), *given, what);
  ok &= resolved.has_value();
  return resolved;
}

/// A CSV column: a header name (a string) or a 0-based index (an integer).
std::optional<std::string> SourceChecker::column(const ExprAST &value) {
  if (llvm::isa<StringExprAST>(value))
    return text(value, "a column");
  auto index = eval.evaluateInteger(value, "a column");
  if (failed(index)) {
    ok = false;
    return std::nullopt;
  }
  if (*index < 0) {
    error(value.loc()) << "a column index must not be negative, got " << *index;
    return std::nullopt;
  }
  return std::to_string(*index);
}

std::optional<bool> SourceChecker::flag(const ExprAST &value,
                                        llvm::StringRef what) {
  const auto *var = llvm::dyn_cast<VariableExprAST>(&value);
  if (!var || (var->getName() != "true" && var->getName() != "false")) {
    error(value.loc()) << what << " must be true or false";
    return std::nullopt;
  }
  return var->getName() == "true";
}

/// One number per channel: a list, or one number for every channel.
std::optional<std::vector<double>>
SourceChecker::numbers(const ExprAST &value, llvm::StringRef what) {
  std::vector<double> result;
  for (const ExprAST *item : listItems(value)) {
    auto number = eval.evaluateNumber(*item, what);
    if (failed(number)) {
      ok = false;
      return std::nullopt;
    }
    result.push_back(number->floatValue);
  }
  return result;
}

void SourceChecker::set(mlir::mbt::DataSet data, llvm::StringRef param,
                        const ExprAST &value) {
  bool npy = data == mlir::mbt::DataSet::npy;
  auto assign = [](std::string &into, std::optional<std::string> v) {
    if (v)
      into = std::move(*v);
  };
  if (param == "train")
    assign(source.train, path(value, "the training file"));
  else if (param == "test")
    assign(source.test, path(value, "the test file"));
  else if (param == "test_x" || param == "test_y")
    assign(param == "test_x" ? source.testX : source.testY,
           path(value,
                param == "test_x" ? "the test inputs" : "the test targets"));
  else if (npy) // x, y: files
    assign(param == "x" ? source.trainX : source.trainY,
           path(value, param == "x" ? "the inputs" : "the targets"));
  else if (param == "x" || param == "y")
    assign(param == "x" ? source.x : source.y,
           text(value, "the name of an array"));
  else if (param == "target")
    assign(source.target, column(value));
  else if (param == "columns") {
    const auto *list = llvm::dyn_cast<ListExprAST>(&value);
    if (!list || list->getElements().empty()) {
      error(value.loc()) << "columns must be a list of column names or "
                            "indices, such as [\"age\", \"height\"]";
      return;
    }
    for (const auto &element : list->getElements())
      if (std::optional<std::string> c = column(*element))
        source.columns.push_back(*c);
  } else if (param == "header" || param == "standardize") {
    if (std::optional<bool> f = flag(value, param))
      (param == "header" ? source.header : source.standardize) = *f;
  } else if (param == "skip_rows") {
    auto n = eval.evaluateInteger(value, "skip_rows");
    if (failed(n))
      ok = false;
    else if (*n < 0)
      error(value.loc()) << "skip_rows must not be negative, got " << *n;
    else
      source.skipRows = *n;
  } else if (param == "delimiter") {
    std::optional<std::string> d = text(value, "delimiter");
    if (d && (*d == "\\t" || *d == "tab"))
      d = "\t";
    if (d && d->size() != 1)
      error(value.loc()) << "delimiter must be one character (or \"\\t\" "
                            "for a tab), got \""
                         << *d << "\"";
    else if (d)
      source.delimiter = *d;
  } else if (param == "missing") {
    std::optional<std::string> m = text(value, "missing");
    if (m && *m != "error" && *m != "zero" && *m != "mean")
      error(value.loc()) << "missing must be \"error\" (the default), "
                            "\"zero\" or \"mean\" (the training split's "
                            "mean of the column), got \""
                         << *m << "\"";
    else if (m)
      source.missing = *m == "error" ? "" : *m;
  } else if (param == "mean" || param == "std") {
    if (auto v = numbers(value, param))
      (param == "mean" ? source.mean : source.stddev) = *v;
  }
}

void SourceChecker::check(mlir::mbt::DataSet data,
                          llvm::ArrayRef<llvm::StringRef> params,
                          llvm::ArrayRef<const ExprAST *> args) {
  for (auto [param, value] : llvm::zip(params, args))
    if (value)
      set(data, param, *value);
}
} // namespace

std::optional<std::string> mbt::resolveSpecPath(mlir::MLIRContext &ctx,
                                                const Location &loc,
                                                llvm::StringRef given,
                                                llvm::StringRef what) {
  if (given.empty()) {
    emitError(ctx, loc) << what << " must name a file";
    return std::nullopt;
  }
  llvm::SmallString<256> resolved;
  if (!llvm::sys::path::is_absolute(given) && loc.file)
    resolved = llvm::sys::path::parent_path(sourceFilePath(*loc.file));
  llvm::sys::path::append(resolved, given);
  llvm::sys::fs::make_absolute(resolved);
  llvm::sys::path::remove_dots(resolved, /*remove_dot_dot=*/true);
  if (!llvm::sys::fs::exists(resolved))
    mlir::emitWarning(toMLIRLoc(ctx, loc))
        << what << " '" << resolved
        << "' does not exist (yet); training reads it when it starts";
  return std::string(resolved);
}

llvm::SmallVector<llvm::StringRef>
mbt::dataSourceParams(mlir::mbt::DataSet data) {
  return sourceParams(data);
}

mlir::LogicalResult mbt::checkDataSource(mlir::MLIRContext &ctx,
                                         const CallExprAST &call,
                                         llvm::ArrayRef<const ExprAST *> args,
                                         SweepEvaluator &eval,
                                         SweepConfig &config) {
  llvm::SmallVector<llvm::StringRef> params = sourceParams(config.data);
  SourceChecker checker(ctx, eval, config.source);
  checker.check(config.data, params, args.take_front(params.size()));
  if (!checker.ok)
    return mlir::failure();
  const ::mbt::DataSource &s = config.source;
  llvm::StringRef kind = stringifyDataSet(config.data);
  auto missing = [&](llvm::StringRef what, llvm::StringRef example) {
    emitError(ctx, call.loc())
        << "data set '" << kind << "' needs " << what << ", for example "
        << kind << "(" << example << ")";
    return mlir::failure();
  };
  switch (config.data) {
  case mlir::mbt::DataSet::npy:
    if (s.trainX.empty() || s.trainY.empty())
      return missing("its input and target files",
                     "x = \"x.npy\", y = \"y.npy\"");
    if (s.testX.empty() != s.testY.empty()) {
      emitError(ctx, call.loc()) << "the test split needs both test_x and "
                                    "test_y, or neither";
      return mlir::failure();
    }
    break;
  case mlir::mbt::DataSet::csv:
    if (s.train.empty() || s.target.empty())
      return missing("a file and its target column",
                     "\"train.csv\", target = \"label\"");
    break;
  default:
    if (s.train.empty())
      return missing("its training file",
                     config.data == mlir::mbt::DataSet::image_folder
                         ? std::string("\"photos/train\"")
                         : "\"train." + kind.str() +
                               "\", x = \"x\", y = \"y\"");
  }
  for (double d : s.stddev)
    if (!(d > 0)) {
      emitError(ctx, call.loc()) << "std must be positive, got " << d;
      return mlir::failure();
    }
  return mlir::success();
}
