//===- Decompose.cpp - ein-decompose ------------------------------------===//
//
// A thin shell over the planning driver (Einsummable/Plan/PlanModule.h):
// the pass's options become a PlanConfig for the module's target, and
// planModule plans every function.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Plan/PlanModule.h"
#include "Einsummable/Transforms/Passes.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINDECOMPOSE
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {

struct EinDecomposePass
    : public mlir::ein::impl::EinDecomposeBase<EinDecomposePass> {
  using Base::Base;

  void runOnOperation() override {
    PlanOptions options;
    options.weightsReplicable = weightsReplicable;
    options.stateCap = stateCap;
    options.searchBudget = searchBudget;
    options.hierarchical = hierarchical;
    options.weighNodes = weighNodes;
    options.bytesPerFlop = bytesPerFlop;
    options.compute = compute;
    options.remarks = remarks;
    options.exact = exact;
    options.tieLayout = tieLayout;
    options.strategy = strategy;
    options.seed = seed;
    options.memoryLimit = memoryLimit;
    options.explain = explain;
    options.explainExchange = explainExchange;
    options.batchTransfers = batchTransfers;
    options.pipeline = pipeline;
    options.maxMicroBatches = maxMicroBatches;
    options.stages = stages;
    options.progressSeconds = progressSeconds;
    FailureOr<PlanConfig> config = PlanConfig::build(getOperation(), options);
    if (failed(config) || failed(planModule(getOperation(), *config)))
      signalPassFailure();
  }
};

} // namespace
