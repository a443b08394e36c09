//===- PlanModule.cpp - Plan a module for its target ---------------------===//
//
// What ein-decompose runs: per function, the planner's graph, the search
// under the strategy, the simulator's arbitration between candidate plans,
// memory limits, staged and chunked plans, the explanation, and the specs
// (and staged rewrite) written back onto the IR.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Plan/PlanModule.h"

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Physical/Exchange.h"
#include "Einsummable/Physical/Pipeline.h"
#include "Einsummable/Plan/BuildGraph.h"
#include "Einsummable/Plan/LowerPlan.h"
#include "Einsummable/Plan/PlanReport.h"
#include "Einsummable/Plan/StagedPlan.h"
#include "Einsummable/Planner/Hierarchy.h"
#include "Einsummable/Planner/Memory.h"
#include "Einsummable/Planner/Search.h"
#include "Einsummable/Planner/Strategy.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;
namespace physical = ::ein::physical;

/// "S stages over M micro-batches", or, for one stage, "M chunks".
static std::string stagedPlanName(const physical::StagedPlan &plan) {
  std::string m = std::to_string(plan.microBatches);
  if (plan.stages == 1)
    return m + (plan.chunkDim == 1 ? " chunks of the sequence" : " chunks");
  return std::to_string(plan.stages) + " stages over " + m +
         (plan.microBatches == 1 ? " micro-batch" : " micro-batches");
}

namespace {

/// `options` narrowed to the specs strategy `kind` allows on `graph`
/// (unchanged for optimal), or false with `why`.
bool restrictTo(const planner::Graph &graph, planner::Strategy kind,
                uint64_t seed, int64_t nodes, planner::SearchOptions &options,
                std::string &why) {
  if (kind == planner::Strategy::Optimal)
    return true;
  options.restriction =
      std::string("under strategy ") + planner::strategyName(kind);
  if (kind == planner::Strategy::MegatronDataParallel)
    return planner::megatronDpSpecs(graph, options.devices, nodes,
                                    options.allowedSpecs, why);
  return planner::allowedSpecs(graph, kind, options.devices, seed,
                               options.allowedSpecs, why);
}

/// The op a planner message names ("op 'ein.join_agg #0' ..."), so the
/// diagnostic stands at its source line; the function where none is named.
Operation *atNamedOp(const PlannerGraph &graph, func::FuncOp func,
                     StringRef message) {
  size_t at = message.find("op '");
  if (at != StringRef::npos) {
    StringRef name =
        message.drop_front(at + 4).take_until([](char c) { return c == '\''; });
    for (size_t i = 0; i < graph.graph.ops.size(); ++i)
      if (graph.graph.ops[i].name == name)
        return graph.ops[i];
  }
  return func;
}

/// Removes a function's `shard.shard` and `shard.sharding` ops, each
/// annotation replaced by the value it annotates.
void stripShardAnnotations(func::FuncOp func) {
  SmallVector<Operation *> dead;
  func.walk([&](Operation *op) {
    if (auto annotation = dyn_cast<shard::ShardOp>(op)) {
      annotation.getResult().replaceAllUsesWith(annotation.getSrc());
      dead.push_back(op);
    } else if (isa<shard::ShardingOp>(op)) {
      dead.push_back(op);
    }
  });
  for (Operation *op : llvm::reverse(dead))
    op->erase();
}

/// Keeps `plan` if it fits in memory-limit bytes a GPU; else, for the
/// optimal strategy, the best plan that charges weight replicas, then the
/// best Megatron-style plan, whichever fits first. Where none does,
/// returns why (how much the leanest plan tried needs); else "".
std::string fitMemory(const planner::Graph &graph, planner::Strategy kind,
                      planner::SearchOptions &options, planner::Plan &plan,
                      int64_t memoryLimit) {
  double limit = double(int64_t(memoryLimit));
  planner::PlanMemory memory =
      planner::planMemory(graph, plan, options.devices);
  if (memory.largest() <= limit)
    return "";
  double least = memory.largest();
  int64_t leastDevice = memory.largestDevice();
  std::string tried = planner::strategyName(kind);
  if (kind == planner::Strategy::Optimal) {
    planner::SearchOptions sharded = options;
    sharded.weightsReplicable = false;
    planner::SearchOptions megatron = options;
    std::string why;
    bool megatronApplies = restrictTo(graph, planner::Strategy::Megatron,
                                      /*seed=*/0, /*nodes=*/1, megatron, why);
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
        options = fallback;
        return "";
      }
      if (m.largest() < least) {
        least = m.largest();
        leastDevice = m.largestDevice();
      }
    }
  }
  return "has no plan within the memory limit of " +
         std::to_string(int64_t(memoryLimit)) +
         " bytes a GPU: the leanest plan tried (" + tried + ") needs " +
         std::to_string(int64_t(least)) + " bytes (" + humanBytes(least) +
         ") on GPU " + std::to_string(leastDevice);
}

