//===- LowerPlan.cpp - A placed plan as device-level ein -----------------===//
//
// Lowers a planned function: reads the plan it carries (each op's spec and,
// for a staged plan, its `ein.place`), asks the physical optimizer for the
// exchange program (Einsummable/Physical/Exchange.h) and writes each of its
// pieces as device-level ein: block kernels, transfers, aggregations,
// assemblies.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Plan/LowerPlan.h"

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/Physical/Simulator.h"
#include "Einsummable/Plan/BlockKernel.h"

#include "ein/partition.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <optional>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::ein;
namespace planner = ::ein::planner;
namespace physical = ::ein::physical;
using planner::Box;
using planner::Placed;

namespace {

using BoxKey = std::pair<std::vector<int64_t>, std::vector<int64_t>>;
BoxKey key(const Box &b) { return {b.begin, b.end}; }

/// The boxes of a layout's blocks, in its order.
std::vector<Box> boxesOf(const std::vector<Placed> &layout) {
  std::vector<Box> boxes;
  for (const Placed &p : layout)
    boxes.push_back(p.box);
  return boxes;
}

SmallVector<int64_t> sizesOf(const Box &b) {
  SmallVector<int64_t> sizes;
  for (size_t d = 0; d < b.begin.size(); ++d)
    sizes.push_back(b.end[d] - b.begin[d]);
  return sizes;
}

/// `inner`'s offsets inside `outer`.
SmallVector<int64_t> offsetsIn(const Box &inner, const Box &outer) {
  SmallVector<int64_t> offsets;
  for (size_t d = 0; d < inner.begin.size(); ++d)
    offsets.push_back(inner.begin[d] - outer.begin[d]);
  return offsets;
}

bool contains(const Box &outer, const Box &inner) {
  for (size_t d = 0; d < inner.begin.size(); ++d)
    if (inner.begin[d] < outer.begin[d] || inner.end[d] > outer.end[d])
      return false;
  return true;
}

/// A layout that cuts every dimension at fixed points (as every layout of
/// a spec does): its parts per dimension and each block's row-major index.
struct Grid {
  SmallVector<int64_t> parts;
  std::vector<std::vector<int64_t>> cuts; // per dimension, block starts
  SmallVector<int64_t> coords(const Box &b) const {
    SmallVector<int64_t> c;
    for (size_t d = 0; d < cuts.size(); ++d)
      c.push_back(std::lower_bound(cuts[d].begin(), cuts[d].end(), b.begin[d]) -
                  cuts[d].begin());
    return c;
  }
  int64_t index(const Box &b) const {
    return ::ein::linearize(coords(b), parts);
  }
};

Grid gridOf(const std::vector<Box> &boxes, size_t rank) {
  Grid g;
  g.cuts.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    for (const Box &b : boxes)
      g.cuts[d].push_back(b.begin[d]);
    std::sort(g.cuts[d].begin(), g.cuts[d].end());
    g.cuts[d].erase(std::unique(g.cuts[d].begin(), g.cuts[d].end()),
                    g.cuts[d].end());
    g.parts.push_back(static_cast<int64_t>(g.cuts[d].size()));
  }
  return g;
}

/// Lowers one planned function.
class Lowering {
public:
  /// With `topology`, the synthesized program for it; else the naive one.
  Lowering(func::FuncOp func, const PlannerGraph &graph,
           const planner::Options &options, const ::ein::Topology *topology,
           bool placeBlocks, bool batch)
      : func(func), pg(graph), g(graph.graph), options(options),
        topology(topology), placeBlocks(placeBlocks), batch(batch),
        builder(func.getContext()) {}

