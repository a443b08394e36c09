//===- Placement.cpp - Which GPU runs which join block --------------------===//

#include "Einsummable/Physical/Placement.h"

#include "ein/partition.h"

#include <algorithm>
#include <limits>

namespace ein::physical {

using planner::Box;
using planner::Placed;

bool movesWithPlan(const planner::Value &v, const planner::Options &options) {
  return v.kind == planner::ValueKind::Activation ||
         v.kind == planner::ValueKind::Intermediate ||
         (v.kind == planner::ValueKind::Weight && !options.weightsReplicable);
}

size_t Placement::placedOps() const {
  size_t placed = 0;
  for (const std::vector<int64_t> &op : device)
    for (size_t j = 0; j < op.size(); ++j)
      if (op[j] != int64_t(j)) {
        ++placed;
        break;
      }
  return placed;
}

namespace {

/// Per value, the op whose join blocks its layout follows: its producer, or
/// for an argument its first reader (-1: none).
std::vector<int> layoutOwners(const planner::Graph &graph) {
  std::vector<int> owner(graph.values.size(), -1);
  for (size_t o = 0; o < graph.ops.size(); ++o)
    for (const planner::Access &input : graph.ops[o].inputs)
      if (owner[input.value] < 0)
        owner[input.value] = static_cast<int>(o);
  for (size_t o = 0; o < graph.ops.size(); ++o)
    owner[graph.ops[o].output.value] = static_cast<int>(o);
  return owner;
}

} // namespace

planner::Plan placedPlan(const planner::Graph &graph, const planner::Plan &plan,
                         const Placement &placement) {
  planner::Plan placed = plan;
  if (!placement.placedOps())
    return placed;
  std::vector<int> owner = layoutOwners(graph);
  for (size_t v = 0; v < placed.layouts.size(); ++v)
    if (owner[v] >= 0)
      for (Placed &p : placed.layouts[v])
        p.device = placement.of(owner[v], p.device);
  return placed;
}

std::vector<bool> opsKeptForTies(const planner::Graph &graph,
                                 const planner::Options &options) {
  std::vector<bool> keep(graph.ops.size(), false);
  std::vector<int> owner = layoutOwners(graph);
  for (int result : graph.results)
    if (owner[result] >= 0)
      keep[owner[result]] = true;
  for (size_t v = 0; v < graph.values.size(); ++v)
    if (graph.values[v].kind != planner::ValueKind::Intermediate &&
        movesWithPlan(graph.values[v], options) && owner[v] >= 0)
      keep[owner[v]] = true;
  return keep;
}

std::vector<int64_t>
minimumAssignment(const std::vector<std::vector<int64_t>> &cost) {
  // The Hungarian method with potentials, O(rows^2 columns); 1-based inside.
  size_t n = cost.size(), m = n ? cost[0].size() : 0;
  const int64_t inf = std::numeric_limits<int64_t>::max() / 4;
  std::vector<int64_t> u(n + 1, 0), v(m + 1, 0);
  std::vector<size_t> rowOf(m + 1, 0), way(m + 1, 0);
  for (size_t i = 1; i <= n; ++i) {
    rowOf[0] = i;
    size_t j0 = 0;
    std::vector<int64_t> least(m + 1, inf);
    std::vector<bool> used(m + 1, false);
    do {
      used[j0] = true;
      size_t i0 = rowOf[j0], j1 = 0;
      int64_t delta = inf;
      for (size_t j = 1; j <= m; ++j) {
        if (used[j])
          continue;
        int64_t reduced = cost[i0 - 1][j - 1] - u[i0] - v[j];
        if (reduced < least[j]) {
          least[j] = reduced;
          way[j] = j0;
        }
        if (least[j] < delta) {
          delta = least[j];
          j1 = j;
        }
      }
      for (size_t j = 0; j <= m; ++j) {
        if (used[j]) {
          u[rowOf[j]] += delta;
          v[j] -= delta;
        } else {
          least[j] -= delta;
        }
      }
      j0 = j1;
    } while (rowOf[j0] != 0);
    do {
      size_t j1 = way[j0];
      rowOf[j0] = rowOf[j1];
      j0 = j1;
    } while (j0);
  }
  std::vector<int64_t> column(n, -1);
  for (size_t j = 1; j <= m; ++j)
    if (rowOf[j])
      column[rowOf[j] - 1] = static_cast<int64_t>(j - 1);
  return column;
}

namespace {

/// One greedy pass of searchPlacementBy with at most `swaps` swaps; `best`
/// receives its simulated step.
Placement placeGreedily(const planner::Graph &graph, const planner::Plan &plan,
                        const planner::Options &options,
                        const Topology &topology, const std::vector<bool> &keep,
                        const PlacementStepTime &simulated, int swaps,
                        double &best) {
  int64_t devices = options.devices;
  Placement current;
  current.device.assign(graph.ops.size(), {});
  best = simulated(current);
  if (devices < 2)
    return current;
  std::vector<int> owner = layoutOwners(graph);
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    if (o < keep.size() && keep[o])
      continue;
    const planner::Op &op = graph.ops[o];
    const planner::Spec &spec = plan.specs[o];
    int64_t blocks = numBlocks(spec);
    // cost[j][d]: how long the bytes join block j reads that its producers,
    // as placed so far, hold off GPU d take to reach d, each region alone on
    // the machine (in picoseconds); doubled, plus one off the canonical GPU,
    // so the cheapest assignment prefers the canonical one among equals.
    // The producers' blocks are where placedPlan would move them.
    std::vector<std::vector<int64_t>> cost(blocks,
                                           std::vector<int64_t>(devices, 0));
    for (int64_t j = 0; j < blocks; ++j) {
      std::vector<int64_t> coords = delinearize(j, spec);
      for (const planner::Access &input : op.inputs) {
        const planner::Value &value = graph.values[input.value];
        if (!movesWithPlan(value, options))
          continue;
        Box box = planner::accessBox(input, graph, op, spec, coords);
        int by = owner[input.value];
        for (const Placed &h : plan.layouts[input.value]) {
          double bytes = double(planner::intersect(h.box, box).volume() *
                                value.elementBytes);
          int64_t at = by >= 0 ? current.of(by, h.device) : h.device;
          for (int64_t d = 0; d < devices && bytes > 0; ++d)
            if (d != at)
              cost[j][d] += static_cast<int64_t>(
                  1e12 * (topology.route(at, d).latency +
                          bytes / topology.bandwidth(at, d)));
        }
      }
      for (int64_t d = 0; d < devices; ++d)
        cost[j][d] = 2 * cost[j][d] + (d != j);
    }
    // Every block already reads its inputs where it runs: moving it can
    // only make it read from elsewhere (its consumers adapt when their
    // turn comes), so leave the op be.
    bool local = true;
    for (int64_t j = 0; j < blocks && local; ++j)
      local = cost[j][j] == 0;
    if (local)
      continue;
    std::vector<int64_t> perm = minimumAssignment(cost);
    // The GPUs no block took go to the remaining indices in order, so the
    // placement is a permutation of every GPU (argument layouts follow it).
    std::vector<bool> taken(devices, false);
    for (int64_t d : perm)
      taken[d] = true;
    for (int64_t d = 0; d < devices; ++d)
      if (!taken[d])
        perm.push_back(d);
    auto consider = [&](const std::vector<int64_t> &candidate) {
      Placement trial = current;
      trial.device[o] = candidate;
      double t = simulated(trial);
      if (t >= best * (1 - 1e-9))
        return false;
      best = t;
      current = std::move(trial);
      return true;
    };
    bool canonical = true;
    for (int64_t d = 0; d < devices; ++d)
      canonical = canonical && perm[d] == d;
    if (!canonical)
      consider(perm);
    // Then swaps of two blocks' GPUs, kept where the step gets faster: the
    // matching sees each block's inputs alone, not the links its
    // consumers' reads will share. Bounded, so big plans stay quick.
    std::vector<int64_t> swapped = current.device[o];
    if (swapped.empty())
      for (int64_t d = 0; d < devices; ++d)
        swapped.push_back(d);
    for (int64_t a = 0; a < devices && swaps > 0; ++a)
      for (int64_t b = a + 1; b < devices && swaps > 0; ++b, --swaps) {
        std::swap(swapped[a], swapped[b]);
        if (!consider(swapped))
          std::swap(swapped[a], swapped[b]);
      }
  }
  return current;
}

} // namespace

Placement searchPlacementBy(const planner::Graph &graph,
                            const planner::Plan &plan,
                            const planner::Options &options,
                            const Topology &topology,
                            const std::vector<bool> &keep,
                            const PlacementStepTime &stepTime, int swapBudget) {
  // Swaps can lead the greedy pass away from what the matchings alone find
  // (a swap that helps an early op may cost a later one more): keep the
  // better of the two passes, the matchings-only one on a tie.
  double matched = 0, swapped = 0;
  Placement a =
      placeGreedily(graph, plan, options, topology, keep, stepTime, 0, matched);
  Placement b = placeGreedily(graph, plan, options, topology, keep, stepTime,
                              swapBudget, swapped);
  return swapped < matched * (1 - 1e-9) ? b : a;
}

} // namespace ein::physical
