//===- PlanReport.cpp - Plans and exchanges as JSON and tables ------------===//

#include "Einsummable/Plan/PlanReport.h"

#include "Einsummable/Support/FileOutput.h"

#include "Einsummable/Physical/Simulator.h"
#include "Einsummable/Planner/Memory.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;
namespace physical = ::ein::physical;

std::string mlir::ein::locationText(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return text;
}

/// "mlp.mlir:7" for `loc("/path/mlp.mlir":7:8)`; "" for other locations.
static std::string sourceLine(StringRef loc) {
  if (!loc.consume_front("loc(\""))
    return "";
  size_t quote = loc.find('"');
  if (quote == StringRef::npos)
    return "";
  StringRef file = loc.take_front(quote), rest = loc.drop_front(quote + 1);
  if (!rest.consume_front(":"))
    return "";
  StringRef line = rest.take_while(llvm::isDigit);
  size_t slash = file.find_last_of('/');
  return (file.drop_front(slash == StringRef::npos ? 0 : slash + 1) + ":" +
          line)
      .str();
}

std::string mlir::ein::opAtSource(Operation *op) {
  std::string line = sourceLine(locationText(op));
  return op->getName().getStringRef().str() +
         (line.empty() ? "" : " at " + line);
}

llvm::json::Object mlir::ein::exchangeReport(
    const planner::Graph &graph, const std::vector<std::string> &locations,
    const physical::DeviceProgram &program, const ::ein::Topology &topology,
    const physical::SimResult *simulated,
    const std::vector<int64_t> *copyOrder) {
  physical::SimResult own;
  if (!simulated)
    own = physical::simulate(topology, program.tasks);
  const physical::SimResult &sim = simulated ? *simulated : own;
  // When each movement starts and lands in the simulated step: its first
  // hop's start, its last hop's end.
  std::vector<double> start(program.movements.size(), sim.seconds),
      end(program.movements.size(), 0);
  // A batch's task moves every movement of it.
  for (size_t t = 0; t < program.tasks.size(); ++t) {
    for (int each : physical::movementsOf(program, static_cast<int>(t))) {
      start[each] = std::min(start[each], sim.start[t]);
      end[each] = std::max(end[each], sim.end[t]);
    }
  }
  llvm::json::Array exchanges;
  for (size_t i = 0; i < program.movements.size(); ++i) {
    const physical::Movement &m = program.movements[i];
    // The links of every hop, through the relays if any.
    std::vector<int64_t> path = {m.from};
    path.insert(path.end(), m.via.begin(), m.via.end());
    path.push_back(m.to);
    llvm::json::Array links;
    for (size_t h = 0; h + 1 < path.size(); ++h)
      for (int l : topology.route(path[h], path[h + 1]).links)
        links.push_back(topology.links[l].name);
    llvm::json::Array offsets, sizes;
    for (size_t d = 0; d < m.region.begin.size(); ++d) {
      offsets.push_back(m.region.begin[d]);
      sizes.push_back(m.region.end[d] - m.region.begin[d]);
    }
    llvm::json::Object entry{{"op", graph.ops[m.op].name},
                             {"loc", locations[m.op]},
                             {"kind", physical::movementKindName(m.kind)},
                             {"value", graph.values[m.value].name},
                             {"offsets", std::move(offsets)},
                             {"sizes", std::move(sizes)},
                             {"from", m.from},
                             {"to", m.to},
                             {"bytes", m.bytes},
                             {"links", std::move(links)},
                             {"start_ms", start[i] * 1e3},
                             {"end_ms", end[i] * 1e3}};
    if (!m.via.empty())
      entry["via"] = llvm::json::Array(m.via);
    if (program.batchOf[i] >= 0)
      entry["batch"] = program.batchOf[i];
    if (copyOrder && (*copyOrder)[i] >= 0)
      entry["copy_order"] = (*copyOrder)[i];
    exchanges.push_back(std::move(entry));
  }
  return llvm::json::Object{
      {"simulated_ms", sim.seconds * 1e3},
      {"bytes",
       llvm::json::Object{
           {"repartition", program.bytes[physical::Movement::Repartition]},
           {"join", program.bytes[physical::Movement::Join]},
           {"aggregate", program.bytes[physical::Movement::Aggregate]}}},
      {"exchanges", std::move(exchanges)},
      {"batches", static_cast<int64_t>(program.batches.size())}};
}

