//===- Repetition.cpp - Identical layers of a planned graph ---------------===//

#include "Einsummable/Planner/Repetition.h"

#include <cstring>
#include <functional>
#include <unordered_map>

namespace ein::planner {

int Repetition::foldedOp(int op) const {
  if (count < 4 || op < first + 2 * period)
    return op;
  if (op < first + (count - 1) * period)
    return first + period + (op - first) % period;
  return op - (count - 3) * period;
}

namespace {

bool sameAccess(const Access &a, const Access &b) {
  return a.dimLoops == b.dimLoops && a.shift == b.shift &&
         a.stride == b.stride && a.extent == b.extent;
}

/// The same op up to its name and the values it touches.
bool sameOp(const Op &a, const Op &b) {
  if (a.loopSizes != b.loopSizes || a.cuttable != b.cuttable ||
      a.inputs.size() != b.inputs.size() || !sameAccess(a.output, b.output) ||
      a.accBytes != b.accBytes || a.flopsPerPoint != b.flopsPerPoint ||
      a.causal != b.causal || a.attention.queryLoop != b.attention.queryLoop ||
      a.attention.keyLoop != b.attention.keyLoop ||
      a.attention.queryOffset != b.attention.queryOffset ||
      a.attention.keyOffset != b.attention.keyOffset || a.kernel != b.kernel ||
      a.gemm.batch != b.gemm.batch || a.gemm.rows != b.gemm.rows ||
      a.gemm.m != b.gemm.m || a.gemm.n != b.gemm.n || a.gemm.k != b.gemm.k ||
      a.pinnedInputs != b.pinnedInputs || a.pinnedOutput != b.pinnedOutput)
    return false;
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (!sameAccess(a.inputs[i], b.inputs[i]))
      return false;
  return true;
}

/// Values one layer and the next may hold in the same place: the same
/// shape, width and pins, and the same kind, save that an activation the
/// first layer reads may be an op's result for the next.
bool sameValue(const Value &a, const Value &b) {
  auto moves = [](ValueKind k) {
    return k == ValueKind::Activation || k == ValueKind::Intermediate;
  };
  return a.shape == b.shape && a.elementBytes == b.elementBytes &&
         a.pinnedParts == b.pinnedParts &&
         (a.kind == b.kind || (moves(a.kind) && moves(b.kind)));
}

/// A hash of what sameOp compares and the op's spec: equal for ops that
/// may repeat each other.
size_t opHash(const Op &op, const Spec &spec) {
  size_t h = 0;
  auto mix = [&](size_t x) {
    h ^= x + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2);
  };
  for (int64_t s : op.loopSizes)
    mix(std::hash<int64_t>()(s));
  for (int64_t s : spec)
    mix(std::hash<int64_t>()(s * 31 + 7));
  mix(op.inputs.size());
  for (const Access &a : op.inputs)
    mix(a.dimLoops.size());
  mix(static_cast<size_t>(op.kernel));
  uint64_t flops;
  std::memcpy(&flops, &op.flopsPerPoint, sizeof flops);
  mix(std::hash<uint64_t>()(flops));
  return h;
}

class Matcher {
public:
  Matcher(const Graph &graph, const std::vector<Spec> &specs)
      : graph(graph), specs(specs), isResult(graph.values.size(), false),
        isTied(graph.values.size(), false) {
    for (int r : graph.results)
      isResult[r] = true;
    for (const Tie &t : graph.ties) {
      isTied[t.argument] = true;
      isTied[t.result] = true;
    }
  }

  /// Starts a run: no value corresponds to another yet.
  void reset() { next.clear(); }

  /// Whether op `b` repeats op `a`, values corresponding as the run so far
  /// says (and as this pair adds).
  bool repeats(int a, int b) {
    const Op &x = graph.ops[a], &y = graph.ops[b];
    if (specs[a] != specs[b] || !sameOp(x, y))
      return false;
    for (size_t i = 0; i < x.inputs.size(); ++i)
      if (!link(x.inputs[i].value, y.inputs[i].value))
        return false;
    int u = x.output.value, v = y.output.value;
    return isResult[u] == isResult[v] && !isTied[u] && !isTied[v] && link(u, v);
  }

private:
  bool link(int u, int v) {
    if (!sameValue(graph.values[u], graph.values[v]))
      return false;
    auto [it, inserted] = next.emplace(u, v);
    return it->second == v;
  }

