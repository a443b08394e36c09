//===- Search.cpp - Whole-graph spec search -------------------------------===//

#include "Einsummable/Planner/Search.h"
#include "Einsummable/Planner/Sharding.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace ein::planner {

namespace {

/// A choice node: an op (its spec) or a charged argument (its arrival
/// layout).
struct Node {
  int op = -1;    // >= 0 for ops
  int value = -1; // the value it defines
  std::vector<double> unary;
  std::vector<std::vector<Placed>> holds; // per candidate
  /// Per candidate, the id of its layout: candidates that leave the value
  /// in the same blocks on the same devices share one, and the search need
  /// not tell them apart once the node is placed.
  std::vector<int> layout;
  std::vector<int> consumers; // node ids
};

/// The bytes moved between two nodes for every pair of their candidates:
/// cost[producer candidate][consumer candidate].
struct Edge {
  int producer, consumer;
  std::vector<std::vector<double>> cost;
};

/// The search problem: nodes, their candidates and every cost table.
struct Problem {
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<std::vector<int>> edgesInto; // per node
  std::vector<std::vector<Spec>> specs;    // per op
  std::vector<std::vector<OpPlan>> plans;  // per op, per spec
  std::vector<int> opNode;                 // op -> node
  std::vector<int> order;                  // nodes, topologically
  std::string error;
};

/// The compute term in whole bytes, so that every cost is an integer and
/// sums are exact whatever order the search adds them in (ties then break
/// on the choice, not on rounding).
double computeBytes(const OpPlan &plan, const Options &options) {
  // Kernel times count as FLOPs at the gemm rate, so that the term keeps its
  // unit (and a block of a gemm at that rate costs the same either way).
  double flops =
      options.kernelTimes
          ? plan.busiestSeconds * chipInfo(kReferenceChip).gemmFlopsPerSecond
          : plan.busiestFlops;
  return std::round(options.bytesPerFlop * flops);
}

/// A placed block as one comparable key: device, then the box's corners.
std::vector<int64_t> placedKey(const Placed &p) {
  std::vector<int64_t> key = {p.device};
  key.insert(key.end(), p.box.begin.begin(), p.box.begin.end());
  key.insert(key.end(), p.box.end.begin(), p.box.end.end());
  return key;
}

/// A layout (every placed block) as one comparable key.
std::vector<std::vector<int64_t>> layoutKey(const std::vector<Placed> &layout) {
  std::vector<std::vector<int64_t>> key;
  for (const Placed &p : layout)
    key.push_back(placedKey(p));
  return key;
}

bool charged(const Value &value, const Options &options) {
  return !value.pinnedParts.empty() || value.kind == ValueKind::Activation ||
         (value.kind == ValueKind::Weight && !options.weightsReplicable);
}

/// Whether `spec` cuts `op`'s pinned inputs and result as pinned.
bool honoursPins(const Op &op, const Spec &spec) {
  for (size_t i = 0; i < op.pinnedInputs.size() && i < op.inputs.size(); ++i)
    if (!op.pinnedInputs[i].empty() &&
        !specCutsInto(op.inputs[i], spec, op.pinnedInputs[i]))
      return false;
  return op.pinnedOutput.empty() ||
         specCutsInto(op.output, spec, op.pinnedOutput);
}

/// "operand 0 in [4, 1], the result in [4, 2]".
std::string describePins(const Op &op) {
  std::string text;
  for (size_t i = 0; i < op.pinnedInputs.size(); ++i)
    if (!op.pinnedInputs[i].empty())
      text += (text.empty() ? "" : ", ") + ("operand " + std::to_string(i)) +
              " in " + listText(op.pinnedInputs[i]) + " parts";
  if (!op.pinnedOutput.empty())
    text += std::string(text.empty() ? "" : ", ") + "the result in " +
            listText(op.pinnedOutput) + " parts";
  return text;
}

/// `allowed` (may be empty) restricts each op's specs, as
/// SearchOptions::allowedSpecs says.
Problem build(const Graph &graph, const Options &options,
              const std::vector<std::vector<Spec>> &allowed = {},
              const std::string &restriction = "") {
  Problem pb;
  size_t numOps = graph.ops.size();
  pb.specs.resize(numOps);
  pb.plans.resize(numOps);
  pb.opNode.resize(numOps);
  std::vector<int> valueNode(graph.values.size(), -1);

  for (size_t o = 0; o < numOps; ++o) {
    const Op &op = graph.ops[o];
    pb.specs[o] = enumerateSpecs(op, options.devices);
    if (!allowed.empty()) {
      std::vector<Spec> kept;
      for (const Spec &s : pb.specs[o])
        if (std::find(allowed[o].begin(), allowed[o].end(), s) !=
            allowed[o].end())
          kept.push_back(s);
      pb.specs[o] = std::move(kept);
      if (pb.specs[o].empty() && pb.error.empty())
        pb.error = "op '" + op.name + "' has no legal spec " + restriction;
    }
    if (!op.pinnedOutput.empty() || !op.pinnedInputs.empty()) {
      std::vector<Spec> kept;
      for (const Spec &s : pb.specs[o])
        if (honoursPins(op, s))
          kept.push_back(s);
      pb.specs[o] = std::move(kept);
      if (pb.specs[o].empty() && pb.error.empty())
        pb.error = "op '" + op.name + "' has no legal spec " +
                   (allowed.empty() ? "" : restriction + " ") +
                   "that honours its shard pins (" + describePins(op) + ")";
    }
    for (const Spec &s : pb.specs[o])
      pb.plans[o].push_back(planOp(graph, op, s, options));
  }
  if (!pb.error.empty())
    return pb;

  // Visit ops depth first from the results (each op after its operands'
  // producers): a branch is finished before the next begins, which keeps
  // few values live and the search's states few.
  std::vector<int> producerOf(graph.values.size(), -1);
  for (size_t o = 0; o < numOps; ++o)
    producerOf[graph.ops[o].output.value] = static_cast<int>(o);
  std::vector<int> opOrder, rank(numOps, -1);
  std::vector<bool> visited(numOps, false);
  std::function<void(int)> visit = [&](int o) {
    if (o < 0 || visited[o])
      return;
    visited[o] = true;
    for (const Access &input : graph.ops[o].inputs)
      visit(producerOf[input.value]);
    rank[o] = static_cast<int>(opOrder.size());
    opOrder.push_back(o);
  };
  for (int result : graph.results)
    visit(producerOf[result]);
  for (size_t o = 0; o < numOps; ++o)
    visit(static_cast<int>(o));
  auto earlier = [&](int a, int b) { return b < 0 || rank[a] < rank[b]; };

  // Charged arguments become nodes whose candidates are the distinct
  // layouts their consumers ask for; they go just before their first
  // consumer in the order.
  std::vector<std::vector<int>> argumentsBefore(numOps);
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (!charged(graph.values[v], options))
      continue;
    Node node;
    node.value = static_cast<int>(v);
    std::set<std::vector<std::vector<int64_t>>> seen;
    // It must come before its first reader and before the producer of any
    // result tied to its layout.
    int first = -1;
    for (const Tie &tie : graph.ties)
      if (tie.argument == static_cast<int>(v))
        for (size_t o = 0; o < numOps; ++o)
          if (graph.ops[o].output.value == tie.result &&
              earlier(static_cast<int>(o), first))
            first = static_cast<int>(o);
    bool read = false;
    for (size_t o = 0; o < numOps; ++o)
      for (size_t i = 0; i < graph.ops[o].inputs.size(); ++i) {
        if (graph.ops[o].inputs[i].value != static_cast<int>(v))
          continue;
        read = true;
        if (earlier(static_cast<int>(o), first))
          first = static_cast<int>(o);
        if (!graph.values[v].pinnedParts.empty())
          continue; // it arrives as pinned, below
        for (const OpPlan &plan : pb.plans[o])
          if (seen.insert(layoutKey(plan.arrivals[i])).second)
            node.holds.push_back(plan.arrivals[i]);
      }
    if (!graph.values[v].pinnedParts.empty())
      node.holds = {
          partsLayout(graph.values[v].pinnedParts, graph.values[v].shape)};
    if (!read)
      continue; // unused argument: no layout to choose
    node.unary.assign(node.holds.size(), 0.0);
    valueNode[v] = static_cast<int>(pb.nodes.size());
    argumentsBefore[first].push_back(static_cast<int>(pb.nodes.size()));
    pb.nodes.push_back(std::move(node));
  }

