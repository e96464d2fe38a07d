//===- MbtModule.cpp - the _mbt extension behind `import mbt` -------------===//
//
// The compiled half of the Python module (python/mbt/__init__.py is the
// other): compiling a spec in this process (compiler/Driver/CompileSpec.h)
// and training an artifact on arrays the caller holds. Arrays arrive
// through the buffer protocol as views: a float32 x is read in place,
// other types are converted once to the runtime's float samples. Training
// runs with the GIL released (the hooks into Python take it back); every
// error of the compiler or the runtime becomes mbt.Error.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver/CompileSpec.h"
#include "mbt/runtime/Artifact.h"
#include "mbt/runtime/Error.h"
#include "mbt/runtime/Trainer.h"
#include "mbt/runtime/data/Arrays.h"
#include "mbt/runtime/data/DataSources.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <string>

namespace py = pybind11;
using namespace mbt;
using namespace mbt::runtime;

namespace {

/// The element type of a buffer's struct format ("f", "<d", "B", ...).
ElementType elementTypeOf(const py::buffer_info &info, const char *what) {
  std::string format = info.format;
  if (!format.empty() && (format[0] == '<' || format[0] == '=' ||
                          format[0] == '@' || format[0] == '|'))
    format.erase(0, 1);
  struct Kind {
    const char *format;
    ElementType type;
  };
  static const Kind kinds[] = {
      {"?", ElementType::Bool}, {"B", ElementType::U8},
      {"b", ElementType::I8},   {"H", ElementType::U16},
      {"h", ElementType::I16},  {"I", ElementType::U32},
      {"i", ElementType::I32},  {"e", ElementType::F16},
      {"f", ElementType::F32},  {"d", ElementType::F64}};
  for (const Kind &kind : kinds)
    if (format == kind.format)
      return kind.type;
  // 64-bit integers: "l" and "q" on LP64, by their size.
  if ((format == "l" || format == "q") && info.itemsize == 8)
    return ElementType::I64;
  if ((format == "L" || format == "Q") && info.itemsize == 8)
    return ElementType::U64;
  throw RuntimeError(std::string(what) + " holds elements of format '" +
                     info.format +
                     "', which mbt does not read (floats, integers or bools)");
}

/// A view of a C-contiguous buffer (the Python side made it one), kept
/// alive while the view lives.
ArrayView viewOf(const py::buffer &buffer, const char *what) {
  py::buffer_info info = buffer.request();
  ArrayView view;
  view.origin = what;
  view.type = elementTypeOf(info, what);
  view.shape.assign(info.shape.begin(), info.shape.end());
  int64_t stride = info.itemsize;
  for (size_t d = info.shape.size(); d-- > 0;) {
    if (info.shape[d] > 1 && info.strides[d] != stride)
      throw RuntimeError(std::string(what) + " is not C-contiguous");
    stride *= info.shape[d];
  }
  view.data = info.ptr;
  // The buffer's owner lives as long as the view (released with the GIL).
  auto *owner = new py::buffer(buffer);
  view.owner = std::shared_ptr<const void>(owner, [](const void *p) {
    py::gil_scoped_acquire gil;
    delete static_cast<const py::buffer *>(p);
  });
  return view;
}

/// One split from (x, y), or an empty split.
Dataset splitOf(const Manifest &manifest, const std::optional<py::buffer> &x,
                const std::optional<py::buffer> &y, const std::string &name) {
  if (!x && !y)
    return emptySplit(sampleLayout(manifest), name);
  if (!x || !y)
    throw RuntimeError("the " + name + " split needs both x and y");
  // A float32 x is read in place (the array stays alive with the view).
  return datasetFromArrays(viewOf(*x, (name + " x").c_str()),
                           viewOf(*y, (name + " y").c_str()),
                           sampleLayout(manifest), name, /*borrowX=*/true);
}

struct TrainArgs {
  std::string library, out;
  int64_t epochs = -1;
  bool quiet = true;
  /// The optimizer's hyperparameters, M rows of H (empty: the spec's).
  std::vector<std::vector<double>> hyper;
  /// on_eval(step, metrics) -> models to stop, or None.
  py::object onEval;
  int64_t evalEvery = 0;
  bool resume = false;
  /// Steps after which the run ends (0: every epoch).
  int64_t maxSteps = 0;
};

/// Each model's means by output name, or None for a split not evaluated.
py::object perModel(const std::vector<std::vector<double>> &means,
                    const std::vector<std::string> &outputs) {
  if (means.empty())
    return py::none();
  py::list models;
  for (const std::vector<double> &row : means) {
    py::dict values;
    for (size_t k = 0; k < outputs.size() && k < row.size(); ++k)
      values[py::str(outputs[k])] = row[k];
    models.append(values);
  }
  return std::move(models);
}

/// The options' hooks into Python: on_eval at every evaluation, and the
/// interpreter's signals (Ctrl-C) after every step. Both run in the
/// training thread, which holds no GIL, so they take it.
void hookPython(TrainOptions &options, const TrainArgs &args,
                const Manifest &manifest) {
  options.evalEvery = args.evalEvery;
  options.interrupted = [] {
    py::gil_scoped_acquire gil;
    // A SIGINT runs Python's handler, which sets KeyboardInterrupt.
    return PyErr_CheckSignals() != 0;
  };
  if (args.onEval.is_none())
    return;
  options.onEvaluation = [&args, &manifest](const Evaluation &evaluation) {
    py::gil_scoped_acquire gil;
    py::dict metrics;
    metrics["epoch"] = evaluation.epoch;
    metrics["step"] = evaluation.step;
    metrics["test"] = perModel(evaluation.test, manifest.outputs);
    metrics["validation"] = perModel(evaluation.validation, manifest.outputs);
    py::object stop = args.onEval(evaluation.step, metrics);
    std::vector<int64_t> models;
    if (!stop.is_none())
      for (py::handle model : stop)
        models.push_back(model.cast<int64_t>());
    return models;
  };
}

/// Trains the artifact at `library` on the given splits, writing the
/// results (leaderboard.json, models/, checkpoint.mbtrun) to `out`.
/// Without train arrays the spec's own data set is read, as mbtc train
/// reads it; test arrays then replace its test split.
void train(const TrainArgs &args, const std::optional<py::buffer> &trainX,
           const std::optional<py::buffer> &trainY,
           const std::optional<py::buffer> &testX,
           const std::optional<py::buffer> &testY) {
  Artifact artifact = Artifact::load(args.library);
  if (!args.hyper.empty())
    artifact.setHyperValues(args.hyper);
  const Manifest &manifest = artifact.manifest();
  Dataset train, test;
  if (trainX || trainY) {
    train = splitOf(manifest, trainX, trainY, "train");
  } else {
    py::gil_scoped_release release;
    DataSplits splits = loadDataSource(manifest);
    train = std::move(splits.train);
    test = std::move(splits.test);
  }
  if (testX || testY || trainX || trainY)
    test = splitOf(manifest, testX, testY, "test");
  TrainOptions options;
  options.outDir = args.out;
  options.epochs = args.epochs;
  options.quiet = args.quiet;
  options.resume = args.resume;
  options.maxSteps = args.maxSteps;
  hookPython(options, args, manifest);
  // The leaderboard is the Run's to give, not stdout's (quiet = False
  // prints it, and the progress, as mbtc train does).
  if (args.quiet)
    options.report = nullptr;
  py::gil_scoped_release release;
  Trainer trainer(artifact, train, test, options);
  trainer.run();
}

/// A split's samples as NumPy arrays: x of the input's shape (float32),
/// y int64 class indices or [n, K] float32 values.
py::tuple arraysOf(Dataset &&split, const SampleLayout &layout) {
  auto owner = std::make_shared<Dataset>(std::move(split));
  std::vector<py::ssize_t> shape{py::ssize_t(owner->count)};
  shape.insert(shape.end(), layout.inputShape.begin(), layout.inputShape.end());
  py::array_t<float> x(shape);
  if (owner->count > 0)
    std::memcpy(x.mutable_data(), owner->sample(0),
                owner->storedFeatures() * sizeof(float));
  if (owner->regression()) {
    py::array_t<float> y(
        {py::ssize_t(owner->count), py::ssize_t(owner->targetWidth)});
    std::copy(owner->targets.begin(), owner->targets.end(), y.mutable_data());
    return py::make_tuple(x, y);
  }
  py::array_t<int64_t> y(py::ssize_t(owner->count));
  std::copy(owner->y.begin(), owner->y.end(), y.mutable_data());
  return py::make_tuple(x, y);
}

py::dict loadData(const std::string &library) {
  Artifact artifact = Artifact::load(library);
  const Manifest &manifest = artifact.manifest();
  DataSplits splits;
  {
    py::gil_scoped_release release;
    splits = loadDataSource(manifest);
  }
  SampleLayout layout = sampleLayout(manifest);
  py::dict data;
  data["train"] = arraysOf(std::move(splits.train), layout);
  data["test"] = arraysOf(std::move(splits.test), layout);
  return data;
}

} // namespace

