//===- Pipeline.cpp - Pipeline stages weighed against intra-op plans ------===//

#include "Einsummable/Physical/Pipeline.h"

#include "Einsummable/Planner/Hierarchy.h"
#include "ein/partition.h"

#include <algorithm>
#include <limits>
#include <map>

namespace ein::physical {

using planner::Access;
using planner::Graph;
using planner::Op;
using planner::Spec;
using planner::ValueKind;

namespace {

bool mentions(const Access &access, int loop) {
  for (const std::vector<int> &dim : access.dimLoops)
    if (std::find(dim.begin(), dim.end(), loop) != dim.end())
      return true;
  return false;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t extent : shape)
    text += (text.empty() ? "" : "x") + std::to_string(extent);
  return "[" + text + "]";
}

double opFlops(const Op &op) {
  return planner::blockFlops(op, Spec(op.loopSizes.size(), 1),
                             std::vector<int64_t>(op.loopSizes.size(), 0));
}

/// Per value, whether an op reads it.
std::vector<bool> readValues(const Graph &graph) {
  std::vector<bool> read(graph.values.size(), false);
  for (const Op &op : graph.ops)
    for (const Access &input : op.inputs)
      read[input.value] = true;
  return read;
}

} // namespace

/// batchLoopsOf (`sequence` false: dimension 0, every op cut or kept
/// once) and sequenceLoopsOf (`sequence`: dimension 1, weights read along
/// the loop cut with it, whole ops) in one walk over the ops.
static bool followLoops(const Graph &graph, bool sequence, ChunkLoops &c,
                        std::string &error) {
  const int dim = sequence ? 1 : 0;
  const std::string what = sequence ? "sequence" : "batch";
  c = ChunkLoops();
  c.dim = dim;
  c.loops.assign(graph.ops.size(), -1);
  c.whole.assign(graph.ops.size(), false);
  c.prefix.assign(graph.ops.size(), -1);
  c.dims.assign(graph.values.size(), -1);
  std::vector<bool> read = readValues(graph);
  int first = -1;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const planner::Value &value = graph.values[v];
    if (value.kind != ValueKind::Activation || !read[v])
      continue;
    if (value.shape.size() <= size_t(dim) ||
        (first >= 0 && value.shape[dim] != c.extent)) {
      error = "the activation arguments share no " + what + " dimension ('" +
              (first >= 0 ? graph.values[first].name + "' " +
                                shapeText(graph.values[first].shape) + " and '"
                          : std::string()) +
              value.name + "' " + shapeText(value.shape) + ")";
      return false;
    }
    if (first < 0) {
      first = static_cast<int>(v);
      c.extent = value.shape[dim];
    }
    c.dims[v] = dim;
  }
  if (first < 0) {
    error = "the program has no activation argument to cut into " +
            std::string(sequence ? "chunks" : "micro-batches");
    return false;
  }
  // Values an op has read whole: a weight cut later would have been read
  // whole before.
  std::vector<bool> readWhole(graph.values.size(), false);
  // Along the sequence, a value computed once (its op reads no cut value:
  // a mask from a constant, say) is cut where it is read along the loop, as
  // a weight is: its op runs once and slices follow.
  std::vector<int> producer(graph.values.size(), -1);
  for (size_t o = 0; o < graph.ops.size(); ++o)
    producer[graph.ops[o].output.value] = static_cast<int>(o);
  auto keptOnce = [&](int v) {
    int o = producer[v];
    return o >= 0 && c.loops[o] < 0 && !c.whole[o];
  };
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const Op &op = graph.ops[o];
    auto fail = [&](const std::string &why) {
      error = "op '" + op.name + "' " + why;
      return false;
    };
    // The loop of each cut input; several different loops make a whole op
    // (the sequence only), or a prefix op where a causal op reads its
    // queries and its keys through them.
    int loop = -1;
    bool several = false;
    std::vector<int> cutLoops;
    for (const Access &input : op.inputs) {
      int d = c.dims[input.value];
      if (d < 0)
        continue;
      const std::string &name = graph.values[input.value].name;
      const std::vector<int> &loopsOfDim = input.dimLoops[d];
      bool shifted =
          static_cast<size_t>(d) < input.shift.size() && input.shift[d] != 0;
      bool windowed = (static_cast<size_t>(d) < input.stride.size() &&
                       input.stride[d] != 1) ||
                      (static_cast<size_t>(d) < input.extent.size() &&
                       input.extent[d] != 1);
      if (loopsOfDim.empty() || shifted || windowed ||
          op.loopSizes[loopsOfDim[0]] != c.extent)
        return fail("reads the " + what + " dimension of '" + name +
                    "' other than through one loop of " +
                    std::to_string(c.extent));
      if (std::find(cutLoops.begin(), cutLoops.end(), loopsOfDim[0]) ==
          cutLoops.end())
        cutLoops.push_back(loopsOfDim[0]);
      if (loop >= 0 && loop != loopsOfDim[0]) {
        if (!sequence)
          return fail("reads the batch dimensions of its inputs through "
                      "different loops");
        several = true;
        continue;
      }
      loop = loopsOfDim[0];
    }
    if (loop < 0) {
      for (const Access &input : op.inputs)
        readWhole[input.value] = true;
      continue;
    }
    // Causal attention: query s sees key t when t + keyOffset <= s +
    // queryOffset, so with the two offsets equal a chunk of queries sees
    // the keys up to its own last one.
    const planner::CausalAttention &causal = op.attention;
    if (several && op.causal && cutLoops.size() == 2 &&
        causal.queryOffset == causal.keyOffset &&
        std::find(cutLoops.begin(), cutLoops.end(), causal.queryLoop) !=
            cutLoops.end() &&
        std::find(cutLoops.begin(), cutLoops.end(), causal.keyLoop) !=
            cutLoops.end()) {
      several = false;
      loop = causal.queryLoop;
      c.prefix[o] = causal.keyLoop;
    }
    if (several) {
      // A whole op: its result cut where its first cut input's loop writes
      // a dimension alone.
      c.whole[o] = true;
      int out = -1;
      for (size_t d = 0; d < op.output.dimLoops.size(); ++d)
        if (op.output.dimLoops[d] == std::vector<int>{loop})
          out = static_cast<int>(d);
      if (out < 0)
        return fail("reads the sequence through several loops and writes "
                    "none of them alone");
      c.dims[op.output.value] = out;
      continue;
    }
    for (const Access &input : op.inputs) {
      if (c.dims[input.value] >= 0 || !mentions(input, loop)) {
        readWhole[input.value] =
            readWhole[input.value] || (c.dims[input.value] < 0);
        continue;
      }
      const planner::Value &value = graph.values[input.value];
      // Along the sequence, a weight read through the loop alone (a
      // table of positions) is cut with it.
      int cut = -1;
      if (sequence &&
          (value.kind == ValueKind::Weight || keptOnce(input.value)) &&
          !readWhole[input.value])
        for (size_t d = 0; d < input.dimLoops.size(); ++d) {
          bool shifted = d < input.shift.size() && input.shift[d] != 0;
          if (input.dimLoops[d] == std::vector<int>{loop} && !shifted &&
              value.shape[d] == c.extent)
            cut = static_cast<int>(d);
        }
      if (cut < 0)
        return fail("reads '" + value.name + "' along its " + what + " loop");
      c.dims[input.value] = cut;
    }
    int out = -1;
    for (size_t d = 0; d < op.output.dimLoops.size(); ++d) {
      const std::vector<int> &loopsOfDim = op.output.dimLoops[d];
      if (std::find(loopsOfDim.begin(), loopsOfDim.end(), loop) ==
          loopsOfDim.end())
        continue;
      if (loopsOfDim[0] != loop)
        return fail("writes the " + what +
                    " inside another dimension of its result");
      out = static_cast<int>(d);
    }
    if (out < 0)
      return fail("aggregates over the " + what);
    c.dims[op.output.value] = out;
    c.loops[o] = loop;
  }
  return true;
}