  const Graph &graph;
  const std::vector<Spec> &specs;
  std::vector<bool> isResult, isTied;
  /// Per value of a layer, the value of the next layer in its place.
  std::unordered_map<int, int> next;
};

} // namespace

Repetition findRepetition(const Graph &graph, const std::vector<Spec> &specs,
                          int minCount) {
  int n = static_cast<int>(graph.ops.size());
  Repetition best;
  if (static_cast<int>(specs.size()) != n || minCount < 2)
    return best;
  std::vector<size_t> hash(n);
  for (int i = 0; i < n; ++i)
    hash[i] = opHash(graph.ops[i], specs[i]);
  Matcher matcher(graph, specs);
  for (int period = 1; period * minCount <= n; ++period) {
    int i = 0;
    while (i + period < n) {
      // A stretch where the hashes repeat at this period, long enough.
      int end = i;
      while (end + period < n && hash[end] == hash[end + period])
        ++end;
      if (end - i + period <= best.period * best.count ||
          end - i < (minCount - 1) * period) {
        i = end + 1;
        continue;
      }
      // The exact runs within it.
      while (i < end) {
        matcher.reset();
        int j = i;
        while (j < end && matcher.repeats(j, j + period))
          ++j;
        int count = (j - i) / period + 1;
        if (count >= minCount && count * period > best.period * best.count)
          best = {i, period, count};
        i = j + 1;
      }
    }
  }
  return best;
}

bool foldRepetition(const Graph &graph, const Plan &plan,
                    const Repetition &repetition, FoldedGraph &folded) {
  const Repetition &r = repetition;
  if (r.count < 4)
    return false;
  int gapBegin = r.first + 2 * r.period,
      gapEnd = r.first + (r.count - 1) * r.period;
  int shift = (r.count - 3) * r.period;
  std::vector<int> producer(graph.values.size(), -1);
  for (size_t o = 0; o < graph.ops.size(); ++o)
    producer[graph.ops[o].output.value] = static_cast<int>(o);
  auto inGap = [&](int v) {
    return producer[v] >= gapBegin && producer[v] < gapEnd;
  };
  // The value the folded graph has in `v`'s place: a dropped layer's
  // result read after the gap is the same result of the layer `shift` ops
  // earlier, which must not come before the repetition.
  auto kept = [&](int v) {
    if (!inGap(v))
      return v;
    int earlier = producer[v] - shift;
    return earlier >= r.first ? graph.ops[earlier].output.value : -1;
  };
  for (int v : graph.results)
    if (inGap(v))
      return false;
  for (const Tie &t : graph.ties)
    if (inGap(t.result) || inGap(t.argument))
      return false;
  folded = FoldedGraph();
  std::vector<int> index(graph.values.size(), -1);
  std::vector<Op> ops;
  for (int o = 0; o < static_cast<int>(graph.ops.size()); ++o) {
    if (o >= gapBegin && o < gapEnd)
      continue;
    Op op = graph.ops[o];
    for (Access &a : op.inputs) {
      a.value = kept(a.value);
      if (a.value < 0)
        return false;
      index[a.value] = 0;
    }
    index[op.output.value] = 0;
    ops.push_back(std::move(op));
    folded.opOf.push_back(o);
  }
  for (int v : graph.results)
    index[v] = 0;
  for (const Tie &t : graph.ties)
    index[t.argument] = index[t.result] = 0;
  // The values kept, in their order.
  bool laidOut = plan.layouts.size() == graph.values.size();
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (index[v] < 0)
      continue;
    index[v] = static_cast<int>(folded.graph.values.size());
    folded.graph.values.push_back(graph.values[v]);
    if (laidOut)
      folded.plan.layouts.push_back(plan.layouts[v]);
  }
  for (Op &op : ops) {
    for (Access &a : op.inputs)
      a.value = index[a.value];
    op.output.value = index[op.output.value];
  }
  folded.graph.ops = std::move(ops);
  for (int v : graph.results)
    folded.graph.results.push_back(index[v]);
  for (const Tie &t : graph.ties)
    folded.graph.ties.push_back({index[t.argument], index[t.result]});
  folded.plan.feasible = plan.feasible;
  folded.plan.total = plan.total;
  for (int o : folded.opOf) {
    if (static_cast<size_t>(o) < plan.specs.size())
      folded.plan.specs.push_back(plan.specs[o]);
    if (static_cast<size_t>(o) < plan.costs.size())
      folded.plan.costs.push_back(plan.costs[o]);
  }
  return true;
}

} // namespace ein::planner