  LogicalResult run() {
    if (failed(readPlacement()) || failed(rebuildPlan()))
      return failure();
    auto recorded = func->getAttrOfType<DictionaryAttr>(
        EinDialect::getExchangeChoiceAttrName());
    func->removeAttr(EinDialect::getExchangeChoiceAttrName());
    // The recorded choice where it was made for inputs with this key (and
    // fits this graph).
    auto recordedChoice =
        [&](uint64_t key) -> std::optional<physical::ProgramChoice> {
      if (!recorded ||
          uint64_t(recorded.getAs<IntegerAttr>("key").getInt()) != key)
        return std::nullopt;
      physical::ProgramChoice choice;
      choice.rotate = recorded.getAs<BoolAttr>("rotate").getValue();
      choice.splitHomes = recorded.getAs<BoolAttr>("split_weights").getValue();
      ArrayRef<bool> forms =
          recorded.getAs<DenseBoolArrayAttr>("synthesized").asArrayRef();
      ArrayAttr place = recorded.getAs<ArrayAttr>("place");
      if (forms.size() != g.ops.size())
        return std::nullopt;
      choice.synthesizedOps.assign(forms.begin(), forms.end());
      choice.placement.device.resize(g.ops.size());
      for (auto [o, each] : llvm::enumerate(place)) {
        ArrayRef<int64_t> devices = cast<DenseI64ArrayAttr>(each).asArrayRef();
        if (!devices.empty() &&
            int64_t(devices.size()) != ::ein::numBlocks(plan.specs[o]))
          return std::nullopt;
        choice.placement.device[o].assign(devices.begin(), devices.end());
      }
      return choice;
    };
    // Synthesized: blocks placed for the machine, then whichever of the two
    // forms simulates faster, so synthesis never makes a step slower (trees
    // pay a latency a level). A function whose results are tied to its
    // arguments' layouts keeps those layouts' ops canonical.
    if (pinned) {
      // Blocks where `ein.place` puts them (a staged plan's stages).
      bool synthesized = false;
      program = topology ? physical::bestProgram(g, plan, options, *topology,
                                                 synthesized, placement, batch)
                         : physical::naiveProgram(g, plan, options, placement);
      synthesizedOps.assign(g.ops.size(), synthesized);
      plan = physical::placedPlan(g, plan, placement);
    } else if (topology && placeBlocks) {
      std::vector<bool> keep;
      if (func->hasAttr(EinDialect::getTieLayoutAttrName()))
        keep = physical::opsKeptForTies(g, options);
      // What ein-decompose chose for this very graph, plan and options
      // (explaining the plan), built again; else chosen here.
      std::optional<physical::ProgramChoice> made = recordedChoice(
          physical::choiceKey(g, plan, options, *topology, keep, batch));
      physical::ProgramChoice choice;
      if (made) {
        choice = std::move(*made);
        program =
            physical::choiceProgram(g, plan, options, *topology, choice, batch);
      } else {
        program = physical::placedBestProgram(g, plan, options, *topology, keep,
                                              choice, batch);
      }
      synthesizedOps = std::move(choice.synthesizedOps);
      placement = std::move(choice.placement);
      plan = physical::placedPlan(g, plan, placement);
    } else if (topology) {
      bool synthesized = false;
      program = physical::bestProgram(g, plan, options, *topology, synthesized,
                                      {}, batch);
      synthesizedOps.assign(g.ops.size(), synthesized);
    } else {
      program = physical::naiveProgram(g, plan, options);
    }
    // Where the program leaves each value (scattered aggregations' pieces).
    plan.layouts = program.layouts;

    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    SmallVector<Operation *> old;
    for (Operation &op : func.getBody().front().without_terminator())
      old.push_back(&op);
    builder.setInsertionPoint(ret);
    if (failed(placeArguments()))
      return failure();
    for (size_t o = 0; o < g.ops.size(); ++o)
      if (failed(lowerOp(o)))
        return failure();
    // Results leave through placed relations assembled into tensors.
    for (auto [i, v] : llvm::enumerate(g.results)) {
      if (plan.layouts[v].empty() ||
          g.values[v].kind != planner::ValueKind::Intermediate)
        return ret.emitOpError()
               << "returns " << g.values[v].name
               << ", an argument or constant rather than an op's result; "
                  "lowering that is not done yet";
      ret->setOperand(i, assembleResult(v));
    }
    for (Operation *op : llvm::reverse(old))
      if (op->use_empty())
        op->erase();
    forwardParts();
    if (topology && options.dataflow)
      orderBySchedule();
    return success();
  }

  const physical::DeviceProgram &deviceProgram() const { return program; }
  /// Whether the synthesized form was kept (it simulated faster).
  /// Which ops' exchanges were lowered synthesized (empty: naive).
  const std::vector<bool> &synthesized() const { return synthesizedOps; }
  /// Where the lowered program runs each op's join blocks.
  const physical::Placement &blockPlacement() const { return placement; }
  /// Per movement, its transfer's place among the ein.transfer ops that
  /// land on its receiving GPU, in the lowered function's order (which its
  /// copy stream follows); -1 where no transfer carries it (its bytes
  /// forwarded from a part already there).
  std::vector<int64_t> copyOrder() {
    std::vector<int64_t> order(program.movements.size(), -1);
    std::map<int64_t, int64_t> next;
    func.walk([&](TransferOp transfer) {
      auto it = taskOfOp.find(transfer.getOperation());
      if (it == taskOfOp.end())
        return;
      int64_t place = next[transfer.getTo()]++;
      for (int each : physical::movementsOf(program, it->second))
        order[each] = place;
    });
    return order;
  }

private:
  /// The part of an assembled block (a tensor.insert_slice chain) that
  /// holds the region `offsets`/`sizes` of `block` whole, and the region's
  /// offsets in it; null where no one part does (no later insertion may
  /// overlap it).
  static std::pair<Value, SmallVector<int64_t>>
  partHolding(Value block, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
    for (auto insert = block.getDefiningOp<tensor::InsertSliceOp>(); insert;
         insert = insert.getDest().getDefiningOp<tensor::InsertSliceOp>()) {
      ArrayRef<int64_t> at = insert.getStaticOffsets(),
                        extent = insert.getStaticSizes();
      if (insert.getSourceType().getRank() != int64_t(offsets.size()) ||
          ShapedType::isDynamicShape(at) || ShapedType::isDynamicShape(extent))
        break;
      bool inside = true, apart = false;
      SmallVector<int64_t> within;
      for (size_t d = 0; d < offsets.size(); ++d) {
        inside &=
            at[d] <= offsets[d] && offsets[d] + sizes[d] <= at[d] + extent[d];
        apart |=
            at[d] + extent[d] <= offsets[d] || offsets[d] + sizes[d] <= at[d];
        within.push_back(offsets[d] - at[d]);
      }
      if (inside)
        return {insert.getSource(), within};
      if (!apart)
        break;
    }
    return {Value(), {}};
  }

