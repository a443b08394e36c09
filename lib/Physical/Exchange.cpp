//===- Exchange.cpp - A plan as a per-GPU program of kernels and transfers ===//

#include "Einsummable/Physical/Exchange.h"

#include "ein/partition.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace ein::physical {

using planner::Box;
using planner::intersect;
using planner::Placed;

const char *movementKindName(Movement::Kind kind) {
  switch (kind) {
  case Movement::Repartition:
    return "repartition";
  case Movement::Join:
    return "join";
  case Movement::Aggregate:
    return "aggregate";
  }
  return "?";
}

namespace {

using BoxKey = std::pair<std::vector<int64_t>, std::vector<int64_t>>;
BoxKey key(const Box &b) { return {b.begin, b.end}; }

/// Builds the program op by op; every task depends only on earlier ones,
/// so list order is a valid order for every queue.
class ProgramBuilder {
public:
  ProgramBuilder(const planner::Graph &graph, const planner::Plan &plan,
                 const planner::Options &options, const Placement &placement,
                 const Topology *topology = nullptr,
                 const std::vector<bool> *synthesizedOps = nullptr)
      : graph(graph), plan(placedPlan(graph, plan, placement)),
        options(options), placement(placement), topology(topology),
        synthesizedOps(synthesizedOps), finalTask(graph.values.size()) {}

  DeviceProgram build() {
    for (size_t o = 0; o < graph.ops.size(); ++o)
      addOp(static_cast<int>(o));
    return std::move(program);
  }

private:
  const planner::Graph &graph;
  /// The plan with its layouts placed.
  const planner::Plan plan;
  const planner::Options &options;
  const Placement &placement;
  /// Set for synthesized programs.
  const Topology *topology;
  /// Which ops synthesize their exchanges (null: every op, given topology).
  const std::vector<bool> *synthesizedOps;
  /// Whether the op being built synthesizes its exchanges.
  bool synthesizing = false;
  DeviceProgram program;
  /// Per value: the task that leaves each held block final at its GPU.
  std::vector<std::map<BoxKey, int>> finalTask;

  int addTask(Task task, int movement = -1) {
    program.tasks.push_back(std::move(task));
    program.movementOf.push_back(movement);
    return static_cast<int>(program.tasks.size() - 1);
  }

  /// Seconds `bytes` take from `from` to `to` alone on the machine.
  double alone(int64_t from, int64_t to, double bytes) const {
    return topology->route(from, to).latency +
           bytes / topology->bandwidth(from, to);
  }

  /// A movement as one transfer task, or (synthesized, where faster) as
  /// hops through the best single relay; returns the task that lands it.
  int addTransfer(Movement m, std::vector<int> deps, std::string label) {
    program.bytes[m.kind] += m.bytes;
    std::vector<int64_t> path = {m.from, m.to};
    if (synthesizing) {
      double best = alone(m.from, m.to, m.bytes);
      for (int64_t c = 0; c < topology->devices; ++c) {
        if (c == m.from || c == m.to)
          continue;
        double relayed = alone(m.from, c, m.bytes) + alone(c, m.to, m.bytes);
        if (relayed < best * (1 - 1e-9)) {
          best = relayed;
          path = {m.from, c, m.to};
        }
      }
      m.via.assign(path.begin() + 1, path.end() - 1);
    }
    int movement = static_cast<int>(program.movements.size());
    int last = -1;
    for (size_t h = 0; h + 1 < path.size(); ++h) {
      Task t;
      t.kind = Task::Transfer;
      t.queue = path[h + 1];
      t.from = path[h];
      t.to = path[h + 1];
      t.bytes = m.bytes;
      t.deps = h == 0 ? deps : std::vector<int>{last};
      t.label = label;
      if (path.size() > 2)
        t.label += " (hop " + std::to_string(h + 1) + ")";
      last = addTask(std::move(t), movement);
    }
    program.movements.push_back(std::move(m));
    return last;
  }

  /// Tasks that must finish before `region` of `value` is whole on `device`
  /// from its holds there (the producer's final tasks of local blocks).
  std::vector<int> localDeps(int value, const Box &region, int64_t device) {
    std::vector<int> deps;
    for (const Placed &h : plan.layouts[value]) {
      if (h.device != device || intersect(h.box, region).volume() == 0)
        continue;
      auto it = finalTask[value].find(key(h.box));
      if (it != finalTask[value].end())
        deps.push_back(it->second);
    }
    return deps;
  }

