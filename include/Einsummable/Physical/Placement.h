//===- Placement.h - Which GPU runs which join block ------------*- C++ -*-===//
//
// The search's plan runs join block j of every op on GPU j (the canonical
// placement the proxy is defined under, docs/planner.md). Which GPU gets which
// block changes no byte count of the proxy but decides what must move at all
// (a consumer's block on the GPU that produced its input moves nothing) and
// over which links: the physical optimizer places blocks to minimise the
// simulated step (docs/physical.md, issue 8).
//
// searchPlacementBy visits the ops in order and, for each, solves the
// assignment of its join blocks to GPUs that brings their inputs from where
// its producers (already placed) hold them soonest, each region timed alone
// on the machine's routes: an exact minimum-cost matching (the Hungarian
// method), ties broken toward the canonical GPU; an op whose blocks all
// read their inputs where they run is left alone. Then it tries swapping two
// blocks' GPUs (at most 256 swaps over the whole graph, fewer the bigger
// the program, as each simulates the whole step), which sees
// what the matching does not: links shared by several reads. It keeps a
// change only where the whole program then simulates faster, so the result
// is never slower than the canonical placement. Deterministic: no
// randomness, exact integer costs, a fixed order of trials.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PHYSICAL_PLACEMENT_H
#define EINSUMMABLE_PHYSICAL_PLACEMENT_H

#include "Einsummable/Planner/Search.h"
#include "ein/topology.h"

#include <functional>

#include <vector>

namespace ein::physical {

/// `device[o][j]`: the GPU of op o's join block j, distinct per block; an
/// op with no entry runs block j on GPU j.
struct Placement {
  std::vector<std::vector<int64_t>> device;

  int64_t of(size_t op, int64_t block) const {
    return op < device.size() && !device[op].empty() ? device[op][block]
                                                     : block;
  }
  /// How many ops run some block off its canonical GPU.
  size_t placedOps() const;
};

/// `plan` (canonical: every block on the GPU of the join block that leaves
/// it) with its layouts moved by `placement`: an op's result blocks go with
/// the join blocks that produce them; a charged argument's blocks go with
/// its first reader's join blocks (an argument arrives in any layout, free).
planner::Plan placedPlan(const planner::Graph &graph, const planner::Plan &plan,
                         const Placement &placement);

/// Whether the program moves `value`'s blocks: activations and op results
/// do; replicable weights and constants are laid out where they are read.
bool movesWithPlan(const planner::Value &value,
                   const planner::Options &options);

/// The ops whose placement must stay canonical for tied results to leave
/// in the layouts their arguments arrived in (`--tie-layout`): the
/// producers of the graph's results and the first readers of its charged
/// arguments.
std::vector<bool> opsKeptForTies(const planner::Graph &graph,
                                 const planner::Options &options);

/// The simulated step of a candidate placement, in seconds (infinity where
/// it stalls): the caller builds the program (Exchange.h), so placement
/// depends on no program builder.
using PlacementStepTime = std::function<double(const Placement &)>;

/// The placement of `plan`'s join blocks (see the file comment); ops marked
/// in `keep` stay canonical. Candidates are compared by `stepTime`; at most
/// `swapBudget` swaps are tried (simulationBudget of the program's tasks).
/// Exchange.h's searchPlacement times the naive or synthesized program.
Placement searchPlacementBy(const planner::Graph &graph,
                            const planner::Plan &plan,
                            const planner::Options &options,
                            const Topology &topology,
                            const std::vector<bool> &keep,
                            const PlacementStepTime &stepTime, int swapBudget);

/// The cheapest assignment of rows to distinct columns of `cost` (rows <=
/// columns, every row the same length): per row, its column. Exact; among
/// equal-cost assignments an arbitrary but deterministic one.
std::vector<int64_t>
minimumAssignment(const std::vector<std::vector<int64_t>> &cost);

} // namespace ein::physical

#endif // EINSUMMABLE_PHYSICAL_PLACEMENT_H
