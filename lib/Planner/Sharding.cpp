//===- Sharding.cpp - A plan's cuts as device-grid shardings --------------===//

#include "Einsummable/Planner/Sharding.h"

#include "ein/partition.h"

#include <algorithm>
#include <set>

namespace ein::planner {

std::string listText(const std::vector<int64_t> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::vector<int64_t> deviceGrid(int64_t devices) {
  std::vector<int64_t> grid;
  for (int64_t p = 2; p * p <= devices; ++p)
    while (devices % p == 0) {
      grid.push_back(p);
      devices /= p;
    }
  if (devices > 1)
    grid.push_back(devices);
  if (grid.empty())
    grid.push_back(1);
  return grid;
}

namespace {

/// Depth first over the parts: for part `i`, every set of unused axes (as a
/// bit mask, lowest masks first) whose sizes multiply to it.
bool assignFrom(const std::vector<int64_t> &grid, const DimParts &parts,
                size_t i, uint32_t used,
                std::vector<std::vector<int64_t>> &axes) {
  if (i == parts.size())
    return true;
  if (parts[i] == 1) {
    axes[i].clear();
    return assignFrom(grid, parts, i + 1, used, axes);
  }
  uint32_t all = (1u << grid.size()) - 1;
  for (uint32_t mask = 1; mask <= all; ++mask) {
    if (mask & used)
      continue;
    int64_t size = 1;
    std::vector<int64_t> chosen;
    for (size_t a = 0; a < grid.size(); ++a)
      if (mask & (1u << a)) {
        size *= grid[a];
        chosen.push_back(static_cast<int64_t>(a));
      }
    if (size != parts[i])
      continue;
    axes[i] = chosen;
    if (assignFrom(grid, parts, i + 1, used | mask, axes))
      return true;
  }
  return false;
}

/// Trailing unsplit dimensions dropped, one entry kept (`[[]]`), as
/// upstream writes a sharding.
void trimSplitAxes(std::vector<std::vector<int64_t>> &splitAxes) {
  while (splitAxes.size() > 1 && splitAxes.back().empty())
    splitAxes.pop_back();
  if (splitAxes.empty())
    splitAxes.emplace_back();
}

/// The sharding of a value cut into `parts` per dimension, given the grid
/// axes of each dimension: the cut points of every split dimension where
/// one of them is uneven.
GridSharding shardingOf(const std::vector<int64_t> &grid,
                        std::vector<std::vector<int64_t>> splitAxes,
                        const DimParts &parts,
                        const std::vector<int64_t> &shape) {
  GridSharding s;
  s.grid = grid;
  bool uneven = false;
  std::vector<int64_t> offsets;
  for (size_t d = 0; d < parts.size(); ++d) {
    if (parts[d] == 1)
      continue;
    uneven = uneven || shape[d] % parts[d] != 0;
    std::vector<int64_t> points = cutPoints(shape[d], parts[d]);
    offsets.insert(offsets.end(), points.begin(), points.end());
  }
  if (uneven)
    s.offsets = std::move(offsets);
  trimSplitAxes(splitAxes);
  s.splitAxes = std::move(splitAxes);
  return s;
}

/// `grids` (then the device grid) tried in order on `parts`; a grid of the
/// cut's own shape where none fits.
std::vector<int64_t> chooseGrid(const DimParts &parts, int64_t devices,
                                const std::vector<std::vector<int64_t>> &grids,
                                std::vector<std::vector<int64_t>> &axes) {
  axes.assign(parts.size(), {});
  std::vector<std::vector<int64_t>> tried = grids;
  tried.push_back(deviceGrid(devices));
  for (const std::vector<int64_t> &grid : tried)
    if (grid.size() < 31 && assignFrom(grid, parts, 0, 0, axes))
      return grid;
  std::vector<int64_t> own;
  for (size_t i = 0; i < parts.size(); ++i) {
    axes[i].clear();
    if (parts[i] > 1) {
      axes[i].push_back(static_cast<int64_t>(own.size()));
      own.push_back(parts[i]);
    }
  }
  if (own.empty())
    own.push_back(1);
  return own;
}

/// Parts per dimension of `access` under `spec`.
DimParts accessParts(const Access &access, const Spec &spec) {
  DimParts parts;
  for (const std::vector<int> &loops : access.dimLoops) {
    int64_t n = 1;
    for (int l : loops)
      n *= spec[l];
    parts.push_back(n);
  }
  return parts;
}

/// The sharding of `access` under `loopAxes` (the grid axes of each loop).
std::optional<GridSharding>
accessSharding(const Graph &graph, const Access &access, const Spec &spec,
               const std::vector<int64_t> &grid,
               const std::vector<std::vector<int64_t>> &loopAxes) {
  if (!access.shift.empty() || access.windowed())
    return std::nullopt;
  std::vector<std::vector<int64_t>> splitAxes;
  for (const std::vector<int> &loops : access.dimLoops) {
    std::vector<int64_t> axes;
    for (int l : loops)
      axes.insert(axes.end(), loopAxes[l].begin(), loopAxes[l].end());
    splitAxes.push_back(std::move(axes));
  }
  return shardingOf(grid, std::move(splitAxes), accessParts(access, spec),
                    graph.values[access.value].shape);
}

} // namespace

bool assignAxes(const std::vector<int64_t> &grid, const DimParts &parts,
                std::vector<std::vector<int64_t>> &axes) {
  axes.assign(parts.size(), {});
  return grid.size() < 31 && assignFrom(grid, parts, 0, 0, axes);
}

OpSharding opSharding(const Graph &graph, const Op &op, const Spec &spec,
                      int64_t devices,
                      const std::vector<std::vector<int64_t>> &grids) {
  OpSharding s;
  std::vector<std::vector<int64_t>> loopAxes;
  s.grid = chooseGrid(spec, devices, grids, loopAxes);
  for (const Access &input : op.inputs)
    s.inputs.push_back(accessSharding(graph, input, spec, s.grid, loopAxes));
  s.output = accessSharding(graph, op.output, spec, s.grid, loopAxes);
  return s;
}

std::optional<DimParts> layoutParts(const std::vector<Placed> &layout,
                                    const std::vector<int64_t> &shape) {
  if (layout.empty())
    return std::nullopt;
  DimParts parts;
  int64_t blocks = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::set<std::pair<int64_t, int64_t>> ranges;
    for (const Placed &p : layout) {
      if (p.box.begin.size() != shape.size())
        return std::nullopt;
      ranges.insert({p.box.begin[d], p.box.end[d]});
    }
    int64_t n = static_cast<int64_t>(ranges.size());
    if (n > shape[d])
      return std::nullopt;
    std::vector<int64_t> points;
    for (const auto &[b, e] : ranges)
      points.push_back(b);
    points.push_back(shape[d]);
    if (points != cutPoints(shape[d], n))
      return std::nullopt;
    parts.push_back(n);
    blocks *= n;
  }
  std::set<std::pair<std::vector<int64_t>, std::vector<int64_t>>> boxes;
  for (const Placed &p : layout)
    boxes.insert({p.box.begin, p.box.end});
  if (static_cast<int64_t>(boxes.size()) != blocks)
    return std::nullopt;
  return parts;
}

GridSharding valueSharding(const DimParts &parts,
                           const std::vector<int64_t> &shape, int64_t devices,
                           const std::vector<std::vector<int64_t>> &grids) {
  std::vector<std::vector<int64_t>> axes;
  std::vector<int64_t> grid = chooseGrid(parts, devices, grids, axes);
  return shardingOf(grid, std::move(axes), parts, shape);
}

std::optional<DimParts> shardingParts(const GridSharding &sharding,
                                      const std::vector<int64_t> &shape,
                                      std::string &why) {
  if (sharding.splitAxes.size() > shape.size()) {
    why = "it splits " + std::to_string(sharding.splitAxes.size()) +
          " dimensions of a value of rank " + std::to_string(shape.size());
    return std::nullopt;
  }
  DimParts parts(shape.size(), 1);
  std::set<int64_t> seen;
  for (size_t d = 0; d < sharding.splitAxes.size(); ++d)
    for (int64_t axis : sharding.splitAxes[d]) {
      if (axis < 0 || axis >= static_cast<int64_t>(sharding.grid.size())) {
        why = "axis " + std::to_string(axis) + " is not an axis of the grid";
        return std::nullopt;
      }
      if (sharding.grid[axis] < 1) {
        why =
            "axis " + std::to_string(axis) + " of the grid has no static size";
        return std::nullopt;
      }
      if (!seen.insert(axis).second) {
        why = "axis " + std::to_string(axis) + " splits two dimensions";
        return std::nullopt;
      }
      parts[d] *= sharding.grid[axis];
    }
  std::vector<int64_t> points;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (parts[d] > shape[d]) {
      why = "it cuts dimension " + std::to_string(d) + " (" +
            std::to_string(shape[d]) + " elements) into " +
            std::to_string(parts[d]) + " parts";
      return std::nullopt;
    }
    if (parts[d] > 1) {
      std::vector<int64_t> p = cutPoints(shape[d], parts[d]);
      points.insert(points.end(), p.begin(), p.end());
    }
  }
  if (!sharding.offsets.empty() && sharding.offsets != points) {
    why = "its sharded_dims_offsets " + listText(sharding.offsets) +
          " are not where ein cuts those parts (" + listText(points) + ")";
    return std::nullopt;
  }
  return parts;
}

std::vector<Placed> partsLayout(const DimParts &parts,
                                const std::vector<int64_t> &shape) {
  std::vector<Placed> layout;
  int64_t blocks = numBlocks(parts);
  for (int64_t k = 0; k < blocks; ++k) {
    std::vector<int64_t> coords = delinearize(k, parts);
    Placed p;
    p.device = k;
    for (size_t d = 0; d < shape.size(); ++d) {
      Range r = blockRange(shape[d], parts[d], coords[d]);
      p.box.begin.push_back(r.offset);
      p.box.end.push_back(r.offset + r.size);
    }
    layout.push_back(std::move(p));
  }
  return layout;
}

bool specCutsInto(const Access &access, const Spec &spec,
                  const DimParts &parts) {
  return accessParts(access, spec) == parts;
}

} // namespace ein::planner