  void addOp(int o) {
    auto gpu = [&](int64_t j) { return placement.of(o, j); };
    synthesizing = topology && (!synthesizedOps || (*synthesizedOps)[o]);
    program.ops.emplace_back();
    OpProgram &record = program.ops.back();
    const planner::Op &op = graph.ops[o];
    const planner::Spec &spec = plan.specs[o];
    int64_t blocks = numBlocks(spec);
    // Per input, each distinct block with the join blocks reading it in
    // order (the first is its canonical GPU).
    std::vector<std::map<BoxKey, std::vector<int64_t>>> readers(
        op.inputs.size());
    std::vector<std::vector<Box>> order(op.inputs.size());
    std::map<BoxKey, std::vector<int64_t>> producers;
    std::vector<Box> outputs;
    for (int64_t j = 0; j < blocks; ++j) {
      std::vector<int64_t> coords = delinearize(j, spec);
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        Box box = planner::accessBox(op.inputs[i], graph, op, spec, coords);
        if (box.volume() == 0)
          continue;
        auto &list = readers[i][key(box)];
        if (list.empty())
          order[i].push_back(box);
        list.push_back(gpu(j));
      }
      Box out = planner::accessBox(op.output, graph, op, spec, coords);
      auto &list = producers[key(out)];
      if (list.empty())
        outputs.push_back(out);
      list.push_back(gpu(j));
    }

    // Repartition: one set of movements per value read, however many
    // inputs read it. ready[value][(device, box)]: what must finish before
    // the box is whole on its canonical GPU.
    std::map<int, std::map<std::pair<int64_t, BoxKey>, std::vector<int>>> ready;
    std::map<int, std::vector<Placed>> needsOf;
    std::map<std::tuple<int, int64_t, BoxKey>, int> firstInput;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      int value = op.inputs[i].value;
      if (!movesWithPlan(graph.values[value], options))
        continue;
      std::set<std::pair<int64_t, BoxKey>> seen;
      for (const Placed &p : needsOf[value])
        seen.insert({p.device, key(p.box)});
      for (const Box &box : order[i]) {
        int64_t device = readers[i][key(box)].front();
        if (seen.insert({device, key(box)}).second) {
          needsOf[value].push_back({device, box});
          firstInput[{value, device, key(box)}] = static_cast<int>(i);
        }
      }
    }
    for (auto &[value, needs] : needsOf) {
      int64_t width = graph.values[value].elementBytes;
      for (const Placed &need : needs) {
        std::vector<int> &deps = ready[value][{need.device, key(need.box)}];
        deps = localDeps(value, need.box, need.device);
        OpProgram::Need n;
        n.input = firstInput[{value, need.device, key(need.box)}];
        n.value = value;
        n.device = need.device;
        n.box = need.box;
        for (const Placed &h : plan.layouts[value]) {
          Box local = intersect(h.box, need.box);
          if (h.device == need.device && local.volume() > 0)
            n.pieces.push_back({need.device, local, -1});
        }
        for (Movement &m : repartition(plan.layouts[value], {need}, width)) {
          m.op = o;
          m.value = value;
          std::vector<int> from = localDeps(value, m.region, m.from);
          n.pieces.push_back(
              {m.from, m.region, static_cast<int>(program.movements.size())});
          deps.push_back(addTransfer(std::move(m), from,
                                     op.name + ": repartition " +
                                         graph.values[value].name));
        }
        record.needs.push_back(std::move(n));
      }
    }