std::vector<mlir::ein::ExplainedOp>
mlir::ein::explainOps(const planner::Graph &graph, const planner::Plan &plan,
                      const planner::SearchOptions &options,
                      const std::vector<std::string> &locations) {
  std::vector<ExplainedOp> out;
  std::vector<std::vector<planner::Spec>> candidates;
  for (size_t o = 0; o < graph.ops.size(); ++o)
    candidates.push_back(
        options.allowedSpecs.empty()
            ? planner::enumerateSpecs(graph.ops[o], options.devices)
            : options.allowedSpecs[o]);
  std::vector<std::vector<std::optional<double>>> totals =
      planner::alternativeTotals(graph, plan.specs, options, candidates);
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const planner::Op &op = graph.ops[o];
    ExplainedOp e;
    e.op = op.name;
    e.loc = locations[o];
    e.loops = op.loopNames;
    e.spec = plan.specs[o];
    e.cost = plan.costs[o];
    planner::OpPlan chosen = planner::planOp(graph, op, e.spec, options);
    for (size_t i = 0; i < op.inputs.size(); ++i)
      if (op.inputs[i].windowed())
        e.haloBytes +=
            planner::movedBytes(chosen.arrivals[i], chosen.needs[i],
                                graph.values[op.inputs[i].value].elementBytes);
    for (size_t c = 0; c < candidates[o].size(); ++c)
      if (candidates[o][c] != plan.specs[o] && totals[o][c])
        e.alternatives.push_back({candidates[o][c], *totals[o][c]});
    out.push_back(std::move(e));
  }
  return out;
}

static llvm::json::Array integers(const planner::Spec &spec) {
  llvm::json::Array a;
  for (int64_t x : spec)
    a.push_back(x);
  return a;
}

llvm::json::Array mlir::ein::explainJson(const std::vector<ExplainedOp> &ops) {
  llvm::json::Array out;
  for (const ExplainedOp &e : ops) {
    llvm::json::Array alternatives;
    for (const auto &[spec, cost] : e.alternatives)
      alternatives.push_back(
          llvm::json::Object{{"spec", integers(spec)}, {"cost_bytes", cost}});
    out.push_back(llvm::json::Object{
        {"op", e.op},
        {"loc", e.loc},
        {"indices", llvm::join(e.loops, ",")},
        {"spec", integers(e.spec)},
        {"cost", llvm::json::Object{{"repartition", e.cost.repartition},
                                    {"join", e.cost.join},
                                    {"agg", e.cost.aggregation},
                                    {"compute", e.cost.compute}}},
        {"halo_bytes", e.haloBytes},
        {"alternatives", std::move(alternatives)}});
  }
  return out;
}

std::string mlir::ein::humanBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return llvm::formatv("{0:F1} {1}", bytes, units[unit]).str();
}

static std::string specText(const planner::Spec &spec,
                            const std::vector<std::string> &loops) {
  std::string text;
  for (size_t l = 0; l < spec.size(); ++l)
    if (spec[l] > 1)
      text +=
          (text.empty() ? "" : " ") + loops[l] + "/" + std::to_string(spec[l]);
  return text.empty() ? "(whole)" : text;
}

void mlir::ein::printExplainTable(llvm::raw_ostream &os,
                                  const std::vector<ExplainedOp> &ops) {
  os << llvm::formatv(
      "{0,-24} {1,-22} {2,-18} {3,10} {4,10} {5,10} {6,10}  {7}  {8}\n", "op",
      "loops", "cut", "repart", "join", "agg", "compute",
      "best alternative (plan total)", "source");
  for (const ExplainedOp &e : ops) {
    std::string best = "-";
    if (!e.alternatives.empty()) {
      auto cheapest = std::min_element(
          e.alternatives.begin(), e.alternatives.end(),
          [](const auto &a, const auto &b) { return a.second < b.second; });
      best = specText(cheapest->first, e.loops) + " (" +
             humanBytes(cheapest->second) + ")";
    }
    std::string where = sourceLine(e.loc);
    os << llvm::formatv(
        "{0,-24} {1,-22} {2,-18} {3,8} {4,8} {5,8} {6,8}  {7,-29}  {8}\n", e.op,
        llvm::join(e.loops, ","), specText(e.spec, e.loops),
        humanBytes(e.cost.repartition), humanBytes(e.cost.join),
        humanBytes(e.cost.aggregation), humanBytes(e.cost.compute), best,
        where.empty() ? "-" : where);
  }
}

