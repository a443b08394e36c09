//===- Topology.cpp - How a machine's GPUs are wired ----------------------===//

#include "ein/topology.h"

#include "ein/chip.h"
#include "ein/target.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <regex>

namespace ein {

double Topology::bandwidth(int64_t from, int64_t to) const {
  double b = std::numeric_limits<double>::infinity();
  for (int l : route(from, to).links)
    b = std::min(b, links[l].bandwidth);
  return b;
}

int Topology::linkIndex(const std::string &name) const {
  for (size_t i = 0; i < links.size(); ++i)
    if (links[i].name == name)
      return static_cast<int>(i);
  return -1;
}

namespace {

/// Builds a topology link by link and route by route.
class Builder {
public:
  Builder(const std::string &name, int64_t devices) {
    t.name = name;
    t.devices = devices;
    t.routes.assign(devices, std::vector<Route>(devices));
  }
  int link(const std::string &name, double bandwidth) {
    t.links.push_back({name, bandwidth});
    return static_cast<int>(t.links.size() - 1);
  }
  void route(int64_t from, int64_t to, std::vector<int> links, double latency) {
    t.routes[from][to] = {std::move(links), latency};
  }
  Topology take() { return std::move(t); }

private:
  Topology t;
};

std::string gpu(int64_t i) { return "gpu" + std::to_string(i); }

// The H200 presets' links and latencies: the chip table's measurements.
const ChipInfo &h200() { return chipInfo("sm_90"); }

/// Per-GPU ingress and egress caps through a switch; no per-pair links.
Topology nvswitch(int64_t devices, const std::string &name) {
  Builder b(name, devices);
  std::vector<int> out, in;
  for (int64_t i = 0; i < devices; ++i) {
    out.push_back(b.link(gpu(i) + ".out", h200().linkBytesPerSecond));
    in.push_back(b.link(gpu(i) + ".in", h200().linkBytesPerSecond));
  }
  for (int64_t i = 0; i < devices; ++i)
    for (int64_t j = 0; j < devices; ++j)
      if (i != j)
        b.route(i, j, {out[i], in[j]}, h200().graphEdgeSeconds);
  return b.take();
}

/// The test machine: two H200s, one NVLink bundle (NV18) each way.
Topology h200Pair(int64_t devices) {
  Builder b("h200-pair", devices);
  if (devices == 2) {
    b.route(0, 1, {b.link("gpu0->gpu1", h200().linkBytesPerSecond)},
            h200().streamCopySeconds);
    b.route(1, 0, {b.link("gpu1->gpu0", h200().linkBytesPerSecond)},
            h200().streamCopySeconds);
  }
  return b.take();
}

/// DGX-1 with V100s: a hybrid cube-mesh of NVLink2 (25 GB/s a link and
/// direction); some pairs have two links, some one, some none. Pairs without
/// NVLink go over PCIe and, between the two CPU sockets, QPI.
Topology dgx1V100() {
  // Links between GPUs i and j (nvidia-smi topo -m on a DGX-1V).
  static const int kLinks[8][8] = {
      {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0},
      {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
      {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
      {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};
  constexpr double kNvlink2 = 25e9, kPcie3 = 12e9, kQpi = 20e9;
  constexpr double kNvlinkLatency = 8e-6, kHostLatency = 15e-6;
  Builder b("dgx1-v100", 8);
  std::vector<int> up, down;
  for (int i = 0; i < 8; ++i) {
    up.push_back(b.link(gpu(i) + ".pcie.up", kPcie3));
    down.push_back(b.link(gpu(i) + ".pcie.down", kPcie3));
  }
  int qpi[2] = {b.link("qpi.socket0->socket1", kQpi),
                b.link("qpi.socket1->socket0", kQpi)};
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      if (i == j)
        continue;
      if (kLinks[i][j]) {
        b.route(i, j, {b.link(gpu(i) + "->" + gpu(j), kLinks[i][j] * kNvlink2)},
                kNvlinkLatency);
        continue;
      }
      std::vector<int> path = {up[i]};
      if (i / 4 != j / 4)
        path.push_back(qpi[i / 4]);
      path.push_back(down[j]);
      b.route(i, j, path, kHostLatency);
    }
  return b.take();
}

/// A PCIe switch tree: two GPUs under each switch, the switches under one
/// root complex (PCIe 4 x16, about 25 GB/s each way).
Topology pcie(int64_t devices) {
  constexpr double kPcie4 = 25e9, kLatency = 10e-6;
  Builder b("pcie", devices);
  std::vector<int> up, down, switchUp, switchDown;
  for (int64_t i = 0; i < devices; ++i) {
    up.push_back(b.link(gpu(i) + ".up", kPcie4));
    down.push_back(b.link(gpu(i) + ".down", kPcie4));
  }
  for (int64_t s = 0; s < (devices + 1) / 2; ++s) {
    switchUp.push_back(b.link("switch" + std::to_string(s) + ".up", kPcie4));
    switchDown.push_back(
        b.link("switch" + std::to_string(s) + ".down", kPcie4));
  }
  for (int64_t i = 0; i < devices; ++i)
    for (int64_t j = 0; j < devices; ++j) {
      if (i == j)
        continue;
      if (i / 2 == j / 2)
        b.route(i, j, {up[i], down[j]}, kLatency);
      else
        b.route(i, j, {up[i], switchUp[i / 2], switchDown[j / 2], down[j]},
                kLatency);
    }
  return b.take();
}

/// K nodes of G GPUs: NVSwitch inside each node; between nodes, N network
/// links (400 Gb/s InfiniBand, 50 GB/s each way) per node, GPU l of a node
/// using link l * N / G (N = G, one per GPU, as a DGX H100/H200 has:
/// eight 400 Gb/s ports; N = 1, one port for the whole node).
Topology nodes(int64_t k, int64_t g, int64_t nics, const std::string &name) {
  constexpr double kNetwork = 50e9, kNetworkLatency = 20e-6;
  Builder b(name, k * g);
  std::vector<int> out, in, nicOut, nicIn;
  for (int64_t i = 0; i < k * g; ++i) {
    out.push_back(b.link(gpu(i) + ".out", h200().linkBytesPerSecond));
    in.push_back(b.link(gpu(i) + ".in", h200().linkBytesPerSecond));
  }
  for (int64_t n = 0; n < k; ++n)
    for (int64_t p = 0; p < nics; ++p) {
      std::string port = "node" + std::to_string(n) +
                         (nics == 1 ? "" : ".nic" + std::to_string(p));
      nicOut.push_back(b.link(port + ".out", kNetwork));
      nicIn.push_back(b.link(port + ".in", kNetwork));
    }
  auto nic = [&](int64_t device) {
    return device / g * nics + device % g * nics / g;
  };
  for (int64_t i = 0; i < k * g; ++i)
    for (int64_t j = 0; j < k * g; ++j) {
      if (i == j)
        continue;
      if (i / g == j / g)
        b.route(i, j, {out[i], in[j]}, h200().graphEdgeSeconds);
      else
        b.route(i, j, {out[i], nicOut[nic(i)], nicIn[nic(j)], in[j]},
                kNetworkLatency);
    }
  Topology t = b.take();
  t.nodes = k;
  return t;
}

/// `nodes=K,gpus=G[,nics=N]`, K, G and N positive and of at most six
/// digits.
const std::regex &nodesPattern() {
  static const std::regex pattern("nodes=([1-9][0-9]{0,5}),gpus=([1-9][0-9]{"
                                  "0,5})(,nics=([1-9][0-9]{0,5}))?");
  return pattern;
}

bool isJsonPath(const std::string &name) {
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
}

} // namespace

bool parseTopology(const std::string &text, Topology &topology,
                   std::string &error) {
  using json = nlohmann::json;
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    error = "not valid JSON";
    return false;
  }
  try {
    auto number = [](const json &node, const char *key, const std::string &at) {
      if (!node.contains(key) || !node[key].is_number())
        throw std::runtime_error(at + ": '" + key + "' must be a number");
      return node[key].get<double>();
    };
    auto array = [](const json &node, const char *key, const std::string &at,
                    const char *what) -> const json & {
      if (!node.contains(key) || !node[key].is_array())
        throw std::runtime_error(at + "'" + key + "' must be an array of " +
                                 what);
      return node[key];
    };
    auto text = [](const json &node, const std::string &at) {
      if (!node.is_string())
        throw std::runtime_error(at + " must be a string");
      return node.get<std::string>();
    };
    auto only = [](const json &node, std::initializer_list<const char *> keys,
                   const std::string &at) {
      if (!node.is_object())
        throw std::runtime_error(at + ": expected an object");
      for (auto it = node.begin(); it != node.end(); ++it)
        if (std::none_of(keys.begin(), keys.end(),
                         [&](const char *k) { return it.key() == k; }))
          throw std::runtime_error(at + ": unknown field '" + it.key() + "'");
    };
    only(root, {"name", "devices", "nodes", "links", "routes", "measured_with"},
         "topology");
    if (!root.is_object() || !root.contains("devices") ||
        !root["devices"].is_number_integer())
      throw std::runtime_error("'devices' must be an integer");
    int64_t devices = root["devices"].get<int64_t>();
    std::string why;
    if (!checkDevices(devices, why))
      throw std::runtime_error("'devices' " + why);
    Builder b(root.value("name", std::string("custom")), devices);
    std::map<std::string, int> byName;
    const json &links = array(root, "links", "", "links");
    for (size_t i = 0; i < links.size(); ++i) {
      std::string at = "links[" + std::to_string(i) + "]";
      only(links[i], {"name", "bandwidth_gb_per_s"}, at);
      if (!links[i].contains("name"))
        throw std::runtime_error(at + ": 'name' is missing");
      std::string name = text(links[i]["name"], at + ".name");
      double gbps = number(links[i], "bandwidth_gb_per_s", at);
      // From 1 MB/s to 1 PB/s: anything else is a typo in the units.
      if (!(gbps >= 1e-3 && gbps <= 1e6))
        throw std::runtime_error(at + ": bandwidth_gb_per_s must be between "
                                      "0.001 and 1e6 GB/s");
      if (!byName.emplace(name, b.link(name, gbps * 1e9)).second)
        throw std::runtime_error(at + ": link '" + name + "' defined twice");
    }
    std::vector<std::vector<bool>> seen(devices,
                                        std::vector<bool>(devices, false));
    const json &routes = array(root, "routes", "", "routes");
    for (size_t i = 0; i < routes.size(); ++i) {
      std::string at = "routes[" + std::to_string(i) + "]";
      only(routes[i], {"from", "to", "links", "latency_us"}, at);
      for (const char *end : {"from", "to"})
        if (!routes[i].contains(end) || !routes[i][end].is_number_integer())
          throw std::runtime_error(at + ": '" + end + "' must be an integer");
      int64_t from = routes[i].at("from").get<int64_t>(),
              to = routes[i].at("to").get<int64_t>();
      if (from < 0 || to < 0 || from >= devices || to >= devices || from == to)
        throw std::runtime_error(at + ": 'from' and 'to' must be two of the " +
                                 std::to_string(devices) + " devices");
      std::vector<int> path;
      for (const json &l : array(routes[i], "links", at + ": ", "link names")) {
        std::string name = text(l, at + ": a link name");
        auto it = byName.find(name);
        if (it == byName.end())
          throw std::runtime_error(at + ": no link is named '" + name + "'");
        path.push_back(it->second);
      }
      if (path.empty())
        throw std::runtime_error(at + ": a route crosses at least one link");
      double latency = number(routes[i], "latency_us", at) * 1e-6;
      if (!(latency >= 0 && latency <= 1))
        throw std::runtime_error(at + ": latency_us must be between 0 and "
                                      "1e6 (a second)");
      b.route(from, to, path, latency);
      if (seen[from][to])
        throw std::runtime_error(at + ": a second route from device " +
                                 std::to_string(from) + " to device " +
                                 std::to_string(to));
      seen[from][to] = true;
    }
    for (int64_t i = 0; i < devices; ++i)
      for (int64_t j = 0; j < devices; ++j)
        if (i != j && !seen[i][j])
          throw std::runtime_error("no route from device " + std::to_string(i) +
                                   " to device " + std::to_string(j));
    topology = b.take();
    if (root.contains("nodes")) {
      if (!root["nodes"].is_number_integer())
        throw std::runtime_error("'nodes' must be an integer");
      int64_t k = root["nodes"].get<int64_t>();
      if (k < 1 || k > devices || devices % k != 0)
        throw std::runtime_error(
            "'nodes' must divide the " + std::to_string(devices) +
            " devices into nodes of equal size, got " + std::to_string(k));
      topology.nodes = k;
    }
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  return true;
}

bool makeTopology(const std::string &spec, int64_t devices, Topology &topology,
                  std::string &error) {
  std::string why;
  if (!checkDevices(devices, why)) {
    error = "device count " + why;
    return false;
  }
  std::smatch m;
  std::string count = std::to_string(devices);
  if (spec == "nvswitch") {
    topology = nvswitch(devices, spec);
  } else if (spec == "h200-pair") {
    if (devices > 2) {
      error =
          "topology 'h200-pair' has 2 GPUs, but the target asks for " + count;
      return false;
    }
    topology = h200Pair(devices);
  } else if (spec == "dgx1-v100") {
    if (devices != 8) {
      error = "topology 'dgx1-v100' is defined for 8 devices, got " + count;
      return false;
    }
    topology = dgx1V100();
  } else if (spec == "pcie") {
    topology = pcie(devices);
  } else if (spec.rfind("nodes=", 0) == 0) {
    if (!std::regex_match(spec, m, nodesPattern())) {
      error = "topology '" + spec +
              "' must read 'nodes=K,gpus=G' or 'nodes=K,gpus=G,nics=N' with "
              "positive K, G, N";
      return false;
    }
    int64_t k = std::stoll(m[1]), g = std::stoll(m[2]);
    if (k * g != devices) {
      error = "topology '" + spec + "' has " + std::to_string(k * g) +
              " GPUs but the target asks for " + count;
      return false;
    }
    int64_t nics = m[4].matched ? std::stoll(m[4]) : g;
    if (nics > g || g % nics != 0) {
      error = "topology '" + spec + "' gives each node " +
              std::to_string(nics) + " network links for " + std::to_string(g) +
              " GPUs: the links must divide the GPUs";
      return false;
    }
    topology = nodes(k, g, nics, spec);
  } else if (!spec.empty() && spec[0] == '{') {
    Topology parsed;
    if (!parseTopology(spec, parsed, error)) {
      error = "topology " + error;
      return false;
    }
    if (parsed.devices != devices) {
      error = "topology '" + parsed.name + "' describes " +
              std::to_string(parsed.devices) + " GPUs; the target has " + count;
      return false;
    }
    topology = std::move(parsed);
  } else if (isJsonPath(spec)) {
    error = "topology file '" + spec +
            "' was not resolved: ein-attach-target reads it into the target";
    return false;
  } else {
    error = "unknown topology '" + spec +
            "'; expected nvswitch, h200-pair, dgx1-v100, pcie, "
            "nodes=K,gpus=G[,nics=N] or a .json file";
    return false;
  }
  return true;
}

int64_t topologyDevices(const std::string &name) {
  std::smatch m;
  if (std::regex_match(name, m, nodesPattern()))
    return std::stoll(m[1]) * std::stoll(m[2]);
  if (name == "dgx1-v100")
    return 8;
  if (!isJsonPath(name))
    return 0;
  std::ifstream file(name);
  nlohmann::json root = nlohmann::json::parse(file, nullptr,
                                              /*allow_exceptions=*/false);
  if (root.is_object() && root.contains("devices") &&
      root["devices"].is_number_integer())
    return root["devices"].get<int64_t>();
  return 0;
}

bool resolveTopology(const std::string &name, int64_t devices,
                     std::string &spec, std::string &error) {
  std::string resolved = name;
  if (isJsonPath(name)) {
    std::ifstream file(name);
    if (!file) {
      error = "cannot open topology file '" + name + "'";
      return false;
    }
    std::string text((std::istreambuf_iterator<char>(file)),
                     std::istreambuf_iterator<char>());
    nlohmann::json root =
        nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    Topology parsed;
    if (root.is_discarded() || !parseTopology(text, parsed, error)) {
      error = name + ": " + (root.is_discarded() ? "not valid JSON" : error);
      return false;
    }
    if (parsed.devices != devices) {
      error = name + " describes " + std::to_string(parsed.devices) +
              " GPUs; the target has " + std::to_string(devices);
      return false;
    }
    resolved = root.dump();
  }
  Topology unused;
  if (!makeTopology(resolved, devices, unused, error))
    return false;
  spec = std::move(resolved);
  return true;
}

} // namespace ein
