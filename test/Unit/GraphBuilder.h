//===- GraphBuilder.h - Planner graphs for unit tests -----------*- C++ -*-===//

#ifndef EIN_TEST_UNIT_GRAPHBUILDER_H
#define EIN_TEST_UNIT_GRAPHBUILDER_H

#include "Einsummable/Planner/Graph.h"

#include <string>
#include <vector>

namespace ein::planner::test {

inline int addValue(Graph &g, std::string name, std::vector<int64_t> shape,
                    ValueKind kind = ValueKind::Intermediate,
                    int64_t bytes = 4) {
  g.values.push_back({std::move(name), std::move(shape), bytes, kind});
  return static_cast<int>(g.values.size()) - 1;
}

inline Access access(int value, std::vector<std::vector<int>> dims) {
  return Access{value, std::move(dims), {}};
}

/// out[i, k] = sum_j a[i, j] b[j, k]; returns the output value.
inline int matmul(Graph &g, int a, int b, const std::string &name) {
  int64_t m = g.values[a].shape[0], k = g.values[a].shape[1],
          n = g.values[b].shape[1];
  int out = addValue(g, name, {m, n});
  Op op;
  op.name = name;
  op.loopSizes = {m, k, n};
  op.loopNames = {"d0", "d1", "d2"};
  op.cuttable = {true, true, true};
  op.inputs = {access(a, {{0}, {1}}), access(b, {{1}, {2}})};
  op.output = access(out, {{0}, {2}});
  op.flopsPerPoint = 2;
  g.ops.push_back(op);
  return out;
}

/// An elementwise op over 2-D values (one or two inputs).
inline int elementwise(Graph &g, std::vector<int> inputs,
                       const std::string &name) {
  std::vector<int64_t> shape = g.values[inputs[0]].shape;
  int out = addValue(g, name, shape);
  Op op;
  op.name = name;
  op.loopSizes = shape;
  op.loopNames = {"d0", "d1"};
  op.cuttable = {true, true};
  for (int v : inputs)
    op.inputs.push_back(access(v, {{0}, {1}}));
  op.output = access(out, {{0}, {1}});
  op.flopsPerPoint = 1;
  g.ops.push_back(op);
  return out;
}

/// A stack of `layers` identical layers over [n, n] values, as a deep model
/// is: an op on the input x (its embedding), then per layer a matmul with
/// its own weight and the residual add of what the layer read, then a head
/// matmul whose result the graph returns. Ops: 0 the embedding, 1 + 2l and
/// 2 + 2l layer l's matmul and add, 1 + 2 layers the head.
inline Graph layerStack(int layers, int64_t n = 256) {
  Graph g;
  int x = addValue(g, "x", {n, n}, ValueKind::Activation);
  int h = elementwise(g, {x}, "embed");
  for (int l = 0; l < layers; ++l) {
    int w = addValue(g, "w" + std::to_string(l), {n, n}, ValueKind::Weight);
    int t = matmul(g, h, w, "mm" + std::to_string(l));
    h = elementwise(g, {t, h}, "add" + std::to_string(l));
  }
  int head = addValue(g, "w_head", {n, n}, ValueKind::Weight);
  g.results = {matmul(g, h, head, "head")};
  return g;
}

/// Causal GQA attention over loops [batch, kv_head, group, query, key].
inline Graph attentionGraph(int64_t heads, int64_t kvHeads, int64_t tokens) {
  Graph g;
  int64_t group = heads / kvHeads, d = 16;
  int q = addValue(g, "q", {1, heads, tokens, d}, ValueKind::Activation, 2);
  int k = addValue(g, "k", {1, kvHeads, tokens, d}, ValueKind::Activation, 2);
  int v = addValue(g, "v", {1, kvHeads, tokens, d}, ValueKind::Activation, 2);
  int o = addValue(g, "o", {1, heads, tokens, d}, ValueKind::Intermediate, 2);
  Op op;
  op.name = "attention";
  op.loopSizes = {1, kvHeads, group, tokens, tokens};
  op.loopNames = {"batch", "kv_head", "group", "query", "key"};
  op.cuttable = {true, true, true, true, true};
  op.inputs = {access(q, {{0}, {1, 2}, {3}, {}}),
               access(k, {{0}, {1}, {4}, {}}), access(v, {{0}, {1}, {4}, {}})};
  op.output = access(o, {{0}, {1, 2}, {3}, {}});
  op.flopsPerPoint = 4.0 * d;
  op.causal = true;
  op.attention = {3, 4, 0, 0};
  g.ops.push_back(op);
  return g;
}

} // namespace ein::planner::test

#endif // EIN_TEST_UNIT_GRAPHBUILDER_H
