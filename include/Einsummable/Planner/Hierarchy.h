//===- Hierarchy.h - Planning for several nodes, nodes first ----*- C++ -*-===//
//
// The whole-graph search is exact, but its states grow with the layouts a
// value may take, which grow with the device count: a LLaMA block plans for
// 8 GPUs in half a second and for 32 not at all within the state cap. On a
// machine of K nodes of G GPUs the search is split where the machine is
// (as Alpa splits inter- from intra-operator planning): first the whole
// graph is planned for K devices (what is cut across nodes), then for K x G
// with each op's specs restricted to refinements of that node-level cut:
// specs whose parts are multiples of its, loop by loop. docs/distributed.md
// measures its time and its cost against the flat search.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLANNER_HIERARCHY_H
#define EINSUMMABLE_PLANNER_HIERARCHY_H

#include "Einsummable/Planner/Search.h"

#include <string>
#include <vector>

namespace ein::planner {

/// How the hierarchical search refines an op's node-level spec for every
/// GPU.
enum class Refinement {
  /// Every legal spec for all GPUs whose parts are, loop by loop, multiples
  /// of the node-level spec's: each node's block cut further, however the
  /// loops allow (within 0.4% of the flat search's proxy on w1,
  /// docs/distributed.md).
  Multiples,
  /// Only the node-level spec times a legal spec for one node's GPUs, loop
  /// by loop: fewer candidates, and plans whose exchanges across nodes are
  /// fewer and larger (ein-decompose simulates both).
  Product,
};

/// The per-op specs of the hierarchical search for `options.devices` GPUs
/// on `nodes` nodes: the node-level plan's (the search with `nodes`
/// devices) spec for each op, refined as `refinement` says for
/// `options.devices` (an op with no refinement, too small to be cut that
/// way, keeps every spec). Returns false with `error` when the node-level
/// search finds no plan.
bool hierarchicalSpecs(const Graph &graph, const SearchOptions &options,
                       int64_t nodes, std::vector<std::vector<Spec>> &allowed,
                       std::string &error,
                       Refinement refinement = Refinement::Multiples);

/// The per-op specs of megatron-dp on `nodes` nodes of
/// `devices / nodes` GPUs: Megatron-style tensor parallelism within a node
/// and data parallelism across nodes, as people run a model too large for
/// one GPU on several servers. Each op's specs under dp for `nodes` devices
/// multiplied, loop by loop, by its specs under megatron for
/// `devices / nodes`, where the product is legal for `devices`. Returns
/// false with `error` when either strategy does not apply or an op has no
/// legal product.
bool megatronDpSpecs(const Graph &graph, int64_t devices, int64_t nodes,
                     std::vector<std::vector<Spec>> &allowed,
                     std::string &error);

} // namespace ein::planner

#endif // EINSUMMABLE_PLANNER_HIERARCHY_H
