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

#endif // EINSUMMABLE_TRANSFORMS_PASSES_TD