  for (int o : opOrder) {
    for (int a : argumentsBefore[o])
      pb.order.push_back(a);
    Node node;
    node.op = static_cast<int>(o);
    node.value = graph.ops[o].output.value;
    for (const OpPlan &plan : pb.plans[o]) {
      double join = 0;
      for (double b : plan.joinBytes)
        join += b;
      node.unary.push_back(join + plan.aggBytes + computeBytes(plan, options));
      node.holds.push_back(plan.holds);
    }
    pb.opNode[o] = static_cast<int>(pb.nodes.size());
    valueNode[node.value] = static_cast<int>(pb.nodes.size());
    pb.order.push_back(static_cast<int>(pb.nodes.size()));
    pb.nodes.push_back(std::move(node));
  }

  pb.edgesInto.resize(pb.nodes.size());
  for (size_t o = 0; o < numOps; ++o) {
    const Op &op = graph.ops[o];
    // One edge per value read, however many inputs read it: a block two
    // inputs need on one device moves there once.
    std::map<int, std::vector<size_t>> inputsOf;
    for (size_t i = 0; i < op.inputs.size(); ++i)
      if (valueNode[op.inputs[i].value] >= 0) // replicable weights are free
        inputsOf[op.inputs[i].value].push_back(i);
    for (const auto &[value, inputs] : inputsOf) {
      int producer = valueNode[value];
      Edge edge{producer, pb.opNode[o], {}};
      std::vector<std::vector<Placed>> needs;
      for (const OpPlan &plan : pb.plans[o]) {
        std::vector<Placed> merged;
        std::set<std::vector<int64_t>> seen;
        for (size_t i : inputs)
          for (const Placed &p : plan.needs[i])
            if (seen.insert(placedKey(p)).second)
              merged.push_back(p);
        needs.push_back(std::move(merged));
      }
      int64_t bytes = graph.values[value].elementBytes;
      for (const std::vector<Placed> &holds : pb.nodes[producer].holds) {
        std::vector<double> row;
        for (const std::vector<Placed> &need : needs)
          row.push_back(movedBytes(holds, need, bytes, &options));
        edge.cost.push_back(std::move(row));
      }
      pb.nodes[producer].consumers.push_back(pb.opNode[o]);
      pb.edgesInto[pb.opNode[o]].push_back(static_cast<int>(pb.edges.size()));
      pb.edges.push_back(std::move(edge));
    }
  }