  /// A region of an assembled block that one part holds whole (a
  /// tensor.extract_slice's, an ein.transfer's) is read from that part; the
  /// assembly's other parts, and the blocks and transfers only they read,
  /// are then dead and go (a block assembled whole where its readers take
  /// one part of it: no bytes moved for nothing).
  void forwardParts() {
    func.walk([&](tensor::ExtractSliceOp slice) {
      if (ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
          ShapedType::isDynamicShape(slice.getStaticSizes()) ||
          slice.getSourceType().getRank() != slice.getType().getRank())
        return;
      auto [part, within] = partHolding(
          slice.getSource(), slice.getStaticOffsets(), slice.getStaticSizes());
      if (!part)
        return;
      slice.getSourceMutable().assign(part);
      slice.setStaticOffsets(within);
    });
    func.walk([&](TransferOp transfer) {
      SmallVector<Attribute> offsets(transfer.getOffsets().begin(),
                                     transfer.getOffsets().end());
      for (unsigned i = 0, e = transfer.getNumCopies(); i < e; ++i) {
        auto [part, within] =
            partHolding(transfer.getSources()[i], transfer.getRegionOffsets(i),
                        transfer.getRegionSizes(i));
        if (!part)
          continue;
        transfer.getSourcesMutable()[i].assign(part);
        offsets[i] = DenseI64ArrayAttr::get(func.getContext(), within);
      }
      transfer.setOffsetsAttr(ArrayAttr::get(func.getContext(), offsets));
    });
    // A slice of a whole part is the part.
    func.walk([&](tensor::ExtractSliceOp slice) {
      if (slice.getSourceType() == slice.getType() &&
          llvm::all_of(slice.getStaticOffsets(),
                       [](int64_t o) { return o == 0; }))
        slice.replaceAllUsesWith(slice.getSource());
    });
    SmallVector<Operation *> ops;
    for (Operation &op : func.getBody().front().without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op))
        op->erase();
  }

  /// A dataflow program's ops in the order its simulated schedule runs
  /// them: a step that is a task (a block kernel, a transfer) at its start,
  /// any other (slices, assemblies, aggregations) as soon as its operands
  /// are ready, never before them; ties in the lowered order. The bundle's
  /// step order is the IR's, and a GPU's copy stream runs its transfers in
  /// that order, so they then run as the simulator ordered its copy queues
  /// (physical::scheduleTransfers) instead of op by op.
  void orderBySchedule() {
    physical::SimResult sim = physical::simulate(*topology, program.tasks);
    if (sim.stalled)
      return;
    Block &body = func.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    llvm::DenseMap<Operation *, double> at, ready;
    for (Operation *op : ops) {
      double start = 0;
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (Operation *def = operand.getDefiningOp())
            if (auto it = ready.find(def); it != ready.end())
              start = std::max(start, it->second);
      });
      double end = start;
      if (auto it = taskOfOp.find(op); it != taskOfOp.end()) {
        start = std::max(start, sim.start[it->second]);
        end = std::max(start, sim.end[it->second]);
      }
      at[op] = start;
      ready[op] = end;
    }
    llvm::stable_sort(
        ops, [&](Operation *a, Operation *b) { return at[a] < at[b]; });
    Operation *ret = body.getTerminator();
    for (Operation *op : ops)
      op->moveBefore(ret);
  }

  /// The task (a block kernel, the first hop of a transfer) each lowered op
  /// is in the program (orderBySchedule).
  int kernelTask(size_t o, int64_t block) {
    for (size_t t = 0; t < program.tasks.size(); ++t)
      if (program.tasks[t].op == int(o) && program.tasks[t].block == block)
        return static_cast<int>(t);
    return -1;
  }
  int transferTask(int movement) {
    if (int b = program.batchOf[movement]; b >= 0)
      movement = program.batches[b].front();
    for (size_t t = 0; t < program.tasks.size(); ++t)
      if (program.movementOf[t] == movement)
        return static_cast<int>(t);
    return -1;
  }
  void recordTask(Operation *op, int task) {
    if (op && task >= 0)
      taskOfOp[op] = task;
  }
  llvm::DenseMap<Operation *, int> taskOfOp;

  func::FuncOp func;
  const PlannerGraph &pg;
  const planner::Graph &g;
  planner::Options options;
  const ::ein::Topology *topology;
  bool placeBlocks;
  bool batch;
  std::vector<bool> synthesizedOps;
  physical::Placement placement;
  OpBuilder builder;
  planner::Plan plan;
  physical::DeviceProgram program;
  /// Per batched movement, its region as its batch's transfer landed it.
  std::map<int, Value> batched;
  /// The op being lowered: each GPU's block result (its partial, where
  /// partials aggregate), for batches of partials.
  std::map<int64_t, Value> kernelResults;
  /// The tensor holding block `box` of value `value` on `device`.
  std::map<std::tuple<int, int64_t, BoxKey>, Value> blocks;

  Location loc() { return func.getLoc(); }

  SmallVector<OpFoldResult> folds(ArrayRef<int64_t> values) {
    SmallVector<OpFoldResult> r;
    for (int64_t v : values)
      r.push_back(builder.getIndexAttr(v));
    return r;
  }

  /// Specs from the IR; layouts as the search defines them: an op's result
  /// where its join leaves it, a charged argument as its first reader needs
  /// it.
  LogicalResult rebuildPlan() {
    plan.feasible = true;
    plan.layouts.resize(g.values.size());
    for (size_t o = 0; o < g.ops.size(); ++o) {
      Operation *op = pg.ops[o];
      auto spec = op->getAttrOfType<SpecAttr>("spec");
      if (!spec)
        return op->emitOpError()
               << "has no spec; ein-synthesize-exchanges lowers the planned "
                  "form (run ein-plan first)";
      planner::Spec parts(spec.getParts().begin(), spec.getParts().end());
      // A placed op is cut for the GPUs it is placed on (a stage's).
      int64_t devices =
          pinned ? int64_t(placement.device[o].size()) : options.devices;
      if (!planner::isLegalSpec(g.ops[o], parts, devices))
        return op->emitOpError() << "spec " << spec << " is not legal on "
                                 << devices << " devices";
      plan.specs.push_back(parts);
      planner::OpPlan opPlan = planner::planOp(g, g.ops[o], parts, options);
      plan.layouts[g.ops[o].output.value] = opPlan.holds;
      for (size_t i = 0; i < g.ops[o].inputs.size(); ++i) {
        int value = g.ops[o].inputs[i].value;
        const planner::Value &v = g.values[value];
        if (v.kind != planner::ValueKind::Intermediate &&
            physical::movesWithPlan(v, options))
          readerNeeds[value].push_back(opPlan.arrivals[i]);
      }
    }
    // An argument arrives as its first reader needs it when that is an even
    // cut (a relation). One read only in parts (through slices or concats)
    // arrives with each part where it is first needed when the parts tile it
    // as an even cut (a chunked plan's argument, each chunk's slice cut as
    // its ops are), as the planner prices it; else as the first later
    // reader that needs an even cut, or else whole on device 0, and the
    // exchanges bring each reader its part.
    for (auto &[value, needs] : readerNeeds) {
      const std::vector<int64_t> &shape = g.values[value].shape;
      Grid grid;
      auto even = llvm::find_if(needs, [&](const std::vector<Placed> &n) {
        return evenGrid(boxesOf(n), shape, grid);
      });
      if (even != needs.end()) {
        plan.layouts[value] = *even;
        continue;
      }
      std::vector<Placed> parts;
      std::set<BoxKey> seen;
      for (const std::vector<Placed> &n : needs)
        for (const Placed &p : n)
          if (p.box.volume() > 0 && seen.insert(key(p.box)).second)
            parts.push_back(p);
      if (evenGrid(boxesOf(parts), shape, grid) &&
          int64_t(parts.size()) == ::ein::product(grid.parts)) {
        plan.layouts[value] = std::move(parts);
        continue;
      }
      Box whole;
      for (int64_t extent : shape) {
        whole.begin.push_back(0);
        whole.end.push_back(extent);
      }
      plan.layouts[value] = {Placed{0, whole}};
    }
    return success();
  }

  /// The GPUs ops' `ein.place` pins their join blocks to: all of them or
  /// none (a staged plan places every op; the placement search places a
  /// program whose ops carry none).
  LogicalResult readPlacement() {
    size_t placed = 0;
    placement.device.assign(g.ops.size(), {});
    for (size_t o = 0; o < g.ops.size(); ++o) {
      auto devices = pg.ops[o]->getAttrOfType<DenseI64ArrayAttr>(
          EinDialect::getPlaceAttrName());
      if (!devices)
        continue;
      ++placed;
      for (int64_t device : devices.asArrayRef()) {
        if (device >= options.devices)
          return pg.ops[o]->emitOpError()
                 << "is placed on GPU " << device << " of a target of "
                 << options.devices << " devices";
        placement.device[o].push_back(device);
      }
    }
    if (placed != 0 && placed != g.ops.size()) {
      auto unplaced = llvm::find_if(pg.ops, [](Operation *op) {
        return !op->hasAttr(EinDialect::getPlaceAttrName());
      });
      return (*unplaced)->emitOpError()
             << "has no '" << EinDialect::getPlaceAttrName()
             << "' where other ops have one: place every op or none";
    }
    pinned = placed != 0;
    if (!pinned)
      placement.device.clear();
    return success();
  }
  bool pinned = false;

  /// Per argument or constant that moves with the plan, what each of its
  /// readers needs, in program order.
  std::map<int, std::vector<std::vector<Placed>>> readerNeeds;

  /// The logical element type of a value. A planned result holding
  /// partials is in the accumulator type; what its consumers (repartitions
  /// or assembles, which aggregate) produce is the logical type.
  Type elementOf(int value) {
    Value v = pg.values[value];
    if (auto rel = dyn_cast<RelationType>(v.getType());
        rel && rel.getPartial() != AggKind::None && !v.use_empty())
      return cast<ShapedType>(v.getUsers().begin()->getResult(0).getType())
          .getElementType();
    return cast<ShapedType>(v.getType()).getElementType();
  }

  RankedTensorType blockType(const Box &box, Type element) {
    return RankedTensorType::get(sizesOf(box), element);
  }

  /// A placed relation of `value` over `boxes` (one grid), `replicas`
  /// copies of each block, `devices` block-major.
  RelationType relation(int value, const Grid &grid, int64_t replicas,
                        ArrayRef<int64_t> devices) {
    const planner::Value &v = g.values[value];
    return RelationType::get(func.getContext(), v.shape, elementOf(value),
                             grid.parts, replicas, AggKind::None, devices);
  }

  /// Charged arguments arrive in their layouts, one copy of each block.
  /// Whether `boxes` are the blocks of an even cut of `shape` (as every
  /// relation's blocks are), which `grid` then describes.
  bool evenGrid(const std::vector<Box> &boxes, ArrayRef<int64_t> shape,
                Grid &grid) {
    grid = gridOf(boxes, shape.size());
    std::vector<int64_t> parts;
    return physical::evenCut(boxes, shape.vec(), parts);
  }

  LogicalResult placeArguments() {
    for (size_t a = 0; a < func.getNumArguments(); ++a) {
      if (!physical::movesWithPlan(g.values[a], options) ||
          plan.layouts[a].empty())
        continue;
      Grid grid;
      if (!evenGrid(boxesOf(plan.layouts[a]), g.values[a].shape, grid))
        return func.emitOpError()
               << "argument " << a
               << " is first read in parts that are "
                  "not an even cut of it (through a slice or concat); "
                  "placing such an argument is not lowered yet";
      std::vector<int64_t> devices(plan.layouts[a].size());
      for (const Placed &p : plan.layouts[a])
        devices[grid.index(p.box)] = p.device;
      Value rel = PartitionOp::create(
          builder, loc(), relation(a, grid, 1, devices), pg.values[a]);
      for (const Placed &p : plan.layouts[a])
        blocks[{int(a), p.device, key(p.box)}] = ExtractBlockOp::create(
            builder, loc(), blockType(p.box, elementOf(a)), rel,
            grid.coords(p.box), 0);
    }
    return success();
  }

  /// One ein.transfer of `regions` of `sources` (each held as the block
  /// `within`) from `from` to `to`: the regions as blocks there.
  SmallVector<Value> transferRegions(ArrayRef<Value> sources,
                                     ArrayRef<Box> regions,
                                     ArrayRef<Box> within, int64_t from,
                                     int64_t to, ArrayRef<int64_t> via) {
    SmallVector<Type> types;
    SmallVector<Attribute> offsets, sizes;
    for (auto [source, region, box] : llvm::zip(sources, regions, within)) {
      types.push_back(blockType(
          region, cast<RankedTensorType>(source.getType()).getElementType()));
      offsets.push_back(builder.getDenseI64ArrayAttr(offsetsIn(region, box)));
      sizes.push_back(builder.getDenseI64ArrayAttr(sizesOf(region)));
    }
    auto op = TransferOp::create(
        builder, loc(), types, TokenType::get(func.getContext()), sources,
        builder.getArrayAttr(offsets), builder.getArrayAttr(sizes), from, to,
        via.empty() ? DenseI64ArrayAttr() : builder.getDenseI64ArrayAttr(via),
        ValueRange());
    return SmallVector<Value>(op.getResults());
  }

  /// `region` of `source` (held as the block `within`) moved as
  /// `movement` says: by its own transfer, or by its batch's, made where
  /// the first of the batch is read (the simulator's place for it).
  Value transfer(Value source, const Box &region, const Box &within,
                 int64_t from, int64_t to, int movement) {
    if (int b = program.batchOf[movement]; b >= 0 && !batched.count(movement))
      transferBatch(program.batches[b]);
    if (auto it = batched.find(movement); it != batched.end())
      return it->second;
    Value landed = transferRegions({source}, {region}, {within}, from, to,
                                   program.movements[movement].via)
                       .front();
    recordTask(landed.getDefiningOp(), transferTask(movement));
    return landed;
  }

  /// One transfer of a batch's movements (all of the op being lowered).
  /// Their sources are there when the first is read: a producer's blocks
  /// (repartitions), blocks the canonical GPU assembled for the op (join
  /// copies, after every need), kernels' own partials (aggregations, after
  /// every kernel). Where one is missing, each moves alone and the lowering
  /// reports it where it is read.
  void transferBatch(const std::vector<int> &batch) {
    SmallVector<Value> sources;
    SmallVector<Box> regions, within;
    for (int m : batch) {
      auto [source, box] = batchSource(program.movements[m]);
      if (!source)
        return;
      sources.push_back(source);
      regions.push_back(program.movements[m].region);
      within.push_back(box);
    }
    const physical::Movement &first = program.movements[batch.front()];
    SmallVector<Value> landed = transferRegions(
        sources, regions, within, first.from, first.to, first.via);
    recordTask(landed.front().getDefiningOp(), transferTask(batch.front()));
    for (auto [m, value] : llvm::zip(batch, landed))
      batched[m] = value;
  }

  /// A batched movement's source and the block it holds, or nothing.
  std::pair<Value, Box> batchSource(const physical::Movement &m) {
    switch (m.kind) {
    case physical::Movement::Repartition:
      return heldBlock(m.value, m.from, m.region);
    case physical::Movement::Join: {
      auto it = blocks.find({m.value, m.from, key(m.region)});
      if (it != blocks.end())
        return {it->second, m.region};
      return {};
    }
    case physical::Movement::Aggregate: {
      // The sender's one block of the op, its partial.
      const physical::OpProgram::Kernel *sender = nullptr;
      for (const physical::OpProgram::Kernel &k : program.ops[m.op].kernels)
        if (k.device == m.from) {
          if (sender)
            return {};
          sender = &k;
        }
      auto it = kernelResults.find(m.from);
      if (!sender || it == kernelResults.end())
        return {};
      return {it->second, sender->output};
    }
    }
    return {};
  }

  /// The block of `value` held on `device` that contains `region`.
  std::pair<Value, Box> heldBlock(int value, int64_t device,
                                  const Box &region) {
    for (const Placed &h : plan.layouts[value])
      if (h.device == device && contains(h.box, region))
        return {blocks.at({value, device, key(h.box)}), h.box};
    return {Value(), Box()};
  }

  /// A need assembled at its GPU from its pieces.
  LogicalResult assemble(Operation *op, const physical::OpProgram::Need &need) {
    if (need.reused) {
      if (!blocks.count({need.value, need.device, key(need.box)}))
        return op->emitOpError()
               << "reads a block of " << g.values[need.value].name << " on GPU "
               << need.device
               << " again that the lowering never assembled there";
      return success();
    }
    Type element = elementOf(need.value);
    int64_t covered = 0;
    for (const physical::OpProgram::Piece &piece : need.pieces)
      covered += piece.region.volume();
    if (covered != need.box.volume())
      return op->emitOpError()
             << "reads a block of " << g.values[need.value].name
             << " that no block of its producer's layout holds (an argument "
                "read only in part by its first reader?); not lowered yet";
    SmallVector<std::pair<Value, Box>> pieces;
    for (const physical::OpProgram::Piece &piece : need.pieces) {
      auto [source, box] = heldBlock(need.value, piece.from, piece.region);
      if (!source)
        return op->emitOpError()
               << "needs a block of " << g.values[need.value].name << " on GPU "
               << piece.from << " that the lowering lacks";
      Value part;
      if (piece.from != need.device)
        part = transfer(source, piece.region, box, piece.from, need.device,
                        piece.movement);
      else if (key(piece.region) == key(box))
        part = source;
      else
        part = tensor::ExtractSliceOp::create(
            builder, loc(), source, folds(offsetsIn(piece.region, box)),
            folds(sizesOf(piece.region)),
            folds(SmallVector<int64_t>(piece.region.begin.size(), 1)));
      pieces.push_back({part, piece.region});
    }
    blocks[{need.value, need.device, key(need.box)}] =
        assembleFrom(pieces, need.box, element);
    return success();
  }

  /// `box` from pieces that tile it: the piece itself when one covers it,
  /// else a tensor.empty filled with insert_slices.
  Value assembleFrom(ArrayRef<std::pair<Value, Box>> pieces, const Box &box,
                     Type element) {
    if (pieces.size() == 1 && key(pieces[0].second) == key(box))
      return pieces[0].first;
    Value whole =
        tensor::EmptyOp::create(builder, loc(), sizesOf(box), element);
    for (auto [part, region] : pieces)
      whole = tensor::InsertSliceOp::create(
          builder, loc(), part, whole, folds(offsetsIn(region, box)),
          folds(sizesOf(region)),
          folds(SmallVector<int64_t>(region.begin.size(), 1)));
    return whole;
  }

  /// The blocks op `o`'s kernels read of its input `input`.
  std::vector<Box> readBoxes(size_t o, size_t input) {
    std::vector<Box> boxes;
    for (const physical::OpProgram::Kernel &k : program.ops[o].kernels)
      if (k.inputs[input].volume() > 0)
        boxes.push_back(k.inputs[input]);
    return boxes;
  }

  /// Whether op `o` reads its `input` (a weight or constant that does not
  /// move with the plan) in parts that are no even cut of it, and so
  /// whole on each reading GPU: a chunk's slice of a table of positions
  /// reads its chunk's rows only.
  bool wholeReplicas(size_t o, size_t input) {
    int value = g.ops[o].inputs[input].value;
    Grid unused;
    return isa<SliceOp>(pg.ops[o]) &&
           !physical::movesWithPlan(g.values[value], options) &&
           !evenGrid(readBoxes(o, input), g.values[value].shape, unused);
  }

  /// Blocks of a replicable weight or constant where `op`'s input `input`
  /// reads them: one placed relation per reading input, every copy where
  /// its join block is.
  std::map<BoxKey, std::vector<int64_t>> readersOf(size_t o, size_t input) {
    std::map<BoxKey, std::vector<int64_t>> readers;
    for (const physical::OpProgram::Kernel &k : program.ops[o].kernels)
      if (k.inputs[input].volume() > 0)
        readers[key(k.inputs[input])].push_back(k.device);
    return readers;
  }

  Value laidOut(size_t o, size_t input, Value &relationValue, Grid &grid,
                const physical::OpProgram::Kernel &kernel) {
    int value = g.ops[o].inputs[input].value;
    if (wholeReplicas(o, input)) {
      // Whole on every GPU that reads it, each reading its region.
      std::vector<int64_t> devices;
      for (const physical::OpProgram::Kernel &k : program.ops[o].kernels)
        if (k.inputs[input].volume() > 0 &&
            llvm::find(devices, k.device) == devices.end())
          devices.push_back(k.device);
      const planner::Value &v = g.values[value];
      if (!relationValue)
        relationValue = PartitionOp::create(
            builder, loc(),
            RelationType::get(func.getContext(), v.shape, elementOf(value),
                              SmallVector<int64_t>(v.shape.size(), 1),
                              static_cast<int64_t>(devices.size()),
                              AggKind::None, devices),
            pg.values[value]);
      Box all{std::vector<int64_t>(v.shape.size(), 0), v.shape};
      Value whole = ExtractBlockOp::create(
          builder, loc(), blockType(all, elementOf(value)), relationValue,
          SmallVector<int64_t>(v.shape.size(), 0),
          llvm::find(devices, kernel.device) - devices.begin());
      const Box &region = kernel.inputs[input];
      return tensor::ExtractSliceOp::create(
          builder, loc(), whole, folds(offsetsIn(region, all)),
          folds(sizesOf(region)),
          folds(SmallVector<int64_t>(region.begin.size(), 1)));
    }
    auto readers = readersOf(o, input);
    if (!relationValue) {
      grid = gridOf(readBoxes(o, input), g.values[value].shape.size());
      int64_t replicas = readers.begin()->second.size();
      std::vector<int64_t> devices(::ein::product(grid.parts) * replicas);
      for (auto &[box, list] : readers) {
        Box b{box.first, box.second};
        for (size_t r = 0; r < list.size(); ++r)
          devices[grid.index(b) * replicas + r] = list[r];
      }
      relationValue = PartitionOp::create(
          builder, loc(), relation(value, grid, replicas, devices),
          pg.values[value]);
    }
    const std::vector<int64_t> &list = readers[key(kernel.inputs[input])];
    int64_t replica =
        std::find(list.begin(), list.end(), kernel.device) - list.begin();
    return ExtractBlockOp::create(
        builder, loc(), blockType(kernel.inputs[input], elementOf(value)),
        relationValue, grid.coords(kernel.inputs[input]), replica);
  }

  LogicalResult lowerOp(size_t o) {
    Operation *op = pg.ops[o];
    const planner::Op &node = g.ops[o];
    const physical::OpProgram &record = program.ops[o];
    int out = node.output.value;
    // A returned concat left in its inputs' blocks: its blocks are theirs.
    for (const physical::OpProgram::Kept &k : record.kept) {
      auto it = blocks.find({k.value, k.result.device, key(k.box)});
      if (it == blocks.end())
        return op->emitOpError()
               << "leaves its result in a block of " << g.values[k.value].name
               << " that the lowering did not make";
      blocks[{out, k.result.device, key(k.result.box)}] = it->second;
    }
    if (!record.kept.empty())
      return success();
    if (isa<AttentionOp>(op) && plan.specs[o][4] > 1)
      return op->emitOpError()
             << "is cut along its keys (spec " << op->getAttr("spec")
             << "); combining its partial results needs the log-sum-exp of "
                "the attention kernel, which device-level ein does not have "
                "yet";
    for (const physical::OpProgram::Need &need : record.needs)
      if (failed(assemble(op, need)))
        return failure();
    for (const physical::OpProgram::Copy &copy : record.copies) {
      Value source = blocks.at({copy.value, copy.from, key(copy.box)});
      blocks[{copy.value, copy.to, key(copy.box)}] = transfer(
          source, copy.box, copy.box, copy.from, copy.to, copy.movement);
    }

    // One block kernel per GPU: the op on its blocks.
    Type resultElement = elementOf(out);
    // Partial results (a fan-in over a summed loop) are in the op's
    // accumulator type.
    Type accElement = cast<SpecOpInterface>(op).getAccesses().accumulator;
    std::map<BoxKey, size_t> fanIn;
    for (const physical::OpProgram::Aggregation &a : record.aggregations)
      fanIn[key(a.box)] = a.producers.size();
    std::vector<Value> relations(node.inputs.size());
    std::vector<Grid> grids(node.inputs.size());
    // A weight or constant is laid out as this op reads it: that must be a
    // relation, an even cut (or, read by a slice, whole: wholeReplicas).
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      int value = node.inputs[i].value;
      if (physical::movesWithPlan(g.values[value], options) || isa<SliceOp>(op))
        continue;
      Grid unused;
      if (!evenGrid(readBoxes(o, i), g.values[value].shape, unused))
        return op->emitOpError()
               << "reads " << g.values[value].name
               << " in parts that are not an even cut of it; laying out a "
                  "weight or constant that way is not lowered yet";
    }
    std::map<int64_t, Value> &kernelResult = kernelResults;
    kernelResult.clear();
    for (const physical::OpProgram::Kernel &k : record.kernels) {
      SmallVector<Value> operands;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        int value = node.inputs[i].value;
        if (k.inputs[i].volume() == 0)
          operands.push_back(Value()); // a touch op's block misses it
        else if (physical::movesWithPlan(g.values[value], options))
          operands.push_back(blocks.at({value, k.device, key(k.inputs[i])}));
        else
          operands.push_back(laidOut(o, i, relations[i], grids[i], k));
      }
      if (isa<SliceOp, ConcatOp>(op)) {
        // A touch op moves data only: its output block is the regions of
        // its inputs it touches, placed where they land in the output.
        SmallVector<std::pair<Value, Box>> pieces;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          if (!operands[i])
            continue;
          Box region = k.inputs[i];
          for (size_t d = 0; d < region.begin.size(); ++d) {
            region.begin[d] -= node.inputs[i].shift[d];
            region.end[d] -= node.inputs[i].shift[d];
          }
          pieces.push_back({operands[i], region});
        }
        kernelResult[k.device] = assembleFrom(pieces, k.output, resultElement);
        continue;
      }
      if (isa<ConvOp, PoolOp>(op) && !operands[0])
        return op->emitOpError()
               << "spec " << op->getAttr("spec") << " leaves GPU " << k.device
               << " a block whose window reads only padding; cut its rows "
                  "or columns into fewer parts";
      bool partial = fanIn[key(k.output)] > 1;
      Operation *kernel = cloneBlockKernel(
          builder, op, node, plan.specs[o], k.coords, operands,
          blockType(k.output, partial ? accElement : resultElement),
          k.inputs.empty() ? Box{} : k.inputs[0]);
      kernel->setAttr("device", builder.getI64IntegerAttr(k.device));
      recordTask(kernel, kernelTask(o, &k - record.kernels.data()));
      kernelResult[k.device] = kernel->getResult(0);
    }

    // Partials to their owners, aggregated there.
    for (const physical::OpProgram::Aggregation &a : record.aggregations) {
      int64_t owner = a.producers[0];
      if (a.producers.size() == 1) {
        blocks[{out, owner, key(a.box)}] = kernelResult.at(owner);
        continue;
      }
      // How the op's partials combine (a join-agg's aggregation, a
      // gather's add over the table's rows).
      AggKind agg = cast<SpecOpInterface>(op).getAccesses().aggregation;
      auto combineInto = [&](const Box &box, ArrayRef<Value> partials,
                             int64_t on, Type element) {
        return AggregateOp::create(builder, loc(), blockType(box, element),
                                   TokenType::get(func.getContext()), agg,
                                   partials, on, ValueRange())
            .getResult();
      };
      auto combine = [&](ArrayRef<Value> partials, int64_t on, Type element) {
        return combineInto(a.box, partials, on, element);
      };
      // Scattered: each piece aggregated where the next op reads it, from
      // the local partial's region and every other producer's.
      for (auto [p, piece] : llvm::enumerate(a.pieces)) {
        Value own = kernelResult.at(piece.device);
        if (key(piece.box) != key(a.box))
          own = tensor::ExtractSliceOp::create(
              builder, loc(), own, folds(offsetsIn(piece.box, a.box)),
              folds(sizesOf(piece.box)),
              folds(SmallVector<int64_t>(piece.box.begin.size(), 1)));
        SmallVector<Value> partials = {own};
        for (auto [sender, movement] : a.pieceSends[p])
          partials.push_back(transfer(kernelResult.at(sender), piece.box, a.box,
                                      sender, piece.device, movement));
        blocks[{out, piece.device, key(piece.box)}] =
            combineInto(piece.box, partials, piece.device, resultElement);
      }
      if (!a.pieces.empty())
        continue;
      bool direct = llvm::all_of(
          a.steps, [&](auto step) { return step.second == owner; });
      if (direct) {
        // Every partial to the owner, one aggregation there.
        SmallVector<Value> partials = {kernelResult.at(owner)};
        for (auto [s, step] : llvm::enumerate(a.steps))
          partials.push_back(transfer(kernelResult.at(step.first), a.box, a.box,
                                      step.first, owner, a.movements[s]));
        blocks[{out, owner, key(a.box)}] =
            combine(partials, owner, resultElement);
        continue;
      }
      // A tree: each step adds the sender's running partial to the
      // receiver's, in the accumulator type until the last, at the owner.
      std::map<int64_t, Value> running(kernelResult.begin(),
                                       kernelResult.end());
      for (auto [s, step] : llvm::enumerate(a.steps)) {
        auto [sender, receiver] = step;
        Value moved = transfer(running.at(sender), a.box, a.box, sender,
                               receiver, a.movements[s]);
        bool last = s + 1 == a.steps.size();
        running[receiver] = combine({running.at(receiver), moved}, receiver,
                                    last ? resultElement : accElement);
      }
      blocks[{out, owner, key(a.box)}] = running.at(owner);
    }
    return success();
  }

  /// A result as the placed relation of its blocks, assembled.
  Value assembleResult(int value) {
    std::vector<Box> boxes = boxesOf(plan.layouts[value]);
    Grid grid = gridOf(boxes, g.values[value].shape.size());
    std::vector<Value> ordered(boxes.size());
    std::vector<int64_t> devices(boxes.size());
    for (const Placed &p : plan.layouts[value]) {
      int64_t index = grid.index(p.box);
      ordered[index] = blocks.at({value, p.device, key(p.box)});
      devices[index] = p.device;
    }
    Value rel = FromBlocksOp::create(
        builder, loc(), relation(value, grid, 1, devices), ValueRange(ordered));
    const planner::Value &v = g.values[value];
    return AssembleOp::create(
        builder, loc(), RankedTensorType::get(v.shape, elementOf(value)), rel);
  }
};

} // namespace