bool batchLoopsOf(const Graph &graph, std::vector<int> &loops, int64_t &batch,
                  std::string &error, std::vector<int> *dims) {
  ChunkLoops c;
  bool ok = followLoops(graph, /*sequence=*/false, c, error);
  loops = c.loops;
  batch = c.extent;
  if (dims)
    *dims = c.dims;
  return ok;
}

bool sequenceLoopsOf(const Graph &graph, ChunkLoops &chunks,
                     std::string &error) {
  return followLoops(graph, /*sequence=*/true, chunks, error);
}

CopyOrder copyOrder(const std::vector<int> &loops, int64_t copies, bool opMajor,
                    const std::vector<bool> *whole) {
  CopyOrder order;
  for (int64_t i = 0; i < copies; ++i)
    for (size_t o = 0; o < loops.size(); ++o)
      if (loops[o] >= 0)
        order.push_back({o, i});
  bool anyWhole = false;
  if (whole)
    for (size_t o = 0; o < whole->size(); ++o)
      if ((*whole)[o]) {
        order.push_back({o, -1});
        anyWhole = true;
      }
  if (opMajor || anyWhole)
    std::stable_sort(order.begin(), order.end(),
                     [](auto a, auto b) { return a.first < b.first; });
  return order;
}

/// A touch op of `rank` loops of `sizes` reading `inputs` (each whole, at
/// its shift) into `output`: the planner's form of an ein.slice or
/// ein.concat (EinOps.cpp), moving data only.
static Op touchOp(std::string name, const std::vector<int64_t> &sizes,
                  std::vector<std::pair<int, std::vector<int64_t>>> inputs,
                  int output, int64_t elementBytes) {
  Op op;
  op.name = std::move(name);
  op.loopSizes = sizes;
  std::vector<std::vector<int>> identity;
  for (size_t d = 0; d < sizes.size(); ++d) {
    op.loopNames.push_back("d" + std::to_string(d));
    identity.push_back({static_cast<int>(d)});
  }
  op.cuttable.assign(sizes.size(), true);
  for (auto &[value, shift] : inputs)
    op.inputs.push_back(Access{value, identity, std::move(shift), {}, {}});
  op.output = Access{output, identity, {}, {}, {}};
  op.accBytes = elementBytes;
  op.kernel = planner::KernelKind::Touch;
  return op;
}