  // A tie moves the result into the layout its argument arrived in; the
  // argument is placed first, so the edge runs from it to the result's
  // producer and charges the move there.
  for (const Tie &tie : graph.ties) {
    int argument = valueNode[tie.argument];
    int producer = valueNode[tie.result];
    if (argument < 0 || pb.nodes[argument].op >= 0 ||
        !charged(graph.values[tie.argument], options)) {
      pb.error = "value '" + graph.values[tie.argument].name +
                 "' is not an activation argument its consumers read, so "
                 "no result can be tied to its layout";
      return pb;
    }
    if (producer < 0 || pb.nodes[producer].op < 0) {
      pb.error = "value '" + graph.values[tie.result].name +
                 "' is not the result of an op, so it cannot be tied";
      return pb;
    }
    Edge edge{argument, producer, {}};
    int64_t bytes = graph.values[tie.result].elementBytes;
    for (const std::vector<Placed> &layout : pb.nodes[argument].holds) {
      std::vector<double> row;
      for (const std::vector<Placed> &holds : pb.nodes[producer].holds)
        row.push_back(movedBytes(holds, layout, bytes, &options));
      edge.cost.push_back(std::move(row));
    }
    pb.nodes[argument].consumers.push_back(producer);
    pb.edgesInto[producer].push_back(static_cast<int>(pb.edges.size()));
    pb.edges.push_back(std::move(edge));
  }

