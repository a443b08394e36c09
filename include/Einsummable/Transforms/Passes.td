//===- Passes.td - ein passes -------------------------------*- tablegen -*-===//

#ifndef EINSUMMABLE_TRANSFORMS_PASSES_TD
#define EINSUMMABLE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def EinAttachTarget : Pass<"ein-attach-target", "::mlir::ModuleOp"> {
  let summary = "Attach the #ein.target every later pass reads";
  let description = [{
    Sets `ein.target = #ein.target<devices = N, topology = T, chip = C>` on
    the module, validating the options first (1 to 64 devices, a known
    topology or a `.json` file, an `sm_<N>` or `host` chip). It is the first
    stage of every `ein-compile` pipeline, so the device count, topology and
    chip cannot disagree between passes. A module that already carries a
    different target is an error, not silently retargeted.

    ```
    ein-opt --ein-attach-target="devices=8 topology=nvswitch chip=sm_90" in.mlir
    ```
  }];
  let dependentDialects = ["::mlir::ein::EinDialect"];
  let options = [
    Option<"devices", "devices", "int64_t", "1", "Number of GPUs, 1 to 64">,
    Option<"topology", "topology", "std::string", "\"nvswitch\"",
           "Topology preset, nodes=K,gpus=G, or a topology .json file">,
    Option<"chip", "chip", "std::string", "\"sm_90\"",
           "Chip: sm_<N> for CUDA, host for the CPU target">,
  ];
}

def EinExportProgram : Pass<"ein-export-program", "::mlir::ModuleOp"> {
  let summary = "Write the logical program as program.json for the reference evaluator";
  let description = [{
    Describes one logical function (ein ops on ranked tensors) in the
    MLIR-free program.json format that `ein-eval` reads (documented in
    `docs/program-format.md`) and writes it to `file`. The IR is left
    unchanged. An op with no program.json form (a planned or device-level op,
    an unsupported scalar op in a join region) is an error naming it.

    `ein-opt --ein-export-program=FILE` is shorthand for
    `--ein-export-program="file=FILE"`.

    ```
    ein-opt examples/mlp.mlir --ein-export-program=mlp.json -o /dev/null
    ein-eval mlp.json --seed=1
    ```
  }];
  let options = [
    Option<"file", "file", "std::string", "\"\"",
           "Where to write program.json ('-' for standard output)">,
    Option<"function", "function", "std::string", "\"\"",
           "The function to export (default: the only one with a body)">,
  ];
}

#endif // EINSUMMABLE_TRANSFORMS_PASSES_TD
