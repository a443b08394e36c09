//===- Repetition.h - Identical layers of a planned graph -------*- C++ -*-===//
//
// A deep model is a stack of identical layers: the same ops over the same
// shapes, cut by the same specs, each layer reading the one before. Whatever
// simulates the whole step per decision (block placement, the per-op choice
// of exchange form) then costs the layers squared. findRepetition finds the
// longest such stack in a planned graph; foldRepetition keeps its first two
// layers and its last (the layers whose neighbours differ: the first reads
// what comes before the stack, the last feeds what comes after it) and drops
// the rest, whose decisions repeat those of the second (the first of the
// layers between two identical ones). Decisions made on the folded graph
// then cost as much for 4 layers as for 400 (docs/physical.md).
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLANNER_REPETITION_H
#define EINSUMMABLE_PLANNER_REPETITION_H

#include "Einsummable/Planner/Search.h"

#include <vector>

namespace ein::planner {

/// Ops [first, first + period * count) are `count` layers of `period` ops,
/// op i + period repeating op i: the same loops, accesses, kernel and spec,
/// over values of the same shapes and kinds, which it reads from where op i
/// reads (the next layer's values, or the same shared ones). `count` is 0
/// where no op repeats.
struct Repetition {
  int first = 0;
  int period = 0;
  int count = 0;

  /// The op of the folded graph (foldRepetition) whose decisions op `op`
  /// of the whole graph takes: a dropped layer's op its place in the
  /// second layer; the ops after the dropped layers move up by them.
  int foldedOp(int op) const;
};

/// The repetition of `specs` (a spec per op of `graph`) covering the most
/// ops, the shortest period on a tie; only ones of at least `minCount`
/// layers.
Repetition findRepetition(const Graph &graph, const std::vector<Spec> &specs,
                          int minCount = 2);

/// A graph with the layers 2 .. count - 2 of a repetition dropped (the last
/// layer then reads the second's results), and its plan: the specs, costs
/// and layouts of what is kept.
struct FoldedGraph {
  Graph graph;
  Plan plan;
  /// Per op of `graph`, its op in the whole graph.
  std::vector<int> opOf;
};

/// `graph` and `plan` folded at `repetition` (count of at least 4); false
/// where the dropped layers' values are read other than by the layer after
/// them (a result, a tie, a read from further on).
bool foldRepetition(const Graph &graph, const Plan &plan,
                    const Repetition &repetition, FoldedGraph &folded);

} // namespace ein::planner

#endif // EINSUMMABLE_PLANNER_REPETITION_H
