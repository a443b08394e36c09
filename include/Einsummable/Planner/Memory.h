//===- Memory.h - What a plan holds on each GPU -----------------*- C++ -*-===//
//
// The memory model behind --memory-limit: per GPU, the weight blocks its
// joins read (replicas counted on every GPU that holds one) plus the
// activations live at its busiest op (every earlier result still to be
// read, as its GPU holds it, and the op's own input blocks and result).
// An op's inputs count as its joins read them (a block it receives is held
// beside what the producer holds only while it runs). A model of the plan,
// not of a bundle: ein-compile checks the bundle's buffer plan against the
// limit too.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLANNER_MEMORY_H
#define EINSUMMABLE_PLANNER_MEMORY_H

#include "Einsummable/Planner/Search.h"

#include <vector>

namespace ein::planner {

struct PlanMemory {
  std::vector<double> weights;   // per device
  std::vector<double> peak;      // per device: weights + peak activations
  double largest() const;        // the largest peak
  int64_t largestDevice() const; // where it is
};

/// The memory `plan` (for `graph` on `devices` GPUs) holds per GPU; join
/// block k of op o runs on GPU `(*place)[o][k]`, or on GPU k without
/// `place` (a staged plan's ops run on their stage's GPUs, `ein.place`).
PlanMemory planMemory(const Graph &graph, const Plan &plan, int64_t devices,
                      const std::vector<std::vector<int64_t>> *place = nullptr);

} // namespace ein::planner

#endif // EINSUMMABLE_PLANNER_MEMORY_H
