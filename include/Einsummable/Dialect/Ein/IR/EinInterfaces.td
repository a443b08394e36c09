//===- EinInterfaces.td - ein op interfaces -----------------*- tablegen -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_TD
#define EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_TD

include "mlir/IR/OpBase.td"

def Ein_SpecOpInterface : OpInterface<"SpecOpInterface"> {
  let cppNamespace = "::mlir::ein";
  let description = [{
    An operation the logical optimizer can cut: it has an iteration space of
    loops with static sizes, and may carry a `#ein.spec` with one part count
    per loop. `ein.join_agg` exposes its index space; composites expose the
    loops their fused kernels allow to be cut.
  }];
  let methods = [
    InterfaceMethod<"The static size of every loop, in loop order.",
      "::llvm::SmallVector<int64_t>", "getLoopSizes">,
    InterfaceMethod<"A short name for each loop, for diagnostics and plans.",
      "::llvm::SmallVector<std::string>", "getLoopNames">,
    InterfaceMethod<"The chosen spec, or null before planning.",
      "::mlir::ein::SpecAttr", "getSpecAttr">,
  ];
}

#endif // EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_TD