  for (Node &node : pb.nodes) {
    std::map<std::vector<std::vector<int64_t>>, int> ids;
    for (const std::vector<Placed> &holds : node.holds)
      node.layout.push_back(
          ids.emplace(layoutKey(holds), static_cast<int>(ids.size()))
              .first->second);
  }
  return pb;
}

/// The cost of a full assignment (one candidate per node).
double assignmentCost(const Problem &pb, const std::vector<int> &choice) {
  double total = 0;
  for (size_t n = 0; n < pb.nodes.size(); ++n)
    total += pb.nodes[n].unary[choice[n]];
  for (const Edge &e : pb.edges)
    total += e.cost[choice[e.producer]][choice[e.consumer]];
  return total;
}

Plan finish(const Graph &graph, const Problem &pb,
            const std::vector<int> &choice, const Options &options) {
  Plan plan;
  plan.feasible = true;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    int node = pb.opNode[o];
    const OpPlan &op = pb.plans[o][choice[node]];
    plan.specs.push_back(pb.specs[o][choice[node]]);
    OpCost cost;
    for (double b : op.joinBytes)
      cost.join += b;
    cost.aggregation = op.aggBytes;
    cost.compute = computeBytes(op, options);
    for (int e : pb.edgesInto[node]) {
      const Edge &edge = pb.edges[e];
      cost.repartition += edge.cost[choice[edge.producer]][choice[node]];
    }
    plan.costs.push_back(cost);
  }
  plan.layouts.resize(graph.values.size());
  for (size_t n = 0; n < pb.nodes.size(); ++n)
    plan.layouts[pb.nodes[n].value] = pb.nodes[n].holds[choice[n]];
  plan.total = assignmentCost(pb, choice);
  return plan;
}

/// The first cap a budgeted search tries (SearchOptions::workBudget).
constexpr size_t kFirstCap = 4096;

Plan infeasible(const Problem &pb) {
  Plan plan;
  plan.error = pb.error;
  return plan;
}

/// Orders (cost, choice) pairs: cheaper first, then lexicographically
/// smaller choices, so ties break the same way every time.
bool better(double cost, const std::vector<int> &choice, double otherCost,
            const std::vector<int> &otherChoice) {
  if (cost != otherCost)
    return cost < otherCost;
  return choice < otherChoice;
}

/// better() for `size` choices with element `n` replaced by `c` (none
/// when `n >= size`), without copying them.
bool betterWith(double cost, const int *choice, size_t size, size_t n, int c,
                double otherCost, const int *otherChoice) {
  if (cost != otherCost)
    return cost < otherCost;
  for (size_t i = 0; i < size; ++i) {
    int mine = i == n ? c : choice[i];
    if (mine != otherChoice[i])
      return mine < otherChoice[i];
  }
  return false;
}

/// Search states are found by the layouts of the live nodes; which entry
/// wins never depends on the order of iteration (better() is a total order),
/// so a hash map serves.
struct KeyHash {
  size_t operator()(const std::vector<int> &key) const {
    size_t h = key.size();
    for (int x : key)
      h = h * 1000003u ^ static_cast<size_t>(x + 1);
    return h;
  }
};

} // namespace