PYBIND11_MODULE(_mbt, m) {
  m.doc() = "mbt's compiler and runtime (use the mbt package, not this)";
  // The runtime's errors (a bad array, an artifact that does not load);
  // the package re-exports it as mbt.Error.
  py::register_exception<RuntimeError>(m, "Error");

  m.def(
      "compile_spec",
      [](const std::string &source, const std::string &name,
         const std::string &library, bool parallel,
         std::vector<std::string> settings, const std::string &mcpu) {
        SpecCompileRequest request;
        request.source = source;
        request.name = name;
        request.libraryPath = library;
        request.parallel = parallel;
        request.sweepSettings = std::move(settings);
        request.cpu = mcpu;
        SpecCompileResult result;
        {
          py::gil_scoped_release release;
          result = compileSpec(request);
        }
        return py::make_tuple(result.ok, result.diagnostics, result.manifest);
      },
      py::arg("source"), py::arg("name"), py::arg("library"),
      py::arg("parallel") = true,
      py::arg("settings") = std::vector<std::string>(),
      py::arg("mcpu") = std::string(),
      "Compiles a spec's text into the artifact at `library`, for the CPU "
      "`mcpu` names (LLVM's name; empty: this host's); returns (ok, "
      "diagnostics, manifest JSON).");

  m.def(
      "train",
      [](const std::string &library, const std::string &out, int64_t epochs,
         bool quiet, const std::optional<py::buffer> &trainX,
         const std::optional<py::buffer> &trainY,
         const std::optional<py::buffer> &testX,
         const std::optional<py::buffer> &testY,
         std::vector<std::vector<double>> hyper, py::object onEval,
         int64_t evalEvery, bool resume, int64_t maxSteps) {
        try {
          train({library, out, epochs, quiet, std::move(hyper),
                 std::move(onEval), evalEvery, resume, maxSteps},
                trainX, trainY, testX, testY);
        } catch (const RunInterrupted &) {
          // Ctrl-C: KeyboardInterrupt, the checkpoint written.
          if (PyErr_Occurred())
            throw py::error_already_set();
          throw;
        } catch (const RuntimeError &) {
          throw;
        } catch (const py::error_already_set &) {
          throw;
        } catch (const std::exception &e) {
          // Whatever else the runtime throws is mbt.Error too.
          throw RuntimeError(e.what());
        }
      },
      py::arg("library"), py::arg("out"), py::arg("epochs"), py::arg("quiet"),
      py::arg("train_x") = py::none(), py::arg("train_y") = py::none(),
      py::arg("test_x") = py::none(), py::arg("test_y") = py::none(),
      py::arg("hyper") = std::vector<std::vector<double>>(),
      py::arg("on_eval") = py::none(), py::arg("eval_every") = 0,
      py::arg("resume") = false, py::arg("max_steps") = 0,
      "Trains the artifact at `library` on C-contiguous arrays (none: the "
      "spec's data set); writes the run's results to `out`.");

  m.def("load_data", &loadData, py::arg("library"),
        "The spec's data set, as the artifact at `library` names it: "
        "{'train': (x, y), 'test': (x, y)} of NumPy arrays.");
}
