//===- Decompose.cpp - ein-decompose ------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Physical/Exchange.h"
#include "Einsummable/Planner/BuildGraph.h"
#include "Einsummable/Planner/Search.h"
#include "Einsummable/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINDECOMPOSE
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;

namespace {

/// Bytes in a short human form: 1.5 MiB.
std::string humanBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return llvm::formatv("{0:F1} {1}", bytes, units[unit]).str();
}

/// The plan's step on the target's topology, as the simulator predicts it
/// with naive exchanges, and its busiest link.
LogicalResult remarkSimulatedStep(func::FuncOp func, TargetAttr target,
                                  const planner::Graph &graph,
                                  const planner::Plan &plan,
                                  const planner::Options &options) {
  namespace physical = ::ein::physical;
  physical::Topology topology;
  std::string error;
  if (!physical::makeTopology(target.getTopology().str(), target.getDevices(),
                              topology, error))
    return func.emitError() << "cannot simulate the plan: " << error;
  physical::DeviceProgram program =
      physical::naiveProgram(graph, plan, options);
  physical::SimResult sim = physical::simulate(topology, program.tasks);
  double synthesized =
      physical::simulate(
          topology,
          physical::synthesizedProgram(graph, plan, options, topology).tasks)
          .seconds;
  InFlightDiagnostic remark = func.emitRemark();
  remark << "simulated step "
         << llvm::formatv("{0:F3}", sim.seconds * 1e3).str() << " ms on "
         << topology.name << " with naive exchanges: " << program.tasks.size()
         << " tasks, "
         << humanBytes(program.bytes[0] + program.bytes[1] + program.bytes[2])
         << " moved";
  if (!graph.ties.empty())
    remark << " (not counting the moves that return tied results to their "
              "arguments' layouts)";
  auto busiest = std::max_element(sim.linkBusy.begin(), sim.linkBusy.end());
  if (busiest != sim.linkBusy.end() && *busiest > 0 && sim.seconds > 0) {
    size_t link = busiest - sim.linkBusy.begin();
    remark << "; busiest link " << topology.links[link].name << " busy "
           << llvm::formatv("{0:F0}", 100 * *busiest / sim.seconds).str()
           << "% of the step";
  }
  remark << "; synthesized exchanges (relays, multicast and aggregation "
            "trees) "
         << llvm::formatv("{0:F3}", synthesized * 1e3).str() << " ms";
  return success();
}

struct EinDecomposePass
    : public mlir::ein::impl::EinDecomposeBase<EinDecomposePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stateCap < 1) {
      module.emitError() << "state-cap must be at least 1, got "
                         << int64_t(stateCap);
      return signalPassFailure();
    }
    TargetAttr target = requireTarget(module, "ein-decompose");
    if (!target)
      return signalPassFailure();
    planner::SearchOptions options;
    options.devices = target.getDevices();
    options.weightsReplicable = weightsReplicable;
    options.stateCap = static_cast<size_t>(stateCap);
    options.bytesPerFlop = bytesPerFlop >= 0 ? double(bytesPerFlop)
                                             : options.devices * 395e9 / 750e12;
    auto info = planner::getTargetInfo(target.getChip().str());

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<PlannerGraph> graph = buildPlannerGraph(func, *info, tieLayout);
      if (failed(graph))
        return signalPassFailure();
      planner::Plan plan = planner::search(graph->graph, options);
      if (!plan.feasible) {
        func.emitOpError() << "has no plan: " << plan.error;
        return signalPassFailure();
      }
      if (plan.capped) {
        InFlightDiagnostic diag =
            allowInexact ? func.emitWarning() : func.emitOpError();
        diag << "the search kept only the " << options.stateCap
             << " cheapest states at some step (it saw " << plan.peakStates
             << "): ";
        if (!allowInexact) {
          diag << "the plan would not be provably optimal; raise state-cap, "
                  "or pass allow-inexact=true to keep the cheapest plan found";
          return signalPassFailure();
        }
        diag << "the plan may not be optimal; raise state-cap";
      }
      for (size_t i = 0; i < graph->ops.size(); ++i) {
        Operation *op = graph->ops[i];
        op->removeAttr(EinDialect::getCandidatesAttrName());
        op->setAttr("spec", SpecAttr::get(&getContext(), plan.specs[i]));
        if (remarks) {
          const planner::OpCost &c = plan.costs[i];
          op->emitRemark() << "spec "
                           << SpecAttr::get(&getContext(), plan.specs[i])
                           << ": join " << humanBytes(c.join)
                           << ", aggregation " << humanBytes(c.aggregation)
                           << ", repartition " << humanBytes(c.repartition)
                           << ", compute " << humanBytes(c.compute);
        }
      }
      if (remarks) {
        func.emitRemark() << "plan total " << humanBytes(plan.total) << " over "
                          << graph->ops.size() << " ops";
        if (failed(
                remarkSimulatedStep(func, target, graph->graph, plan, options)))
          return signalPassFailure();
      }
    }
  }
};
} // namespace