/// The search of the problem `pb` (built for `graph`) with
/// `options.stateCap` as its cap from the first step.
Plan searchCapped(const Graph &graph, const Problem &pb,
                  const SearchOptions &options) {
  size_t numNodes = pb.nodes.size();
  std::vector<size_t> position(numNodes);
  for (size_t i = 0; i < pb.order.size(); ++i)
    position[pb.order[i]] = i;
  // The step after which each node's value is no longer needed.
  std::vector<size_t> lastUse(numNodes, 0);
  for (size_t n = 0; n < numNodes; ++n)
    for (int c : pb.nodes[n].consumers)
      lastUse[n] = std::max(lastUse[n], position[c]);

  // A state's choices live in one arena per step, so states cost no
  // allocation of their own; only nodes with a choice to make hold a slot
  // (a fixed spec, as every copy of a chunked plan has, is choice 0), in
  // node order, so that comparing slots compares the choices.
  std::vector<int> slot(numNodes, -1);
  size_t numSlots = 0;
  for (size_t n = 0; n < numNodes; ++n)
    if (pb.nodes[n].unary.size() > 1)
      slot[n] = static_cast<int>(numSlots++);
  auto choiceOf = [&](const int *choice, int n) {
    return slot[n] < 0 ? 0 : choice[slot[n]];
  };
  struct State {
    double cost;
    size_t at; // its choices: arena[at, at + numSlots)
  };
  using States = std::unordered_map<std::vector<int>, State, KeyHash>;
  std::vector<int> arena(numSlots, -1), nextArena;
  States states;
  states.emplace(std::vector<int>{}, State{0, 0});
  std::vector<int> frontier; // nodes whose values are still live, ascending
  Plan result;
  // better() on two states of one arena.
  auto cheaper = [&](const std::vector<int> &in, const State &a,
                     const State &b) {
    return betterWith(a.cost, in.data() + a.at, numSlots, numSlots, 0, b.cost,
                      in.data() + b.at);
  };

  using Clock = std::chrono::steady_clock;
  Clock::time_point began = Clock::now(), lastReport = began;
  // A lower bound on what the nodes from each step on add to any plan:
  // their cheapest own terms (edges cost nothing or more), so that a
  // dropped state bounds every plan through it.
  std::vector<double> restFloor(pb.order.size() + 1, 0.0);
  for (size_t i = pb.order.size(); i-- > 0;) {
    const std::vector<double> &unary = pb.nodes[pb.order[i]].unary;
    restFloor[i] =
        restFloor[i + 1] +
        (unary.empty() ? 0.0 : *std::min_element(unary.begin(), unary.end()));
  }
  double prunedFloor = std::numeric_limits<double>::infinity();
  for (size_t step = 0; step < pb.order.size(); ++step) {
    int n = pb.order[step];
    const Node &node = pb.nodes[n];
    std::vector<int> next;
    for (int f : frontier)
      if (lastUse[f] > step)
        next.push_back(f);
    if (!node.consumers.empty())
      next.insert(std::upper_bound(next.begin(), next.end(), n), n);

    States nextStates;
    nextArena.clear();
    std::vector<int> keyed;
    for (int f : next)
      if (slot[f] >= 0)
        keyed.push_back(f);
    // n's slot, or none (past every slot) where its choice is fixed.
    size_t mine = slot[n] < 0 ? numSlots : static_cast<size_t>(slot[n]);
    std::vector<int> nextKey;
    for (const auto &[key, state] : states) {
      const int *choice = arena.data() + state.at;
      result.work += node.unary.size();
      for (int c = 0, e = static_cast<int>(node.unary.size()); c < e; ++c) {
        double cost = state.cost + node.unary[c];
        for (int edgeIndex : pb.edgesInto[n]) {
          const Edge &edge = pb.edges[edgeIndex];
          cost += edge.cost[choiceOf(choice, edge.producer)][c];
        }
        // Later costs depend on a live node only through its layout (the
        // same in every state where its choice is fixed).
        nextKey.clear();
        for (int f : keyed)
          nextKey.push_back(
              pb.nodes[f].layout[f == n ? c : choiceOf(choice, f)]);
        auto it = nextStates.find(nextKey);
        size_t at;
        if (it == nextStates.end()) {
          at = nextArena.size();
          nextArena.resize(at + numSlots);
          nextStates.emplace(nextKey, State{cost, at});
        } else {
          if (!betterWith(cost, choice, numSlots, mine, c, it->second.cost,
                          nextArena.data() + it->second.at))
            continue;
          at = it->second.at;
          it->second.cost = cost;
        }
        std::copy(choice, choice + numSlots, nextArena.begin() + at);
        if (slot[n] >= 0)
          nextArena[at + slot[n]] = c;
      }
    }
    result.peakStates = std::max(result.peakStates, nextStates.size());
    if (nextStates.size() > std::max<size_t>(options.stateCap, 1)) {
      result.capped = true;
      std::vector<std::pair<std::vector<int>, State>> all(nextStates.begin(),
                                                          nextStates.end());
      std::sort(all.begin(), all.end(), [&](const auto &a, const auto &b) {
        return cheaper(nextArena, a.second, b.second);
      });
      // Costs only grow along a plan, so every plan through a dropped
      // state costs at least its cost plus the rest's cheapest own terms.
      size_t kept = std::max<size_t>(options.stateCap, 1);
      prunedFloor =
          std::min(prunedFloor, all[kept].second.cost + restFloor[step + 1]);
      all.resize(kept);
      nextStates = States(all.begin(), all.end());
    }
    states = std::move(nextStates);
    std::swap(arena, nextArena);
    frontier = std::move(next);
    if (options.onProgress) {
      Clock::time_point now = Clock::now();
      auto since = [&](Clock::time_point t) {
        return std::chrono::duration<double>(now - t).count();
      };
      if (since(began) >= options.progressSeconds &&
          (lastReport == began ||
           since(lastReport) >= options.progressSeconds)) {
        lastReport = now;
        SearchProgress progress;
        progress.step = step + 1;
        progress.steps = pb.order.size();
        progress.op = node.op;
        progress.states = states.size();
        progress.cheapest = std::numeric_limits<double>::infinity();
        for (const auto &[key, state] : states)
          progress.cheapest = std::min(progress.cheapest, state.cost);
        progress.seconds = since(began);
        options.onProgress(progress);
      }
    }
  }

  const State *best = nullptr;
  for (const auto &[key, state] : states)
    if (!best || cheaper(arena, state, *best))
      best = &state;
  std::vector<int> bestChoice(numNodes);
  for (size_t n = 0; n < numNodes; ++n)
    bestChoice[n] = choiceOf(arena.data() + best->at, static_cast<int>(n));
  bool capped = result.capped;
  size_t peak = result.peakStates;
  uint64_t work = result.work;
  result = finish(graph, pb, bestChoice, options);
  result.capped = capped;
  result.peakStates = peak;
  result.work = work;
  result.stateCap = options.stateCap;
  result.lowerBound =
      capped ? std::min(result.total, prunedFloor) : result.total;
  return result;
}

