//===- Decompose.cpp - ein-decompose ------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Physical/Exchange.h"
#include "Einsummable/Planner/BuildGraph.h"
#include "Einsummable/Planner/Memory.h"
#include "Einsummable/Planner/Search.h"
#include "Einsummable/Planner/Strategy.h"
#include "Einsummable/Transforms/Passes.h"
#include "Einsummable/Transforms/PlanReport.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINDECOMPOSE
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;
namespace physical = ::ein::physical;

namespace {

/// The ops whose placement stays canonical: those fixing tied layouts.
std::vector<bool> keptForTies(const planner::Graph &graph,
                              const planner::Options &options) {
  return graph.ties.empty() ? std::vector<bool>()
                            : physical::opsKeptForTies(graph, options);
}

/// The plan's step on the target's topology, as the simulator predicts it
/// with naive exchanges, and its busiest link.
LogicalResult remarkSimulatedStep(func::FuncOp func, TargetAttr target,
                                  const planner::Graph &graph,
                                  const planner::Plan &plan,
                                  const planner::Options &options, bool batch) {
  ::ein::Topology topology;
  std::string error;
  if (!::ein::makeTopology(target.getTopology().str(), target.getDevices(),
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
  std::vector<bool> synthesizedOps;
  physical::Placement placement;
  physical::DeviceProgram best = physical::placedBestProgram(
      graph, plan, options, topology, keptForTies(graph, options),
      synthesizedOps, placement, batch);
  double placed = physical::simulate(topology, best.tasks).seconds;
  remark << "; with blocks placed for the machine (" << placement.placedOps()
         << " ops moved, "
         << std::count(synthesizedOps.begin(), synthesizedOps.end(), true)
         << " of " << synthesizedOps.size() << " synthesized, "
         << best.batches.size() << " batched transfers) "
         << llvm::formatv("{0:F3}", placed * 1e3).str() << " ms";
  return success();
}

/// `options` narrowed to the specs strategy `kind` allows on `graph`
/// (unchanged for optimal), or false with `why`.
bool restrictTo(const planner::Graph &graph, planner::Strategy kind,
                uint64_t seed, planner::SearchOptions &options,
                std::string &why) {
  if (kind == planner::Strategy::Optimal)
    return true;
  options.restriction =
      std::string("under strategy ") + planner::strategyName(kind);
  return planner::allowedSpecs(graph, kind, options.devices, seed,
                               options.allowedSpecs, why);
}

struct EinDecomposePass
    : public mlir::ein::impl::EinDecomposeBase<EinDecomposePass> {
  using Base::Base;

  /// Keeps `plan` if it fits in memory-limit bytes a GPU; else, for the
  /// optimal strategy, the best plan that charges weight replicas, then the
  /// best Megatron-style plan, whichever fits first. Fails saying how much
  /// the leanest plan tried needs.
  LogicalResult fitMemory(func::FuncOp func, const planner::Graph &graph,
                          planner::Strategy kind,
                          const planner::SearchOptions &options,
                          planner::Plan &plan) {
    double limit = double(int64_t(memoryLimit));
    planner::PlanMemory memory =
        planner::planMemory(graph, plan, options.devices);
    if (memory.largest() <= limit)
      return success();
    double least = memory.largest();
    int64_t leastDevice = memory.largestDevice();
    std::string tried = planner::strategyName(kind);
    if (kind == planner::Strategy::Optimal) {
      planner::SearchOptions sharded = options;
      sharded.weightsReplicable = false;
      planner::SearchOptions megatron = options;
      std::string why;
      bool megatronApplies = restrictTo(graph, planner::Strategy::Megatron,
                                        /*seed=*/0, megatron, why);
      std::vector<std::pair<std::string, planner::SearchOptions>> fallbacks = {
          {"optimal with weight replicas charged", sharded}};
      if (megatronApplies)
        fallbacks.push_back({"megatron", megatron});
      for (auto &[name, fallback] : fallbacks) {
        tried += ", " + name;
        planner::Plan other = planner::search(graph, fallback);
        if (!other.feasible)
          continue;
        planner::PlanMemory m =
            planner::planMemory(graph, other, options.devices);
        if (m.largest() <= limit) {
          plan = std::move(other);
          return success();
        }
        if (m.largest() < least) {
          least = m.largest();
          leastDevice = m.largestDevice();
        }
      }
    }
    func.emitOpError() << "has no plan within the memory limit of "
                       << int64_t(memoryLimit)
                       << " bytes a GPU: the leanest plan tried (" << tried
                       << ") needs " << int64_t(least) << " bytes ("
                       << humanBytes(least) << ") on GPU " << leastDevice;
    return failure();
  }

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
    options.bytesPerFlop =
        bytesPerFlop >= 0
            ? double(bytesPerFlop)
            : ::ein::bytesPerFlop(::ein::chipInfo(target.getChip().str()),
                                  options.devices);
    auto info = planner::getTargetInfo(target.getChip().str());
    if (memoryLimit < 0) {
      module.emitError() << "memory-limit must not be negative, got "
                         << int64_t(memoryLimit);
      return signalPassFailure();
    }
    std::optional<planner::Strategy> kind =
        planner::parseStrategy(StringRef(strategy).str());
    if (!kind) {
      module.emitError() << "strategy must be optimal, random, dp or "
                            "megatron, got '"
                         << strategy << "'";
      return signalPassFailure();
    }
    StringRef explainTo = explain;
    ::ein::Topology topology;
    if (!explainTo.empty()) {
      std::string error;
      if (explainExchange != "synthesized" && explainExchange != "naive") {
        module.emitError() << "explain-exchange must be synthesized or naive, "
                              "got '"
                           << explainExchange << "'";
        return signalPassFailure();
      }
      if (!::ein::makeTopology(target.getTopology().str(), target.getDevices(),
                               topology, error)) {
        module.emitError() << "cannot explain the plan: " << error;
        return signalPassFailure();
      }
    }
    std::vector<ExplainedOp> explained;
    std::string dot;
    llvm::raw_string_ostream dotStream(dot);
    llvm::json::Array exchanges;
    double total = 0, simulatedMs = 0;
    std::vector<double> memoryBytes;

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<PlannerGraph> graph = buildPlannerGraph(func, *info, tieLayout);
      if (failed(graph))
        return signalPassFailure();
      if (tieLayout)
        func->setAttr(EinDialect::getTieLayoutAttrName(),
                      UnitAttr::get(func.getContext()));
      planner::SearchOptions restricted = options;
      std::string why;
      if (!restrictTo(graph->graph, *kind, seed, restricted, why)) {
        func.emitOpError() << "has no plan: " << why;
        return signalPassFailure();
      }
      planner::Plan plan = planner::search(graph->graph, restricted);
      if (!plan.feasible) {
        func.emitOpError() << "has no plan: " << plan.error;
        return signalPassFailure();
      }
      if (memoryLimit > 0 &&
          failed(fitMemory(func, graph->graph, *kind, restricted, plan)))
        return signalPassFailure();
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
      if (!explainTo.empty()) {
        std::vector<std::string> locations;
        for (Operation *op : graph->ops)
          locations.push_back(locationText(op));
        std::vector<ExplainedOp> ops =
            explainOps(graph->graph, plan, restricted, locations);
        printPlanDot(dotStream, func.getSymName(), graph->graph, ops);
        for (ExplainedOp &e : ops)
          explained.push_back(std::move(e));
        std::vector<bool> synthesizedOps;
        physical::Placement placement;
        physical::DeviceProgram program =
            explainExchange == "naive"
                ? physical::naiveProgram(graph->graph, plan, options)
                : physical::placedBestProgram(
                      graph->graph, plan, options, topology,
                      keptForTies(graph->graph, options), synthesizedOps,
                      placement, batchTransfers);
        llvm::json::Object report =
            exchangeReport(graph->graph, locations, program, topology);
        simulatedMs += *report.getNumber("simulated_ms");
        for (llvm::json::Value &x : *report.getArray("exchanges"))
          exchanges.push_back(std::move(x));
        total += plan.total;
        planner::PlanMemory memory =
            planner::planMemory(graph->graph, plan, options.devices);
        memoryBytes.resize(options.devices, 0);
        for (int64_t d = 0; d < options.devices; ++d)
          memoryBytes[d] = std::max(memoryBytes[d], memory.peak[d]);
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
        if (failed(remarkSimulatedStep(func, target, graph->graph, plan,
                                       options, batchTransfers)))
          return signalPassFailure();
      }
    }
    if (explainTo.empty())
      return;
    if (explainTo == "-") {
      llvm::outs() << "plan for " << options.devices << " devices on "
                   << topology.name << ", strategy "
                   << planner::strategyName(*kind) << ": " << humanBytes(total)
                   << " by the proxy, "
                   << llvm::formatv("{0:F3}", simulatedMs).str()
                   << " ms simulated with " << explainExchange << " exchanges ("
                   << exchanges.size() << " transfers, "
                   << llvm::count_if(exchanges,
                                     [](const llvm::json::Value &x) {
                                       return x.getAsObject()->get("batch") !=
                                              nullptr;
                                     })
                   << " in batches)\n";
      printExplainTable(llvm::outs(), explained);
      return;
    }
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> output =
        openOutputFile(explainTo, &error);
    if (!output) {
      module.emitError() << "cannot write the explanation: " << error;
      return signalPassFailure();
    }
    if (explainTo.ends_with(".dot")) {
      output->os() << "digraph plan {\n  label=\"plan for " << options.devices
                   << " devices on " << topology.name << ", strategy "
                   << planner::strategyName(*kind) << "\";\n"
                   << dot << "}\n";
      output->keep();
      return;
    }
    llvm::json::Object root{{"devices", options.devices},
                            {"topology", topology.name},
                            {"strategy", planner::strategyName(*kind)},
                            {"exchange", StringRef(explainExchange)},
                            {"ops", explainJson(explained)},
                            {"total_cost_bytes", total},
                            {"memory_bytes", llvm::json::Array(memoryBytes)},
                            {"simulated_ms", simulatedMs},
                            {"exchanges", std::move(exchanges)}};
    if (*kind == planner::Strategy::Random)
      root["seed"] = int64_t(seed);
    if (memoryLimit > 0)
      root["memory_limit"] = int64_t(memoryLimit);
    output->os() << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
                 << "\n";
    output->keep();
  }
};
} // namespace
