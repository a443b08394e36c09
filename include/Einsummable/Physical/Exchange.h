//===- Exchange.h - A plan as a per-GPU program of kernels and transfers -*- C++
//-*-===//
//
// The naive exchange program of a plan (docs/physical.md; the
// `exchange=naive` form): every block of every op's join at its GPU (join
// block k on GPU k), and the data movement the proxy of docs/planner.md
// charges, one term at a time:
//
// - repartition: each block a join needs is assembled at its canonical GPU
//   (the lowest join block reading it) from the intersecting blocks of its
//   producer's layout that sit on other GPUs, region by region;
// - join: that GPU sends the whole block to every other join block reading
//   it;
// - aggregation: every other join block producing a partial of an output
//   block sends it to the block's canonical GPU, which aggregates.
//
// Replicable weights and constants move nothing (laid out ahead of time).
// The byte totals are therefore the proxy's terms exactly; the synthesized
// exchanges of the next issue improve on this form with relays, multicasts
// and aggregation trees.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PHYSICAL_EXCHANGE_H
#define EINSUMMABLE_PHYSICAL_EXCHANGE_H

#include "Einsummable/Physical/Placement.h"
#include "Einsummable/Physical/Simulator.h"
#include "Einsummable/Planner/Search.h"

#include <map>
#include <vector>

