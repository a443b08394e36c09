//===- EinAttrs.td - ein attributes and enums ---------------*- tablegen -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EINATTRS_TD
#define EINSUMMABLE_DIALECT_EIN_IR_EINATTRS_TD

include "Einsummable/Dialect/Ein/IR/EinDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Ein_AggKind : I32EnumAttr<"AggKind", "how partial outputs are aggregated", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Add", 1, "add">,
    I32EnumAttrCase<"Max", 2, "max">,
    I32EnumAttrCase<"Min", 3, "min">,
    I32EnumAttrCase<"Mul", 4, "mul">,
    I32EnumAttrCase<"OnlineSoftmax", 5, "online_softmax">]> {
  let cppNamespace = "::mlir::ein";
}

def Ein_GemmActivation : I32EnumAttr<"GemmActivation",
    "the pointwise function a gemm's epilogue applies last", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Relu", 1, "relu">,
    I32EnumAttrCase<"GeluTanh", 2, "gelu_tanh">]> {
  let cppNamespace = "::mlir::ein";
}

class Ein_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Ein_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Ein_TargetAttr : Ein_Attr<"Target", "target"> {
  let summary = "The machine every pass plans for";
  let description = [{
    Attached to the module as `ein.target`. All passes read the device count,
    the topology and the chip from here, so they cannot disagree.

    * `devices`: the number of GPUs, 1 to 64.
    * `topology`: a preset (`nvswitch`, `h200-pair`, `dgx1-v100`, `pcie`),
      `nodes=K,gpus=G` (K nodes of G GPUs, K x G = devices), or the path of
      a topology JSON file (ending in `.json`). Defaults to `nvswitch`.
    * `chip`: `sm_<N>` (CUDA compute capability) or `host` for the CPU
      target. Defaults to `sm_90`.
    * `partials`: the precision partial results of a cut summed loop move
      and combine in: `acc` (the op's accumulator, f32 for a bf16 or f16
      sum; the default) or `out` (the result's element type, as NCCL's
      all-reduce of bf16 does: half the bytes between devices, one more
      rounding a partial). Defaults to `acc`.
    * `backend`: what the bundle runs on, `cpu` (the runtime's virtual GPUs
      on the host) or `cuda`; empty (the default, not printed) until a
      lowering is chosen: planning does not depend on it. Read through
      `getBackendKind()`, parsed here once; the passes that lower for a
      backend (ein-fold-attention-views, ein-write-bundle) take it from
      here. A `cuda` target needs an `sm_<N>` chip; a `cpu` one may carry
      any chip, which the plan is costed for.

    Example:

    ```mlir
    module attributes {ein.target = #ein.target<devices = 8, topology = "nvswitch", chip = "sm_90">} {}
    ```
  }];
  let parameters = (ins
    "int64_t":$devices,
    StringRefParameter<"topology preset or JSON file", "\"nvswitch\"">:$topology,
    StringRefParameter<"chip name", "\"sm_90\"">:$chip,
    StringRefParameter<"partial sums' precision", "\"acc\"">:$partials,
    StringRefParameter<"backend: cpu, cuda, or empty", "\"\"">:$backend);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The backend the target names (parsed from `backend`), or none.
    std::optional<::ein::Backend> getBackendKind() const;
  }];
}

def Ein_SpecAttr : Ein_Attr<"Spec", "spec"> {
  let summary = "A join-agg spec: the parts each loop of an op is cut into";
  let description = [{
    One entry per loop of the op (in the op's loop order). The product of the
    parts is the number of join blocks, one per device: it must equal the
    target's device count. Cuts may be uneven (a loop of size 10 cut in 4
    gives blocks of 3, 3, 2, 2), but no part may be empty.

    Example: the 3-D matmul on 8 GPUs.

    ```mlir
    #ein.spec<[2, 2, 2]>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$parts);
  let assemblyFormat = "`<` `[` $parts `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The number of join blocks: the product of the parts.
    int64_t getNumJoinBlocks() const;
  }];
}

#endif // EINSUMMABLE_DIALECT_EIN_IR_EINATTRS_TD
