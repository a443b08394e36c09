//===- PlanConfig.cpp - What a planning run is asked for ----------------===//

#include "Einsummable/Plan/PlanConfig.h"

#include "Einsummable/Planner/Cost.h"

#include "ein/chip.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;

bool mlir::ein::parseExchangeForm(StringRef name, ExchangeForm &form) {
  if (name == "synthesized")
    form = ExchangeForm::Synthesized;
  else if (name == "naive")
    form = ExchangeForm::Naive;
  else
    return false;
  return true;
}

const char *mlir::ein::exchangeFormName(ExchangeForm form) {
  return form == ExchangeForm::Naive ? "naive" : "synthesized";
}

bool StagesChoice::parse(StringRef text, StagesChoice &choice) {
  choice = StagesChoice();
  if (text == "off")
    return true;
  if (text == "auto") {
    choice.kind = Kind::Auto;
    return true;
  }
  auto [s, m] = text.split('x');
  if (s.getAsInteger(10, choice.stages) ||
      m.getAsInteger(10, choice.microBatches) || choice.stages < 1 ||
      choice.microBatches < 1)
    return false;
  choice.kind = Kind::Fixed;
  return true;
}

FailureOr<PlanConfig> PlanConfig::build(ModuleOp module,
                                        const PlanOptions &options) {
  if (options.stateCap < 1)
    return module.emitError()
           << "state-cap must be at least 1, got " << options.stateCap;
  if (options.searchBudget < 0)
    return module.emitError() << "search-budget must be 0 (none) or more, got "
                              << options.searchBudget;
  PlanConfig config;
  config.target = requireTarget(module, "ein-decompose");
  if (!config.target)
    return failure();
  TargetAttr target = config.target;
  planner::SearchOptions &search = config.search;
  search.devices = target.getDevices();
  search.weightsReplicable = options.weightsReplicable;
  search.stateCap = static_cast<size_t>(options.stateCap);
  search.workBudget = static_cast<uint64_t>(options.searchBudget);
  search.bytesPerFlop =
      options.bytesPerFlop >= 0
          ? options.bytesPerFlop
          : ::ein::bytesPerFlop(::ein::chipInfo(target.getChip().str()),
                                search.devices);
  std::string computeError;
  if (!planner::parseCompute(options.compute, search.kernelTimes, computeError))
    return module.emitError() << computeError;
  config.info = planner::getTargetInfo(target.getChip().str());
  if (options.memoryLimit < 0)
    return module.emitError()
           << "memory-limit must not be negative, got " << options.memoryLimit;
  std::optional<planner::Strategy> kind =
      planner::parseStrategy(options.strategy);
  if (!kind)
    return module.emitError() << "strategy must be optimal, random, dp, "
                                 "megatron, spatial or megatron-dp, got '"
                              << options.strategy << "'";
  config.strategy = *kind;
  config.explain = options.explain;
  // The exchange form matters (and is checked) only for an explanation.
  if (!config.explain.empty() &&
      !parseExchangeForm(options.explainExchange, config.explainExchange))
    return module.emitError() << "explain-exchange must be synthesized or "
                                 "naive, got '"
                              << options.explainExchange << "'";
  std::string error;
  if (!::ein::makeTopology(target.getTopology().str(), target.getDevices(),
                           config.topology, error))
    return module.emitError() << "ein-decompose: " << error;
  const ::ein::Topology &topology = config.topology;
  // Several nodes: bytes between them count by how much slower their
  // links are than a GPU's inside its node.
  if (options.weighNodes && topology.nodes > 1 &&
      topology.devices == search.devices) {
    search.gpusPerNode = search.devices / topology.nodes;
    double inside =
        search.gpusPerNode > 1
            ? topology.bandwidth(0, 1)
            : ::ein::chipInfo(target.getChip().str()).linkBytesPerSecond;
    double across = topology.bandwidth(0, search.gpusPerNode);
    search.crossNodeWeight = across > 0 ? std::max(1.0, inside / across) : 1;
  }
  if (!StagesChoice::parse(options.stages, config.stages))
    return module.emitError()
           << "stages must be off, auto, or SxM (S >= 2 "
              "stages over M >= 1 micro-batches, e.g. 2x4, "
              "or 1xM: the batch (or a batch of 1's sequence) "
              "in M chunks, 1x1 the plan "
              "as a dataflow program), "
              "got '"
           << options.stages << "'";
  if (config.stages.staging()) {
    std::string why;
    if (topology.nodes < 2 && config.stages.stages > 1)
      why = "needs a topology of several nodes (topology=nodes=K,gpus=G); "
            "stages run on node groups (1xM chunks the batch on one)";
    else if (*kind != planner::Strategy::Optimal &&
             *kind != planner::Strategy::Megatron)
      why = "cuts a stage's ops with the optimal or megatron strategy, not "
            "'" +
            options.strategy + "'";
    else if (options.tieLayout)
      why = "cannot tie results to their arguments' layouts (tie-layout)";
    if (!why.empty())
      return module.emitError() << "stages=" << options.stages << " " << why;
  }
  config.seed = options.seed;
  config.tieLayout = options.tieLayout;
  config.exact = options.exact;
  config.hierarchical = options.hierarchical;
  config.remarks = options.remarks;
  config.batchTransfers = options.batchTransfers;
  config.pipeline = options.pipeline;
  config.memoryLimit = options.memoryLimit;
  config.maxMicroBatches = options.maxMicroBatches;
  config.progressSeconds = options.progressSeconds;
  return config;
}
