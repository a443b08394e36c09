//===- Hierarchy.cpp - Node-level plan, then refinement within nodes ------===//

#include "Einsummable/Planner/Hierarchy.h"
#include "Einsummable/Planner/Strategy.h"

#include <algorithm>

namespace ein::planner {

namespace {

/// Every legal product, loop by loop, of a spec of `outers` (across nodes)
/// and one of `inners` (within a node) for `devices` GPUs, once each, in
/// enumerateSpecs's order (the search breaks ties on it).
std::vector<Spec> productSpecs(const Op &op, const std::vector<Spec> &outers,
                               const std::vector<Spec> &inners,
                               int64_t devices) {
  std::vector<Spec> products;
  for (const Spec &outer : outers)
    for (const Spec &inner : inners) {
      Spec product(outer.size());
      for (size_t l = 0; l < outer.size(); ++l)
        product[l] = outer[l] * inner[l];
      if (isLegalSpec(op, product, devices) &&
          std::find(products.begin(), products.end(), product) ==
              products.end())
        products.push_back(product);
    }
  std::sort(products.begin(), products.end(), std::greater<Spec>());
  return products;
}

/// Every legal spec of `op` for `devices` GPUs that cuts each loop into a
/// multiple of `outer`'s parts, in enumerateSpecs's order. Its blocks nest
/// in `outer`'s even where no spec for devices / outer's product makes the
/// difference: heads spanning two loops (GQA's kv-head and group) cut 8 x 2
/// refine a cut of 2 kv-heads, but a cut of 4 x 2 alone is not ordinary.
std::vector<Spec> multiples(const Op &op, const Spec &outer, int64_t devices) {
  std::vector<Spec> specs;
  for (Spec &spec : enumerateSpecs(op, devices)) {
    bool refines = true;
    for (size_t l = 0; l < spec.size() && refines; ++l)
      refines = spec[l] % outer[l] == 0;
    if (refines)
      specs.push_back(std::move(spec));
  }
  return specs;
}

} // namespace

bool hierarchicalSpecs(const Graph &graph, const SearchOptions &options,
                       int64_t nodes, std::vector<std::vector<Spec>> &allowed,
                       std::string &error, Refinement refinement) {
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
  // Every node-level move crosses nodes.
  nodeLevel.gpusPerNode = options.gpusPerNode > 0 ? 1 : 0;
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
    allowed[o] = refinement == Refinement::Product
                     ? productSpecs(op, {across.specs[o]},
                                    enumerateSpecs(op, perNode), devices)
                     : multiples(op, across.specs[o], devices);
    if (allowed[o].empty())
      allowed[o] = enumerateSpecs(op, devices);
  }
  return true;
}

bool megatronDpSpecs(const Graph &graph, int64_t devices, int64_t nodes,
                     std::vector<std::vector<Spec>> &allowed,
                     std::string &error) {
  if (nodes < 2 || devices % nodes != 0 || devices == nodes) {
    error = "strategy megatron-dp needs a topology of several nodes of "
            "several GPUs each (nodes=K,gpus=G with K, G >= 2), got " +
            std::to_string(devices) + " devices on " + std::to_string(nodes) +
            " node(s)";
    return false;
  }
  std::vector<std::vector<Spec>> across, within;
  std::string why;
  if (!allowedSpecs(graph, Strategy::DataParallel, nodes, 0, across, why)) {
    error = "megatron-dp across " + std::to_string(nodes) + " nodes: " + why;
    return false;
  }
  if (!allowedSpecs(graph, Strategy::Megatron, devices / nodes, 0, within,
                    why)) {
    error = "megatron-dp within a node: " + why;
    return false;
  }
  allowed.assign(graph.ops.size(), {});
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const Op &op = graph.ops[o];
    allowed[o] = productSpecs(op, across[o], within[o], devices);
    if (allowed[o].empty()) {
      error = "strategy megatron-dp does not apply: op '" + op.name +
              "' has no cut that is data parallel across the " +
              std::to_string(nodes) + " nodes and Megatron-style within them";
      return false;
    }
  }
  return true;
}

} // namespace ein::planner