    // Join copies: the canonical GPU sends each block to its other readers.
    // arrived[i][(device, box)]: what must finish before input i's block is
    // on that join block's GPU.
    std::vector<std::map<std::pair<int64_t, BoxKey>, std::vector<int>>> arrived(
        op.inputs.size());
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      int value = op.inputs[i].value;
      if (!movesWithPlan(graph.values[value], options))
        continue;
      int64_t width = graph.values[value].elementBytes;
      for (const Box &box : order[i]) {
        const std::vector<int64_t> &list = readers[i][key(box)];
        arrived[i][{list[0], key(box)}] = ready[value][{list[0], key(box)}];
        // Who sends to whom: naive, the canonical GPU to every reader; a
        // synthesized program grows a binomial tree (each round, every GPU
        // that has the block sends it to one that lacks it).
        std::vector<std::pair<size_t, size_t>> sends;
        if (!synthesizing || list.size() <= 2) {
          for (size_t r = 1; r < list.size(); ++r)
            sends.push_back({0, r});
        } else {
          size_t have = 1;
          while (have < list.size()) {
            size_t round = have;
            for (size_t from = 0; from < round && have < list.size(); ++from)
              sends.push_back({from, have++});
          }
        }
        for (auto [from, to] : sends) {
          record.copies.push_back({static_cast<int>(i), value, box, list[from],
                                   list[to],
                                   static_cast<int>(program.movements.size())});
          Movement m{Movement::Join,
                     o,
                     value,
                     list[from],
                     list[to],
                     box,
                     double(box.volume() * width)};
          arrived[i][{list[to], key(box)}] = {addTransfer(
              std::move(m), arrived[i][{list[from], key(box)}],
              op.name + ": join copy of " + graph.values[value].name)};
        }
      }
    }

    // The block kernels; kernelOf[GPU]: the task of the block it runs.
    std::map<int64_t, int> kernelOf;
    const planner::Value &result = graph.values[op.output.value];
    for (int64_t j = 0; j < blocks; ++j) {
      std::vector<int64_t> coords = delinearize(j, spec);
      OpProgram::Kernel k;
      k.device = gpu(j);
      k.coords = coords;
      for (size_t i = 0; i < op.inputs.size(); ++i)
        k.inputs.push_back(
            planner::accessBox(op.inputs[i], graph, op, spec, coords));
      k.output = planner::accessBox(op.output, graph, op, spec, coords);
      record.kernels.push_back(std::move(k));
      Task t;
      t.kind = Task::Kernel;
      t.queue = gpu(j);
      t.flops = planner::blockFlops(op, spec, coords);
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        Box box = planner::accessBox(op.inputs[i], graph, op, spec, coords);
        if (box.volume() == 0)
          continue;
        t.memoryBytes += double(box.volume() *
                                graph.values[op.inputs[i].value].elementBytes);
        auto it = arrived[i].find({gpu(j), key(box)});
        if (it != arrived[i].end())
          t.deps.insert(t.deps.end(), it->second.begin(), it->second.end());
      }
      Box out = planner::accessBox(op.output, graph, op, spec, coords);
      t.memoryBytes += double(out.volume() * op.accBytes);
      std::sort(t.deps.begin(), t.deps.end());
      t.deps.erase(std::unique(t.deps.begin(), t.deps.end()), t.deps.end());
      t.label = op.name + ": block " + std::to_string(j);
      kernelOf[gpu(j)] = addTask(std::move(t));
    }

    // Aggregation: partials go to the block's canonical GPU and combine.
    for (const Box &out : outputs) {
      const std::vector<int64_t> &list = producers[key(out)];
      int64_t owner = list[0];
      record.aggregations.push_back({out, list});
      if (list.size() == 1) {
        finalTask[op.output.value][key(out)] = kernelOf[owner];
        continue;
      }
      // Naive: every partial straight to the owner, one aggregation there.
      // Synthesized: pairs combine round by round (the second of each pair
      // sends to the first), so the owner, first in the list, ends with all.
      std::vector<std::pair<int64_t, int64_t>> &steps =
          record.aggregations.back().steps;
      bool tree = synthesizing && list.size() > 2;
      if (!tree) {
        for (size_t p = 1; p < list.size(); ++p)
          steps.push_back({list[p], owner});
      } else {
        std::vector<int64_t> active = list;
        while (active.size() > 1) {
          std::vector<int64_t> next;
          for (size_t a = 0; a < active.size(); a += 2) {
            next.push_back(active[a]);
            if (a + 1 < active.size())
              steps.push_back({active[a + 1], active[a]});
          }
          active = std::move(next);
        }
      }
      // One partial of `out` from `sender` to `receiver`, recorded.
      auto sendPartial = [&](int64_t sender, int64_t receiver,
                             std::vector<int> deps, std::string label) {
        record.aggregations.back().movements.push_back(
            static_cast<int>(program.movements.size()));
        return addTransfer({Movement::Aggregate, o, op.output.value, sender,
                            receiver, out, double(out.volume() * op.accBytes)},
                           std::move(deps), std::move(label));
      };
      double elements = double(out.volume());
      if (!tree) {
        std::vector<int> deps = {kernelOf[owner]};
        for (auto [sender, receiver] : steps)
          deps.push_back(sendPartial(sender, receiver, {kernelOf[sender]},
                                     op.name + ": partial to its owner"));
        Task t;
        t.kind = Task::Kernel;
        t.queue = owner;
        t.flops = elements * double(list.size() - 1);
        t.memoryBytes = elements * double(op.accBytes * list.size()) +
                        elements * double(result.elementBytes);
        t.deps = std::move(deps);
        t.label = op.name + ": aggregate";
        finalTask[op.output.value][key(out)] = addTask(std::move(t));
        continue;
      }
      // Each GPU's running partial: its kernel, then its latest combine.
      std::map<int64_t, int> latest;
      for (int64_t p : list)
        latest[p] = kernelOf[p];
      for (auto [sender, receiver] : steps) {
        int landed = sendPartial(sender, receiver, {latest[sender]},
                                 op.name + ": partial up the tree");
        Task t;
        t.kind = Task::Kernel;
        t.queue = receiver;
        t.flops = elements;
        t.memoryBytes = elements * double(3 * op.accBytes);
        t.deps = {latest[receiver], landed};
        t.label = op.name + ": combine";
        latest[receiver] = addTask(std::move(t));
      }
      finalTask[op.output.value][key(out)] = latest[owner];
    }
  }
};

} // namespace

