//===- ExportShard.cpp - ein-export-shard -------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "Einsummable/Plan/ShardInterop.h"
#include "Einsummable/Transforms/Passes.h"

#include "ein/chip.h"

#include "mlir/Pass/PassManager.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINEXPORTSHARD
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;

namespace {
struct EinExportShardPass
    : public mlir::ein::impl::EinExportShardBase<EinExportShardPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr target = requireTarget(module, "ein-export-shard");
    if (!target)
      return signalPassFailure();
    // Upstream reads linalg on tensors; ein ops have no `shard` form.
    WalkResult einOps = module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<EinDialect>(op->getDialect())) {
        op->emitOpError() << "has no upstream form: ein-export-shard "
                             "annotates a linalg-on-tensors program (the "
                             "input ein-import takes)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (einOps.wasInterrupted())
      return signalPassFailure();
    // The plan, made on a copy as ein-compile makes it; the tags say which
    // source ops each planned op stands for.
    OwningOpRef<ModuleOp> planned = module.clone();
    tagSources(module);
    tagSources(*planned);
    PassManager pm(&getContext(), ModuleOp::getOperationName());
    pm.addPass(createEinImport());
    pm.addPass(createEinFuseComposites());
    EinDecomposeOptions decompose;
    decompose.weightsReplicable = weightsReplicable;
    decompose.stateCap = stateCap;
    decompose.searchBudget = searchBudget;
    decompose.allowInexact = allowInexact;
    decompose.exact = exact;
    decompose.tieLayout = tieLayout;
    decompose.strategy = strategy;
    decompose.seed = seed;
    decompose.memoryLimit = memoryLimit;
    pm.addPass(createEinDecompose(decompose));
    planner::SearchOptions options;
    options.devices = target.getDevices();
    options.weightsReplicable = weightsReplicable;
    options.bytesPerFlop = ::ein::bytesPerFlop(
        ::ein::chipInfo(target.getChip().str()), options.devices);
    bool ok = succeeded(pm.run(*planned)) &&
              succeeded(annotateWithPlan(module, *planned, options));
    untagSources(module);
    if (!ok)
      return signalPassFailure();
    module->removeAttr(EinDialect::getTargetAttrName());
  }
};
} // namespace
