//===- Cost.cpp - Specs and the communication-cost proxy ------------------===//

#include "Einsummable/Planner/Cost.h"

#include "ein/partition.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ein::planner {

int64_t Box::volume() const {
  int64_t v = 1;
  for (size_t d = 0; d < begin.size(); ++d)
    v *= std::max<int64_t>(0, end[d] - begin[d]);
  return v;
}

Box intersect(const Box &a, const Box &b) {
  Box r;
  for (size_t d = 0; d < a.begin.size(); ++d) {
    r.begin.push_back(std::max(a.begin[d], b.begin[d]));
    r.end.push_back(std::max(r.begin[d], std::min(a.end[d], b.end[d])));
  }
  return r;
}

namespace {

/// Whether the blocks a cut of `loops` induces on a dimension spanning them
/// are those of an ordinary cut of that dimension.
bool dimensionCutsLegally(const std::vector<int> &loops,
                          const std::vector<int64_t> &sizes, const Spec &spec) {
  if (loops.size() < 2)
    return true;
  std::vector<int64_t> loopSizes, loopParts;
  for (int l : loops) {
    loopSizes.push_back(sizes[l]);
    loopParts.push_back(spec[l]);
  }
  return cutsLikeOneDimension(loopSizes, loopParts);
}

bool accessCutsLegally(const Access &access, const Op &op, const Spec &spec) {
  for (const std::vector<int> &loops : access.dimLoops)
    if (!dimensionCutsLegally(loops, op.loopSizes, spec))
      return false;
  return true;
}

bool cutsInto(const Op &op, const Spec &spec, int64_t blocks);

void enumerateInto(const Op &op, int64_t devices, size_t loop, int64_t left,
                   Spec &current, std::vector<Spec> &out) {
  if (loop == op.loopSizes.size()) {
    if (left == 1 && cutsInto(op, current, devices))
      out.push_back(current);
    return;
  }
  int64_t largest = op.cuttable[loop] ? std::min(left, op.loopSizes[loop]) : 1;
  for (int64_t parts = largest; parts >= 1; --parts) {
    if (left % parts)
      continue;
    current[loop] = parts;
    enumerateInto(op, devices, loop + 1, left / parts, current, out);
  }
}

/// Query-key pairs with t + keyOffset <= s + queryOffset, s in [q0, q1),
/// t in [k0, k1).
double visiblePairs(int64_t q0, int64_t q1, int64_t k0, int64_t k1,
                    int64_t queryOffset, int64_t keyOffset) {
  // For query s the count is clamp(s + a, 0, width).
  double a = static_cast<double>(queryOffset - keyOffset - k0 + 1);
  double width = static_cast<double>(k1 - k0);
  double lo = static_cast<double>(q0), hi = static_cast<double>(q1 - 1);
  double total = 0;
  // Partly visible rows: 0 < s + a < width.
  double from = std::max(lo, 1 - a), to = std::min(hi, width - a - 1);
  if (from <= to)
    total += (to - from + 1) * ((from + a) + (to + a)) / 2;
  // Fully visible rows: s + a >= width.
  double full = std::max(lo, width - a);
  if (full <= hi)
    total += (hi - full + 1) * width;
  return total;
}

} // namespace

bool Access::windowed() const {
  for (size_t d = 0; d < stride.size(); ++d)
    if (stride[d] != 1 || extent[d] != 1)
      return true;
  return false;
}

namespace {

/// The even cut of dimension `d` by its loops' parts.
Range evenRange(const Access &access, const std::vector<int64_t> &shape,
                const Spec &spec, const std::vector<int64_t> &coords,
                size_t d) {
  std::vector<int64_t> loopParts, loopCoords;
  for (int l : access.dimLoops[d]) {
    loopParts.push_back(spec[l]);
    loopCoords.push_back(coords[l]);
  }
  return blockRange(shape[d], numBlocks(loopParts),
                    linearize(loopCoords, loopParts));
}

/// The even cut of each dimension by its loops' parts: the box of an
/// ordinary access.
Box evenBox(const Access &access, const std::vector<int64_t> &shape,
            const Spec &spec, const std::vector<int64_t> &coords) {
  Box box;
  for (size_t d = 0; d < access.dimLoops.size(); ++d) {
    Range r = evenRange(access, shape, spec, coords, d);
    box.begin.push_back(r.offset);
    box.end.push_back(r.offset + r.size);
  }
  return box;
}

} // namespace

