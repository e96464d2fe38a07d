//===- Frontend.cpp - parse a spec and its imports, and check it ----------===//
//
// `import "NAME"` loads NAME.mbt from the standard library's directory;
// `import "PATH.mbt"` loads a file relative to the importing one. Each file
// is loaded once (a second import of it is a no-op), goes into the SourceMgr
// under the path it was found at (so its diagnostics show its own lines) and
// contributes its functions, models and optimizers; a file that imports
// itself, directly or not, is an error that shows the chain. A spec with a
// sweep also imports "optim", the standard optimizers.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend/Frontend.h"
#include "compiler/Frontend/Diagnostics.h"
#include "compiler/Frontend/Lexer.h"
#include "compiler/Frontend/Parser.h"
#include "compiler/Frontend/Sema.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace mbt;

std::string mbt::findStdlibDir(llvm::StringRef explicitDir,
                               llvm::StringRef installedDir) {
  if (!explicitDir.empty())
    return explicitDir.str();
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("MBT_STDLIB_PATH"))
    if (!env->empty())
      return *env;
  if (!installedDir.empty() && llvm::sys::fs::is_directory(installedDir))
    return installedDir.str();
#ifdef MBT_STDLIB_SOURCE_DIR
  return MBT_STDLIB_SOURCE_DIR;
#else
  return "";
#endif
}

namespace {
/// The largest file an import reads: a spec is text a person writes.
constexpr uint64_t kMaxImportSize = 1 << 20;

/// Loads the imports of a spec, depth first, merging every file into it.
class ImportLoader {
public:
  ImportLoader(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &ctx,
               std::string stdlibDir)
      : sourceMgr(sourceMgr), ctx(ctx), stdlibDir(std::move(stdlibDir)) {}

  /// Loads what `main` (parsed from `mainPath`) imports into it.
  bool load(ModuleAST &main, llvm::StringRef mainPath);

private:
  /// A file on the chain of imports being loaded.
  struct ChainEntry {
    std::string realPath;
    std::string name; // as diagnostics show it
    Location importLoc;
  };

  void loadImports(ModuleAST &into, llvm::ArrayRef<ImportAST> imports,
                   llvm::StringRef importerPath);
  /// The path `import` names, or an error reported at it.
  std::optional<std::string> resolve(const ImportAST &import,
                                     llvm::StringRef importerPath);
  std::unique_ptr<ModuleAST> parseFile(const ImportAST &import,
                                       const std::string &path);

  llvm::SourceMgr &sourceMgr;
  mlir::MLIRContext &ctx;
  std::string stdlibDir;
  llvm::StringSet<> loaded;
  std::vector<ChainEntry> chain;
  bool ok = true;
};
} // namespace

static std::string realPath(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(path, real))
    return path.str();
  return std::string(real.str());
}

/// The standard library module of the optimizers, which every spec with a
/// sweep imports.
static constexpr llvm::StringLiteral kOptimizerModule = "optim";

bool ImportLoader::load(ModuleAST &main, llvm::StringRef mainPath) {
  std::string real = realPath(mainPath);
  loaded.insert(real);
  chain.push_back({real, llvm::sys::path::filename(mainPath).str(), {}});
  std::vector<ImportAST> imports(main.getImports().begin(),
                                 main.getImports().end());
  // A spec with a sweep always has the standard optimizers (after its own
  // imports, so that importing "optim" explicitly is the same).
  if (SweepAST *sweep = main.getSweep())
    imports.push_back({sweep->loc(), kOptimizerModule.str(), true});
  loadImports(main, imports, mainPath);
  return ok;
}

std::optional<std::string> ImportLoader::resolve(const ImportAST &import,
                                                 llvm::StringRef importerPath) {
  llvm::StringRef name = import.path;
  llvm::SmallString<256> path;
  if (name.ends_with(".mbt")) {
    // A file, relative to the importing one.
    if (!llvm::sys::path::is_absolute(name))
      path = llvm::sys::path::parent_path(importerPath);
    llvm::sys::path::append(path, name);
    if (llvm::sys::fs::is_regular_file(path))
      return std::string(path.str());
    emitError(ctx, import.loc) << "cannot find the imported file '" << name
                               << "' (tried '" << path << "')";
    return std::nullopt;
  }
  // A module of the standard library: a plain name.
  bool plain = !name.empty() && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_';
  });
  if (!plain) {
    emitError(ctx, import.loc)
        << "cannot import '" << name << "': a file path must end with "
        << "'.mbt'; a module of the standard library is a plain name";
    return std::nullopt;
  }
  path = stdlibDir;
  llvm::sys::path::append(path, name + ".mbt");
  if (!stdlibDir.empty() && llvm::sys::fs::is_regular_file(path))
    return std::string(path.str());
  emitError(ctx, import.loc)
      << "unknown module '" << name << "' (tried '" << path
      << "'; --stdlib-dir or MBT_STDLIB_PATH choose the standard library)";
  return std::nullopt;
}

