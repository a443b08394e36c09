//===- Pipelines.h - The named ein pipelines --------------------*- C++ -*-===//
//
// ein-plan and ein-compile-pipeline: their options, their builders and their
// registration. Each stage is a pass of its own (Transforms/Passes.h,
// Conversion/Passes.h), so any of them can be replayed in ein-opt.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PIPELINES_PIPELINES_H
#define EINSUMMABLE_PIPELINES_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::ein {

/// The planner's options, shared by the `ein-plan` and
/// `ein-compile-pipeline` pipelines (declared once, registered with the
/// pipeline that derives from this).
struct PlannerOptionFields {
  explicit PlannerOptionFields(::mlir::detail::PassOptions &owner)
      : tieLayout(owner, "tie-layout",
                  llvm::cl::desc("Results leave in the layout of the first "
                                 "activation argument of their type"),
                  llvm::cl::init(false)),
        allowInexact(owner, "allow-inexact",
                     llvm::cl::desc("Keep the cheapest plan found when the "
                                    "search's state cap bites"),
                     llvm::cl::init(false)),
        stateCap(owner, "state-cap",
                 llvm::cl::desc("The most search states kept per step"),
                 llvm::cl::init(131072)),
        strategy(owner, "strategy",
                 llvm::cl::desc(
                     "optimal (the search's best plan), random (a legal plan "
                     "drawn from seed), dp (batch split), megatron "
                     "(weights sharded, attention by heads), spatial "
                     "(convolutions and pooling by output rows and "
                     "columns) or megatron-dp (megatron within a node, dp "
                     "across nodes)"),
                 llvm::cl::init("optimal")),
        seed(owner, "seed", llvm::cl::desc("The seed of strategy=random"),
             llvm::cl::init(0)),
        memoryLimit(
            owner, "memory-limit",
            llvm::cl::desc("Bytes a GPU may hold: the plan (weights plus peak "
                           "live activations) and, in a compile, the "
                           "bundle's buffer plan must fit (0: no limit)"),
            llvm::cl::init(0)),
        explain(owner, "explain",
                llvm::cl::desc("Explain the plan: a JSON file, a .dot file, "
                               "or - for a table"),
                llvm::cl::init("")),
        compute(owner, "compute",
                llvm::cl::desc("What the compute term charges: flops or "
                               "kernels (measured kernel times)"),
                llvm::cl::init("flops")),
        stages(owner, "stages",
               llvm::cl::desc("off (intra-op plans), auto (pipeline stages "
                              "or chunks where the simulator finds them "
                              "faster), SxM (S stages over M micro-batches, "
                              "on several nodes) or 1xM (the batch in M "
                              "chunks, a dataflow program; 1x1: the plan "
                              "as a dataflow program)"),
               llvm::cl::init("off")) {}

  ::mlir::detail::PassOptions::Option<bool> tieLayout;
  ::mlir::detail::PassOptions::Option<bool> allowInexact;
  ::mlir::detail::PassOptions::Option<int64_t> stateCap;
  ::mlir::detail::PassOptions::Option<std::string> strategy;
  ::mlir::detail::PassOptions::Option<uint64_t> seed;
  ::mlir::detail::PassOptions::Option<int64_t> memoryLimit;
  ::mlir::detail::PassOptions::Option<std::string> explain;
  ::mlir::detail::PassOptions::Option<std::string> compute;
  ::mlir::detail::PassOptions::Option<std::string> stages;
};