Box accessBox(const Access &access, const Graph &graph, const Op &op,
              const Spec &spec, const std::vector<int64_t> &coords) {
  const std::vector<int64_t> &shape = graph.values[access.value].shape;
  if (access.shift.empty())
    return evenBox(access, shape, spec, coords);
  Box box;
  for (size_t d = 0; d < access.dimLoops.size(); ++d) {
    const std::vector<int> &loops = access.dimLoops[d];
    if (loops.size() > 1) {
      // A dimension spanning several loops (a grouped convolution's
      // channels: the group, then the channel in it) is read plainly, cut
      // as one dimension (enumerateSpecs keeps such cuts ordinary).
      Range r = evenRange(access, shape, spec, coords, d);
      box.begin.push_back(r.offset);
      box.end.push_back(r.offset + r.size);
      continue;
    }
    Range loop =
        blockRange(op.loopSizes[loops[0]], spec[loops[0]], coords[loops[0]]);
    int64_t stride = access.stride.empty() ? 1 : access.stride[d];
    int64_t extent = access.extent.empty() ? 1 : access.extent[d];
    int64_t lo = std::max<int64_t>(0, loop.offset * stride + access.shift[d]);
    int64_t hi = std::min(shape[d], (loop.offset + loop.size - 1) * stride +
                                        access.shift[d] + extent);
    box.begin.push_back(lo);
    box.end.push_back(std::max(lo, hi));
  }
  return box;
}

double blockFlops(const Op &op, const Spec &spec,
                  const std::vector<int64_t> &coords) {
  double points = 1;
  Range query{0, 0}, key{0, 0};
  for (size_t l = 0; l < op.loopSizes.size(); ++l) {
    Range r = blockRange(op.loopSizes[l], spec[l], coords[l]);
    if (op.causal && static_cast<int>(l) == op.attention.queryLoop)
      query = r;
    else if (op.causal && static_cast<int>(l) == op.attention.keyLoop)
      key = r;
    else
      points *= static_cast<double>(r.size);
  }
  if (op.causal)
    points *= visiblePairs(query.offset, query.offset + query.size, key.offset,
                           key.offset + key.size, op.attention.queryOffset,
                           op.attention.keyOffset);
  return op.flopsPerPoint * points;
}

bool partialBlocks(const Op &op, const Spec &spec) {
  std::vector<bool> kept(op.loopSizes.size(), false);
  for (const std::vector<int> &loops : op.output.dimLoops)
    for (int l : loops)
      kept[l] = true;
  for (size_t l = 0; l < spec.size(); ++l)
    if (!kept[l] && spec[l] > 1)
      return true;
  return false;
}