void mlir::ein::printPlanDot(llvm::raw_ostream &os, llvm::StringRef name,
                             const planner::Graph &graph,
                             const std::vector<ExplainedOp> &ops) {
  auto shapeText = [](const planner::Value &v) {
    std::string text;
    for (int64_t d : v.shape)
      text += (text.empty() ? "" : "x") + std::to_string(d);
    return text;
  };
  std::string prefix = name.str() + "_";
  os << "  subgraph \"cluster_" << name << "\" {\n    label=\"" << name
     << "\";\n";
  std::vector<int> producer(graph.values.size(), -1);
  for (size_t o = 0; o < graph.ops.size(); ++o)
    producer[graph.ops[o].output.value] = static_cast<int>(o);
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const planner::Value &value = graph.values[v];
    if (producer[v] >= 0)
      continue;
    const char *kind = value.kind == planner::ValueKind::Weight ? "weight"
                       : value.kind == planner::ValueKind::Constant
                           ? "constant"
                           : "activation";
    os << "    \"" << prefix << "v" << v << "\" [shape=ellipse, label=\""
       << value.name << "\\n"
       << shapeText(value) << " (" << kind << ")\"];\n";
  }
  for (size_t o = 0; o < ops.size(); ++o) {
    const ExplainedOp &e = ops[o];
    os << "    \"" << prefix << "op" << o << "\" [shape=box, label=\"" << e.op
       << "\\ncut " << specText(e.spec, e.loops) << "\\nrepartition "
       << humanBytes(e.cost.repartition) << ", join " << humanBytes(e.cost.join)
       << "\\nagg " << humanBytes(e.cost.aggregation) << ", compute "
       << humanBytes(e.cost.compute) << "\"];\n";
    for (const planner::Access &input : graph.ops[o].inputs) {
      const planner::Value &value = graph.values[input.value];
      int from = producer[input.value];
      os << "    \"" << prefix
         << (from >= 0 ? "op" + std::to_string(from)
                       : "v" + std::to_string(input.value))
         << "\" -> \"" << prefix << "op" << o << "\" [label=\"" << value.name
         << " " << shapeText(value) << "\"];\n";
    }
  }
  os << "  }\n";
}

void mlir::ein::SimulatedTrace::add(llvm::StringRef function,
                                    const planner::Graph &graph,
                                    const std::vector<std::string> &locations,
                                    const physical::DeviceProgram &program,
                                    const physical::SimResult &sim,
                                    int64_t devices) {
  // Functions one after another, as the bundle runs them.
  double origin = endMs;
  std::map<std::string, int> opIndex;
  for (size_t o = 0; o < graph.ops.size(); ++o)
    opIndex[graph.ops[o].name] = static_cast<int>(o);
  std::set<std::pair<int64_t, int64_t>> added;
  for (size_t t = 0; t < program.tasks.size(); ++t) {
    const physical::Task &task = program.tasks[t];
    // The op: a transfer's movement's, a kernel's by its label's prefix
    // ("ein.join_agg #3: block 1").
    int op = -1;
    if (program.movementOf[t] >= 0)
      op = program.movements[program.movementOf[t]].op;
    else if (auto it = opIndex.find(task.label.substr(0, task.label.find(':')));
             it != opIndex.end())
      op = it->second;
    std::string where = op >= 0 ? sourceLine(locations[op]) : "";
    llvm::json::Object args{{"function", function.str()}, {"task", int64_t(t)}};
    if (op >= 0)
      args["loc"] = locations[op];
    if (task.kind == physical::Task::Transfer) {
      args["bytes"] = task.bytes;
      args["from"] = task.from;
      args["to"] = task.to;
    } else {
      args["flops"] = task.flops;
    }
    // A dataflow program queues a GPU's received transfers after the GPUs'
    // kernel queues (devices + GPU).
    std::pair<int64_t, int64_t> lane{task.queue % devices,
                                     task.queue / devices};
    events.push_back(llvm::json::Object{
        {"name", where.empty() ? task.label : task.label + " " + where},
        {"cat", task.kind == physical::Task::Transfer ? "transfer" : "kernel"},
        {"ph", "X"},
        {"ts", (origin + sim.start[t] * 1e3) * 1e3},
        {"dur", (sim.end[t] - sim.start[t]) * 1e6},
        {"pid", lane.first},
        {"tid", lane.second},
        {"args", std::move(args)}});
    added.insert(lane);
  }
  for (auto [device, stream] : added) {
    if (!lanes.insert({device, stream}).second)
      continue;
    if (!lanes.count({device, stream == 0 ? 1 : 0}))
      events.push_back(llvm::json::Object{
          {"name", "process_name"},
          {"ph", "M"},
          {"pid", device},
          {"tid", 0},
          {"args",
           llvm::json::Object{{"name", "device " + std::to_string(device) +
                                           " (simulated)"}}}});
    events.push_back(llvm::json::Object{
        {"name", "thread_name"},
        {"ph", "M"},
        {"pid", device},
        {"tid", stream},
        {"args",
         llvm::json::Object{{"name", stream == 0
                                         ? "stream 0"
                                         : "stream 1 (received transfers)"}}}});
  }
  endMs = origin + sim.seconds * 1e3;
}

