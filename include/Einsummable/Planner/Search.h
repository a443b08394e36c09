//===- Search.h - Whole-graph spec search -----------------------*- C++ -*-===//
//
// Picks one spec per op (and an arrival layout per charged argument) for the
// whole graph by dynamic programming over a topological order whose state is
// the choices of the values still live. Exact unless the state cap bites,
// which the result reports. docs/planner.md describes the method.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLANNER_SEARCH_H
#define EINSUMMABLE_PLANNER_SEARCH_H

#include "Einsummable/Planner/Cost.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ein::planner {

/// How far a running search has come, for a progress line.
struct SearchProgress {
  size_t step = 0, steps = 0; // nodes placed, of all
  int op = -1;                // the op just placed (-1: an argument's arrival)
  size_t states = 0;          // states kept after this step
  double cheapest = 0;        // the cheapest kept state's cost so far, bytes
  double seconds = 0;         // since the search began
};

struct SearchOptions : Options {
  /// The most DP states kept after each step (at least 1); beyond it the
  /// cheapest are kept and the result is marked capped (no longer provably
  /// optimal).
  size_t stateCap = 1 << 17;
  /// When not 0, the most state expansions (a state times a choice of the
  /// node placed) the search may spend: it first keeps at most 4096
  /// states, then raises the cap 8x at a time, up to stateCap, while the
  /// cap bites and the next run's work (the last one's times the raise)
  /// fits what is left; the cheapest plan found wins. A graph whose search
  /// the first cap does not bite gets the exact plan, as without a budget.
  /// Deterministic: work is counted, not timed.
  uint64_t workBudget = 0;
  /// When not empty, per op, the only specs the search may choose (legal
  /// ones, from a strategy: Strategy.h); an op with none makes the plan
  /// infeasible.
  std::vector<std::vector<Spec>> allowedSpecs;
  /// Named in the error of an op allowedSpecs leaves without a spec.
  std::string restriction;
  /// When set, called after a step once the search has run
  /// `progressSeconds`, then at most once every `progressSeconds`.
  std::function<void(const SearchProgress &)> onProgress;
  double progressSeconds = 3;
};

/// The cost of one op under its chosen spec, in bytes.
struct OpCost {
  double join = 0;        // extra copies of inputs the join needs
  double aggregation = 0; // (fan-in - 1) x output bytes in the acc type
  double repartition = 0; // bytes moved to form the inputs' partitions (and,
                          // for a tied result, to leave in its layout)
  double compute = 0;     // busiest join block's FLOPs x bytesPerFlop
  double total() const { return join + aggregation + repartition + compute; }
};

struct Plan {
  bool feasible = false;
  /// Why no plan exists (feasible == false): names the op with no legal spec.
  std::string error;
  std::vector<Spec> specs;   // per op
  std::vector<OpCost> costs; // per op
  /// Per value: where the plan holds its blocks (each distinct block once,
  /// at its canonical device): an op's result after aggregation, and the
  /// layout a charged argument arrives in. Empty for replicable weights and
  /// constants (laid out wherever they are read, free) and unread values.
  std::vector<std::vector<Placed>> layouts;
  double total = 0;
  /// Whether the state cap bit, and the largest state count seen.
  bool capped = false;
  size_t peakStates = 0;
  /// The cap of the run that found the plan, the state expansions of all
  /// runs, and whether the work budget stopped the cap from rising.
  size_t stateCap = 0;
  uint64_t work = 0;
  bool budgetBit = false;
  /// No plan costs less than this: `total` when the search is exact; when
  /// the cap bit, the cheaper of `total` and, over the states it dropped,
  /// the cheapest one's cost plus the cheapest own terms of the nodes after
  /// it (costs only grow along a plan).
  double lowerBound = 0;
};

/// The whole-graph search.
Plan search(const Graph &graph, const SearchOptions &options);

/// The plan with `specs` fixed (one per op), only the charged arguments'
/// arrival layouts chosen: what a plan costs as a whole.
Plan evaluate(const Graph &graph, const std::vector<Spec> &specs,
              const SearchOptions &options);

/// Per op o, per spec of `candidates[o]`: evaluate(graph, specs with op o
/// alone cut by it, options).total, or nullopt where that plan is
/// infeasible. The same numbers (every cost is a whole number of bytes, so
/// sums are exact in any order), priced from one build of the problem: a
/// spec changes only its op's terms, the edges into and out of it and the
/// best layouts of the arguments it reads; evaluating each alternative
/// whole cost the ops squared (an explanation of 32 layers).
std::vector<std::vector<std::optional<double>>>
alternativeTotals(const Graph &graph, const std::vector<Spec> &specs,
                  const SearchOptions &options,
                  const std::vector<std::vector<Spec>> &candidates);

/// Tries every combination of specs and arrival layouts; for tests on small
/// graphs (exponential).
Plan bruteForce(const Graph &graph, const Options &options);

} // namespace ein::planner

#endif // EINSUMMABLE_PLANNER_SEARCH_H