double blockSeconds(const Graph &graph, const Op &op, const Spec &spec,
                    const std::vector<int64_t> &coords) {
  if (op.kernel == KernelKind::InPlace)
    return 0;
  const ChipInfo &chip = chipInfo(kReferenceChip);
  if (op.kernel == KernelKind::Touch) {
    // Each input's region is a view of the block's bytes where it is a run
    // of the block's rows: every dimension after its first partial one
    // whole, every one before it of one index. Other regions are copied,
    // read and written.
    Box out = accessBox(op.output, graph, op, spec, coords);
    double copied = 0;
    for (const Access &access : op.inputs) {
      Box region = accessBox(access, graph, op, spec, coords);
      if (region.volume() == 0)
        continue;
      auto extent = [](const Box &box, size_t d) {
        return box.end[d] - box.begin[d];
      };
      // The region's first dimension of more than one index; every one
      // after it must be whole.
      size_t rank = out.begin.size(), first = 0;
      while (first < rank && extent(region, first) == 1)
        ++first;
      bool run = true;
      for (size_t d = first + 1; d < rank; ++d)
        run = run && extent(region, d) == extent(out, d);
      if (!run)
        copied += 2.0 * double(region.volume()) *
                  double(graph.values[access.value].elementBytes);
    }
    return copied > 0
               ? chip.graphLaunchSeconds + copied / chip.memoryBytesPerSecond
               : 0;
  }
  auto size = [&](int l) {
    return static_cast<double>(
        blockRange(op.loopSizes[l], spec[l], coords[l]).size);
  };
  double flops = blockFlops(op, spec, coords), work = 0;
  // A block whose summed loop is cut writes partial sums, in the
  // accumulator type.
  double outVolume = static_cast<double>(
      accessBox(op.output, graph, op, spec, coords).volume());
  double outBytes = partialBlocks(op, spec)
                        ? double(op.accBytes)
                        : double(graph.values[op.output.value].elementBytes);
  switch (op.kernel) {
  case KernelKind::Gemm: {
    double batch = 1, rows = size(op.gemm.m);
    for (int l : op.gemm.batch)
      batch *= size(l);
    for (int l : op.gemm.rows)
      rows *= size(l);
    auto padded = [](double x) { return std::ceil(x / 8) * 8; };
    work = gemmSeconds(chip, padded(rows), padded(size(op.gemm.n)),
                       padded(size(op.gemm.k)), batch);
    // The table's gemms write bf16; a wider result (f32 partials) writes
    // the rest on top.
    work += std::max(0.0, outBytes - 2) * outVolume / chip.memoryBytesPerSecond;
    break;
  }
  case KernelKind::Attention: {
    double heads = size(0) * size(1) * size(2), all = 1;
    for (size_t l = 0; l < op.loopSizes.size(); ++l)
      all *= size(static_cast<int>(l));
    // A causal block does its visible share of the pairs.
    double visible = all > 0 ? flops / (op.flopsPerPoint * all) : 0;
    work = attentionSeconds(chip, heads, size(3), size(4), op.flopsPerPoint,
                            visible);
    break;
  }
  case KernelKind::Generated:
  case KernelKind::InPlace:
    work = flops / chip.gemmFlopsPerSecond;
    break;
  }
  double bytes = 0;
  for (const Access &access : op.inputs)
    bytes += static_cast<double>(
        accessBox(access, graph, op, spec, coords).volume() *
        graph.values[access.value].elementBytes);
  bytes += outVolume * outBytes;
  return chip.graphLaunchSeconds +
         std::max(work, bytes / chip.memoryBytesPerSecond);
}

namespace {

/// Whether `spec` cuts `op` into exactly `blocks` join blocks by the rules.
bool cutsInto(const Op &op, const Spec &spec, int64_t blocks) {
  if (spec.size() != op.loopSizes.size())
    return false;
  int64_t product = 1;
  for (size_t l = 0; l < spec.size(); ++l) {
    if (spec[l] < 1 || spec[l] > op.loopSizes[l] ||
        (!op.cuttable[l] && spec[l] != 1))
      return false;
    product *= spec[l];
  }
  if (product != blocks)
    return false;
  for (const Access &access : op.inputs)
    if (!accessCutsLegally(access, op, spec))
      return false;
  return accessCutsLegally(op.output, op, spec);
}

std::vector<Spec> specsWithBlocks(const Op &op, int64_t blocks) {
  std::vector<Spec> specs;
  Spec current(op.loopSizes.size(), 1);
  enumerateInto(op, blocks, 0, blocks, current, specs);
  return specs;
}

} // namespace

int64_t usableBlocks(const Op &op, int64_t devices) {
  for (int64_t blocks = devices; blocks > 1; --blocks)
    if (!specsWithBlocks(op, blocks).empty())
      return blocks;
  return 1;
}

bool isLegalSpec(const Op &op, const Spec &spec, int64_t devices) {
  return devices >= 1 && cutsInto(op, spec, usableBlocks(op, devices));
}

std::vector<Spec> enumerateSpecs(const Op &op, int64_t devices) {
  if (devices < 1)
    return {};
  return specsWithBlocks(op, usableBlocks(op, devices));
}

