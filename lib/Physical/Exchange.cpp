//===- Exchange.cpp - A plan as a per-GPU program of kernels and transfers ===//

#include "Einsummable/Physical/Exchange.h"

#include "Einsummable/Planner/Repetition.h"
#include "ein/chip.h"
#include "ein/partition.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
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
                 const std::vector<bool> *synthesizedOps = nullptr,
                 bool rotate = true)
      : graph(graph), plan(placedPlan(graph, plan, placement)),
        options(options), placement(placement), topology(topology),
        synthesizedOps(synthesizedOps), rotate(rotate),
        finalTask(graph.values.size()), readersOf(graph.values.size()) {
    for (size_t o = 0; o < graph.ops.size(); ++o)
      for (const planner::Access &a : graph.ops[o].inputs)
        if (readersOf[a.value].empty() ||
            readersOf[a.value].back() != static_cast<int>(o))
          readersOf[a.value].push_back(static_cast<int>(o));
  }

  DeviceProgram build() {
    for (size_t o = 0; o < graph.ops.size(); ++o)
      addOp(static_cast<int>(o));
    program.layouts = std::move(plan.layouts);
    program.batchOf.assign(program.movements.size(), -1);
    return std::move(program);
  }

private:
  const planner::Graph &graph;
  /// The plan with its layouts placed; scattered aggregations replace their
  /// blocks' layouts with their pieces as the program is built.
  planner::Plan plan;
  const planner::Options &options;
  const Placement &placement;
  /// Set for synthesized programs.
  const Topology *topology;
  /// Which ops synthesize their exchanges (null: every op, given topology).
  const std::vector<bool> *synthesizedOps;
  /// Whether synthesized ops receive their pieces in rotated order
  /// (rotateSources) or in source order.
  bool rotate;
  /// Whether the op being built synthesizes its exchanges.
  bool synthesizing = false;
  DeviceProgram program;
  /// Per value: the task that leaves each held block final at its GPU.
  std::vector<std::map<BoxKey, int>> finalTask;
  /// Blocks assembled for a join or copied to one, by (value, GPU, box):
  /// the tasks after which the block is whole there. Values never change,
  /// so a synthesized program reads them again instead of moving them
  /// again.
  std::map<std::tuple<int, int64_t, BoxKey>, std::vector<int>> present;
  /// Per value, the ops reading it, in order.
  std::vector<std::vector<int>> readersOf;

  const std::vector<int> *presentAt(int value, int64_t device,
                                    const Box &box) const {
    if (!synthesizing)
      return nullptr;
    auto it = present.find({value, device, key(box)});
    return it == present.end() ? nullptr : &it->second;
  }

  /// Bytes that must come to `device` to assemble `box` of `value` there.
  double missingBytes(int value, const Box &box, int64_t device) const {
    if (presentAt(value, device, box))
      return 0;
    double bytes = 0;
    for (const Placed &h : plan.layouts[value])
      if (h.device != device)
        bytes += double(intersect(h.box, box).volume());
    return bytes * double(graph.values[value].elementBytes);
  }

  /// Whether every reader of `box` (`readers`, the canonical GPU first)
  /// should assemble it from the blocks holding it rather than receive it
  /// whole down a tree from the canonical GPU: when that moves fewer bytes
  /// (two GPUs holding halves: half each way instead of half, then all).
  bool gathersDirectly(int value, const Box &box,
                       const std::vector<int64_t> &readers) const {
    double canonical = missingBytes(value, box, readers[0]);
    double direct = canonical;
    double whole =
        double(box.volume()) * double(graph.values[value].elementBytes);
    for (size_t r = 1; r < readers.size(); ++r) {
      if (presentAt(value, readers[r], box))
        continue;
      canonical += whole;
      direct += missingBytes(value, box, readers[r]);
    }
    return direct < canonical;
  }

  /// The pieces of output block `out` of op `o` (partials on `producers`,
  /// the owner first) to aggregate where the next op reading the value
  /// reads them: that op's blocks' regions of `out`, each on its first
  /// reader's GPU. Only where those regions tile `out`, every one on a
  /// producer's GPU, and the value is not a result (which leaves in its
  /// planned layout); not where the owner alone reads it all.
  bool scatterPieces(int o, const Box &out,
                     const std::vector<int64_t> &producers,
                     std::vector<Placed> &pieces) const {
    int value = graph.ops[o].output.value;
    if (std::find(graph.results.begin(), graph.results.end(), value) !=
        graph.results.end())
      return false;
    // Its first reader (every reader comes after its producer).
    if (readersOf[value].empty())
      return false;
    int c = readersOf[value].front();
    const planner::Op &consumer = graph.ops[c];
    const planner::Spec &spec = plan.specs[c];
    std::vector<Box> boxes;
    std::map<BoxKey, int64_t> reader;
    for (int64_t j = 0; j < numBlocks(spec); ++j) {
      std::vector<int64_t> coords = delinearize(j, spec);
      for (const planner::Access &a : consumer.inputs) {
        if (a.value != value)
          continue;
        Box b = intersect(planner::accessBox(a, graph, consumer, spec, coords),
                          out);
        if (b.volume() > 0 && reader.emplace(key(b), placement.of(c, j)).second)
          boxes.push_back(b);
      }
    }
    int64_t covered = 0;
    for (size_t b = 0; b < boxes.size(); ++b) {
      for (size_t e = 0; e < b; ++e)
        if (intersect(boxes[b], boxes[e]).volume() > 0)
          return false;
      covered += boxes[b].volume();
    }
    if (covered != out.volume())
      return false;
    for (const Box &b : boxes) {
      int64_t device = reader[key(b)];
      if (std::find(producers.begin(), producers.end(), device) ==
          producers.end())
        return false;
      pieces.push_back({device, b});
    }
    return !(pieces.size() == 1 && pieces[0].device == producers[0]);
  }

  int addTask(Task task, int movement = -1) {
    // A dataflow bundle spreads a GPU's kernels over several streams, but
    // runs its received transfers on one copy stream in program order
    // (docs/cuda-runtime.md): a transfer waiting for its source holds back
    // the ones after it.
    task.unordered = options.dataflow && task.kind == Task::Kernel;
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
  /// `batchable`: its source is ready when its phase of the op starts, so
  /// it may share a transfer with the phase's others (if direct).
  int addTransfer(Movement m, std::vector<int> deps, std::string label,
                  bool batchable = false) {
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
    m.batchable =
        batchable && m.via.empty() &&
        m.bytes < double(chipInfo(kReferenceChip).copyKernelBelowBytes);
    int movement = static_cast<int>(program.movements.size());
    int last = -1;
    for (size_t h = 0; h + 1 < path.size(); ++h) {
      Task t;
      t.kind = Task::Transfer;
      t.queue = path[h + 1] + (options.dataflow ? options.devices : 0);
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

  /// Orders the pieces `device` receives by source, starting with the GPU
  /// after it (as an all-to-all's rounds do): the transfers a GPU receives
  /// run one after another, so when every receiver pulls from GPU 0 first,
  /// GPU 0's links carry every first piece while the others' idle.
  void rotateSources(std::vector<Movement> &moves, int64_t device) const {
    int64_t devices = topology->devices;
    std::stable_sort(moves.begin(), moves.end(),
                     [&](const Movement &a, const Movement &b) {
                       return (a.from - device + devices) % devices <
                              (b.from - device + devices) % devices;
                     });
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

  /// Output block `out`'s partials (on `producers`) aggregated piece by
  /// piece where the next op reads them: each piece on its GPU, from every
  /// other producer's region of it; the pieces replace the block in the
  /// value's layout.
  void scatter(int o, const Box &out, const std::vector<int64_t> &producers,
               const std::vector<Placed> &pieces,
               std::map<int64_t, int> &kernelOf) {
    const planner::Op &op = graph.ops[o];
    int value = op.output.value;
    OpProgram::Aggregation &record = program.ops.back().aggregations.back();
    record.pieces = pieces;
    std::vector<Placed> &holds = plan.layouts[value];
    holds.erase(
        std::remove_if(holds.begin(), holds.end(),
                       [&](const Placed &h) { return key(h.box) == key(out); }),
        holds.end());
    double inputs = double(producers.size());
    for (const Placed &piece : pieces) {
      double elements = double(piece.box.volume());
      std::vector<int> deps = {kernelOf[piece.device]};
      record.pieceSends.emplace_back();
      for (int64_t p : producers) {
        if (p == piece.device)
          continue;
        record.pieceSends.back().push_back(
            {p, static_cast<int>(program.movements.size())});
        deps.push_back(addTransfer(
            {Movement::Aggregate, o, value, p, piece.device, piece.box,
             elements * double(op.accBytes)},
            {kernelOf[p]}, op.name + ": partial of a part to its reader",
            /*batchable=*/true));
      }
      // The local partial's region is read once more (sliced out).
      Task t;
      t.kind = Task::Kernel;
      t.queue = piece.device;
      t.flops = elements * (inputs - 1);
      t.memoryBytes = elements * double(op.accBytes) * (inputs + 1) +
                      elements * double(graph.values[value].elementBytes);
      t.deps = std::move(deps);
      t.label = op.name + ": aggregate a part";
      finalTask[value][key(piece.box)] = addTask(std::move(t));
      holds.push_back(piece);
    }
  }

  /// A concat the function returns, no op reads and no tie binds, left in
  /// its inputs' blocks (OpProgram::kept) where they cut the result evenly: the
  /// result's layout is theirs, shifted into it, each final when its input's
  /// block is. Returns false (the concat is built as any op) otherwise.
  bool keepInPieces(int o) {
    const planner::Op &op = graph.ops[o];
    int value = op.output.value;
    if (op.kernel != planner::KernelKind::Touch ||
        std::find(graph.results.begin(), graph.results.end(), value) ==
            graph.results.end())
      return false;
    if (!readersOf[value].empty())
      return false;
    // A result tied to an argument's layout leaves in that layout.
    for (const planner::Tie &tie : graph.ties)
      if (tie.result == value)
        return false;
    const std::vector<int64_t> &shape = graph.values[value].shape;
    std::vector<OpProgram::Kept> kept;
    std::set<std::pair<int, BoxKey>> seen;
    int64_t volume = 0;
    for (const planner::Access &input : op.inputs) {
      const planner::Value &from = graph.values[input.value];
      if (from.kind != planner::ValueKind::Intermediate ||
          from.shape.size() != shape.size())
        return false;
      // A concat's input lies whole in the result (its shift places it).
      for (size_t d = 0; d < shape.size(); ++d) {
        int64_t at = d < input.shift.size() ? -input.shift[d] : 0;
        if (at < 0 || at + from.shape[d] > shape[d])
          return false;
      }
      for (const Placed &h : plan.layouts[input.value]) {
        if (!seen.insert({input.value, key(h.box)}).second)
          continue; // a replica: the first holder keeps it
        Box box = h.box;
        for (size_t d = 0; d < shape.size(); ++d) {
          int64_t at = d < input.shift.size() ? -input.shift[d] : 0;
          box.begin[d] += at;
          box.end[d] += at;
        }
        volume += box.volume();
        kept.push_back({input.value, h.box, {h.device, box}});
      }
    }
    int64_t whole = 1;
    for (int64_t extent : shape)
      whole *= extent;
    std::vector<Box> boxes;
    for (const OpProgram::Kept &k : kept)
      boxes.push_back(k.result.box);
    // Every cell of an even cut, once (the volumes add up to the result's).
    std::vector<int64_t> parts;
    if (kept.empty() || volume != whole || !evenCut(boxes, shape, parts) ||
        ::ein::product(parts) != static_cast<int64_t>(kept.size()))
      return false;
    std::vector<Placed> &layout = plan.layouts[value];
    layout.clear();
    for (const OpProgram::Kept &k : kept) {
      layout.push_back(k.result);
      auto it = finalTask[k.value].find(key(k.box));
      if (it != finalTask[k.value].end())
        finalTask[value][key(k.result.box)] = it->second;
    }
    program.ops.back().kept = std::move(kept);
    return true;
  }

  /// What the phases of one op's program share.
  struct OpBuild {
    int o;
    int64_t blocks;
    /// Per input, each distinct block with the join blocks reading it in
    /// order (the first is its canonical GPU).
    std::vector<std::map<BoxKey, std::vector<int64_t>>> readers;
    std::vector<std::vector<Box>> order;
    /// Each distinct output block with the join blocks producing it.
    std::map<BoxKey, std::vector<int64_t>> producers;
    std::vector<Box> outputs;
    /// ready[value][(device, box)]: what must finish before the box is
    /// whole on its canonical GPU.
    std::map<int, std::map<std::pair<int64_t, BoxKey>, std::vector<int>>> ready;
    /// direct[i]: the blocks of input i every reader gathers itself.
    std::vector<std::set<BoxKey>> direct;
    /// arrived[i][(device, box)]: what must finish before input i's block is
    /// on that join block's GPU.
    std::vector<std::map<std::pair<int64_t, BoxKey>, std::vector<int>>> arrived;
    /// kernelOf[GPU]: the task of the block it runs.
    std::map<int64_t, int> kernelOf;
  };

  /// One op's program: its inputs repartitioned to where its join blocks
  /// read them, the join copies, the block kernels and the aggregation of
  /// partial results, each phase depending on the one before.
  void addOp(int o) {
    synthesizing = topology && (!synthesizedOps || (*synthesizedOps)[o]);
    program.ops.emplace_back();
    if (keepInPieces(o))
      return;
    OpBuild b;
    b.o = o;
    b.blocks = numBlocks(plan.specs[o]);
    size_t inputs = graph.ops[o].inputs.size();
    b.readers.resize(inputs);
    b.order.resize(inputs);
    b.direct.resize(inputs);
    b.arrived.resize(inputs);
    collectBlocks(b);
    addRepartitions(b);
    addJoinCopies(b);
    addKernels(b);
    addAggregations(b);
  }

  /// Which GPUs read each input block and produce each output block.
  void collectBlocks(OpBuild &b) {
    const planner::Op &op = graph.ops[b.o];
    const planner::Spec &spec = plan.specs[b.o];
    int o = b.o;
    auto gpu = [&](int64_t j) { return placement.of(o, j); };
    auto &readers = b.readers;
    auto &order = b.order;
    auto &producers = b.producers;
    auto &outputs = b.outputs;
    int64_t blocks = b.blocks;
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
  }

  /// Repartition: one set of movements per value read, however many inputs
  /// read it.
  void addRepartitions(OpBuild &b) {
    const planner::Op &op = graph.ops[b.o];
    int o = b.o;
    OpProgram &record = program.ops[b.o];
    auto &readers = b.readers;
    auto &order = b.order;
    auto &ready = b.ready;
    auto &direct = b.direct;
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
        const std::vector<int64_t> &list = readers[i][key(box)];
        bool gather = synthesizing && list.size() > 1 &&
                      gathersDirectly(value, box, list);
        if (gather)
          direct[i].insert(key(box));
        for (size_t r = 0; r < (gather ? list.size() : 1); ++r)
          if (seen.insert({list[r], key(box)}).second) {
            needsOf[value].push_back({list[r], box});
            firstInput[{value, list[r], key(box)}] = static_cast<int>(i);
          }
      }
    }
    for (auto &[value, needs] : needsOf) {
      int64_t width = graph.values[value].elementBytes;
      for (const Placed &need : needs) {
        std::vector<int> &deps = ready[value][{need.device, key(need.box)}];
        OpProgram::Need n;
        n.input = firstInput[{value, need.device, key(need.box)}];
        n.value = value;
        n.device = need.device;
        n.box = need.box;
        if (const std::vector<int> *there =
                presentAt(value, need.device, need.box)) {
          deps = *there;
          n.reused = true;
          record.needs.push_back(std::move(n));
          continue;
        }
        deps = localDeps(value, need.box, need.device);
        for (const Placed &h : plan.layouts[value]) {
          Box local = intersect(h.box, need.box);
          if (h.device == need.device && local.volume() > 0)
            n.pieces.push_back({need.device, local, -1});
        }
        std::vector<Movement> moves =
            repartition(plan.layouts[value], {need}, width);
        if (synthesizing && rotate)
          rotateSources(moves, need.device);
        for (Movement &m : moves) {
          m.op = o;
          m.value = value;
          std::vector<int> from = localDeps(value, m.region, m.from);
          n.pieces.push_back(
              {m.from, m.region, static_cast<int>(program.movements.size())});
          deps.push_back(
              addTransfer(std::move(m), from,
                          op.name + ": repartition " + graph.values[value].name,
                          /*batchable=*/true));
        }
        record.needs.push_back(std::move(n));
        present[{value, need.device, key(need.box)}] = deps;
      }
    }
  }

  /// Join copies: the canonical GPU sends each block to its other readers.
  void addJoinCopies(OpBuild &b) {
    const planner::Op &op = graph.ops[b.o];
    int o = b.o;
    OpProgram &record = program.ops[b.o];
    auto &readers = b.readers;
    auto &order = b.order;
    auto &ready = b.ready;
    auto &direct = b.direct;
    auto &arrived = b.arrived;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      int value = op.inputs[i].value;
      if (!movesWithPlan(graph.values[value], options))
        continue;
      int64_t width = graph.values[value].elementBytes;
      for (const Box &box : order[i]) {
        const std::vector<int64_t> &readerList = readers[i][key(box)];
        if (direct[i].count(key(box))) {
          for (int64_t r : readerList)
            arrived[i][{r, key(box)}] = ready[value][{r, key(box)}];
          continue;
        }
        // Readers that already have the block (synthesized) read it there;
        // the others receive it.
        std::vector<int64_t> list = {readerList[0]};
        for (size_t r = 1; r < readerList.size(); ++r) {
          if (const std::vector<int> *there =
                  presentAt(value, readerList[r], box))
            arrived[i][{readerList[r], key(box)}] = *there;
          else
            list.push_back(readerList[r]);
        }
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
          // Only the canonical GPU's sends leave with the phase's start;
          // the others wait for their own copy to land.
          arrived[i][{list[to], key(box)}] = {addTransfer(
              std::move(m), arrived[i][{list[from], key(box)}],
              op.name + ": join copy of " + graph.values[value].name,
              /*batchable=*/from == 0)};
          present[{value, list[to], key(box)}] =
              arrived[i][{list[to], key(box)}];
        }
      }
    }
  }

  /// The block kernels, each after its inputs arrive.
  void addKernels(OpBuild &b) {
    const planner::Op &op = graph.ops[b.o];
    const planner::Spec &spec = plan.specs[b.o];
    int o = b.o;
    auto gpu = [&](int64_t j) { return placement.of(o, j); };
    OpProgram &record = program.ops[b.o];
    auto &arrived = b.arrived;
    auto &kernelOf = b.kernelOf;
    int64_t blocks = b.blocks;
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
      // A reshape and the slices and concats put together in place run no
      // kernel (Graph.h KernelKind); a touch op's copies are priced alike
      // with either compute term.
      bool dataOnly = op.kernel == planner::KernelKind::InPlace ||
                      op.kernel == planner::KernelKind::Touch;
      if (options.kernelTimes || dataOnly) {
        double seconds = planner::blockSeconds(graph, op, spec, coords);
        t.seconds = std::max(
            0.0, seconds - chipInfo(kReferenceChip).graphLaunchSeconds);
        t.view = dataOnly && seconds == 0;
      }
      std::sort(t.deps.begin(), t.deps.end());
      t.deps.erase(std::unique(t.deps.begin(), t.deps.end()), t.deps.end());
      t.label = op.name + ": block " + std::to_string(j);
      t.op = o;
      t.block = j;
      kernelOf[gpu(j)] = addTask(std::move(t));
    }
  }

  /// Aggregation: partials go to the block's canonical GPU and combine.
  void addAggregations(OpBuild &b) {
    const planner::Op &op = graph.ops[b.o];
    int o = b.o;
    OpProgram &record = program.ops[b.o];
    auto &producers = b.producers;
    auto &outputs = b.outputs;
    auto &kernelOf = b.kernelOf;
    const planner::Value &result = graph.values[op.output.value];
    for (const Box &out : outputs) {
      const std::vector<int64_t> &list = producers[key(out)];
      int64_t owner = list[0];
      record.aggregations.push_back({out, list});
      if (list.size() == 1) {
        finalTask[op.output.value][key(out)] = kernelOf[owner];
        continue;
      }
      std::vector<Placed> pieces;
      if (synthesizing && scatterPieces(o, out, list, pieces)) {
        scatter(o, out, list, pieces, kernelOf);
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
      // Batchable where it is the sender's own kernel's partial.
      auto sendPartial = [&](int64_t sender, int64_t receiver,
                             std::vector<int> deps, std::string label) {
        record.aggregations.back().movements.push_back(
            static_cast<int>(program.movements.size()));
        bool raw = deps.size() == 1 && deps[0] == kernelOf[sender];
        return addTransfer({Movement::Aggregate, o, op.output.value, sender,
                            receiver, out, double(out.volume() * op.accBytes)},
                           std::move(deps), std::move(label), raw);
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

std::vector<int> movementsOf(const DeviceProgram &program, int task) {
  int m = program.movementOf[task];
  if (m < 0)
    return {};
  if (int b = program.batchOf[m]; b >= 0)
    return program.batches[b];
  return {m};
}

bool evenCut(const std::vector<Box> &boxes, const std::vector<int64_t> &shape,
             std::vector<int64_t> &parts) {
  parts.clear();
  std::vector<std::vector<int64_t>> starts(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    for (const Box &b : boxes)
      starts[d].push_back(b.begin[d]);
    std::sort(starts[d].begin(), starts[d].end());
    starts[d].erase(std::unique(starts[d].begin(), starts[d].end()),
                    starts[d].end());
    parts.push_back(static_cast<int64_t>(starts[d].size()));
  }
  for (const Box &b : boxes)
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t i =
          std::lower_bound(starts[d].begin(), starts[d].end(), b.begin[d]) -
          starts[d].begin();
      Range r = blockRange(shape[d], parts[d], i);
      if (r.offset != b.begin[d] || r.offset + r.size != b.end[d])
        return false;
    }
  return true;
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
                           const std::vector<bool> &synthesizedOps,
                           bool rotate) {
  return ProgramBuilder(graph, plan, options, placement, &topology,
                        &synthesizedOps, rotate)
      .build();
}

namespace {

/// Per movement, the last task that carries it (its one task where it is
/// direct), or -1.
std::vector<int> transferTasks(const DeviceProgram &program) {
  std::vector<int> taskOf(program.movements.size(), -1);
  for (size_t t = 0; t < program.tasks.size(); ++t)
    if (program.movementOf[t] >= 0)
      taskOf[program.movementOf[t]] = static_cast<int>(t);
  return taskOf;
}

/// `program` with the direct transfers that land `members` (movements, at
/// least two, none batched yet, one op, kind and pair of GPUs) merged into
/// one task at the first one's place (where the lowering makes the batch),
/// or later where the others' dependencies come later; tasks that waited
/// for one of them wait for the merge, and move after it where they came
/// earlier (list order, which is each queue's order, otherwise kept).
/// False, and the program unchanged, where one of them waits for another.
bool mergeTransfers(DeviceProgram &program, std::vector<int> members) {
  std::vector<Task> &tasks = program.tasks;
  size_t n = tasks.size();
  std::vector<int> taskOf = transferTasks(program);
  std::vector<char> merged(n, 0), after(n, 0);
  for (int m : members)
    merged[taskOf[m]] = 1;
  // after[t]: t waits, at some remove, for a member.
  for (size_t t = 0; t < n; ++t)
    for (int d : tasks[t].deps)
      if (merged[d] || after[d]) {
        after[t] = 1;
        break;
      }
  for (int m : members)
    if (after[taskOf[m]])
      return false;
  std::sort(members.begin(), members.end(),
            [&](int a, int b) { return taskOf[a] < taskOf[b]; });
  int first = taskOf[members.front()];
  // The merged task, in the first member's place.
  Task batch = tasks[first];
  batch.bytes = 0;
  batch.deps.clear();
  for (int m : members) {
    batch.bytes += tasks[taskOf[m]].bytes;
    batch.deps.insert(batch.deps.end(), tasks[taskOf[m]].deps.begin(),
                      tasks[taskOf[m]].deps.end());
  }
  batch.label = tasks[taskOf[members.front()]].label + " (batch of " +
                std::to_string(members.size()) + ")";
  // Kahn's order over the tasks with the members as one node (`first`),
  // the earliest ready task first.
  auto node = [&](int t) { return merged[t] ? first : t; };
  std::vector<std::vector<int>> dependents(n);
  std::vector<int> waiting(n, 0);
  std::vector<std::vector<int>> deps(n);
  for (size_t t = 0; t < n; ++t) {
    if (merged[t] && int(t) != first)
      continue;
    std::vector<int> list;
    for (int d : int(t) == first ? batch.deps : tasks[t].deps)
      list.push_back(node(d));
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    for (int d : list)
      dependents[d].push_back(static_cast<int>(t));
    waiting[t] = static_cast<int>(list.size());
    deps[t] = std::move(list);
  }
  std::vector<int> ready, order, index(n, -1);
  for (size_t t = 0; t < n; ++t)
    if ((!merged[t] || int(t) == first) && waiting[t] == 0)
      ready.push_back(static_cast<int>(t));
  std::make_heap(ready.begin(), ready.end(), std::greater<int>());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<int>());
    int t = ready.back();
    ready.pop_back();
    index[t] = static_cast<int>(order.size());
    order.push_back(t);
    for (int d : dependents[t])
      if (--waiting[d] == 0) {
        ready.push_back(d);
        std::push_heap(ready.begin(), ready.end(), std::greater<int>());
      }
  }
  if (order.size() != n - members.size() + 1)
    return false; // a cycle: cannot happen after the check above
  int firstMovement = *std::min_element(members.begin(), members.end());
  std::vector<Task> sorted;
  std::vector<int> movementOf;
  for (int t : order) {
    sorted.push_back(t == first ? batch : tasks[t]);
    sorted.back().deps.clear();
    for (int d : deps[t])
      sorted.back().deps.push_back(index[d]);
    movementOf.push_back(t == first ? firstMovement : program.movementOf[t]);
  }
  tasks = std::move(sorted);
  program.movementOf = std::move(movementOf);
  int b = static_cast<int>(program.batches.size());
  for (int m : members)
    program.batchOf[m] = b;
  std::sort(members.begin(), members.end());
  program.batches.push_back(std::move(members));
  return true;
}

} // namespace

void batchTransfers(DeviceProgram &program, const Topology &topology) {
  // Candidate groups: batchable movements by op, kind and pair, in order.
  std::map<std::tuple<int, int, int64_t, int64_t>, std::vector<int>> groups;
  std::vector<std::tuple<int, int, int64_t, int64_t>> keys;
  for (size_t m = 0; m < program.movements.size(); ++m) {
    const Movement &mv = program.movements[m];
    if (!mv.batchable || program.batchOf[m] >= 0)
      continue;
    auto k = std::make_tuple(mv.op, int(mv.kind), mv.from, mv.to);
    std::vector<int> &list = groups[k];
    if (list.empty())
      keys.push_back(k);
    list.push_back(static_cast<int>(m));
  }
  std::vector<std::vector<int>> candidates;
  for (const auto &k : keys) {
    const std::vector<int> &list = groups[k];
    for (size_t begin = 0; begin + 1 < list.size(); begin += kMaxBatch)
      candidates.emplace_back(list.begin() + begin,
                              list.begin() +
                                  std::min(list.size(), begin + kMaxBatch));
  }
  if (candidates.empty())
    return;
  SimResult best = simulate(topology, program.tasks);
  int budget = simulationBudget(program.tasks.size());
  // A merge stays where the step simulates no slower: one transfer is one
  // node and one cross-GPU wait of the runtime's graph instead of several.
  auto tryMerge = [&](const std::vector<int> &members) {
    if (budget-- <= 0)
      return false;
    DeviceProgram trial = program;
    if (!mergeTransfers(trial, members))
      return false;
    SimResult r = simulate(topology, trial.tasks);
    if (r.stalled || r.seconds > best.seconds * (1 + 1e-9))
      return false;
    best = std::move(r);
    program = std::move(trial);
    return true;
  };
  for (const std::vector<int> &group : candidates) {
    if (budget <= 0)
      break;
    if (tryMerge(group))
      continue;
    // Else the ones ready together: the same dependencies.
    std::vector<int> taskOf = transferTasks(program);
    std::map<std::vector<int>, std::vector<int>> together;
    for (int m : group) {
      std::vector<int> deps = program.tasks[taskOf[m]].deps;
      std::sort(deps.begin(), deps.end());
      together[deps].push_back(m);
    }
    if (together.size() == 1)
      continue;
    for (auto &[deps, members] : together)
      if (members.size() > 1)
        tryMerge(members);
  }
}

void scheduleTransfers(DeviceProgram &program, const Topology &topology) {
  const std::vector<Task> listed = program.tasks;
  size_t n = listed.size();
  if (std::none_of(listed.begin(), listed.end(),
                   [](const Task &t) { return t.kind == Task::Transfer; }))
    return;
  SimResult inList = simulate(topology, listed);
  // Each task's chain of work from its start to the end of the step: its
  // time in list order, then its dependents' longest chain.
  std::vector<std::vector<int>> dependents(n);
  for (size_t t = 0; t < n; ++t)
    for (int d : listed[t].deps)
      dependents[d].push_back(static_cast<int>(t));
  std::vector<double> chain(n, 0);
  for (size_t t = n; t-- > 0;) {
    double after = 0;
    for (int d : dependents[t])
      after = std::max(after, chain[d]);
    chain[t] = (inList.end[t] - inList.start[t]) + after;
  }
  double longest = *std::max_element(chain.begin(), chain.end());
  double best = inList.seconds;
  for (int priority = 0; priority < 3; ++priority) {
    // Every transfer free to go first; among the ready ones, in list order,
    // the smallest first, or the one with the longest chain first (chains
    // equal to the nanosecond in list order: rounding must not order them).
    std::vector<Task> loose = listed;
    for (size_t t = 0; t < n; ++t)
      if (loose[t].kind == Task::Transfer) {
        loose[t].unordered = true;
        loose[t].rank = priority == 0 ? double(t)
                        : priority == 1
                            ? loose[t].bytes
                            : std::round((longest - chain[t]) * 1e9);
      }
    SimResult free = simulate(topology, loose);
    if (free.stalled)
      continue;
    std::vector<Task> ranked = listed;
    for (size_t t = 0; t < n; ++t)
      if (ranked[t].kind == Task::Transfer)
        ranked[t].rank = free.start[t];
    SimResult inRank = simulate(topology, ranked);
    if (!inRank.stalled && inRank.seconds < best * (1 - 1e-9)) {
      best = inRank.seconds;
      program.tasks = std::move(ranked);
    }
  }
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

/// bestProgram for the weights as `plan` lays them out, unbatched.
static DeviceProgram bestAsLaid(const planner::Graph &graph,
                                const planner::Plan &plan,
                                const planner::Options &options,
                                const Topology &topology, bool &synthesized,
                                const Placement &placement) {
  DeviceProgram program =
      faster(naiveProgram(graph, plan, options, placement),
             synthesizedProgram(graph, plan, options, topology, placement),
             topology, synthesized);
  // Synthesized with receives in source order where that is faster
  // (placedBestProgram says when).
  bool sourceOrder = false;
  program = faster(std::move(program),
                   mixedProgram(graph, plan, options, topology, placement,
                                std::vector<bool>(graph.ops.size(), true),
                                /*rotate=*/false),
                   topology, sourceOrder);
  synthesized = synthesized || sourceOrder;
  return program;
}

Placement
searchPlacement(const planner::Graph &graph, const planner::Plan &plan,
                const planner::Options &options, const Topology &topology,
                const std::vector<bool> &keep, bool synthesized, bool rotate) {
  auto stepTime = [&](const Placement &placement) {
    DeviceProgram program =
        synthesized
            ? mixedProgram(graph, plan, options, topology, placement,
                           std::vector<bool>(graph.ops.size(), true), rotate)
            : naiveProgram(graph, plan, options, placement);
    SimResult r = simulate(topology, program.tasks);
    return r.stalled ? std::numeric_limits<double>::infinity() : r.seconds;
  };
  size_t tasks = naiveProgram(graph, plan, options).tasks.size();
  return searchPlacementBy(graph, plan, options, topology, keep, stepTime,
                           simulationBudget(tasks));
}

namespace {

/// placedBestProgram with every synthesized op receiving in rotated order
/// (`rotate`) or in source order, placements searched for that order.
DeviceProgram
placedInOrder(const planner::Graph &graph, const planner::Plan &plan,
              const planner::Options &options, const Topology &topology,
              const std::vector<bool> &keep, bool rotate,
              std::vector<bool> &synthesizedOps, Placement &placement) {
  Placement forNaive =
      searchPlacement(graph, plan, options, topology, keep, false);
  Placement forSynthesized =
      searchPlacement(graph, plan, options, topology, keep, true, rotate);
  synthesizedOps.assign(graph.ops.size(), true);
  bool synthesized = false;
  DeviceProgram program =
      faster(naiveProgram(graph, plan, options, forNaive),
             mixedProgram(graph, plan, options, topology, forSynthesized,
                          synthesizedOps, rotate),
             topology, synthesized);
  placement = synthesized ? forSynthesized : forNaive;
  // Then op by op, the other form where the step gets faster: trees pay off
  // on large blocks and cost latency on small ones, which one program may
  // both have.
  synthesizedOps.assign(graph.ops.size(), synthesized);
  SimResult best = simulate(topology, program.tasks);
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    synthesizedOps[o] = !synthesizedOps[o];
    DeviceProgram trial = mixedProgram(graph, plan, options, topology,
                                       placement, synthesizedOps, rotate);
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

} // namespace

std::map<int, std::vector<Placed>>
splitWeightHomes(const planner::Graph &graph, const planner::Plan &plan,
                 const planner::Options &options) {
  std::map<int, std::vector<Placed>> homes;
  if (options.weightsReplicable || plan.layouts.size() != graph.values.size())
    return homes;
  std::set<int> seen;
  for (size_t o = 0; o < graph.ops.size(); ++o)
    for (size_t i = 0; i < graph.ops[o].inputs.size(); ++i) {
      int value = graph.ops[o].inputs[i].value;
      const planner::Value &v = graph.values[value];
      if (v.kind != planner::ValueKind::Weight || !seen.insert(value).second)
        continue; // o is its first reader
      int64_t bytes = v.elementBytes;
      for (int64_t extent : v.shape)
        bytes *= extent;
      const planner::Spec &spec = plan.specs[o];
      int64_t k = numBlocks(spec);
      const std::vector<Placed> &laid = plan.layouts[value];
      if (bytes < kSplitHomeBytes || k < 2 || laid.size() != 1 ||
          laid[0].box.volume() * v.elementBytes != bytes)
        continue;
      // Every block reads it whole: one distinct box, the whole weight.
      planner::OpPlan op = planner::planOp(graph, graph.ops[o], spec, options);
      if (op.needs[i].size() != 1)
        continue;
      int dim = -1;
      for (size_t d = 0; d < v.shape.size(); ++d)
        if (v.shape[d] % k == 0 && (dim < 0 || v.shape[d] > v.shape[dim]))
          dim = static_cast<int>(d);
      if (dim < 0)
        continue;
      std::vector<Placed> &pieces = homes[value];
      for (int64_t j = 0; j < k; ++j) {
        Box box = laid[0].box;
        box.begin[dim] = v.shape[dim] / k * j;
        box.end[dim] = v.shape[dim] / k * (j + 1);
        pieces.push_back(Placed{j, box});
      }
    }
  return homes;
}

namespace {

/// placedBestProgram for the weights as `plan` lays them out, unbatched.
DeviceProgram
placedAsLaid(const planner::Graph &graph, const planner::Plan &plan,
             const planner::Options &options, const Topology &topology,
             const std::vector<bool> &keep, ProgramChoice &choice) {
  // Rotated receives spread an all-to-all over every GPU's links; on
  // point-to-point links (the V100 cube-mesh) source order can be faster
  // (w1 on 8 with weights split: 12.75 against 13.22 ms). Both orders are
  // placed and chosen op by op, and the faster program is kept (rotated on
  // a tie).
  choice.rotate = true;
  DeviceProgram program =
      placedInOrder(graph, plan, options, topology, keep, true,
                    choice.synthesizedOps, choice.placement);
  std::vector<bool> sourceOps;
  Placement sourcePlacement;
  DeviceProgram sourceOrder = placedInOrder(
      graph, plan, options, topology, keep, false, sourceOps, sourcePlacement);
  SimResult rotated = simulate(topology, program.tasks),
            inSourceOrder = simulate(topology, sourceOrder.tasks);
  if (!inSourceOrder.stalled &&
      (rotated.stalled ||
       inSourceOrder.seconds < rotated.seconds * (1 - 1e-9))) {
    program = std::move(sourceOrder);
    choice.rotate = false;
    choice.synthesizedOps = std::move(sourceOps);
    choice.placement = std::move(sourcePlacement);
  }
  return program;
}

/// `plan` with the weights `homes` names split (splitWeightHomes).
planner::Plan withHomes(const planner::Plan &plan,
                        const std::map<int, std::vector<Placed>> &homes) {
  planner::Plan split = plan;
  for (auto &[value, pieces] : homes)
    split.layouts[value] = pieces;
  return split;
}

/// The program `build(p, out)` makes from `plan` and, where some weights
/// every GPU reads whole could arrive split (splitWeightHomes), from the
/// plan with them split: the faster, batched with `batch`. `build` writes
/// what else it chooses into `out`, a `Chosen`, which `chosen` receives
/// for the program kept; `split` says whether the weights were split.
template <typename Chosen, typename Build>
DeviceProgram
withSplitHomes(const planner::Graph &graph, const planner::Plan &plan,
               const planner::Options &options, const Topology &topology,
               bool batch, Chosen &chosen, bool &split, Build build) {
  DeviceProgram program = build(plan, chosen);
  split = false;
  if (batch)
    batchTransfers(program, topology);
  std::map<int, std::vector<Placed>> homes =
      splitWeightHomes(graph, plan, options);
  if (!homes.empty()) {
    Chosen splitChosen;
    DeviceProgram splitProgram = build(withHomes(plan, homes), splitChosen);
    if (batch)
      batchTransfers(splitProgram, topology);
    SimResult whole = simulate(topology, program.tasks),
              apart = simulate(topology, splitProgram.tasks);
    if (!apart.stalled && apart.seconds < whole.seconds * (1 - 1e-9)) {
      program = std::move(splitProgram);
      chosen = std::move(splitChosen);
      split = true;
    }
  }
  if (options.dataflow)
    scheduleTransfers(program, topology);
  return program;
}

/// placedBestProgram's choice for `graph` as a whole.
DeviceProgram
placedWhole(const planner::Graph &graph, const planner::Plan &plan,
            const planner::Options &options, const Topology &topology,
            const std::vector<bool> &keep, bool batch, ProgramChoice &choice) {
  bool split = false;
  DeviceProgram program = withSplitHomes(
      graph, plan, options, topology, batch, choice, split,
      [&](const planner::Plan &p, ProgramChoice &out) {
        return placedAsLaid(graph, p, options, topology, keep, out);
      });
  choice.splitHomes = split;
  return program;
}

/// choiceProgram before batching and ordering.
DeviceProgram unbatchedProgram(const planner::Graph &graph,
                               const planner::Plan &plan,
                               const planner::Options &options,
                               const Topology &topology,
                               const ProgramChoice &choice) {
  return mixedProgram(
      graph,
      choice.splitHomes
          ? withHomes(plan, splitWeightHomes(graph, plan, options))
          : plan,
      options, topology, choice.placement, choice.synthesizedOps,
      choice.rotate);
}

/// `program` batched with `batch` and, a dataflow program, its copy queues
/// ordered.
DeviceProgram finished(DeviceProgram program, const planner::Options &options,
                       const Topology &topology, bool batch) {
  if (batch)
    batchTransfers(program, topology);
  if (options.dataflow)
    scheduleTransfers(program, topology);
  return program;
}

/// placedBestProgram for a graph with `repetition`'s layers folded
/// (planner::foldRepetition): the choice made on the folded graph, each
/// dropped layer's ops taking their second layer's placement and form,
/// then the whole program built from it once, batched with `batch`.
DeviceProgram
placedRepeating(const planner::Graph &graph, const planner::Plan &plan,
                const planner::Options &options, const Topology &topology,
                const std::vector<bool> &keep, bool batch,
                const planner::Repetition &repetition,
                const planner::FoldedGraph &folded, ProgramChoice &choice) {
  std::vector<bool> foldedKeep;
  if (!keep.empty())
    for (int o : folded.opOf)
      foldedKeep.push_back(keep[o]);
  // Batching the folded graph's program serves only to compare its weights
  // split and whole; the whole program is batched below.
  bool compareBatched =
      batch && !splitWeightHomes(folded.graph, folded.plan, options).empty();
  ProgramChoice made;
  placedWhole(folded.graph, folded.plan, options, topology, foldedKeep,
              compareBatched, made);
  choice.splitHomes = made.splitHomes;
  choice.rotate = made.rotate;
  choice.synthesizedOps.assign(graph.ops.size(), false);
  choice.placement = Placement();
  if (!made.placement.device.empty())
    choice.placement.device.resize(graph.ops.size());
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    int from = repetition.foldedOp(static_cast<int>(o));
    choice.synthesizedOps[o] = made.synthesizedOps[from];
    if (!made.placement.device.empty())
      choice.placement.device[o] = made.placement.device[from];
  }
  // The placement was chosen on the folded graph: the whole step keeps the
  // promise of searchPlacementBy, never slower than the canonical one.
  DeviceProgram program =
      unbatchedProgram(graph, plan, options, topology, choice);
  if (choice.placement.placedOps()) {
    ProgramChoice canonical = choice;
    canonical.placement = Placement();
    DeviceProgram unplaced =
        unbatchedProgram(graph, plan, options, topology, canonical);
    SimResult a = simulate(topology, program.tasks),
              b = simulate(topology, unplaced.tasks);
    if (!b.stalled && (a.stalled || b.seconds < a.seconds)) {
      program = std::move(unplaced);
      choice = std::move(canonical);
    }
  }
  return finished(std::move(program), options, topology, batch);
}

} // namespace

DeviceProgram bestProgram(const planner::Graph &graph,
                          const planner::Plan &plan,
                          const planner::Options &options,
                          const Topology &topology, bool &synthesized,
                          const Placement &placement, bool batch) {
  bool split = false;
  return withSplitHomes(graph, plan, options, topology, batch, synthesized,
                        split, [&](const planner::Plan &p, bool &out) {
                          out = false;
                          return bestAsLaid(graph, p, options, topology, out,
                                            placement);
                        });
}

DeviceProgram placedBestProgram(const planner::Graph &graph,
                                const planner::Plan &plan,
                                const planner::Options &options,
                                const Topology &topology,
                                const std::vector<bool> &keep,
                                ProgramChoice &choice, bool batch) {
  choice = ProgramChoice();
  planner::Repetition repetition =
      planner::findRepetition(graph, plan.specs, /*minCount=*/4);
  planner::FoldedGraph folded;
  if (repetition.count >= 4 &&
      planner::foldRepetition(graph, plan, repetition, folded))
    return placedRepeating(graph, plan, options, topology, keep, batch,
                           repetition, folded, choice);
  return placedWhole(graph, plan, options, topology, keep, batch, choice);
}

DeviceProgram choiceProgram(const planner::Graph &graph,
                            const planner::Plan &plan,
                            const planner::Options &options,
                            const Topology &topology,
                            const ProgramChoice &choice, bool batch) {
  return finished(unbatchedProgram(graph, plan, options, topology, choice),
                  options, topology, batch);
}

namespace {

/// FNV-1a over the bytes of what it is given.
class Fingerprint {
public:
  uint64_t value = 1469598103934665603ull;

  void number(int64_t x) { bytes(&x, sizeof x); }
  void real(double x) { bytes(&x, sizeof x); }
  void numbers(const std::vector<int64_t> &xs) {
    number(static_cast<int64_t>(xs.size()));
    for (int64_t x : xs)
      number(x);
  }
  void loops(const std::vector<std::vector<int>> &xs) {
    number(static_cast<int64_t>(xs.size()));
    for (const std::vector<int> &x : xs) {
      number(static_cast<int64_t>(x.size()));
      for (int l : x)
        number(l);
    }
  }
  void access(const planner::Access &a) {
    number(a.value);
    loops(a.dimLoops);
    numbers(a.shift);
    numbers(a.stride);
    numbers(a.extent);
  }
  void box(const Box &b) {
    numbers(b.begin);
    numbers(b.end);
  }

private:
  void bytes(const void *data, size_t n) {
    const unsigned char *c = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < n; ++i) {
      value ^= c[i];
      value *= 1099511628211ull;
    }
  }
};

} // namespace

uint64_t choiceKey(const planner::Graph &graph, const planner::Plan &plan,
                   const planner::Options &options, const Topology &topology,
                   const std::vector<bool> &keep, bool batch) {
  Fingerprint f;
  f.number(static_cast<int64_t>(graph.values.size()));
  for (const planner::Value &v : graph.values) {
    f.numbers(v.shape);
    f.number(v.elementBytes);
    f.number(static_cast<int64_t>(v.kind));
    f.numbers(v.pinnedParts);
  }
  f.number(static_cast<int64_t>(graph.ops.size()));
  for (const planner::Op &op : graph.ops) {
    f.numbers(op.loopSizes);
    f.number(static_cast<int64_t>(op.cuttable.size()));
    for (bool c : op.cuttable)
      f.number(c);
    f.number(static_cast<int64_t>(op.inputs.size()));
    for (const planner::Access &a : op.inputs)
      f.access(a);
    f.access(op.output);
    f.number(op.accBytes);
    f.real(op.flopsPerPoint);
    f.number(op.causal);
    f.number(op.attention.queryLoop);
    f.number(op.attention.keyLoop);
    f.number(op.attention.queryOffset);
    f.number(op.attention.keyOffset);
    f.number(static_cast<int64_t>(op.kernel));
    for (const std::vector<int> *loops : {&op.gemm.batch, &op.gemm.rows}) {
      f.number(static_cast<int64_t>(loops->size()));
      for (int l : *loops)
        f.number(l);
    }
    f.number(op.gemm.m);
    f.number(op.gemm.n);
    f.number(op.gemm.k);
    f.number(static_cast<int64_t>(op.pinnedInputs.size()));
    for (const std::vector<int64_t> &pin : op.pinnedInputs)
      f.numbers(pin);
    f.numbers(op.pinnedOutput);
  }
  f.number(static_cast<int64_t>(graph.results.size()));
  for (int r : graph.results)
    f.number(r);
  f.number(static_cast<int64_t>(graph.ties.size()));
  for (const planner::Tie &t : graph.ties) {
    f.number(t.argument);
    f.number(t.result);
  }
  f.number(static_cast<int64_t>(plan.specs.size()));
  for (const planner::Spec &spec : plan.specs)
    f.numbers(spec);
  f.number(static_cast<int64_t>(plan.layouts.size()));
  for (const std::vector<Placed> &layout : plan.layouts) {
    f.number(static_cast<int64_t>(layout.size()));
    for (const Placed &p : layout) {
      f.number(p.device);
      f.box(p.box);
    }
  }
  f.number(options.devices);
  f.number(options.weightsReplicable);
  f.number(options.dataflow);
  f.number(options.kernelTimes);
  f.number(topology.devices);
  f.number(topology.nodes);
  f.number(static_cast<int64_t>(topology.links.size()));
  for (const Link &l : topology.links)
    f.real(l.bandwidth);
  for (const std::vector<Route> &from : topology.routes)
    for (const Route &r : from) {
      f.real(r.latency);
      f.number(static_cast<int64_t>(r.links.size()));
      for (int l : r.links)
        f.number(l);
    }
  f.number(static_cast<int64_t>(keep.size()));
  for (bool k : keep)
    f.number(k);
  f.number(batch);
  return f.value;
}

} // namespace ein::physical