FailureOr<LoweredPlan> mlir::ein::lowerPlan(func::FuncOp func,
                                            const PlannerGraph &graph,
                                            const planner::Options &options,
                                            const ::ein::Topology *topology,
                                            bool placeBlocks, bool batch) {
  Lowering lowering(func, graph, options, topology, placeBlocks, batch);
  if (failed(lowering.run()))
    return failure();
  LoweredPlan lowered;
  lowered.program = lowering.deviceProgram();
  lowered.synthesized = lowering.synthesized();
  lowered.placement = lowering.blockPlacement();
  lowered.copyOrder = lowering.copyOrder();
  return lowered;
}

DictionaryAttr
mlir::ein::exchangeChoiceAttr(MLIRContext *context, uint64_t key,
                              const physical::ProgramChoice &choice) {
  Builder b(context);
  SmallVector<Attribute> place;
  for (size_t o = 0; o < choice.synthesizedOps.size(); ++o)
    place.push_back(b.getDenseI64ArrayAttr(o < choice.placement.device.size()
                                               ? choice.placement.device[o]
                                               : std::vector<int64_t>()));
  SmallVector<bool> forms(choice.synthesizedOps.begin(),
                          choice.synthesizedOps.end());
  return b.getDictionaryAttr(
      {b.getNamedAttr("key", b.getI64IntegerAttr(int64_t(key))),
       b.getNamedAttr("rotate", b.getBoolAttr(choice.rotate)),
       b.getNamedAttr("split_weights", b.getBoolAttr(choice.splitHomes)),
       b.getNamedAttr("synthesized", b.getDenseBoolArrayAttr(forms)),
       b.getNamedAttr("place", b.getArrayAttr(place))});
}