OpPlan planOp(const Graph &graph, const Op &op, const Spec &spec,
              const Options &options) {
  OpPlan plan;
  int64_t blocks = numBlocks(spec);
  std::vector<
      std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>, int64_t>>
      seen(op.inputs.size());
  plan.needs.resize(op.inputs.size());
  plan.arrivals.resize(op.inputs.size());
  plan.joinBytes.assign(op.inputs.size(), 0);
  // Per result block: how many join blocks produce it, and the first (its
  // owner, where the partials add up).
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>,
           std::pair<int64_t, int64_t>>
      produced;
  // Elements of partial results that travel to their owner across nodes.
  int64_t acrossPartials = 0;
  for (int64_t j = 0; j < blocks; ++j) {
    std::vector<int64_t> coords = delinearize(j, spec);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const Access &access = op.inputs[i];
      Box box = accessBox(access, graph, op, spec, coords);
      if (box.volume() == 0)
        continue;
      const Value &value = graph.values[access.value];
      auto [first, inserted] =
          seen[i].emplace(std::make_pair(box.begin, box.end), j);
      if (inserted) {
        plan.needs[i].push_back({j, box});
        if (access.windowed())
          plan.arrivals[i].push_back(
              {j, evenBox(access, value.shape, spec, coords)});
      } else if (!(value.kind == ValueKind::Constant ||
                   (value.kind == ValueKind::Weight &&
                    options.weightsReplicable))) {
        // A copy from the first block that reads it.
        plan.joinBytes[i] +=
            std::round(static_cast<double>(box.volume() * value.elementBytes) *
                       byteWeight(options, first->second, j));
      }
    }
    Box out = accessBox(op.output, graph, op, spec, coords);
    auto [it, inserted] = produced.emplace(std::make_pair(out.begin, out.end),
                                           std::make_pair(0, j));
    if (inserted)
      plan.holds.push_back({j, out});
    else if (byteWeight(options, it->second.second, j) != 1)
      acrossPartials += out.volume(); // a partial to its owner's node
    ++it->second.first;
    plan.busiestFlops =
        std::max(plan.busiestFlops, blockFlops(op, spec, coords));
    if (options.kernelTimes)
      plan.busiestSeconds =
          std::max(plan.busiestSeconds, blockSeconds(graph, op, spec, coords));
  }
  for (size_t i = 0; i < op.inputs.size(); ++i)
    if (!op.inputs[i].windowed())
      plan.arrivals[i] = plan.needs[i];
  plan.fanIn = produced.begin()->second.first;
  const Value &result = graph.values[op.output.value];
  int64_t elements = 1;
  for (int64_t d : result.shape)
    elements *= d;
  plan.aggBytes =
      static_cast<double>((plan.fanIn - 1) * elements * op.accBytes) +
      std::round(static_cast<double>(acrossPartials * op.accBytes) *
                 (options.crossNodeWeight - 1));
  return plan;
}

bool parseCompute(const std::string &compute, bool &kernelTimes,
                  std::string &error) {
  if (compute != "kernels" && compute != "flops") {
    error = "compute must be kernels or flops, got '" + compute + "'";
    return false;
  }
  kernelTimes = compute == "kernels";
  return true;
}

double byteWeight(const Options &options, int64_t from, int64_t to) {
  if (options.gpusPerNode <= 0 ||
      from / options.gpusPerNode == to / options.gpusPerNode)
    return 1;
  return options.crossNodeWeight;
}

double movedBytes(const std::vector<Placed> &holds,
                  const std::vector<Placed> &needs, int64_t elementBytes,
                  const Options *options) {
  // Bytes of each need that sit in a block on another device. Holds are
  // disjoint; where they do not cover a need (an argument arriving in the
  // layout of a consumer that reads only part of it), the rest arrives where
  // it is needed, free. Elements are summed per weight, so that a proxy of
  // one node stays an exact integer sum.
  int64_t moved = 0, across = 0;
  for (const Placed &n : needs)
    for (const Placed &h : holds) {
      if (h.device == n.device)
        continue;
      int64_t v = 1;
      for (size_t d = 0; d < n.box.begin.size() && v > 0; ++d)
        v *= std::max<int64_t>(0, std::min(n.box.end[d], h.box.end[d]) -
                                      std::max(n.box.begin[d], h.box.begin[d]));
      if (options && byteWeight(*options, h.device, n.device) != 1)
        across += v;
      else
        moved += v;
    }
  double weight = options ? options->crossNodeWeight : 1;
  return static_cast<double>(moved * elementBytes) +
         std::round(static_cast<double>(across * elementBytes) * weight);
}

} // namespace ein::planner
