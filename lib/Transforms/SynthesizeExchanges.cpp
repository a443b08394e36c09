//===- SynthesizeExchanges.cpp - ein-synthesize-exchanges ---------------===//
//
// A thin shell over lowerPlan (Einsummable/Plan/LowerPlan.h): per planned
// function, its graph and options, the lowering to device-level ein, and the
// exchange report and trace asked for.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Physical/Simulator.h"
#include "Einsummable/Plan/LowerPlan.h"
#include "Einsummable/Plan/PlanReport.h"
#include "Einsummable/Support/FileOutput.h"
#include "Einsummable/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINSYNTHESIZEEXCHANGES
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;
namespace physical = ::ein::physical;

namespace {

struct EinSynthesizeExchangesPass
    : public mlir::ein::impl::EinSynthesizeExchangesBase<
          EinSynthesizeExchangesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool synthesize = StringRef(exchange) == "synthesized";
    if (!synthesize && StringRef(exchange) != "naive") {
      module.emitError() << "exchange=" << StringRef(exchange)
                         << " is not available; the exchange forms are: "
                            "naive, synthesized";
      return signalPassFailure();
    }
    TargetAttr target = requireTarget(module, "ein-synthesize-exchanges");
    if (!target)
      return signalPassFailure();
    planner::Options options;
    options.devices = target.getDevices();
    options.weightsReplicable = weightsReplicable;
    std::string computeError;
    if (!planner::parseCompute(compute, options.kernelTimes, computeError)) {
      module.emitError() << computeError;
      return signalPassFailure();
    }
    auto info = planner::getTargetInfo(target.getChip().str());
    ::ein::Topology topology;
    std::string error;
    if ((synthesize || !StringRef(report).empty() ||
         !StringRef(trace).empty()) &&
        !::ein::makeTopology(target.getTopology().str(), target.getDevices(),
                             topology, error)) {
      module.emitError() << (synthesize ? "cannot synthesize exchanges: "
                             : !StringRef(report).empty()
                                 ? "cannot write the exchange report: "
                                 : "cannot write the trace: ")
                         << error;
      return signalPassFailure();
    }
    llvm::json::Array functions;
    SimulatedTrace simulatedTrace;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<PlannerGraph> graph =
          buildPlannerGraph(func, *info, /*tieLayout=*/false,
                            /*planned=*/true);
      if (failed(graph))
        return signalPassFailure();
      // Where each op stood, before the lowering replaces it.
      std::vector<std::string> locations;
      for (Operation *op : graph->ops)
        locations.push_back(locationText(op));
      // A chunked plan runs as a dataflow program (docs/physical.md).
      planner::Options within = options;
      within.dataflow = func->hasAttr(EinDialect::getDataflowAttrName());
      // A plan that moves weights says so, whatever this pass was told.
      within.weightsReplicable =
          options.weightsReplicable &&
          !func->hasAttr(EinDialect::getWeightsMoveAttrName());
      FailureOr<LoweredPlan> lowered =
          lowerPlan(func, *graph, within, synthesize ? &topology : nullptr,
                    placeBlocks, batchTransfers);
      if (failed(lowered))
        return signalPassFailure();
      std::optional<physical::SimResult> sim;
      if (!StringRef(report).empty() || !StringRef(trace).empty())
        sim = physical::simulate(topology, lowered->program.tasks);
      if (!StringRef(trace).empty())
        simulatedTrace.add(func.getSymName(), graph->graph, locations,
                           lowered->program, *sim, topology.devices);
      if (!StringRef(report).empty()) {
        llvm::json::Object entry =
            exchangeReport(graph->graph, locations, lowered->program, topology,
                           &*sim, &lowered->copyOrder);
        entry["function"] = func.getSymName();
        const std::vector<bool> &synthesized = lowered->synthesized;
        int64_t count =
            std::count(synthesized.begin(), synthesized.end(), true);
        entry["form"] = count == 0                             ? "naive"
                        : count == int64_t(synthesized.size()) ? "synthesized"
                                                               : "mixed";
        entry["synthesized_ops"] = count;
        entry["placed_ops"] =
            static_cast<int64_t>(lowered->placement.placedOps());
        functions.push_back(std::move(entry));
      }
    }
    if (!StringRef(trace).empty() &&
        failed(simulatedTrace.write(trace, module, "the trace")))
      return signalPassFailure();
    if (StringRef(report).empty())
      return;
    llvm::json::Object root{{"devices", target.getDevices()},
                            {"topology", topology.name},
                            {"exchange", StringRef(exchange)},
                            {"functions", std::move(functions)}};
    if (!writeFileAtomically(
            report,
            [&](raw_ostream &os) {
              os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
                 << "\n";
            },
            error)) {
      module.emitError() << "cannot write the exchange report: " << error;
      return signalPassFailure();
    }
  }
};

} // namespace