/// Options of the `ein-plan` pipeline.
struct PlanPipelineOptions : public PassPipelineOptions<PlanPipelineOptions>,
                             public PlannerOptionFields {
  PlanPipelineOptions()
      : PlannerOptionFields(static_cast<PassOptions &>(*this)) {}

  PassOptions::Option<bool> weightsReplicable{
      *this, "weights-replicable",
      llvm::cl::desc("Weights may be replicated for free"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> explainExchange{
      *this, "explain-exchange",
      llvm::cl::desc("The exchanges the explanation simulates: synthesized "
                     "or naive"),
      llvm::cl::init("synthesized")};
  PassOptions::Option<bool> batchTransfers{
      *this, "batch-transfers",
      llvm::cl::desc("Whether the synthesized exchanges the explanation "
                     "simulates batch transfers"),
      llvm::cl::init(true)};
};

/// ein-plan: ein-enumerate-specs, ein-decompose, ein-insert-exchanges. Each
/// stage is also a pass of its own, so any of them can be replayed.
void buildPlanPipeline(OpPassManager &pm, const PlanPipelineOptions &options);

/// Whether `module` holds a planned program: an op with a spec, or a value
/// on relations (what ein-plan writes).
bool isPlannedProgram(ModuleOp module);

/// Everything ein-compile takes, as the options of the named pipeline
/// `ein-compile-pipeline`: ein-compile fills them from its command line and
/// calls buildCompilePipeline, and `ein-compile --print-pipeline` prints the
/// ein-opt command that builds the same pipeline from the same options.
struct CompilePipelineOptions
    : public PassPipelineOptions<CompilePipelineOptions>,
      public PlannerOptionFields {
  CompilePipelineOptions()
      : PlannerOptionFields(static_cast<PassOptions &>(*this)) {}

  PassOptions::Option<std::string> dir{
      *this, "dir", llvm::cl::desc("The bundle directory to write"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> target{
      *this, "target", llvm::cl::desc("cpu or cuda"), llvm::cl::init("cpu")};
  PassOptions::Option<int64_t> devices{
      *this, "devices", llvm::cl::desc("Number of GPUs, 1 to 64"),
      llvm::cl::init(1)};
  PassOptions::Option<std::string> topology{
      *this, "topology",
      llvm::cl::desc("A topology preset (nvswitch, dgx1-v100, ...) or a "
                     "topology JSON file"),
      llvm::cl::init("nvswitch")};
  PassOptions::Option<std::string> chip{*this, "chip",
                                        llvm::cl::desc("The GPU chip (cuda)"),
                                        llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> remarks{
      *this, "remarks",
      llvm::cl::desc("missed: remark on an attention that almost fused, or a "
                     "library step that falls back to generated code, and "
                     "why; none"),
      llvm::cl::init("missed")};
  PassOptions::ListOption<std::string> weights{
      *this, "weights",
      llvm::cl::desc("Arguments to mark as weights ({ein.weight}): 0-based "
                     "positions or names")};
  PassOptions::Option<int64_t> planMemoryLimit{
      *this, "plan-memory-limit",
      llvm::cl::desc("The memory limit the planner plans within, when it "
                     "differs from memory-limit (which the bundle's buffers "
                     "must fit): ein-compile lowers it where the buffers of "
                     "a plan within memory-limit do not fit"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> planned{
      *this, "planned",
      llvm::cl::desc("The input is a planned program (ein-plan's output, "
                     "perhaps edited): compile it as planned, without "
                     "importing, fusing or planning it again"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> cudaToolkit{
      *this, "cuda-toolkit",
      llvm::cl::desc("The CUDA toolkit whose ptxas and libdevice compile GPU "
                     "kernels (cuda)"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<std::string> exchange{
      *this, "exchange",
      llvm::cl::desc("Exchange programs: synthesized (relays, multicasts, "
                     "aggregation trees where the simulator prefers them) or "
                     "naive"),
      llvm::cl::init("synthesized")};
  PassOptions::Option<bool> batchTransfers{
      *this, "batch-transfers",
      llvm::cl::desc("With synthesized exchanges, batch an op's small "
                     "transfers between two GPUs where the step simulates no "
                     "slower"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> weightsReplicable{
      *this, "weights-replicable",
      llvm::cl::desc("Weights may be replicated for free (false: each GPU "
                     "holds the share of a weight the plan lays out, and a "
                     "block another GPU reads is moved, as an activation's)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> gemmEpilogues{
      *this, "gemm-epilogues",
      llvm::cl::desc("Fold the bias adds, residual adds and activations a "
                     "library gemm's result alone feeds into its step "
                     "(ein-fuse-gemm-epilogues)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> approxMath{
      *this, "approx-math",
      llvm::cl::desc("In CUDA kernels whose results are all f16 or bf16, "
                     "compute f32 division, exp and log with the GPU's "
                     "approximate instructions (ein-lower-to-cuda)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> partials{
      *this, "partials",
      llvm::cl::desc("Partial sums of a cut summed loop in the accumulator "
                     "type (acc) or the result's element type (out)"),
      llvm::cl::init("acc")};
  PassOptions::Option<bool> attentionViews{
      *this, "attention-views",
      llvm::cl::desc("Let library attention read its query, key and value "
                     "and write its result through strided views where they "
                     "are copies (ein-fold-attention-views)"),
      llvm::cl::init(true)};
};

/// ein-compile-pipeline: import, attach the target, export the logical
/// program (the bundle's reference), plan, synthesize exchanges, fuse,
/// lower for the target and write the bundle, its memory check included.
/// Every stage is a pass of its own, so any of them can be replayed
/// (`ein-opt --ein-compile-pipeline=... --dump-pass-pipeline` lists them).
void buildCompilePipeline(OpPassManager &pm,
                          const CompilePipelineOptions &options);

/// The ein-opt pipeline text that builds exactly `options`' pipeline:
/// `ein-compile-pipeline{...}` with every option that differs from its
/// default (and always dir, target and devices).
std::string printCompilePipeline(const CompilePipelineOptions &options);

/// Registers the ein pipelines with the pass registry (ein-opt).
void registerEinPipelines();

} // namespace mlir::ein

#endif // EINSUMMABLE_PIPELINES_PIPELINES_H
