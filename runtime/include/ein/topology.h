//===- Topology.h - How a machine's GPUs are wired --------------*- C++ -*-===//
//
// The physical optimizer's model of a machine: links with a bandwidth (bytes
// per second, one direction) and the route a transfer from one GPU to
// another takes over them, with its latency. Concurrent transfers share the
// links they cross (the physical optimizer's Simulator.h). Named presets
// cover the machines we measured and the paper's; a JSON file describes any
// other (the format is in docs/physical.md; bench/probe_topology.py measures
// one). It sits in the format library, below the compiler and the runtime:
// #ein.target carries a topology resolved once (a preset's name, or a file's
// JSON text), and every pass rebuilds it from that, never from a path.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_TOPOLOGY_H
#define EIN_TOPOLOGY_H

#include <cstdint>
#include <string>
#include <vector>

namespace ein {

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
  /// The machines the GPUs sit on, `devices / nodes` consecutive GPUs each
  /// (`nodes=K,gpus=G`, or a file's "nodes"): a bundle for it runs as one
  /// process per node.
  int64_t nodes = 1;
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

/// The topology a target's `spec` describes for `devices` GPUs: a preset
/// (`nvswitch`, `h200-pair`, `dgx1-v100`, `pcie`, `nodes=K,gpus=G`) or the
/// JSON text of a topology (what resolveTopology makes of a file). Returns
/// false with `error` saying why it cannot (an unknown name, a preset that
/// does not fit the device count, malformed JSON, a file path).
bool makeTopology(const std::string &spec, int64_t devices, Topology &topology,
                  std::string &error);

/// What a target records for the topology `name`: a preset's name as it is,
/// or, for a path ending in `.json`, the file's JSON text (compact, every
/// number as read), so that no later stage reads a file. Returns false with
/// `error` where makeTopology would refuse the result or the file cannot be
/// read.
bool resolveTopology(const std::string &name, int64_t devices,
                     std::string &spec, std::string &error);

/// The device count the topology `name` fixes, 0 when it fits any: K*G for
/// `nodes=K,gpus=G`, 8 for `dgx1-v100`, a file's "devices" (0 when the file
/// cannot be read; resolveTopology then says why). What a tool's --devices
/// defaults to.
int64_t topologyDevices(const std::string &name);

/// Parses the JSON description of a topology (docs/physical.md).
bool parseTopology(const std::string &text, Topology &topology,
                   std::string &error);

} // namespace ein

#endif // EIN_TOPOLOGY_H
