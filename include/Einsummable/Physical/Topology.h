//===- Topology.h - How a machine's GPUs are wired --------------*- C++ -*-===//
//
// The physical optimizer's model of a machine: links with a bandwidth (bytes
// per second, one direction) and the route a transfer from one GPU to
// another takes over them, with its latency. Concurrent transfers share the
// links they cross (Simulator.h). Named presets cover the machines of
// DESIGN §5 and the paper; a JSON file describes any other (the format is in
// docs/physical.md; bench/probe_topology.py measures one).
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PHYSICAL_TOPOLOGY_H
#define EINSUMMABLE_PHYSICAL_TOPOLOGY_H

#include <cstdint>
#include <string>
#include <vector>

namespace ein::physical {

struct Link {
  std::string name;
  double bandwidth = 0; // bytes per second, one direction
};

struct Route {
  std::vector<int> links; // every link the transfer occupies
  double latency = 0;     // seconds before the first byte arrives
};

struct Topology {
  std::string name;
  int64_t devices = 1;
  std::vector<Link> links;
  /// routes[from][to]; a GPU's route to itself is empty (no transfer).
  std::vector<std::vector<Route>> routes;

  const Route &route(int64_t from, int64_t to) const {
    return routes[from][to];
  }
  /// The bandwidth of a route alone on the machine: its slowest link.
  double bandwidth(int64_t from, int64_t to) const;
  /// The link named `name`, or -1.
  int linkIndex(const std::string &name) const;
};

/// The topology `name` names for `devices` GPUs: a preset (`nvswitch`,
/// `h200-pair`, `dgx1-v100`, `pcie`, `nodes=K,gpus=G`) or a path ending in
/// `.json`. Returns false with `error` saying why it cannot (an unknown name,
/// a preset that does not fit the device count, a malformed file). With
/// `readFiles` false a `.json` name is accepted unread (what the
/// #ein.target verifier checks) and `topology` is left as it was.
bool makeTopology(const std::string &name, int64_t devices, Topology &topology,
                  std::string &error, bool readFiles = true);

/// Parses the JSON description of a topology (docs/physical.md).
bool parseTopology(const std::string &text, Topology &topology,
                   std::string &error);

} // namespace ein::physical

#endif // EINSUMMABLE_PHYSICAL_TOPOLOGY_H