/// `graph` cut along `c` into `n` parts (microBatch and sequenceChunks):
/// each op with a loop copied per part, whole ops once between concats of
/// their inputs' parts and slices of their result.
static bool copyParts(const Graph &graph, const ChunkLoops &c, int64_t n,
                      MicroBatched &result, std::string &error, int64_t copies,
                      bool opMajor, bool slices, const CopyOrder *order) {
  const std::string what = c.dim == 0 ? "batch" : "sequence";
  const std::string parts = c.dim == 0 ? " micro-batches" : " chunks";
  if (n < 1 || c.extent % n != 0) {
    error = "the " + what + " (" + std::to_string(c.extent) +
            ") does not split into " + std::to_string(n) + parts;
    return false;
  }
  int64_t rows = c.extent / n;
  if (copies < 0 || copies > n)
    copies = n;
  bool anyWhole =
      std::find(c.whole.begin(), c.whole.end(), true) != c.whole.end();
  if (anyWhole && (!opMajor || order || !slices || copies < n)) {
    error = "whole ops are only chunked op by op, every chunk, with slices";
    return false;
  }
  result = MicroBatched();
  Graph &g = result.graph;
  auto push = [&](Op op, int origin, int part) {
    g.ops.push_back(std::move(op));
    result.origin.push_back(origin);
    result.microBatch.push_back(part);
  };
  // copyOf[v][i]: value v's copy for part i (the same for uncut values);
  // whole[v]: a sliced argument's (or a whole op's result's) whole value.
  std::vector<std::vector<int>> copyOf(graph.values.size());
  std::vector<int> whole(graph.values.size(), -1);
  std::vector<bool> wholeResult(graph.values.size(), false);
  for (size_t o = 0; o < graph.ops.size(); ++o)
    if (c.whole[o] || c.keptOnceAndCut(graph, o))
      wholeResult[graph.ops[o].output.value] = true;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const planner::Value &value = graph.values[v];
    if (c.dims[v] < 0) {
      copyOf[v].assign(copies, static_cast<int>(g.values.size()));
      g.values.push_back(value);
      continue;
    }
    // With `slices`, a cut argument stays whole, and each copy is the
    // result of a slice of it; so is a whole op's result.
    bool sliced =
        (slices && value.kind != ValueKind::Intermediate) || wholeResult[v];
    if (sliced) {
      whole[v] = static_cast<int>(g.values.size());
      g.values.push_back(value);
    }
    for (int64_t i = 0; i < copies; ++i) {
      planner::Value copy = value;
      copy.shape[c.dims[v]] /= n;
      copy.name += "@" + std::to_string(i);
      if (sliced)
        copy.kind = ValueKind::Intermediate;
      copyOf[v].push_back(static_cast<int>(g.values.size()));
      g.values.push_back(std::move(copy));
    }
  }
  // The slices of v's whole value into its copies (arguments first; a
  // whole op's result after the op), and the concat of v's copies into a
  // whole value (a result, last; a whole op's input, before the op).
  auto sliceInto = [&](size_t v) {
    for (int64_t i = 0; i < copies; ++i) {
      std::vector<int64_t> shift(graph.values[v].shape.size(), 0);
      shift[c.dims[v]] = i * rows;
      push(touchOp(graph.values[v].name + " slice@" + std::to_string(i),
                   g.values[copyOf[v][i]].shape, {{whole[v], shift}},
                   copyOf[v][i], graph.values[v].elementBytes),
           -1, wholeResult[v] ? -1 : static_cast<int>(i));
    }
  };
  auto concatOf = [&](size_t v, int out) {
    std::vector<std::pair<int, std::vector<int64_t>>> pieces;
    for (int64_t i = 0; i < copies; ++i) {
      std::vector<int64_t> shift(graph.values[v].shape.size(), 0);
      shift[c.dims[v]] = -i * rows;
      pieces.push_back({copyOf[v][i], shift});
    }
    push(touchOp(graph.values[v].name + " concat", graph.values[v].shape,
                 std::move(pieces), out, graph.values[v].elementBytes),
         -1, -1);
  };
  for (size_t v = 0; v < graph.values.size(); ++v)
    if (whole[v] >= 0 && !wholeResult[v])
      sliceInto(v);
  // v's first i + 1 copies put back together, for chunk i of a prefix op
  // (its first copy alone for chunk 0).
  std::map<std::pair<int, int64_t>, int> prefixes;
  auto prefixOf = [&](int v, int64_t i) {
    if (i == 0)
      return copyOf[v][0];
    auto [it, fresh] = prefixes.insert({{v, i}, -1});
    if (!fresh)
      return it->second;
    planner::Value value = graph.values[v];
    value.shape[c.dims[v]] = (i + 1) * rows;
    value.name += "@0-" + std::to_string(i);
    value.kind = ValueKind::Intermediate;
    it->second = static_cast<int>(g.values.size());
    g.values.push_back(value);
    std::vector<std::pair<int, std::vector<int64_t>>> pieces;
    for (int64_t k = 0; k <= i; ++k) {
      std::vector<int64_t> shift(value.shape.size(), 0);
      shift[c.dims[v]] = -k * rows;
      pieces.push_back({copyOf[v][k], shift});
    }
    push(touchOp(value.name + " concat", value.shape, std::move(pieces),
                 it->second, value.elementBytes),
         -1, static_cast<int>(i));
    return it->second;
  };
  std::vector<int> joined(graph.values.size(), -1);
  auto copyOp = [&](size_t o, int64_t i) {
    Op op = graph.ops[o];
    if (c.whole[o]) {
      for (Access &input : op.inputs) {
        int v = input.value;
        if (c.dims[v] >= 0 && joined[v] < 0) {
          joined[v] = static_cast<int>(g.values.size());
          g.values.push_back(graph.values[v]);
          g.values.back().kind = ValueKind::Intermediate;
          concatOf(v, joined[v]);
        }
        input.value = c.dims[v] >= 0 ? joined[v] : copyOf[v][0];
      }
      op.output.value = whole[op.output.value];
      push(std::move(op), static_cast<int>(o), -1);
      sliceInto(graph.ops[o].output.value);
      return;
    }
    if (c.keptOnceAndCut(graph, o)) {
      // Computed once, then cut where it is read along the loop.
      for (Access &input : op.inputs)
        input.value = copyOf[input.value][0];
      op.output.value = whole[op.output.value];
      push(std::move(op), static_cast<int>(o), -1);
      sliceInto(graph.ops[o].output.value);
      return;
    }
    if (c.loops[o] >= 0) {
      op.loopSizes[c.loops[o]] /= n;
      op.name += "@" + std::to_string(i);
    }
    if (c.prefix[o] >= 0) {
      op.loopSizes[c.prefix[o]] = (i + 1) * rows;
      op.attention.queryOffset += i * rows;
    }
    for (Access &input : op.inputs)
      input.value = c.readsPrefix(o, input) ? prefixOf(input.value, i)
                                            : copyOf[input.value][i];
    op.output.value = copyOf[op.output.value][i];
    push(std::move(op), static_cast<int>(o),
         c.loops[o] >= 0 ? static_cast<int>(i) : -1);
  };
  for (size_t o = 0; o < graph.ops.size(); ++o)
    if (c.loops[o] < 0 && !c.whole[o])
      copyOp(o, 0);
  result.copies =
      order ? *order : copyOrder(c.loops, copies, opMajor, &c.whole);
  for (auto [o, i] : result.copies)
    copyOp(o, i);
  for (int r : graph.results) {
    if (c.dims[r] < 0) {
      g.results.push_back(copyOf[r][0]);
      continue;
    }
    if (!slices || copies < n) {
      for (int64_t i = 0; i < copies; ++i)
        g.results.push_back(copyOf[r][i]);
      continue;
    }
    // With `slices`, a cut result is put back whole by a concat.
    int out = static_cast<int>(g.values.size());
    g.values.push_back(graph.values[r]);
    concatOf(r, out);
    g.results.push_back(out);
  }
  return true;
}