/// Writes what `write` prints to `to`, whole or not at all; a diagnostic at
/// `where` (cannot write `what`) if it cannot. `to`'s directory may be the
/// bundle's, not made yet (ein-compile --explain=B/plan.json): it is made,
/// and the bundle writer keeps what else B holds.
static LogicalResult writeExplanation(StringRef to, Operation *where,
                                      StringRef what,
                                      function_ref<void(raw_ostream &)> write) {
  StringRef parent = llvm::sys::path::parent_path(to);
  if (!parent.empty())
    (void)llvm::sys::fs::create_directories(parent);
  std::string error;
  if (!writeFileAtomically(to, write, error))
    return where->emitError() << "cannot write " << what << ": " << error;
  return success();
}

LogicalResult mlir::ein::SimulatedTrace::write(llvm::StringRef to,
                                               Operation *where,
                                               llvm::StringRef what) const {
  llvm::json::Object trace{{"displayTimeUnit", "ms"},
                           {"traceEvents", llvm::json::Array(events)}};
  return writeExplanation(to, where, what, [&](raw_ostream &os) {
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(trace))) << "\n";
  });
}

void mlir::ein::PlanExplanation::add(llvm::StringRef function,
                                     const planner::Graph &graph,
                                     const planner::Plan &plan,
                                     const planner::SearchOptions &options,
                                     const std::vector<std::string> &locations,
                                     const physical::DeviceProgram &program,
                                     const ::ein::Topology &topology) {
  std::vector<ExplainedOp> ops = explainOps(graph, plan, options, locations);
  llvm::raw_string_ostream dotStream(dot);
  printPlanDot(dotStream, function, graph, ops);
  for (ExplainedOp &e : ops)
    explained.push_back(std::move(e));
  // One simulation serves the report and the trace.
  physical::SimResult sim = physical::simulate(topology, program.tasks);
  llvm::json::Object report =
      exchangeReport(graph, locations, program, topology, &sim);
  simulatedMs += *report.getNumber("simulated_ms");
  bytesBetweenNodes += physical::bytesBetweenNodes(program, topology);
  nodes = topology.nodes;
  if (options.gpusPerNode > 0)
    nodeByteWeight = std::max(nodeByteWeight, options.crossNodeWeight);
  for (llvm::json::Value &x : *report.getArray("exchanges"))
    exchanges.push_back(std::move(x));
  trace.add(function, graph, locations, program, sim, topology.devices);
  total += plan.total;
  planner::PlanMemory memory =
      planner::planMemory(graph, plan, options.devices);
  memoryBytes.resize(options.devices, 0);
  for (int64_t d = 0; d < options.devices; ++d)
    memoryBytes[d] = std::max(memoryBytes[d], memory.peak[d]);
}

namespace {

std::string stagedName(const physical::StagedPlan &plan) {
  if (plan.stages == 1 && plan.microBatches == 1)
    return "the plan above as a dataflow program";
  if (plan.stages == 1)
    return "1 stage x " + std::to_string(plan.microBatches) +
           (plan.chunkDim == 1 ? " chunks of the sequence" : " chunks") +
           " (dataflow)";
  return std::to_string(plan.stages) + " stages x " +
         std::to_string(plan.microBatches) + " micro-batch" +
         (plan.microBatches == 1 ? "" : "es");
}

/// "SxM": how the explanation names the staged plan it lowered.
std::string stagedShape(const physical::StagedPlan &plan) {
  return std::to_string(plan.stages) + "x" + std::to_string(plan.microBatches);
}

} // namespace

void mlir::ein::PlanExplanation::addArbitration(
    llvm::StringRef function, const std::vector<Candidate> &candidates,
    llvm::StringRef kept) {
  arbitrations.push_back({function.str(), candidates, kept.str()});
}

