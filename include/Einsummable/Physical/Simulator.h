//===- Simulator.h - A discrete-event model of one step ---------*- C++ -*-===//
//
// Predicts how long a device-level program takes on a topology: kernels run
// for their roofline time (FLOPs and memory bytes against the GPU's
// ceilings, plus a launch cost); transfers wait their route's latency and
// then stream, sharing every link they cross max-min fairly with the other
// transfers streaming at the time; tasks wait for their dependencies, and
// tasks on one queue run one at a time in order (the runtime gives each GPU
// one stream), or, unordered (a dataflow bundle), the first of its queue's
// tasks whose dependencies are done.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PHYSICAL_SIMULATOR_H
#define EINSUMMABLE_PHYSICAL_SIMULATOR_H

#include "ein/chip.h"
#include "ein/topology.h"

#include <string>
#include <vector>

namespace ein::physical {

struct Task {
  enum Kind { Kernel, Transfer } kind = Kernel;
  /// The queue (GPU stream) the task runs on.
  int64_t queue = 0;
  /// Kernel: work and memory traffic; or, where `seconds` is not negative,
  /// its time after the launch, as the chip's kernel tables predict it
  /// (planner::blockSeconds; the search's `compute=kernels`).
  double flops = 0, memoryBytes = 0;
  double seconds = -1;
  /// Kernel: runs none (a reshape, or a slice or concat laid out in place:
  /// a view of bytes already there). It takes no time, not even a launch,
  /// and only orders its dependencies before its readers.
  bool view = false;
  /// Transfer: from GPU `from` to GPU `to`, `bytes` bytes.
  int64_t from = 0, to = 0;
  double bytes = 0;
  /// Tasks (earlier in the list) that must finish first.
  std::vector<int> deps;
  /// Whether a later task of its queue may start first while it waits for
  /// its dependencies (a dataflow bundle's steps, which the runtime spreads
  /// over several streams per GPU); otherwise its queue runs it in list
  /// order, as one stream does.
  bool unordered = false;
  /// Where not negative, the task's place in its queue: a queue whose tasks
  /// all have one runs them in the order of `rank` (ties in list order)
  /// instead of list order (a dataflow program's copy queues, ordered by
  /// scheduleTransfers).
  double rank = -1;
  /// Kernel: the graph op and join block it runs (-1: an aggregation or
  /// none), for the lowering to find its IR op in the schedule.
  int op = -1;
  int64_t block = -1;
  std::string label;
};

/// The GPU's ceilings, from the chip table (ein/chip.h); by default the
/// reference chip's.
struct Machine {
  explicit Machine(const ChipInfo &chip = chipInfo(kReferenceChip))
      : flopsPerSecond(chip.gemmFlopsPerSecond),
        memoryBytesPerSecond(chip.memoryBytesPerSecond),
        launchSeconds(chip.graphLaunchSeconds) {}
  double flopsPerSecond;
  double memoryBytesPerSecond;
  double launchSeconds;
};

struct SimResult {
  double seconds = 0;             // the step: the last task's end
  std::vector<double> start, end; // per task
  std::vector<double> linkBusy;   // per link: time carrying bytes
  std::vector<double> linkBytes;  // per link: bytes carried
  std::vector<double> queueBusy;  // per queue: time running a task
  /// Tasks that could never run (a route without bandwidth, a dependency
  /// cycle): `seconds` then covers only what ran.
  bool stalled = false;
};

/// Simulates `tasks` (dependencies name earlier tasks; a transfer's GPUs
/// differ and have a route). Throws nothing; the caller validates.
SimResult simulate(const Topology &topology, const std::vector<Task> &tasks,
                   const Machine &machine = Machine());

/// How many whole-program simulations a search over one program may run:
/// 256, fewer for big programs, so that it costs about as much as 2^16
/// tasks simulated 256 times (placement's swaps, transfer batching).
int simulationBudget(size_t tasks);

/// The rates (bytes per second) max-min fair sharing gives transfers
/// crossing `routes` at once over `links`: progressive filling.
std::vector<double> maxMinRates(const std::vector<Link> &links,
                                const std::vector<std::vector<int>> &routes);

} // namespace ein::physical

#endif // EINSUMMABLE_PHYSICAL_SIMULATOR_H