bool microBatch(const Graph &graph, int64_t microBatches, MicroBatched &result,
                std::string &error, int64_t copies, bool opMajor, bool slices,
                const CopyOrder *order) {
  ChunkLoops c;
  return followLoops(graph, /*sequence=*/false, c, error) &&
         copyParts(graph, c, microBatches, result, error, copies, opMajor,
                   slices, order);
}

bool sequenceChunks(const Graph &graph, int64_t chunks, MicroBatched &result,
                    std::string &error, bool opMajor, const CopyOrder *order) {
  ChunkLoops c;
  return followLoops(graph, /*sequence=*/true, c, error) &&
         copyParts(graph, c, chunks, result, error, -1, opMajor,
                   /*slices=*/true, order);
}

const char *chunkOrderName(ChunkOrder order) {
  switch (order) {
  case ChunkOrder::Op:
    return "op";
  case ChunkOrder::Chunk:
    return "chunk";
  case ChunkOrder::CriticalPath:
    return "critical path";
  }
  return "?";
}

/// `all`'s copies by critical path (ChunkOrder::CriticalPath): each copy's
/// kernel time (its slowest block under `specOf` its original op's spec)
/// plus the longest such chain of the ops reading it, longest first; ties
/// in `all`'s own order. Empty where `all` has a whole op (op by op only).
static CopyOrder criticalPathOrder(const MicroBatched &all,
                                   const std::vector<Spec> &specOf) {
  const Graph &g = all.graph;
  std::map<std::pair<int, int64_t>, size_t> opOf;
  for (size_t k = 0; k < g.ops.size(); ++k)
    if (all.origin[k] >= 0)
      opOf[{all.origin[k], all.microBatch[k]}] = k;
  std::vector<std::vector<size_t>> readers(g.values.size());
  for (size_t k = 0; k < g.ops.size(); ++k)
    for (const Access &input : g.ops[k].inputs)
      readers[input.value].push_back(k);
  std::vector<double> rank(g.ops.size(), 0);
  for (size_t k = g.ops.size(); k-- > 0;) {
    double own = 0;
    if (all.origin[k] >= 0) {
      const Spec &spec = specOf[all.origin[k]];
      for (int64_t j = 0; j < ::ein::numBlocks(spec); ++j)
        own = std::max(own, planner::blockSeconds(g, g.ops[k], spec,
                                                  ::ein::delinearize(j, spec)));
    }
    double after = 0;
    for (size_t r : readers[g.ops[k].output.value])
      after = std::max(after, rank[r]);
    rank[k] = own + after;
  }
  std::vector<std::pair<double, size_t>> keyed;
  for (size_t p = 0; p < all.copies.size(); ++p) {
    auto [o, i] = all.copies[p];
    if (i < 0)
      return {};
    keyed.push_back({-rank[opOf.at({static_cast<int>(o), i})], p});
  }
  std::stable_sort(keyed.begin(), keyed.end());
  CopyOrder order;
  for (auto [negated, p] : keyed)
    order.push_back(all.copies[p]);
  return order;
}