/// The memory model of `func` as staged (`applyStagedPlan`'s output: a
/// `spec` on every op and, in `ein.place`, the GPUs of its blocks).
FailureOr<planner::PlanMemory> placedMemory(func::FuncOp func,
                                            const planner::TargetInfo &info,
                                            int64_t devices) {
  FailureOr<PlannerGraph> graph = buildPlannerGraph(func, info);
  if (failed(graph))
    return failure();
  planner::Plan plan;
  std::vector<std::vector<int64_t>> place;
  for (Operation *op : graph->ops) {
    auto spec = op->getAttrOfType<SpecAttr>("spec");
    auto gpus =
        op->getAttrOfType<DenseI64ArrayAttr>(EinDialect::getPlaceAttrName());
    if (!spec || !gpus)
      return op->emitOpError() << "is not staged (no spec or ein.place)";
    plan.specs.emplace_back(spec.getParts().begin(), spec.getParts().end());
    place.emplace_back(gpus.asArrayRef().begin(), gpus.asArrayRef().end());
  }
  return planner::planMemory(graph->graph, plan, devices, &place);
}

/// What `staged` holds on its fullest GPU, lowered onto a copy of `func`
/// (which stays as it was).
FailureOr<planner::PlanMemory>
stagedMemory(func::FuncOp func, const physical::StagedPlan &staged,
             const planner::TargetInfo &info,
             const planner::SearchOptions &options) {
  OpBuilder builder(func);
  auto copy = cast<func::FuncOp>(builder.clone(*func));
  FailureOr<planner::PlanMemory> memory = failure();
  FailureOr<PlannerGraph> graph = buildPlannerGraph(
      copy, info, /*tieLayout=*/false, /*planned=*/false, options.devices);
  if (succeeded(graph) &&
      succeeded(applyStagedPlan(copy, *graph, staged, info, options)))
    memory = placedMemory(copy, info, options.devices);
  copy.erase();
  return memory;
}

} // namespace

