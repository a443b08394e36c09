//===- EinDialect.td - The ein dialect ---------------------*- tablegen -*-===//
//
// The join-agg dialect: tensor programs as joins followed by aggregations over
// tensor relations, from the logical program down to per-GPU blocks.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EINDIALECT_TD
#define EINSUMMABLE_DIALECT_EIN_IR_EINDIALECT_TD

include "mlir/IR/OpBase.td"

def Ein_Dialect : Dialect {
  let name = "ein";
  let cppNamespace = "::mlir::ein";
  let summary = "Join-agg operations over tensor relations, for multi-GPU plans";
  let description = [{
    The `ein` dialect states a tensor program as joins followed by
    aggregations (`ein.join_agg`) plus a few composites whose fused kernels
    must see the whole pattern (`ein.attention`, `ein.softmax`,
    `ein.rms_norm`, `ein.layer_norm`, `ein.gather`) and layout ops (`ein.reshape`,
    `ein.slice`,
    `ein.concat`).

    The same ops serve three levels:

    * **logical**: operands are ranked tensors; nothing says where data lives;
    * **planned**: a `#ein.spec` on each op says how many parts each loop is
      cut into, operands are `!ein.rel` relations (tensors cut into blocks,
      possibly replicated or holding pending partial sums), and
      `ein.repartition` moves data between the partitions producer and
      consumer need;
    * **device level**: block kernels carry a `device` attribute and the
      data movement is explicit `ein.transfer` (with optional relays),
      `ein.multicast` and `ein.aggregate`, ordered by `!ein.token` values.

    The module attribute `ein.target = #ein.target<...>` fixes the device
    count, topology and chip that every pass reads. A function argument marked
    `ein.weight` may be laid out ahead of time in any layout for free; one
    marked `ein.grad` (or `ein.weight`) gets a gradient from `ein-autodiff`.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Module attribute holding the `#ein.target`.
    static constexpr ::llvm::StringLiteral getTargetAttrName() {
      return "ein.target";
    }
    /// The legal specs of an op, as ein-enumerate-specs lists them.
    static constexpr ::llvm::StringLiteral getCandidatesAttrName() {
      return "ein.candidates";
    }
    /// Unit attribute on a function argument: a weight, laid out for free.
    static constexpr ::llvm::StringLiteral getWeightAttrName() {
      return "ein.weight";
    }
    /// Unit attribute on a function argument: ein-autodiff appends the
    /// loss's gradient with respect to it (as it does for weights).
    static constexpr ::llvm::StringLiteral getGradAttrName() {
      return "ein.grad";
    }
    /// Integer attribute on a function result: the argument it replaces
    /// for the next call (an updated weight or optimizer state).
    static constexpr ::llvm::StringLiteral getUpdatesAttrName() {
      return "ein.updates";
    }
    /// On a device-level ein.join_agg: where its block starts in each loop,
    /// so `ein.index` keeps reading whole-tensor coordinates.
    static constexpr ::llvm::StringLiteral getLoopOffsetsAttrName() {
      return "ein.loop_offsets";
    }
    /// On a device-level block: the kernel ein-lower-to-cpu made for it.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return "ein.kernel";
    }
    /// On the nested module of block kernels: the target they are for.
    static constexpr ::llvm::StringLiteral getKernelTargetAttrName() {
      return "ein.kernel_target";
    }
    /// On the nested module of block kernels: the signature table of its
    /// kernels (ein/signature.h), which the lowering embeds in the kernel
    /// library and ein-write-bundle checks its manifest against.
    static constexpr ::llvm::StringLiteral getKernelSignaturesAttrName() {
      return "ein.kernel_signatures";
    }
    /// Unit attribute ein-decompose{tie-layout} sets on a function: its
    /// results must leave in the layouts its arguments arrived in, which
    /// later passes (the placement of ein-synthesize-exchanges) keep.
    static constexpr ::llvm::StringLiteral getTieLayoutAttrName() {
      return "ein.tie_layout";
    }
    /// array<i64> on an op a spec cuts: the GPU of each of its join blocks
    /// (in the spec's row-major block order), where
    /// ein-synthesize-exchanges runs them instead of placing them itself.
    /// A staged plan's ops carry their stage's GPUs (docs/distributed.md).
    static constexpr ::llvm::StringLiteral getPlaceAttrName() {
      return "ein.place";
    }
    /// Dictionary on a function: the placement and exchange forms
    /// ein-decompose chose when it simulated the plan as lowered (for its
    /// explanation or stages=auto), keyed by a fingerprint of what they were
    /// chosen for (physical::choiceKey): {key = i64, rotate = bool,
    /// split_weights = bool, synthesized = array<i1>, place = [array<i64>,
    /// ...]}, one entry of `synthesized` and `place` per op (an empty
    /// `place`: the op's blocks on their canonical GPUs).
    /// ein-synthesize-exchanges builds its program from it, instead of
    /// choosing again, where the key is that of its own graph, plan and
    /// options, and drops it either way.
    static constexpr ::llvm::StringLiteral getExchangeChoiceAttrName() {
      return "ein.exchange_choice";
    }
    /// Unit attribute a chunked plan (ein-decompose{stages=1xM}) sets on a
    /// function: it runs as a dataflow bundle, each GPU's steps spread over
    /// several streams so that a step waits for its dependencies only and
    /// one chunk's exchange overlaps the next chunk's compute.
    /// ein-synthesize-exchanges simulates it so and ein-write-bundle writes
    /// it into the manifest (`dataflow`).
    static constexpr ::llvm::StringLiteral getDataflowAttrName() {
      return "ein.dataflow";
    }
    /// Unit attribute ein-decompose sets on a function whose plan charges
    /// weights where they move (weights-replicable=false, or the memory
    /// limit's fallback that charges weight replicas): each GPU holds only
    /// the weight blocks the plan lays out there, and
    /// ein-synthesize-exchanges moves a block another GPU reads, as an
    /// activation's, whatever its own weights-replicable says.
    static constexpr ::llvm::StringLiteral getWeightsMoveAttrName() {
      return "ein.weights_move";
    }
    /// i64 attribute ein-decompose{memory-limit} sets on a function: the
    /// bytes its plan holds on the fullest GPU by the planner's model,
    /// which ein-write-bundle reports beside the buffers' bytes.
    static constexpr ::llvm::StringLiteral getPlannedMemoryAttrName() {
      return "ein.planned_memory";
    }
    /// f64 attributes ein-device-blocks sets on the one-device program of a
    /// GPU's share of a plan: its blocks' FLOPs and their predicted seconds
    /// (planner::blockSeconds).
    static constexpr ::llvm::StringLiteral getBlockFlopsAttrName() {
      return "ein.block_flops";
    }
    static constexpr ::llvm::StringLiteral getBlockSecondsAttrName() {
      return "ein.block_seconds";
    }

  private:
    void registerAttributes();
    void registerTypes();

  public:
  }];
}

class Ein_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ein_Dialect, mnemonic, traits>;

#endif // EINSUMMABLE_DIALECT_EIN_IR_EINDIALECT_TD