std::vector<int> balancedStages(const Graph &graph, int64_t stages) {
  size_t n = graph.ops.size();
  stages = std::max<int64_t>(1, std::min<int64_t>(stages, n));
  std::vector<double> prefix(n + 1, 0);
  for (size_t o = 0; o < n; ++o)
    prefix[o + 1] = prefix[o] + opFlops(graph.ops[o]);
  // crossing[j]: bytes of intermediates made by ops before j and read at j
  // or later (what a boundary before op j sends on).
  std::vector<int> producer(graph.values.size(), -1),
      lastReader(graph.values.size(), -1);
  for (size_t o = 0; o < n; ++o) {
    producer[graph.ops[o].output.value] = static_cast<int>(o);
    for (const Access &input : graph.ops[o].inputs)
      lastReader[input.value] = static_cast<int>(o);
  }
  std::vector<double> crossing(n + 1, 0);
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (producer[v] < 0 || lastReader[v] <= producer[v])
      continue;
    double bytes = graph.values[v].elementBytes;
    for (int64_t extent : graph.values[v].shape)
      bytes *= extent;
    for (int j = producer[v] + 1; j <= lastReader[v]; ++j)
      crossing[j] += bytes;
  }
  const double inf = std::numeric_limits<double>::infinity();
  auto segment = [&](size_t a, size_t b) { return prefix[b] - prefix[a]; };
  // First the least possible largest stage, then, among partitions whose
  // stages are all within 1% of it, the fewest bytes across boundaries.
  std::vector<std::vector<double>> largest(stages + 1,
                                           std::vector<double>(n + 1, inf));
  largest[0][0] = 0;
  for (int64_t s = 1; s <= stages; ++s)
    for (size_t j = s; j <= n; ++j)
      for (size_t i = s - 1; i < j; ++i)
        largest[s][j] =
            std::min(largest[s][j], std::max(largest[s - 1][i], segment(i, j)));
  double bound = largest[stages][n] * 1.01 + 1e-9;
  std::vector<std::vector<double>> bytes(stages + 1,
                                         std::vector<double>(n + 1, inf));
  std::vector<std::vector<size_t>> from(stages + 1,
                                        std::vector<size_t>(n + 1, 0));
  bytes[0][0] = 0;
  for (int64_t s = 1; s <= stages; ++s)
    for (size_t j = s; j <= n; ++j)
      for (size_t i = s - 1; i < j; ++i) {
        if (bytes[s - 1][i] == inf || segment(i, j) > bound)
          continue;
        double b = bytes[s - 1][i] + (s > 1 ? crossing[i] : 0);
        if (b < bytes[s][j]) {
          bytes[s][j] = b;
          from[s][j] = i;
        }
      }
  std::vector<int> stageOf(n, 0);
  for (size_t s = stages, j = n; s > 0; --s) {
    size_t i = from[s][j];
    for (size_t o = i; o < j; ++o)
      stageOf[o] = static_cast<int>(s - 1);
    j = i;
  }
  return stageOf;
}

