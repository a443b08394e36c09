//===- EnumerateSpecs.cpp - ein-enumerate-specs -------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Plan/BuildGraph.h"
#include "Einsummable/Planner/Cost.h"
#include "Einsummable/Transforms/Passes.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINENUMERATESPECS
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {
struct EinEnumerateSpecsPass
    : public mlir::ein::impl::EinEnumerateSpecsBase<EinEnumerateSpecsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr target = requireTarget(module, "ein-enumerate-specs");
    if (!target)
      return signalPassFailure();
    auto info = ::ein::planner::getTargetInfo(target.getChip().str());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<PlannerGraph> graph = buildPlannerGraph(func, *info);
      if (failed(graph))
        return signalPassFailure();
      for (auto [op, node] : llvm::zip(graph->ops, graph->graph.ops)) {
        SmallVector<Attribute> candidates;
        for (const ::ein::planner::Spec &spec :
             ::ein::planner::enumerateSpecs(node, target.getDevices()))
          candidates.push_back(SpecAttr::get(&getContext(), spec));
        op->setAttr(EinDialect::getCandidatesAttrName(),
                    ArrayAttr::get(&getContext(), candidates));
      }
    }
  }
};
} // namespace