Plan search(const Graph &graph, const SearchOptions &options) {
  Problem pb = build(graph, options, options.allowedSpecs, options.restriction);
  if (!pb.error.empty())
    return infeasible(pb);
  size_t cap = std::max<size_t>(options.stateCap, 1);
  if (!options.workBudget || cap <= kFirstCap)
    return searchCapped(graph, pb, options);
  // Caps raised kFirstCap, 8x, 64x, ... up to stateCap while the cap bites
  // and the next run's work, predicted as this run's times the raise,
  // fits the budget. A run the cap does not bite is exact: the plan any
  // larger cap would find. The problem is built once for every run.
  SearchOptions attempt = options;
  attempt.stateCap = kFirstCap;
  Plan best = searchCapped(graph, pb, attempt);
  uint64_t work = best.work;
  double bound = best.lowerBound;
  Plan last = best;
  while (last.feasible && last.capped && attempt.stateCap < cap) {
    size_t next = std::min(cap, attempt.stateCap * 8);
    double predicted =
        double(last.work) * double(next) / double(attempt.stateCap);
    if (double(work) + predicted > double(options.workBudget)) {
      best.budgetBit = true;
      break;
    }
    attempt.stateCap = next;
    last = searchCapped(graph, pb, attempt);
    work += last.work;
    if (!last.feasible)
      break;
    bound = std::max(bound, last.lowerBound);
    if (!last.capped || last.total <= best.total)
      best = last;
  }
  best.work = work;
  best.lowerBound = best.capped ? std::min(best.total, bound) : best.total;
  return best;
}