double bytesBetweenNodes(const DeviceProgram &program, const Topology &topology,
                         int64_t *transfers) {
  int64_t perNode = topology.devices / std::max<int64_t>(1, topology.nodes);
  double bytes = 0;
  int64_t count = 0;
  for (const Task &task : program.tasks)
    if (task.kind == Task::Transfer &&
        task.from / perNode != task.to / perNode) {
      bytes += task.bytes;
      ++count;
    }
  if (transfers)
    *transfers = count;
  return bytes;
}

/// Whether every activation argument the program reads has a batch of
/// one row and a dimension after it (a chunked plan then cuts the
/// sequence).
static bool oneBatchRow(const Graph &graph) {
  std::vector<bool> read = readValues(graph);
  bool any = false;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const planner::Value &value = graph.values[v];
    if (value.kind != ValueKind::Activation || !read[v])
      continue;
    if (value.shape.size() < 2 || value.shape[0] != 1)
      return false;
    any = true;
  }
  return any;
}

/// The micro-batch counts worth pricing for `batch`: each power of two
/// dividing it, and the batch itself, up to `most`.
static std::vector<int64_t> microBatchCounts(int64_t batch, int64_t most) {
  std::vector<int64_t> counts;
  for (int64_t m = 1; m <= std::min(batch, most); m *= 2)
    if (batch % m == 0)
      counts.push_back(m);
  if (batch <= most && counts.back() != batch)
    counts.push_back(batch);
  return counts;
}