namespace ein::physical {

/// One region of one value moving between two GPUs.
struct Movement {
  enum Kind { Repartition, Join, Aggregate };
  Kind kind = Repartition;
  int op = -1;    // the op reading (Repartition, Join) or producing it
  int value = -1; // the value whose region moves
  int64_t from = 0, to = 0;
  planner::Box region;
  double bytes = 0;
  /// GPUs the bytes are relayed through, in order (synthesized programs).
  std::vector<int64_t> via;
  /// Whether it may share one transfer with other movements of its op and
  /// kind between the same two GPUs (batchTransfers): a direct movement
  /// under the chip table's copyKernelBelowBytes (larger ones the CUDA runtime
  /// moves by the copy engine, one call each, so a batch would not save their
  /// latency) whose source is ready when its phase of the op
  /// starts (a producer's block, a block the canonical GPU assembled, a
  /// kernel's own partial).
  bool batchable = false;
};

const char *movementKindName(Movement::Kind kind);

/// The movements that form `needs` from `holds` (both canonical layouts of
/// one value): for each need, its intersection with every block of `holds`
/// on another GPU. Parts of a need no hold covers arrive where they are
/// needed, free, as the proxy assumes of arguments.
std::vector<Movement> repartition(const std::vector<planner::Placed> &holds,
                                  const std::vector<planner::Placed> &needs,
                                  int64_t elementBytes);

/// The structure of one op's part of the program, for lowering it to IR.
struct OpProgram {
  /// A region of a need: already on the need's GPU (`from == device`) or
  /// moved there by `movement`.
  struct Piece {
    int64_t from = 0;
    planner::Box region;
    int movement = -1;
  };
  /// A block a join reads, assembled at its GPU from pieces: at its
  /// canonical GPU (the first reader), or, where a synthesized program
  /// gathers directly, at every reader. `reused`: already assembled there
  /// for an earlier op (no pieces; a synthesized program moves it once).
  struct Need {
    int input = -1; // the first input reading it
    int value = -1;
    int64_t device = 0;
    planner::Box box;
    std::vector<Piece> pieces;
    bool reused = false;
  };
  /// The canonical GPU sends a whole block to another join block.
  struct Copy {
    int input = -1;
    int value = -1;
    planner::Box box;
    int64_t from = 0, to = 0;
    int movement = -1;
  };
  /// Join block `device` (its coordinates per loop): what it reads and
  /// writes. Inputs of replicable weights and constants are read where they
  /// are laid out.
  struct Kernel {
    int64_t device = 0;
    std::vector<int64_t> coords;
    std::vector<planner::Box> inputs;
    planner::Box output;
  };
  /// The partials of an output block, the first on its owner, and how they
  /// combine: `steps` in order, each sending the sender's running partial to
  /// the receiver, which adds it to its own. The last step's receiver is the
  /// owner. (Naive: every producer straight to the owner.)
  ///
  /// Scattered (synthesized, where the next op reads the block in parts on
  /// producers' GPUs): no owner and no steps; each piece is aggregated on
  /// its GPU from every producer's region of it (`pieceSends`: per piece,
  /// each other producer with the movement of its region), a
  /// reduce-scatter ending where the consumer needs the pieces.
  struct Aggregation {
    planner::Box box;
    std::vector<int64_t> producers;
    std::vector<std::pair<int64_t, int64_t>> steps;
    /// Per step, its movement (for the relay it may take).
    std::vector<int> movements;
    std::vector<planner::Placed> pieces;
    std::vector<std::vector<std::pair<int64_t, int>>> pieceSends;
  };
  /// A block of a result left where its input's block is (keptInPieces):
  /// the input value, its block there, and the result's block it is.
  struct Kept {
    int value = -1;
    planner::Box box;
    planner::Placed result;
  };
  std::vector<Need> needs;
  std::vector<Copy> copies;
  std::vector<Kernel> kernels;
  std::vector<Aggregation> aggregations;
  /// Set for a concat that the function returns and no op reads (a chunked
  /// plan's chunks put back whole; not one tied to an argument's layout): no
  /// kernel and nothing moves; the result is its inputs' blocks where they are,
  /// shifted into it, when they form an even cut of it (as every relation's
  /// blocks do).
  std::vector<Kept> kept;
};

/// A plan as tasks for the simulator, with the movement behind each
/// transfer.
struct DeviceProgram {
  std::vector<Task> tasks;
  std::vector<Movement> movements;
  /// Per task: the index of its movement (transfers) or -1 (kernels).
  std::vector<int> movementOf;
  /// Bytes moved per Movement::Kind.
  double bytes[3] = {0, 0, 0};
  /// Per op of the graph, what the program does for it.
  std::vector<OpProgram> ops;
  /// Per value, where the program leaves its blocks: the plan's placed
  /// layouts, with scattered aggregations' pieces in place of their blocks.
  std::vector<std::vector<planner::Placed>> layouts;
  /// Movements that travel together as one transfer (batchTransfers), each
  /// of at least two, in program order; `batchOf` gives each movement's
  /// batch or -1. A batch's task carries the sum of their bytes, and its
  /// `movementOf` is the batch's first movement.
  std::vector<std::vector<int>> batches;
  std::vector<int> batchOf;
};

/// The movements transfer task `task` lands: its movement, or, for a
/// batch's task, every movement of the batch (none for a kernel).
std::vector<int> movementsOf(const DeviceProgram &program, int task);

/// The most movements one batched transfer carries (the runtime copies them
/// in one kernel launch).
constexpr size_t kMaxBatch = 16;

/// Batches `program`'s small transfers where the step simulates no slower
/// on `topology`: the batchable movements of one op and kind between the
/// same two GPUs become one transfer (a latency and a cross-GPU dependency
/// instead of one each), up to kMaxBatch at a time. Each candidate group is
/// tried whole, then split into the movements ready at the same time (same
/// dependencies); a merge stays only where the whole program simulates no
/// slower. At most simulationBudget(tasks) trials.
void batchTransfers(DeviceProgram &program, const Topology &topology);

/// Orders a dataflow program's copy queues (each GPU's received transfers,
/// which its copy stream runs one after another) by when each transfer
/// starts where a GPU may take any ready transfer first: the transfers'
/// `rank`s become those starts. Which ready transfer goes first is tried
/// three ways (list order, the smallest, the one with the longest chain of
/// work after it); the fastest ranking is kept where the step then
/// simulates faster than in list order. The lowering emits each GPU's
/// transfers in that order (docs/physical.md).
void scheduleTransfers(DeviceProgram &program, const Topology &topology);

/// Whether `boxes` are blocks of an even cut of `shape` (each the cell that
/// blockRange gives over the distinct starts in each dimension, as every
/// relation's blocks are); `parts` receives the cut's parts per dimension.
/// Blocks missing from the cut are not checked for.
bool evenCut(const std::vector<planner::Box> &boxes,
             const std::vector<int64_t> &shape, std::vector<int64_t> &parts);

/// The naive exchange program of `plan` (search's output for `graph`),
/// with its join blocks where `placement` puts them (its layouts moved
/// along, placedPlan). Transfers queue on their receiving GPU. Tied results
/// are not yet moved back into their arguments' layouts.
DeviceProgram naiveProgram(const planner::Graph &graph,
                           const planner::Plan &plan,
                           const planner::Options &options,
                           const Placement &placement = {});

/// The same movement synthesized for `topology`: a transfer relays through
/// one GPU where that is faster alone on the machine (a pair without a
/// direct link, say); a block several join blocks read travels down a
/// binomial multicast tree (each GPU that has it sends it on) instead of
/// from one GPU to all, or, where that moves fewer bytes, every reader
/// gathers it from the blocks that hold it (an all-gather); a block already
/// assembled on a GPU for an earlier op is not moved there again; partials
/// the next op reads in parts on the producers' GPUs are aggregated there,
/// each part where it is read (a reduce-scatter), and other partials
/// combine in a pairwise tree ending at the owner instead of all at once
/// there. Each receiver takes its pieces starting from the GPU after it
/// (mixedProgram). Blocks where `placement` puts them.
DeviceProgram synthesizedProgram(const planner::Graph &graph,
                                 const planner::Plan &plan,
                                 const planner::Options &options,
                                 const Topology &topology,
                                 const Placement &placement = {});

/// Whichever of the two simulates faster on `topology` (naive on a tie), so
/// synthesis never makes a step slower, the synthesized one also tried with
/// receives in source order (mixedProgram); `synthesized` says which. With
/// `batch`, its transfers are then batched (batchTransfers). All that once
/// more with the weights splitWeightHomes splits, kept where faster (the
/// program's `layouts` say which). A dataflow program's copy queues are
/// then ordered (scheduleTransfers).
DeviceProgram bestProgram(const planner::Graph &graph,
                          const planner::Plan &plan,
                          const planner::Options &options,
                          const Topology &topology, bool &synthesized,
                          const Placement &placement = {}, bool batch = true);

/// The program with each op's exchanges in its own form: synthesized where
/// `synthesizedOps[op]`, naive elsewhere. A synthesized op's receivers take
/// their pieces starting from the GPU after them (an all-to-all's rounds:
/// each receiver's transfers run one after another), or, without `rotate`,
/// in source order as naive ones do.
DeviceProgram mixedProgram(const planner::Graph &graph,
                           const planner::Plan &plan,
                           const planner::Options &options,
                           const Topology &topology, const Placement &placement,
                           const std::vector<bool> &synthesizedOps,
                           bool rotate = true);

/// Weights of at least this many bytes may arrive split (splitWeightHomes).
constexpr int64_t kSplitHomeBytes = int64_t(1) << 20;

/// Where weights move with the plan (not `options.weightsReplicable`), each
/// weight of kSplitHomeBytes or more that every block of its first reader
/// reads whole (data parallelism) and that `plan` lays out whole on one
/// block: that weight cut evenly over the reader's blocks along its largest
/// dimension they divide (piece j on block j). Each GPU then holds a share
/// and gathers the rest from all of them at once, instead of the first
/// block's GPU sending every other all of it: the same bytes, over every
/// GPU's links.
std::map<int, std::vector<planner::Placed>>
splitWeightHomes(const planner::Graph &graph, const planner::Plan &plan,
                 const planner::Options &options);

/// The placement of `plan`'s join blocks that searchPlacementBy finds
/// (Placement.h), each candidate timed by simulating the program form
/// `synthesized` selects (naive, or synthesized with receives rotated as
/// `rotate` says); ops marked in `keep` stay canonical.
Placement searchPlacement(const planner::Graph &graph,
                          const planner::Plan &plan,
                          const planner::Options &options,
                          const Topology &topology,
                          const std::vector<bool> &keep, bool synthesized,
                          bool rotate = true);

/// What placedBestProgram chooses, from which it builds the program
/// (choiceProgram): the mixedProgram of a placement and per-op forms, with
/// receives rotated or in source order, over the weights as the plan lays
/// them out or split (splitWeightHomes).
struct ProgramChoice {
  bool splitHomes = false;
  bool rotate = true;
  std::vector<bool> synthesizedOps;
  Placement placement;
};

/// What `exchange=synthesized` runs: the faster uniform form (bestProgram)
/// with the blocks placed for it (searchPlacement, each form placed for
/// itself; ops in `keep` stay canonical), then, op by op, the other form
/// wherever the step simulates faster; all of it once with receives rotated
/// and once in source order (mixedProgram), the faster kept; all that once
/// more with the weights splitWeightHomes splits, kept where faster (the
/// program's `layouts` say which); and last, with `batch`, batches
/// transfers (batchTransfers) and orders a dataflow program's copy queues
/// (scheduleTransfers). `choice` receives what was chosen.
///
/// A graph of at least four identical layers (planner::findRepetition) is
/// decided folded to three (planner::foldRepetition): the layers between
/// the second and the last take the second's placement and forms, so the
/// search costs as much for 4 layers as for 400; the program is then built
/// whole from that choice, its blocks left canonical where the placement
/// would make the whole step slower.
DeviceProgram placedBestProgram(const planner::Graph &graph,
                                const planner::Plan &plan,
                                const planner::Options &options,
                                const Topology &topology,
                                const std::vector<bool> &keep,
                                ProgramChoice &choice, bool batch = true);

/// The program placedBestProgram builds from `choice` (made for the same
/// graph, plan and options): no search, the same program.
DeviceProgram choiceProgram(const planner::Graph &graph,
                            const planner::Plan &plan,
                            const planner::Options &options,
                            const Topology &topology,
                            const ProgramChoice &choice, bool batch = true);

/// A fingerprint of everything placedBestProgram's choice depends on: the
/// graph (not its names, which only label tasks), the plan's specs and
/// layouts, the options the program builder reads (devices, weights
/// replicable, dataflow, kernel times), the topology, `keep` and `batch`.
/// Two calls with one key choose alike, so a choice made once (ein-decompose
/// explaining the plan) serves a later call (ein-synthesize-exchanges)
/// whose key is the same.
uint64_t choiceKey(const planner::Graph &graph, const planner::Plan &plan,
                   const planner::Options &options, const Topology &topology,
                   const std::vector<bool> &keep, bool batch);

} // namespace ein::physical

#endif // EINSUMMABLE_PHYSICAL_EXCHANGE_H