std::unique_ptr<ModuleAST> ImportLoader::parseFile(const ImportAST &import,
                                                   const std::string &path) {
  uint64_t size = 0;
  if (!llvm::sys::fs::file_size(path, size) && size > kMaxImportSize) {
    emitError(ctx, import.loc)
        << "the imported file '" << path << "' is too large (more than "
        << kMaxImportSize << " bytes)";
    return nullptr;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    emitError(ctx, import.loc) << "cannot read the imported file '" << path
                               << "': " << buffer.getError().message();
    return nullptr;
  }
  unsigned id = sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  Lexer lexer(sourceMgr.getMemoryBuffer(id)->getBuffer(), path);
  Parser parser(lexer, ctx);
  return parser.parseModule();
}

void ImportLoader::loadImports(ModuleAST &into,
                               llvm::ArrayRef<ImportAST> imports,
                               llvm::StringRef importerPath) {
  for (const ImportAST &import : imports) {
    std::optional<std::string> path = resolve(import, importerPath);
    if (!path) {
      ok = false;
      continue;
    }
    std::string real = realPath(*path);
    std::string name = llvm::StringRef(import.path).ends_with(".mbt")
                           ? llvm::sys::path::filename(*path).str()
                           : import.path;
    auto onChain = llvm::find_if(
        chain, [&](const ChainEntry &entry) { return entry.realPath == real; });
    if (onChain != chain.end()) {
      std::string text = "import cycle: ";
      for (auto it = onChain; it != chain.end(); ++it)
        text += it->name + " -> ";
      auto diag = emitError(ctx, import.loc) << text << name;
      for (auto it = std::next(onChain); it != chain.end(); ++it)
        attachNote(diag, ctx, it->importLoc,
                   "'" + it->name + "' is imported here");
      ok = false;
      continue;
    }
    if (!loaded.insert(real).second)
      continue; // imported before, through another file
    std::unique_ptr<ModuleAST> file = parseFile(import, *path);
    if (!file) {
      ok = false;
      continue;
    }
    for (const auto &sweep : file->getSweeps()) {
      auto diag = emitError(ctx, sweep->loc())
                  << "an imported file cannot have a sweep";
      attachNote(diag, ctx, import.loc, "imported here");
      ok = false;
    }
    if (import.implicit)
      file->markOptimizersImplicit();
    chain.push_back({real, name, import.loc});
    loadImports(into, file->getImports(), *path);
    chain.pop_back();
    into.merge(std::move(*file));
  }
}

/// Parses each of `settings` (its own buffer in `sourceMgr`, named "--set",
/// or "--set #k" among several) and puts it in the spec's sweep in place of
/// the spec's own.
static bool applySweepSettings(llvm::SourceMgr &sourceMgr,
                               mlir::MLIRContext &ctx,
                               llvm::ArrayRef<std::string> settings,
                               ModuleAST &module) {
  for (auto [k, text] : llvm::enumerate(settings)) {
    std::string name =
        settings.size() == 1 ? "--set" : "--set #" + std::to_string(k + 1);
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
    Lexer lexer(text, name);
    Parser parser(lexer, ctx);
    SweepSettingAST setting;
    if (!parser.parseSettingOnly(setting))
      return false;
    SweepAST *sweep = module.getSweep();
    if (!sweep) {
      emitError(ctx, setting.loc)
          << "setting '" << setting.key << "' is given, but the spec has no "
          << "sweep to set it in";
      return false;
    }
    sweep->overrideSetting(std::move(setting));
  }
  return true;
}

std::unique_ptr<ModuleAST> mbt::parseAndCheck(llvm::SourceMgr &sourceMgr,
                                              mlir::MLIRContext &ctx,
                                              const FrontendOptions &options) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::string mainPath = buffer->getBufferIdentifier().str();
  Lexer lexer(buffer->getBuffer(), mainPath);
  Parser parser(lexer, ctx);
  std::unique_ptr<ModuleAST> module = parser.parseModule();
  if (!module)
    return nullptr;
  if (!module->getImports().empty() || module->getSweep()) {
    std::string stdlibDir =
        options.stdlibDir.empty() ? findStdlibDir("") : options.stdlibDir;
    if (!ImportLoader(sourceMgr, ctx, std::move(stdlibDir))
             .load(*module, sourceFilePath(mainPath)))
      return nullptr;
  }
  if (!applySweepSettings(sourceMgr, ctx, options.sweepSettings, *module))
    return nullptr;
  if (module->getModels().empty() && module->getSweeps().empty() &&
      module->getOptimizers().empty()) {
    emitError(ctx, Location{lexer.getFile(), 1, 1})
        << "the spec defines no model";
    return nullptr;
  }
  if (mlir::failed(checkModule(ctx, *module)))
    return nullptr;
  return module;
}