/// The staged plan priced in each of `orders` (one that is no dataflow
/// program: micro-batch by micro-batch, once), the fastest kept (the first
/// on a tie). The search for one micro-batch runs once for them all.
static StagedPlan stagedPlanIn(const Graph &graph,
                               const planner::SearchOptions &options,
                               const Topology &topology, int64_t stages,
                               int64_t microBatches, planner::Strategy within,
                               std::vector<ChunkOrder> orders) {
  StagedPlan staged;
  staged.stages = stages;
  staged.microBatches = microBatches;
  int64_t nodes = std::max<int64_t>(1, topology.nodes);
  if (stages < 1 || nodes % stages != 0) {
    staged.error = std::to_string(stages) + " stages do not divide " +
                   std::to_string(nodes) + " nodes";
    return staged;
  }
  // One stage: chunks, each op's back to back, transfers beside kernels.
  staged.dataflow = stages == 1 && microBatches > 1;
  if (!staged.dataflow)
    orders = {ChunkOrder::Chunk};
  staged.order = orders.front();
  int64_t stageNodes = nodes / stages, stageDevices = topology.devices / stages;
  // The search for one micro-batch on one stage's devices; every copy then
  // takes its op's spec.
  // A chunked plan is priced as applyStagedPlan lowers it: the slices of
  // its arguments and the concats of its results included, since its one
  // stage reads and writes them on the same GPUs as the chunks.
  bool slices = staged.dataflow;
  // A program of one batch row is chunked along its sequence: its ops are
  // cut as the plan cuts them whole (one chunk alone is no program: its
  // whole ops read every chunk), every chunk then taking its op's spec.
  staged.chunkDim = staged.dataflow && oneBatchRow(graph) ? 1 : 0;
  // The copies in `order` (critical path: made op by op, then copied
  // again in its order once the specs are known).
  auto copiesIn = [&](ChunkOrder order, MicroBatched &all, std::string &error,
                      const CopyOrder *explicitOrder = nullptr) {
    bool opMajor = order != ChunkOrder::Chunk;
    return staged.chunkDim == 1
               ? sequenceChunks(graph, microBatches, all, error, opMajor,
                                explicitOrder)
               : microBatch(graph, microBatches, all, error, -1, opMajor,
                            slices, explicitOrder);
  };
  MicroBatched one, first;
  if (staged.chunkDim == 1) {
    if (!copiesIn(orders.front(), first, staged.error))
      return staged;
    one.graph = graph;
    for (size_t o = 0; o < graph.ops.size(); ++o)
      one.origin.push_back(static_cast<int>(o));
  } else if (!microBatch(graph, microBatches, one, staged.error, 1, false,
                         slices) ||
             !copiesIn(orders.front(), first, staged.error)) {
    return staged;
  }
  planner::SearchOptions inStage = options;
  inStage.devices = stageDevices;
  inStage.onProgress = nullptr;
  inStage.allowedSpecs.clear();
  if (within != planner::Strategy::Optimal) {
    if (!planner::allowedSpecs(one.graph, within, stageDevices, 0,
                               inStage.allowedSpecs, staged.error))
      return staged;
    inStage.restriction = std::string("under strategy ") +
                          planner::strategyName(within) + " within a stage";
  } else if (stageNodes > 1 &&
             !planner::hierarchicalSpecs(one.graph, inStage, stageNodes,
                                         inStage.allowedSpecs, staged.error)) {
    return staged;
  }
  planner::Plan perStage = planner::search(one.graph, inStage);
  if (!perStage.feasible) {
    staged.error = perStage.error;
    return staged;
  }
  std::vector<int> specOf(graph.ops.size(), -1);
  for (size_t o = 0; o < one.graph.ops.size(); ++o)
    if (one.origin[o] >= 0)
      specOf[one.origin[o]] = static_cast<int>(o);
  staged.stageDevices = stageDevices;
  for (size_t o = 0; o < graph.ops.size(); ++o)
    staged.specs.push_back(perStage.specs[specOf[o]]);
  staged.stageOf = balancedStages(graph, stages);
  inStage.allowedSpecs.clear();
  inStage.dataflow = staged.dataflow;

  // Each order priced on the simulator.
  auto priced = [&](ChunkOrder order, MicroBatched &all) {
    StagedPlan p = staged;
    p.order = order;
    if (order == ChunkOrder::CriticalPath) {
      CopyOrder byPath = criticalPathOrder(all, p.specs);
      if (byPath.empty()) {
        p.error = "a whole op's chunks are only ordered op by op";
        return p;
      }
      if (!copiesIn(order, all, p.error, &byPath))
        return p;
    }
    p.copies = all.copies;
    // Every copy takes its op's spec; slices and concats (only with
    // `slices`) are cut by the search around them, as applyStagedPlan cuts
    // them.
    planner::SearchOptions inOrder = inStage;
    planner::Plan plan;
    if (slices) {
      for (size_t o = 0; o < all.graph.ops.size(); ++o) {
        if (all.origin[o] < 0) {
          inOrder.allowedSpecs.push_back(
              planner::enumerateSpecs(all.graph.ops[o], stageDevices));
          continue;
        }
        const Spec &spec = p.specs[all.origin[o]];
        const Op &copy = all.graph.ops[o];
        for (size_t l = 0; l < spec.size(); ++l)
          if (copy.loopSizes[l] % spec[l] != 0) {
            p.error = "op '" + copy.name + "' cannot take its plan's cut " +
                      "of loop " + copy.loopNames[l] + " (" +
                      std::to_string(spec[l]) + " parts of " +
                      std::to_string(copy.loopSizes[l]) + ")";
            return p;
          }
        inOrder.allowedSpecs.push_back({spec});
      }
      inOrder.restriction = "within a chunked plan";
      plan = planner::search(all.graph, inOrder);
    } else {
      std::vector<Spec> fixed;
      for (int origin : all.origin)
        fixed.push_back(p.specs[origin]);
      plan = planner::evaluate(all.graph, fixed, inOrder);
    }
    const std::vector<Spec> &specs = plan.specs;
    if (!plan.feasible) {
      p.error = plan.error;
      return p;
    }
    Placement placement;
    for (size_t o = 0; o < all.graph.ops.size(); ++o) {
      int64_t blocks = ::ein::numBlocks(specs[o]);
      // (Slices and concats are made for one stage only.)
      int64_t stage = all.origin[o] >= 0 ? p.stageOf[all.origin[o]] : 0;
      int64_t base = stage * stageDevices;
      std::vector<int64_t> devices;
      for (int64_t j = 0; j < blocks; ++j)
        devices.push_back(base + j);
      placement.device.push_back(std::move(devices));
    }
    bool synthesized = false;
    DeviceProgram program =
        bestProgram(all.graph, plan, inOrder, topology, synthesized, placement);
    SimResult sim = simulate(topology, program.tasks);
    p.seconds = sim.seconds;
    p.bytes = program.bytes[0] + program.bytes[1] + program.bytes[2];
    p.bytesBetweenNodes =
        bytesBetweenNodes(program, topology, &p.transfersBetweenNodes);
    p.stageBusy.assign(stages, 0);
    // The GPUs' kernel queues (a dataflow program's transfers queue after
    // them).
    size_t gpus = std::min<size_t>(sim.queueBusy.size(), topology.devices);
    for (size_t q = 0; q < gpus; ++q) {
      size_t s = std::min<size_t>(q / stageDevices, stages - 1);
      p.stageBusy[s] = std::max(p.stageBusy[s], sim.queueBusy[q]);
    }
    p.feasible = !sim.stalled;
    if (sim.stalled)
      p.error = "the staged program stalls on the simulator";
    return p;
  };
  StagedPlan best = priced(orders.front(), first);
  for (size_t k = 1; k < orders.size(); ++k) {
    MicroBatched all;
    StagedPlan other = staged;
    other.order = orders[k];
    if (copiesIn(orders[k], all, other.error))
      other = priced(orders[k], all);
    if (other.feasible && (!best.feasible || other.seconds < best.seconds))
      best = std::move(other);
  }
  return best;
}

