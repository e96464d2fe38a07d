//===- Passes.td - the manifest's pass ---------------------*- tablegen -*-===//
#ifndef MBT_MANIFEST_PASSES_TD
#define MBT_MANIFEST_PASSES_TD

include "mlir/Pass/PassBase.td"

def MBTExportManifest : Pass<"mbt-export-manifest", "::mlir::ModuleOp"> {
  let summary = "Write the artifact's manifest (docs/abi.md) of the module";
  let description = [{
    Builds the manifest JSON from `mbt.sweep`, the sweep's optimizer rule
    and the `mbt.*` module attributes, which exist until
    mbt-drop-metadata, and writes it to `path` (`-`: stdout). The module
    is left as it is. mbtc runs it with a string of its own as the output
    and embeds the text in the artifact; the `mbt-linalg-to-llvm` pipeline
    runs it first, so a module without a sweep fails there with the
    manifest's error.

    Example: `mbt-opt --mbt-to-fused --mbt-export-manifest=path=m.json`.
  }];
  let options = [
    Option<"path", "path", "std::string", /*default=*/"\"\"",
           "File to write the manifest to ('-': stdout; empty: nowhere, "
           "only the checks)">,
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "Where the artifact's buffers live: cpu or cuda">,
  ];
}

#endif // MBT_MANIFEST_PASSES_TD