void mlir::ein::PlanExplanation::addPipeline(
    llvm::StringRef function, const std::vector<physical::StagedPlan> &plans,
    const physical::StagedPlan *lowered) {
  if (plans.empty() && !lowered)
    return;
  std::string shape = lowered ? stagedShape(*lowered) : std::string();
  pipelines.push_back({function.str(), plans, shape});
  // A plan lowered as asked but not among those priced is listed too.
  if (lowered && llvm::none_of(plans, [&](const physical::StagedPlan &p) {
        return stagedShape(p) == shape;
      }))
    pipelines.back().plans.push_back(*lowered);
}

LogicalResult mlir::ein::PlanExplanation::write(llvm::StringRef to,
                                                const Header &header,
                                                Operation *where) const {
  if (to == "-") {
    llvm::outs() << "plan for " << header.devices << " devices on "
                 << header.topology << ", strategy " << header.strategy << ": "
                 << humanBytes(total) << " by the proxy, "
                 << llvm::formatv("{0:F3}", simulatedMs).str()
                 << " ms simulated with " << header.exchange << " exchanges ("
                 << exchanges.size() << " transfers, "
                 << llvm::count_if(exchanges,
                                   [](const llvm::json::Value &x) {
                                     return x.getAsObject()->get("batch") !=
                                            nullptr;
                                   })
                 << " in batches)\n";
    if (nodes > 1) {
      llvm::outs() << "between nodes: " << humanBytes(bytesBetweenNodes);
      if (nodeByteWeight > 1)
        llvm::outs() << " (the proxy counts each "
                     << llvm::formatv("{0:F1}", nodeByteWeight).str()
                     << " times)";
      llvm::outs() << "\n";
    }
    for (const Arbitration &a : arbitrations) {
      llvm::outs() << "plans simulated for @" << a.function << ":";
      for (auto [i, c] : llvm::enumerate(a.candidates))
        llvm::outs() << (i ? "," : "") << " " << c.plan << " "
                     << llvm::formatv("{0:F3}", c.seconds * 1e3).str() << " ms";
      llvm::outs() << "; kept "
                   << (a.kept.empty() ? std::string("the search's") : a.kept)
                   << "\n";
    }
    for (const auto &[function, plans, lowered] : pipelines) {
      llvm::outs() << "pipeline stages for @" << function
                   << " (simulated; the plan above: "
                   << llvm::formatv("{0:F3}", simulatedMs).str() << " ms):\n";
      const physical::StagedPlan *best = nullptr;
      for (const physical::StagedPlan &p : plans) {
        if (!p.feasible) {
          llvm::outs() << "  "
                       << (p.stages > 1 || p.microBatches > 1
                               ? stagedName(p) + ": "
                               : "")
                       << "none: " << p.error << "\n";
          continue;
        }
        llvm::outs() << "  " << stagedName(p) << ": "
                     << llvm::formatv("{0:F3}", p.seconds * 1e3).str()
                     << " ms, " << humanBytes(p.bytesBetweenNodes)
                     << " between nodes\n";
        if (!best || p.seconds < best->seconds)
          best = &p;
      }
      if (best && best->seconds * 1e3 < simulatedMs)
        llvm::outs() << "  faster by the simulator: " << stagedName(*best)
                     << ", "
                     << llvm::formatv("{0:F2}",
                                      simulatedMs / (best->seconds * 1e3))
                            .str()
                     << "x\n";
      else if (best)
        llvm::outs() << "  faster by the simulator: the plan above\n";
      llvm::outs() << "  lowered: "
                   << (lowered.empty() ? "the plan above (stages=off; "
                                         "stages=auto or SxM lowers a "
                                         "staged plan)"
                                       : lowered + " (stages x micro-batches)")
                   << (header.memoryLimit > 0 && !lowered.empty()
                           ? "; the fastest that fits memory-limit"
                           : "")
                   << "\n";
    }
    printExplainTable(llvm::outs(), explained);
    return success();
  }
  // The simulator's predicted step in Chrome's trace-event format.
  if (to.ends_with(".trace.json"))
    return trace.write(to, where, "the explanation");
  if (to.ends_with(".dot"))
    return writeExplanation(to, where, "the explanation", [&](raw_ostream &os) {
      os << "digraph plan {\n  label=\"plan for " << header.devices
         << " devices on " << header.topology << ", strategy "
         << header.strategy << "\";\n"
         << dot << "}\n";
    });
  llvm::json::Object root{{"devices", header.devices},
                          {"topology", header.topology},
                          {"strategy", header.strategy},
                          {"exchange", header.exchange},
                          {"ops", explainJson(explained)},
                          {"total_cost_bytes", total},
                          {"memory_bytes", llvm::json::Array(memoryBytes)},
                          {"simulated_ms", simulatedMs},
                          {"exchanges", llvm::json::Array(exchanges)}};
  if (nodes > 1) {
    root["bytes_between_nodes"] = bytesBetweenNodes;
    root["node_byte_weight"] = nodeByteWeight;
  }
  if (!pipelines.empty()) {
    llvm::json::Array staged;
    for (const auto &[function, plans, lowered] : pipelines)
      for (const physical::StagedPlan &p : plans) {
        llvm::json::Object entry{{"function", function},
                                 {"feasible", p.feasible}};
        if (!p.feasible) {
          entry["error"] = p.error;
        } else {
          entry["stages"] = p.stages;
          entry["micro_batches"] = p.microBatches;
          entry["cut"] = p.chunkDim == 1 ? "sequence" : "batch";
          entry["dataflow"] = p.dataflow;
          // The order a dataflow program's GPUs take their ready steps in.
          if (p.dataflow)
            entry["order"] = physical::chunkOrderName(p.order);
          entry["simulated_ms"] = p.seconds * 1e3;
          entry["bytes_between_nodes"] = p.bytesBetweenNodes;
          entry["transfers_between_nodes"] = p.transfersBetweenNodes;
          entry["bytes"] = p.bytes;
          entry["stage_of"] = llvm::json::Array(p.stageOf);
          entry["lowered"] = lowered == stagedShape(p);
        }
        staged.push_back(std::move(entry));
      }
    root["pipeline"] = std::move(staged);
  }
  if (!arbitrations.empty()) {
    llvm::json::Array candidates;
    for (const Arbitration &a : arbitrations)
      for (auto [i, c] : llvm::enumerate(a.candidates))
        candidates.push_back(llvm::json::Object{
            {"function", a.function},
            {"plan", c.plan},
            {"simulated_ms", c.seconds * 1e3},
            {"cost_bytes", c.costBytes},
            {"kept", a.kept.empty() ? i == 0 : c.plan == a.kept}});
    root["arbitration"] = std::move(candidates);
  }
  if (header.seed)
    root["seed"] = int64_t(*header.seed);
  if (header.memoryLimit > 0)
    root["memory_limit"] = header.memoryLimit;
  return writeExplanation(to, where, "the explanation", [&](raw_ostream &os) {
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  });
}