StagedPlan stagedPlanInOrder(const Graph &graph,
                             const planner::SearchOptions &options,
                             const Topology &topology, int64_t stages,
                             int64_t microBatches, planner::Strategy within,
                             ChunkOrder order) {
  return stagedPlanIn(graph, options, topology, stages, microBatches, within,
                      {order});
}

StagedPlan stagedPlan(const Graph &graph, const planner::SearchOptions &options,
                      const Topology &topology, int64_t stages,
                      int64_t microBatches, planner::Strategy within) {
  // A dataflow program's GPUs take the ready step that comes first in it.
  // Which order finishes first depends on the program: keep the fastest
  // (op by op on a tie; whole ops, run once between all chunks, need it).
  return stagedPlanIn(
      graph, options, topology, stages, microBatches, within,
      {ChunkOrder::Op, ChunkOrder::Chunk, ChunkOrder::CriticalPath});
}

/// The plans of each of `stageCounts` stages over each micro-batch count
/// worth pricing from `fewest` to `most`; one infeasible entry saying why
/// where the batch cannot be followed or is smaller than `fewest`.
static std::vector<StagedPlan>
pricedPlans(const Graph &graph, const planner::SearchOptions &options,
            const Topology &topology, const std::vector<int64_t> &stageCounts,
            int64_t fewest, int64_t most, planner::Strategy within) {
  std::vector<StagedPlan> plans;
  std::vector<int> loops;
  int64_t batch = 0;
  StagedPlan unusable;
  bool followed;
  // One stage over a batch of one row: chunks of the sequence.
  ChunkLoops sequence;
  if (fewest > 1 && stageCounts == std::vector<int64_t>{1} &&
      oneBatchRow(graph)) {
    if (!sequenceLoopsOf(graph, sequence, unusable.error)) {
      unusable.error = "the batch is 1 and the sequence cannot be chunked: " +
                       unusable.error;
      plans.push_back(unusable);
      return plans;
    }
    followed = true;
    batch = sequence.extent;
  } else {
    followed = batchLoopsOf(graph, loops, batch, unusable.error);
  }
  if (!followed || batch < fewest) {
    if (unusable.error.empty())
      unusable.error = "the batch is 1: there is nothing to chunk";
    plans.push_back(unusable);
    return plans;
  }
  for (int64_t stages : stageCounts)
    for (int64_t m : microBatchCounts(batch, most))
      if (m >= fewest)
        plans.push_back(
            stagedPlan(graph, options, topology, stages, m, within));
  return plans;
}

std::vector<StagedPlan> stagedPlans(const Graph &graph,
                                    const planner::SearchOptions &options,
                                    const Topology &topology,
                                    int64_t maxMicroBatches,
                                    planner::Strategy within) {
  int64_t nodes = std::max<int64_t>(1, topology.nodes);
  if (nodes < 2)
    return {};
  std::vector<int64_t> stageCounts;
  for (int64_t stages = 2; stages <= nodes; ++stages)
    if (nodes % stages == 0)
      stageCounts.push_back(stages);
  return pricedPlans(graph, options, topology, stageCounts, 1, maxMicroBatches,
                     within);
}

std::vector<StagedPlan> chunkedPlans(const Graph &graph,
                                     const planner::SearchOptions &options,
                                     const Topology &topology,
                                     int64_t maxChunks,
                                     planner::Strategy within) {
  return pricedPlans(graph, options, topology, {1}, 2, maxChunks, within);
}

} // namespace ein::physical
