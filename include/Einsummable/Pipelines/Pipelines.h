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
/// `ein-compile-pipeline` pipelines (declared once, in CompileOptions.def,
/// and registered with the pipeline that derives from this).
struct PlannerOptionFields {
  explicit PlannerOptionFields(::mlir::detail::PassOptions &owner)
      : owner(owner) {}

private:
  ::mlir::detail::PassOptions &owner;

public:
#define EIN_PLANNER_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)            \
  ::mlir::detail::PassOptions::Option<TYPE> FIELD{                             \
      owner, FLAG, llvm::cl::desc(DESCRIPTION), llvm::cl::init(DEFAULT)};
#define EIN_PLANNER_OPTION_OWN EIN_PLANNER_OPTION
#include "Einsummable/Pipelines/CompileOptions.def"
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

#define EIN_COMPILE_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)            \
  PassOptions::Option<TYPE> FIELD{*this, FLAG, llvm::cl::desc(DESCRIPTION),    \
                                  llvm::cl::init(DEFAULT)};
#define EIN_PIPELINE_OPTION EIN_COMPILE_OPTION
#define EIN_COMPILE_LIST_OPTION(TYPE, FIELD, FLAG, DESCRIPTION)                \
  PassOptions::ListOption<TYPE> FIELD{*this, FLAG, llvm::cl::desc(DESCRIPTION)};
#include "Einsummable/Pipelines/CompileOptions.def"
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

/// ein-export-shard-pipeline: what `ein-compile --emit-shard` runs on a
/// copy of its input: mark the weights, attach the target, and annotate the
/// program with the plan as upstream `shard` ops (ein-export-shard).
void buildExportShardPipeline(OpPassManager &pm,
                              const CompilePipelineOptions &options);

/// Registers the ein pipelines with the pass registry (ein-opt).
void registerEinPipelines();

} // namespace mlir::ein

#endif // EINSUMMABLE_PIPELINES_PIPELINES_H
