//===- Strategy.h - Hand-written and random plans ---------------*- C++ -*-===//
//
// The search finds the cheapest plan; a strategy restricts which specs it
// may choose per op, to reproduce the plans people write by hand and the
// random plans the ablations compare against (docs/planner.md):
//   optimal   every legal spec;
//   random    one legal spec per op, drawn uniformly from a seed;
//   dp        data parallelism: only loops over the input's batch dimension
//             are cut, so weights are replicated;
//   megatron-dp  on K nodes of G GPUs: megatron within each node, data
//             parallel across nodes (each op's dp spec for K multiplied by
//             its megatron spec for G: Hierarchy.h's megatronDpSpecs);
//   megatron  tensor parallelism: a contraction with a weight cuts only
//             loops that index the weight (column or row parallel: the
//             weight is sharded, never replicated), attention cuts only its
//             heads, other ops follow the cheapest layout;
//   spatial   spatial parallelism: a convolution or pooling cuts only its
//             output rows and columns (each block reads the halo its window
//             reaches into) where they can be cut that many ways; other
//             ops, and windows too small, follow the cheapest layout.
// The search then chooses among what the strategy allows (and the
// arguments' arrival layouts), so a restricted plan is the best of its kind.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLANNER_STRATEGY_H
#define EINSUMMABLE_PLANNER_STRATEGY_H

#include "Einsummable/Planner/Cost.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ein::planner {

enum class Strategy {
  Optimal,
  Random,
  DataParallel,
  Megatron,
  Spatial,
  MegatronDataParallel
};

/// "optimal", "random", "dp", "megatron", "spatial" or "megatron-dp".
std::optional<Strategy> parseStrategy(const std::string &name);
const char *strategyName(Strategy strategy);

/// Per op, the legal specs `strategy` allows for `devices` GPUs (every one
/// for optimal). Returns false with `error` saying why when the strategy
/// does not apply (dp without a batch dimension to cut, say): it names the
/// first op left without a spec.
bool allowedSpecs(const Graph &graph, Strategy strategy, int64_t devices,
                  uint64_t seed, std::vector<std::vector<Spec>> &allowed,
                  std::string &error);

} // namespace ein::planner

#endif // EINSUMMABLE_PLANNER_STRATEGY_H
