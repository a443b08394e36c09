//===- EinInterfaces.td - ein op interfaces -----------------*- tablegen -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_TD
#define EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_TD

include "mlir/IR/OpBase.td"

// Ops whose every block is a computation (a kernel or a library call) on
// its device: join_agg and the composites, not the layout ops, which move
// bytes. The outliner, the bundle writer and the `ein.kernel` verifier
// read it.
def Ein_BlockKernel : NativeOpTrait<"BlockKernel"> {
  let cppNamespace = "::mlir::ein";
}

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
    InterfaceMethod<[{
        How each operand and the result are indexed by the loops, how
        partial results combine over the loops the result does not span, and
        the element type they combine in. The planner, the exchange
        insertion and the planned-form verifier all read this one answer.
      }],
      "::mlir::ein::OpAccesses", "getAccesses">,
    InterfaceMethod<[{
        Floating-point work per point of the loop space, for the planner's
        compute term (a multiply-add is 2; an aggregation's combine is 1).
      }],
      "double", "getFlopsPerPoint">,
    InterfaceMethod<[{
        Loops no spec may cut because the op's fused kernel reduces or
        normalises along them (softmax's dimension, RMSNorm's last).
      }],
      "::llvm::SmallVector<int64_t>", "getWholeLoops", (ins), [{}],
      [{ return {}; }]>,
    InterfaceMethod<[{
        For ops that skip part of their loop space (causal attention): which
        (query, key) loop pairs do work. None for ops that do work at every
        point.
      }],
      "std::optional<::mlir::ein::CausalMask>", "getCausalMask", (ins), [{}],
      [{ return std::nullopt; }]>,
    InterfaceMethod<[{
        Fills the op's own fields of its program.json entry (`kind` and the
        kind's attributes); the exporter fills the result, type and inputs.
        Fails with a diagnostic where the op has no program.json form.
      }],
      "::mlir::LogicalResult", "describeInProgram", (ins "::ein::Op &":$entry)>,
  ];
}

#endif // EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_TD
