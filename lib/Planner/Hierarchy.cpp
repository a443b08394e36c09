//===- Hierarchy.cpp - Node-level plan, then refinement within nodes ------===//

#include "Einsummable/Planner/Hierarchy.h"

#include <algorithm>

namespace ein::planner {

bool hierarchicalSpecs(const Graph &graph, const SearchOptions &options,
                       int64_t nodes, std::vector<std::vector<Spec>> &allowed,
                       std::string &error) {
  int64_t devices = options.devices,
          perNode = devices / std::max<int64_t>(1, nodes);
  allowed.assign(graph.ops.size(), {});
  if (nodes <= 1 || nodes >= devices || devices % nodes != 0) {
    for (size_t o = 0; o < graph.ops.size(); ++o)
      allowed[o] = enumerateSpecs(graph.ops[o], devices);
    return true;
  }
  SearchOptions nodeLevel = options;
  nodeLevel.devices = nodes;
  nodeLevel.allowedSpecs.clear();
  nodeLevel.onProgress = nullptr;
  Plan across = search(graph, nodeLevel);
  if (!across.feasible) {
    error = "the node-level plan (" + std::to_string(nodes) +
            " nodes) failed: " + across.error;
    return false;
  }
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const Op &op = graph.ops[o];
    const Spec &outer = across.specs[o];
    for (const Spec &inner : enumerateSpecs(op, perNode)) {
      Spec product(outer.size());
      for (size_t l = 0; l < outer.size(); ++l)
        product[l] = outer[l] * inner[l];
      if (isLegalSpec(op, product, devices) &&
          std::find(allowed[o].begin(), allowed[o].end(), product) ==
              allowed[o].end())
        allowed[o].push_back(product);
    }
    // The search breaks ties on the specs' order: keep enumerateSpecs's.
    std::sort(allowed[o].begin(), allowed[o].end(), std::greater<Spec>());
    if (allowed[o].empty())
      allowed[o] = enumerateSpecs(op, devices);
  }
  return true;
}

} // namespace ein::planner