LogicalResult mlir::ein::planModule(ModuleOp module, const PlanConfig &config) {
  MLIRContext *context = module.getContext();
  TargetAttr target = config.target;
  const planner::SearchOptions &options = config.search;
  const planner::TargetInfo *info = config.info.get();
  const ::ein::Topology &topology = config.topology;
  std::optional<planner::Strategy> kind = config.strategy;
  uint64_t seed = config.seed;
  bool tieLayout = config.tieLayout, exact = config.exact,
       hierarchical = config.hierarchical, remarks = config.remarks,
       batchTransfers = config.batchTransfers, pipeline = config.pipeline;
  int64_t memoryLimit = config.memoryLimit,
          maxMicroBatches = config.maxMicroBatches;
  double progressSeconds = config.progressSeconds;
  StringRef explainTo = config.explain;
  std::string explainExchange = exchangeFormName(config.explainExchange);
  bool fixed = config.stages.kind == StagesChoice::Kind::Fixed;
  int64_t askedStages = fixed ? config.stages.stages : 0,
          askedMicroBatches = fixed ? config.stages.microBatches : 0;
  bool autoStages = config.stages.kind == StagesChoice::Kind::Auto;
  bool asWhole = config.stages.asWhole();
  PlanExplanation explanation;

  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    FailureOr<PlannerGraph> graph = buildPlannerGraph(
        func, *info, tieLayout, /*planned=*/false, options.devices);
    if (failed(graph))
      return failure();
    if (tieLayout)
      func->setAttr(EinDialect::getTieLayoutAttrName(),
                    UnitAttr::get(func.getContext()));
    // The search's plan under `base`: restricted as the strategy says,
    // and on several nodes hierarchical (what crosses nodes first, then
    // within them). Infeasible, with `why`, where there is none.
    bool nodesFirst = hierarchical && *kind == planner::Strategy::Optimal &&
                      topology.nodes > 1 && topology.nodes < options.devices;
    auto planUnder = [&](const planner::SearchOptions &base,
                         planner::SearchOptions &used, std::string &why,
                         planner::Refinement refinement =
                             planner::Refinement::Multiples) -> planner::Plan {
      used = base;
      if (!restrictTo(graph->graph, *kind, seed, topology.nodes, used, why))
        return {};
      if (nodesFirst) {
        used.restriction = "under the hierarchical search (a plan for " +
                           std::to_string(topology.nodes) +
                           " nodes, refined within each)";
        if (!planner::hierarchicalSpecs(graph->graph, used, topology.nodes,
                                        used.allowedSpecs, why, refinement))
          return {};
      }
      // A long search says how far it has come (on stderr, every few
      // seconds), so that a big program is not a silent wait.
      used.onProgress = [&](const planner::SearchProgress &p) {
        std::string at = p.op >= 0 ? opAtSource(graph->ops[p.op]) : "";
        llvm::errs() << "ein-decompose: planning @" << func.getSymName() << ": "
                     << p.step << " of " << p.steps << " nodes placed"
                     << (at.empty() ? "" : " (" + at + ")") << ", " << p.states
                     << " states, cheapest " << humanBytes(p.cheapest)
                     << " so far, " << llvm::format("%.1f", p.seconds)
                     << " s\n";
      };
      used.progressSeconds = std::max(0.0, double(progressSeconds));
      planner::Plan found = planner::search(graph->graph, used);
      used.onProgress = nullptr;
      if (!found.feasible)
        why = found.error;
      return found;
    };
    planner::SearchOptions restricted;
    std::string why;
    planner::Plan plan = planUnder(options, restricted, why);
    if (!plan.feasible) {
      atNamedOp(*graph, func, why)->emitOpError() << "has no plan: " << why;
      return failure();
    }
    // The proxy prices bytes, not the contention on links nor how the
    // exchanges fall on the step's critical path. So the simulator
    // arbitrates: on several nodes the plan that counts every byte alike
    // (without it, w4's weights-split plans were 1.37x slower) and, under
    // the hierarchical search, the one refining node-level cuts only by
    // one node's (w1 at 4 x 8, placed: 1.19 ms against 1.95), and on one
    // node, for the optimal strategy, Megatron's plan where its cuts apply
    // (w1 on 2 GPUs with weights split: 3.82 ms against the search's
    // 4.21) are simulated against the search's plan, and the fastest is
    // the plan. Its step, placed and synthesized, is kept for the
    // explanation and stages=auto.
    // The last step placed, what it was placed for and the choice made:
    // where it is the step lowered, ein-synthesize-exchanges takes the
    // choice rather than making it again (ein.exchange_choice).
    std::optional<physical::DeviceProgram> placedProgram;
    struct PlacedStep {
      std::vector<planner::Spec> specs;
      bool dataflow = false;
      uint64_t key = 0;
      physical::ProgramChoice choice;
    };
    std::optional<PlacedStep> lastPlaced;
    auto placedStep = [&](const planner::Plan &p, bool dataflow = false) {
      PlacedStep placed{p.specs, dataflow, 0, {}};
      planner::SearchOptions as = options;
      as.dataflow = dataflow;
      std::vector<bool> keep = keptForTies(graph->graph, options);
      physical::DeviceProgram step = physical::placedBestProgram(
          graph->graph, p, as, topology, keep, placed.choice, batchTransfers);
      placed.key = physical::choiceKey(graph->graph, p, as, topology, keep,
                                       batchTransfers);
      lastPlaced = std::move(placed);
      return step;
    };
    struct Candidate {
      std::string name;
      planner::Plan plan;
      planner::SearchOptions used;
    };
    std::vector<Candidate> alternatives;
    if (options.gpusPerNode > 0) {
      planner::SearchOptions evenOptions = options, evenUsed;
      evenOptions.gpusPerNode = 0;
      std::string unused;
      planner::Plan even = planUnder(evenOptions, evenUsed, unused);
      if (even.feasible)
        alternatives.push_back(
            {"the search's, every byte alike", std::move(even), evenUsed});
    }
    if (nodesFirst) {
      // Node-level cuts times one node's: fewer, larger exchanges across
      // nodes, which the proxy does not price (each pays the network's
      // latency on its receiver's queue).
      planner::SearchOptions productUsed;
      std::string unused;
      planner::Plan product =
          planUnder(options, productUsed, unused, planner::Refinement::Product);
      if (product.feasible)
        alternatives.push_back({"the search's, node-level cuts times one "
                                "node's",
                                std::move(product), productUsed});
    }
    if (*kind == planner::Strategy::Optimal && topology.nodes <= 1 &&
        options.devices > 1) {
      planner::SearchOptions megatron = options;
      std::string unused;
      if (restrictTo(graph->graph, planner::Strategy::Megatron, seed, 1,
                     megatron, unused)) {
        planner::Plan hand = planner::search(graph->graph, megatron);
        if (hand.feasible)
          alternatives.push_back({"megatron's", std::move(hand), megatron});
      }
    }
    // A candidate's step for the arbitration: its exchanges synthesized
    // where faster, blocks where the plan puts them and transfers one by
    // one (placing and batching, which refine every candidate alike and
    // cost seconds on 32 GPUs, are left to the kept plan's step).
    auto quickStep = [&](const planner::Plan &p) {
      bool synthesized = false;
      return physical::simulate(topology,
                                physical::bestProgram(graph->graph, p, options,
                                                      topology, synthesized, {},
                                                      /*batch=*/false)
                                    .tasks)
          .seconds;
    };
    // Each candidate's proxy cost under the search's pricing (one that
    // counted every byte alike is priced again), for the explanation.
    auto pricedCost = [&](const planner::Plan &p) {
      return planner::evaluate(graph->graph, p.specs, options).total;
    };
    std::vector<PlanExplanation::Candidate> arbitration;
    std::string kept;
    double fastest = 0;
    for (Candidate &other : alternatives) {
      if (other.plan.specs == plan.specs)
        continue;
      if (arbitration.empty()) {
        fastest = quickStep(plan);
        arbitration.push_back({"the search's", fastest, pricedCost(plan)});
      }
      double seconds = quickStep(other.plan);
      arbitration.push_back({other.name, seconds, pricedCost(other.plan)});
      if (seconds < fastest) {
        fastest = seconds;
        plan = std::move(other.plan);
        restricted = other.used;
        kept = other.name;
      }
    }
    // Under a memory limit the intra-op plan must fit, unless a staged
    // plan is asked for (it is checked instead) or may be chosen.
    std::string noFit;
    if (memoryLimit > 0 && (askedStages == 0 || asWhole)) {
      std::vector<planner::Spec> before = plan.specs;
      noFit = fitMemory(graph->graph, *kind, restricted, plan, memoryLimit);
      if (plan.specs != before) {
        // A leaner plan replaced the one arbitrated for.
        placedProgram.reset();
        arbitration.clear();
      }
    }
    if (!noFit.empty() && !autoStages) {
      func.emitOpError() << noFit;
      return failure();
    }
    // The planner always answers: past its state cap it keeps the best
    // plan its bounded search found, and says how far from the optimum it
    // may be; `exact` asks for the refusal instead.
    if (plan.capped) {
      InFlightDiagnostic diag = exact ? func.emitOpError() : func.emitWarning();
      diag << "the search kept only the " << plan.stateCap
           << " cheapest states at some step (it saw " << plan.peakStates
           << "): ";
      if (plan.budgetBit)
        diag << "its budget of " << options.workBudget
             << " state expansions (it spent " << plan.work
             << ") left no room to raise the cap toward " << options.stateCap
             << ": ";
      if (exact) {
        diag << "the plan would not be provably optimal; raise "
             << (plan.budgetBit ? "search-budget (ein-compile "
                                  "--search-budget=N, 0 for none)"
                                : "state-cap (ein-compile --state-cap=N)")
             << ", or leave out exact=true (--exact) to keep the best plan "
                "found";
        return failure();
      }
      double gap = plan.total > 0
                       ? 100.0 * (plan.total - plan.lowerBound) / plan.total
                       : 0.0;
      diag << "the plan may not be optimal: it costs " << humanBytes(plan.total)
           << ", no plan less than " << humanBytes(plan.lowerBound)
           << " (within " << llvm::formatv("{0:F1}", gap).str() << "%); raise "
           << (plan.budgetBit ? "search-budget (ein-compile --search-budget=N, "
                                "0 for none)"
                              : "state-cap (ein-compile --state-cap=N)")
           << " for a proven optimum";
    }
    // The intra-op plan's step as ein-synthesize-exchanges lowers it
    // (placed, synthesized), made once for the explanation and
    // stages=auto.
    auto intraOpProgram = [&]() -> const physical::DeviceProgram & {
      if (!placedProgram)
        placedProgram = placedStep(plan);
      return *placedProgram;
    };
    // The staged plans priced (for the explanation or stages=auto) and the
    // one lowered, if any.
    planner::SearchOptions stagedOptions = options;
    stagedOptions.stateCap = restricted.stateCap;
    bool pricing = pipeline && !explainTo.empty() && topology.nodes > 1 &&
                   (*kind == planner::Strategy::Optimal ||
                    *kind == planner::Strategy::Megatron);
    std::vector<physical::StagedPlan> priced;
    if (pricing || autoStages)
      priced = physical::stagedPlans(graph->graph, stagedOptions, topology,
                                     maxMicroBatches, *kind);
    // stages=auto also weighs one stage over chunks of the batch, whose
    // exchanges overlap the next chunk's compute.
    if (autoStages && options.devices > 1)
      for (physical::StagedPlan &p : physical::chunkedPlans(
               graph->graph, stagedOptions, topology, maxMicroBatches, *kind))
        priced.push_back(std::move(p));
    // The intra-op plan as a dataflow program (stages=1x1, or weighed by
    // stages=auto): each GPU's steps over several streams, so exchanges
    // that nothing waits for (a weight gathered ahead of its op) overlap
    // the compute.
    auto wholeDataflow = [&]() {
      physical::StagedPlan whole;
      whole.feasible = true;
      whole.dataflow = true;
      whole.stageDevices = options.devices;
      whole.specs = plan.specs;
      whole.stageOf.assign(graph->graph.ops.size(), 0);
      physical::DeviceProgram step = placedStep(plan, /*dataflow=*/true);
      whole.seconds = physical::simulate(topology, step.tasks).seconds;
      whole.bytes = step.bytes[0] + step.bytes[1] + step.bytes[2];
      whole.bytesBetweenNodes = physical::bytesBetweenNodes(
          step, topology, &whole.transfersBetweenNodes);
      return whole;
    };
    if (autoStages && options.devices > 1 && noFit.empty())
      priced.insert(priced.begin(), wholeDataflow());
    std::optional<physical::StagedPlan> lowered;
    if (asWhole) {
      lowered = wholeDataflow();
    } else if (askedStages > 0) {
      lowered = physical::stagedPlan(graph->graph, stagedOptions, topology,
                                     askedStages, askedMicroBatches, *kind);
      if (!lowered->feasible) {
        atNamedOp(*graph, func, lowered->error)->emitOpError()
            << "has no plan of " << stagedPlanName(*lowered) << ": "
            << lowered->error;
        return failure();
      }
    } else if (autoStages) {
      // The fastest of the intra-op plan and the pipelines; under a
      // memory limit, the fastest that fits.
      double intraOp =
          noFit.empty()
              ? physical::simulate(topology, intraOpProgram().tasks).seconds
              : std::numeric_limits<double>::infinity();
      std::vector<const physical::StagedPlan *> faster;
      for (const physical::StagedPlan &p : priced)
        if (p.feasible && p.seconds < intraOp)
          faster.push_back(&p);
      llvm::stable_sort(
          faster, [](auto *a, auto *b) { return a->seconds < b->seconds; });
      for (const physical::StagedPlan *p : faster) {
        if (memoryLimit > 0 && p->stages * p->microBatches > 1) {
          FailureOr<planner::PlanMemory> m =
              stagedMemory(func, *p, *info, stagedOptions);
          if (failed(m))
            return failure();
          if (m->largest() > double(int64_t(memoryLimit)))
            continue;
        }
        lowered = *p;
        break;
      }
      if (!lowered && !noFit.empty()) {
        func.emitOpError() << noFit << "; no pipeline-staged plan fits either";
        return failure();
      }
    }
    if (!explainTo.empty()) {
      std::vector<std::string> locations;
      for (Operation *op : graph->ops)
        locations.push_back(locationText(op));
      physical::DeviceProgram program =
          explainExchange == "naive"
              ? physical::naiveProgram(graph->graph, plan, options)
              : intraOpProgram();
      explanation.add(func.getSymName(), graph->graph, plan, restricted,
                      locations, program, topology);
      if (!arbitration.empty())
        explanation.addArbitration(func.getSymName(), arbitration, kept);
      // Several nodes: what pipeline stages would give instead, each
      // stage cut as this run's strategy cuts (docs/distributed.md); with
      // stages=auto, the chunked plans too.
      if (pricing || autoStages || lowered)
        explanation.addPipeline(func.getSymName(), priced,
                                lowered ? &*lowered : nullptr);
    }
    for (size_t i = 0; i < graph->ops.size(); ++i) {
      Operation *op = graph->ops[i];
      op->removeAttr(EinDialect::getCandidatesAttrName());
      op->setAttr("spec", SpecAttr::get(context, plan.specs[i]));
    }
    // The plan honours the user's `shard` annotations (pins); they have
    // done their work and later passes see the values they annotate.
    stripShardAnnotations(func);
    // What the model says the plan holds, for the bundle writer's check
    // against the buffers it lays out (ein-compile plans again within
    // less where they do not fit).
    auto setPlannedMemory = [&](double bytes) {
      func->setAttr(
          EinDialect::getPlannedMemoryAttrName(),
          IntegerAttr::get(IntegerType::get(context, 64), int64_t(bytes)));
    };
    // The intra-op plan as a dataflow program keeps the plan's ops.
    bool rewritten = lowered && lowered->microBatches * lowered->stages > 1;
    // A plan that charges weights where they move has each GPU hold only
    // the weight blocks it lays out; the lowering moves the others.
    if (!(rewritten ? stagedOptions : restricted).weightsReplicable)
      func->setAttr(EinDialect::getWeightsMoveAttrName(),
                    UnitAttr::get(context));
    if (lowered && !rewritten)
      func->setAttr(EinDialect::getDataflowAttrName(), UnitAttr::get(context));
    // Not with ties: the lowering's graph has none (the function's
    // ein.tie_layout stands for them), so its key never matches.
    if (lastPlaced && !rewritten && graph->graph.ties.empty() &&
        lastPlaced->specs == plan.specs &&
        lastPlaced->dataflow == lowered.has_value())
      func->setAttr(
          EinDialect::getExchangeChoiceAttrName(),
          exchangeChoiceAttr(context, lastPlaced->key, lastPlaced->choice));
    if (memoryLimit > 0 && !rewritten)
      setPlannedMemory(
          planner::planMemory(graph->graph, plan, options.devices).largest());
    if (remarks &&
        failed(emitPlanRemarks(func, target, graph->ops, graph->graph, plan,
                               options, batchTransfers)))
      return failure();
    // Last, as it replaces the ops `graph` names.
    if (rewritten &&
        failed(applyStagedPlan(func, *graph, *lowered, *info, stagedOptions)))
      return failure();
    if (rewritten && memoryLimit > 0) {
      // The staged program as lowered: each stage's weights on its GPUs,
      // every micro-batch copy's activations while they live.
      FailureOr<planner::PlanMemory> m =
          placedMemory(func, *info, options.devices);
      if (failed(m))
        return failure();
      if (m->largest() > double(int64_t(memoryLimit))) {
        func.emitOpError() << "has no plan of " << stagedPlanName(*lowered)
                           << " within the memory limit of "
                           << int64_t(memoryLimit) << " bytes a GPU: it needs "
                           << int64_t(m->largest()) << " bytes ("
                           << humanBytes(m->largest()) << ") on GPU "
                           << m->largestDevice();
        return failure();
      }
      setPlannedMemory(m->largest());
    }
  }
  if (explainTo.empty())
    return success();
  PlanExplanation::Header header;
  header.devices = options.devices;
  header.topology = topology.name;
  header.strategy = planner::strategyName(*kind);
  header.exchange = explainExchange;
  if (*kind == planner::Strategy::Random)
    header.seed = seed;
  header.memoryLimit = memoryLimit;
  return explanation.write(explainTo, header, module);
}