Plan evaluate(const Graph &graph, const std::vector<Spec> &specs,
              const SearchOptions &options) {
  SearchOptions fixed = options;
  fixed.allowedSpecs.clear();
  for (const Spec &s : specs)
    fixed.allowedSpecs.push_back({s});
  fixed.restriction = "(the spec asked for is not legal)";
  return search(graph, fixed);
}

std::vector<std::vector<std::optional<double>>>
alternativeTotals(const Graph &graph, const std::vector<Spec> &specs,
                  const SearchOptions &options,
                  const std::vector<std::vector<Spec>> &candidates) {
  size_t numOps = graph.ops.size();
  std::vector<std::vector<std::optional<double>>> totals(numOps);
  for (size_t o = 0; o < numOps; ++o)
    totals[o].resize(candidates[o].size());
  // One problem with every spec asked about, the plan's own included.
  std::vector<std::vector<Spec>> allowed = candidates;
  for (size_t o = 0; o < numOps; ++o)
    allowed[o].push_back(specs[o]);
  Problem pb = build(graph, options, allowed);
  if (!pb.error.empty())
    return totals;
  auto indexOf = [&](size_t o, const Spec &s) {
    auto it = std::find(pb.specs[o].begin(), pb.specs[o].end(), s);
    return it == pb.specs[o].end() ? -1 : int(it - pb.specs[o].begin());
  };
  std::vector<int> choice(pb.nodes.size(), 0);
  for (size_t o = 0; o < numOps; ++o) {
    choice[pb.opNode[o]] = indexOf(o, specs[o]);
    if (choice[pb.opNode[o]] < 0)
      return totals; // the plan itself is not legal
  }
  std::vector<std::vector<int>> edgesFrom(pb.nodes.size());
  for (size_t e = 0; e < pb.edges.size(); ++e)
    edgesFrom[pb.edges[e].producer].push_back(static_cast<int>(e));
  // Per argument node, who reads it (op, input); per op, spec and input,
  // which of the argument's layouts that spec asks it to arrive in.
  std::vector<std::vector<std::pair<int, size_t>>> readsOf(pb.nodes.size());
  std::vector<int> nodeOf(graph.values.size(), -1);
  std::vector<std::map<std::vector<std::vector<int64_t>>, int>> layoutIndex(
      pb.nodes.size());
  for (size_t n = 0; n < pb.nodes.size(); ++n)
    if (pb.nodes[n].op < 0) {
      nodeOf[pb.nodes[n].value] = static_cast<int>(n);
      for (size_t k = 0; k < pb.nodes[n].holds.size(); ++k)
        layoutIndex[n].emplace(layoutKey(pb.nodes[n].holds[k]),
                               static_cast<int>(k));
    }
  std::vector<std::vector<std::vector<int>>> arrival(numOps);
  for (size_t o = 0; o < numOps; ++o) {
    const Op &op = graph.ops[o];
    arrival[o].resize(pb.plans[o].size());
    for (size_t k = 0; k < pb.plans[o].size(); ++k) {
      arrival[o][k].assign(op.inputs.size(), -1);
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        int a = nodeOf[op.inputs[i].value];
        if (a >= 0 && graph.values[pb.nodes[a].value].pinnedParts.empty())
          arrival[o][k][i] =
              layoutIndex[a].at(layoutKey(pb.plans[o][k].arrivals[i]));
        else if (a >= 0)
          arrival[o][k][i] = 0; // it arrives as pinned
      }
      if (k == 0)
        for (size_t i = 0; i < op.inputs.size(); ++i)
          if (int a = nodeOf[op.inputs[i].value]; a >= 0)
            readsOf[a].push_back({static_cast<int>(o), i});
    }
  }
  // An argument's cheapest layout among those its readers ask for (the
  // candidates of the plan with these specs), each costed over its edges.
  auto argumentCost = [&](int a) {
    std::set<int> layouts;
    for (auto [o, i] : readsOf[a])
      layouts.insert(arrival[o][choice[pb.opNode[o]]][i]);
    double best = std::numeric_limits<double>::infinity();
    for (int k : layouts) {
      double cost = pb.nodes[a].unary[k];
      for (int e : edgesFrom[a])
        cost += pb.edges[e].cost[k][choice[pb.edges[e].consumer]];
      best = std::min(best, cost);
    }
    return best;
  };
  // The plan's total as assignmentCost sums it, by parts: each op's unary
  // term, each edge between ops, each argument's cheapest layout.
  double total = 0;
  for (size_t n = 0; n < pb.nodes.size(); ++n)
    total += pb.nodes[n].op >= 0 ? pb.nodes[n].unary[choice[n]]
                                 : argumentCost(static_cast<int>(n));
  for (const Edge &e : pb.edges)
    if (pb.nodes[e.producer].op >= 0)
      total += e.cost[choice[e.producer]][choice[e.consumer]];
  for (size_t o = 0; o < numOps; ++o) {
    int node = pb.opNode[o];
    // The terms that depend on op o's spec.
    std::set<int> arguments;
    std::vector<int> edges;
    for (int e : pb.edgesInto[node]) {
      if (pb.nodes[pb.edges[e].producer].op < 0)
        arguments.insert(pb.edges[e].producer);
      else
        edges.push_back(e);
    }
    for (int e : edgesFrom[node])
      edges.push_back(e);
    auto part = [&]() {
      double sum = pb.nodes[node].unary[choice[node]];
      for (int e : edges)
        sum += pb.edges[e].cost[choice[pb.edges[e].producer]]
                               [choice[pb.edges[e].consumer]];
      for (int a : arguments)
        sum += argumentCost(a);
      return sum;
    };
    int own = choice[node];
    double without = total - part();
    for (size_t c = 0; c < candidates[o].size(); ++c) {
      int k = indexOf(o, candidates[o][c]);
      if (k < 0)
        continue;
      choice[node] = k;
      totals[o][c] = without + part();
    }
    choice[node] = own;
  }
  return totals;
}

Plan bruteForce(const Graph &graph, const Options &options) {
  Problem pb = build(graph, options);
  if (!pb.error.empty())
    return infeasible(pb);
  std::vector<int> choice(pb.nodes.size(), 0), best;
  double bestCost = 0;
  std::function<void(size_t)> visit = [&](size_t n) {
    if (n == pb.nodes.size()) {
      double cost = assignmentCost(pb, choice);
      if (best.empty() || better(cost, choice, bestCost, best)) {
        best = choice;
        bestCost = cost;
      }
      return;
    }
    for (size_t c = 0; c < pb.nodes[n].unary.size(); ++c) {
      choice[n] = static_cast<int>(c);
      visit(n + 1);
    }
  };
  visit(0);
  return finish(graph, pb, best, options);
}

} // namespace ein::planner