bool movesWithPlan(const planner::Value &v, const planner::Options &options) {
  return v.kind == planner::ValueKind::Activation ||
         v.kind == planner::ValueKind::Intermediate ||
         (v.kind == planner::ValueKind::Weight && !options.weightsReplicable);
}

std::vector<Movement> repartition(const std::vector<Placed> &holds,
                                  const std::vector<Placed> &needs,
                                  int64_t elementBytes) {
  std::vector<Movement> moves;
  for (const Placed &need : needs)
    for (const Placed &hold : holds) {
      if (hold.device == need.device)
        continue;
      Box region = intersect(hold.box, need.box);
      if (region.volume() == 0)
        continue;
      Movement m;
      m.kind = Movement::Repartition;
      m.from = hold.device;
      m.to = need.device;
      m.bytes = double(region.volume() * elementBytes);
      m.region = std::move(region);
      moves.push_back(std::move(m));
    }
  return moves;
}

DeviceProgram naiveProgram(const planner::Graph &graph,
                           const planner::Plan &plan,
                           const planner::Options &options,
                           const Placement &placement) {
  return ProgramBuilder(graph, plan, options, placement).build();
}

DeviceProgram synthesizedProgram(const planner::Graph &graph,
                                 const planner::Plan &plan,
                                 const planner::Options &options,
                                 const Topology &topology,
                                 const Placement &placement) {
  return ProgramBuilder(graph, plan, options, placement, &topology).build();
}

DeviceProgram mixedProgram(const planner::Graph &graph,
                           const planner::Plan &plan,
                           const planner::Options &options,
                           const Topology &topology, const Placement &placement,
                           const std::vector<bool> &synthesizedOps) {
  return ProgramBuilder(graph, plan, options, placement, &topology,
                        &synthesizedOps)
      .build();
}

namespace {

/// The faster of two programs on `topology` (the first on a tie); `second`
/// says whether it was the second.
DeviceProgram faster(DeviceProgram a, DeviceProgram b, const Topology &topology,
                     bool &second) {
  SimResult x = simulate(topology, a.tasks), y = simulate(topology, b.tasks);
  second = !y.stalled && (x.stalled || y.seconds < x.seconds);
  return second ? std::move(b) : std::move(a);
}

} // namespace

DeviceProgram bestProgram(const planner::Graph &graph,
                          const planner::Plan &plan,
                          const planner::Options &options,
                          const Topology &topology, bool &synthesized,
                          const Placement &placement) {
  return faster(naiveProgram(graph, plan, options, placement),
                synthesizedProgram(graph, plan, options, topology, placement),
                topology, synthesized);
}

DeviceProgram
placedBestProgram(const planner::Graph &graph, const planner::Plan &plan,
                  const planner::Options &options, const Topology &topology,
                  const std::vector<bool> &keep,
                  std::vector<bool> &synthesizedOps, Placement &placement) {
  Placement forNaive =
      searchPlacement(graph, plan, options, topology, keep, false);
  Placement forSynthesized =
      searchPlacement(graph, plan, options, topology, keep, true);
  bool synthesized = false;
  DeviceProgram program =
      faster(naiveProgram(graph, plan, options, forNaive),
             synthesizedProgram(graph, plan, options, topology, forSynthesized),
             topology, synthesized);
  placement = synthesized ? forSynthesized : forNaive;
  // Then op by op, the other form where the step gets faster: trees pay off
  // on large blocks and cost latency on small ones, which one program may
  // both have.
  synthesizedOps.assign(graph.ops.size(), synthesized);
  SimResult best = simulate(topology, program.tasks);
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    synthesizedOps[o] = !synthesizedOps[o];
    DeviceProgram trial =
        mixedProgram(graph, plan, options, topology, placement, synthesizedOps);
    SimResult r = simulate(topology, trial.tasks);
    if (!r.stalled && r.seconds < best.seconds * (1 - 1e-9)) {
      best = std::move(r);
      program = std::move(trial);
    } else {
      synthesizedOps[o] = !synthesizedOps[o];
    }
  }
  return program;
}

} // namespace ein::physical
