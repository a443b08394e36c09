//===- Pipelines.cpp - The named ein pipelines --------------------------===//

#include "Einsummable/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::ein;

void mlir::ein::buildPlanPipeline(OpPassManager &pm,
                                  const PlanPipelineOptions &options) {
  pm.addPass(createEinEnumerateSpecs());
  EinDecomposeOptions decompose;
  decompose.weightsReplicable = options.weightsReplicable;
  decompose.tieLayout = options.tieLayout;
  decompose.stateCap = options.stateCap;
  decompose.allowInexact = options.allowInexact;
  decompose.strategy = options.strategy;
  decompose.seed = options.seed;
  decompose.explain = options.explain;
  decompose.memoryLimit = options.memoryLimit;
  decompose.explainExchange = options.explainExchange;
  decompose.batchTransfers = options.batchTransfers;
  pm.addPass(createEinDecompose(decompose));
  pm.addPass(createEinInsertExchanges());
}

void mlir::ein::registerEinPipelines() {
  PassPipelineRegistration<PlanPipelineOptions>(
      "ein-plan",
      "Plan a logical program for the module's #ein.target: enumerate specs, "
      "choose one per op by whole-graph search, and rewrite onto relations "
      "with explicit exchanges",
      buildPlanPipeline);
}