std::vector<bool> mlir::ein::keptForTies(const planner::Graph &graph,
                                         const planner::Options &options) {
  return graph.ties.empty() ? std::vector<bool>()
                            : physical::opsKeptForTies(graph, options);
}

/// The plan's step on the target's topology, as the simulator predicts it
/// with naive exchanges, and its busiest link.
static LogicalResult
remarkSimulatedStep(func::FuncOp func, mlir::ein::TargetAttr target,
                    const planner::Graph &graph, const planner::Plan &plan,
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
  physical::ProgramChoice choice;
  physical::DeviceProgram best =
      physical::placedBestProgram(graph, plan, options, topology,
                                  keptForTies(graph, options), choice, batch);
  double placed = physical::simulate(topology, best.tasks).seconds;
  const std::vector<bool> &synthesizedOps = choice.synthesizedOps;
  remark << "; with blocks placed for the machine ("
         << choice.placement.placedOps() << " ops moved, "
         << std::count(synthesizedOps.begin(), synthesizedOps.end(), true)
         << " of " << synthesizedOps.size() << " synthesized, "
         << best.batches.size() << " batched transfers) "
         << llvm::formatv("{0:F3}", placed * 1e3).str() << " ms";
  return success();
}

LogicalResult mlir::ein::emitPlanRemarks(
    func::FuncOp func, ein::TargetAttr target, llvm::ArrayRef<Operation *> ops,
    const planner::Graph &graph, const planner::Plan &plan,
    const planner::Options &options, bool batch) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const planner::OpCost &c = plan.costs[i];
    ops[i]->emitRemark() << "spec "
                         << SpecAttr::get(func.getContext(), plan.specs[i])
                         << ": join " << humanBytes(c.join) << ", aggregation "
                         << humanBytes(c.aggregation) << ", repartition "
                         << humanBytes(c.repartition) << ", compute "
                         << humanBytes(c.compute);
  }
  func.emitRemark() << "plan total " << humanBytes(plan.total) << " over "
                    << ops.size() << " ops";
  return remarkSimulatedStep(func, target, graph, plan, options, batch);
}
