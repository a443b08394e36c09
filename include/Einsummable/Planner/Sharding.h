//===- Sharding.h - A plan's cuts as device-grid shardings ------*- C++ -*-===//
//
// How upstream MLIR's `shard` dialect reads a spec: a device grid, and per
// tensor dimension the grid axes that split it (`split_axes`), with the cut
// points where a split is uneven (`sharded_dims_offsets`). The export of a
// plan as `shard` annotations and the import of a user's annotations as pins
// both go through here. Plain C++, no MLIR; docs/interop.md describes the
// mapping.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLANNER_SHARDING_H
#define EINSUMMABLE_PLANNER_SHARDING_H

#include "Einsummable/Planner/Cost.h"
#include "Einsummable/Planner/Graph.h"

#include <optional>
#include <string>
#include <vector>

namespace ein::planner {

/// One value's layout on a device grid, as a `shard.sharding` says it.
struct GridSharding {
  std::vector<int64_t> grid; // the grid's shape
  /// Per tensor dimension (trailing unsplit dimensions dropped, at least
  /// one entry), the grid axes splitting it, the outermost first.
  std::vector<std::vector<int64_t>> splitAxes;
  /// Where some split dimension is cut unevenly: for every split
  /// dimension in order, its cut points (parts + 1 values). Else empty.
  std::vector<int64_t> offsets;
  bool operator==(const GridSharding &o) const {
    return grid == o.grid && splitAxes == o.splitAxes && offsets == o.offsets;
  }
};

/// Parts per tensor dimension: the blocks a layout cuts each dimension into.
using DimParts = std::vector<int64_t>;

/// "[4, 1]": parts, cut points, as the messages about pins write them.
std::string listText(const std::vector<int64_t> &values);

/// The grid every cut of `devices` ways is tried on first: the prime
/// factors of `devices`, smallest first (8 devices: 2x2x2), so that a cut
/// of any dimension into any divisor finds axes whose sizes multiply to it.
std::vector<int64_t> deviceGrid(int64_t devices);

/// Disjoint axes of `grid` for each entry of `parts` whose product is that
/// entry (none for a part of 1), the lowest axes first; false where `grid`
/// has no such axes.
bool assignAxes(const std::vector<int64_t> &grid, const DimParts &parts,
                std::vector<std::vector<int64_t>> &axes);

/// How one op's spec reads on a grid: the grid, and the sharding of every
/// input (nullopt where a read is not a plain cut: a windowed read with its
/// halo, or a slice or concat's shifted read) and of the result after
/// aggregation (partial sums have no `shard` form; the aggregated result is
/// replicated along the aggregated loops' axes).
struct OpSharding {
  std::vector<int64_t> grid;
  std::vector<std::optional<GridSharding>> inputs;
  std::optional<GridSharding> output;
};

/// The sharding of `op` under `spec`: on the first of `grids` whose axes
/// fit the spec's parts, else on deviceGrid(devices), else on a grid of the
/// spec's own cut (the parts of its cut loops, in loop order).
OpSharding opSharding(const Graph &graph, const Op &op, const Spec &spec,
                      int64_t devices,
                      const std::vector<std::vector<int64_t>> &grids = {});

/// The parts per dimension of a layout (every block of a value, once),
/// where its blocks are exactly the ordinary cut of those parts
/// (blockRange's cut points); nullopt otherwise.
std::optional<DimParts> layoutParts(const std::vector<Placed> &layout,
                                    const std::vector<int64_t> &shape);

/// The sharding of a value of `shape` cut into `parts` on the first of
/// `grids` that fits, else on deviceGrid(devices), else on a grid of its
/// own.
GridSharding valueSharding(const DimParts &parts,
                           const std::vector<int64_t> &shape, int64_t devices,
                           const std::vector<std::vector<int64_t>> &grids = {});

/// What a sharding cuts a value of `shape` into: parts per dimension, or
/// nullopt with `why` where ein cannot honour it (an axis named twice or
/// out of the grid, more split dimensions than the value has, offsets that
/// are not ein's cut points for those parts).
std::optional<DimParts> shardingParts(const GridSharding &sharding,
                                      const std::vector<int64_t> &shape,
                                      std::string &why);

/// The layout of a value of `shape` cut into `parts`, block k (row-major
/// over the dimensions) on device k: how a pinned argument arrives.
std::vector<Placed> partsLayout(const DimParts &parts,
                                const std::vector<int64_t> &shape);

/// Whether `spec` cuts `access`'s dimensions into `parts`.
bool specCutsInto(const Access &access, const Spec &spec,
                  const DimParts &parts);

} // namespace ein::planner

#endif // EINSUMMABLE_PLANNER_SHARDING_H
