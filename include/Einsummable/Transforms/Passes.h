//===- Passes.h - ein passes ------------------------------------*- C++ -*-===//

#ifndef EINSUMMABLE_TRANSFORMS_PASSES_H
#define EINSUMMABLE_TRANSFORMS_PASSES_H

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::ein {

#define GEN_PASS_DECL
#include "Einsummable/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Einsummable/Transforms/Passes.h.inc"

/// Options of the `ein-plan` pipeline.
struct PlanPipelineOptions : public PassPipelineOptions<PlanPipelineOptions> {
  PassOptions::Option<bool> weightsReplicable{
      *this, "weights-replicable",
      llvm::cl::desc("Weights may be replicated for free"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tieLayout{
      *this, "tie-layout",
      llvm::cl::desc("Results leave in the layout of the first activation "
                     "argument of their type"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> allowInexact{
      *this, "allow-inexact",
      llvm::cl::desc("Keep the cheapest plan found when the state cap bites"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> stateCap{
      *this, "state-cap",
      llvm::cl::desc("The most search states kept per step"),
      llvm::cl::init(131072)};
  PassOptions::Option<std::string> strategy{
      *this, "strategy",
      llvm::cl::desc("optimal, random, dp or megatron (ein-decompose)"),
      llvm::cl::init("optimal")};
  PassOptions::Option<uint64_t> seed{
      *this, "seed", llvm::cl::desc("The seed of strategy=random"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> memoryLimit{
      *this, "memory-limit",
      llvm::cl::desc("Bytes a GPU may hold (0: no limit)"), llvm::cl::init(0)};
  PassOptions::Option<std::string> explain{
      *this, "explain",
      llvm::cl::desc("Explain the plan: a JSON file, or - for a table"),
      llvm::cl::init("")};
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

/// Registers the ein pipelines with the pass registry (ein-opt).
void registerEinPipelines();

} // namespace mlir::ein

#endif // EINSUMMABLE_TRANSFORMS_PASSES_H
