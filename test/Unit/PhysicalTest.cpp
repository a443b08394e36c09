//===- PhysicalTest.cpp - Topologies, the simulator, exchange programs ----===//

#include "Einsummable/Physical/Exchange.h"
#include "Einsummable/Physical/Pipeline.h"
#include "Einsummable/Physical/Placement.h"
#include "Einsummable/Physical/Simulator.h"
#include "GraphBuilder.h"
#include "ein/topology.h"

#include "ein/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>

using namespace ein;
using namespace ein::physical;
using namespace ein::planner::test;
using planner::Box;
using planner::Placed;
using BoxKeyForTest = std::pair<std::vector<int64_t>, std::vector<int64_t>>;

namespace {

Topology make(const std::string &name, int64_t devices) {
  Topology t;
  std::string error;
  EXPECT_TRUE(makeTopology(name, devices, t, error)) << error;
  return t;
}

std::string errorOf(const std::string &name, int64_t devices) {
  Topology t;
  std::string error;
  EXPECT_FALSE(makeTopology(name, devices, t, error));
  return error;
}

std::vector<std::string> routeNames(const Topology &t, int64_t from,
                                    int64_t to) {
  std::vector<std::string> names;
  for (int l : t.route(from, to).links)
    names.push_back(t.links[l].name);
  return names;
}

} // namespace

TEST(Topology, Presets) {
  Topology s = make("nvswitch", 8);
  EXPECT_EQ(routeNames(s, 2, 5),
            (std::vector<std::string>{"gpu2.out", "gpu5.in"}));
  EXPECT_EQ(s.bandwidth(2, 5), 395e9);
  EXPECT_TRUE(s.route(3, 3).links.empty());

  Topology pair = make("h200-pair", 2);
  EXPECT_EQ(routeNames(pair, 1, 0), (std::vector<std::string>{"gpu1->gpu0"}));
  EXPECT_DOUBLE_EQ(pair.route(0, 1).latency, 8e-6);

  // The cube-mesh: six NVLinks per GPU, some pairs doubled, the rest over
  // PCIe (and QPI between the sockets).
  Topology dgx = make("dgx1-v100", 8);
  for (int i = 0; i < 8; ++i) {
    double nvlink = 0;
    for (int j = 0; j < 8; ++j)
      if (i != j && dgx.route(i, j).links.size() == 1)
        nvlink += dgx.bandwidth(i, j);
    EXPECT_DOUBLE_EQ(nvlink, 6 * 25e9) << "GPU " << i;
  }
  EXPECT_DOUBLE_EQ(dgx.bandwidth(0, 3), 50e9);
  EXPECT_DOUBLE_EQ(dgx.bandwidth(0, 1), 25e9);
  EXPECT_EQ(routeNames(dgx, 0, 5),
            (std::vector<std::string>{"gpu0.pcie.up", "qpi.socket0->socket1",
                                      "gpu5.pcie.down"}));
  EXPECT_EQ(routeNames(dgx, 1, 2), (std::vector<std::string>{"gpu1->gpu2"}));

  Topology tree = make("pcie", 4);
  EXPECT_EQ(routeNames(tree, 0, 1),
            (std::vector<std::string>{"gpu0.up", "gpu1.down"}));
  EXPECT_EQ(routeNames(tree, 0, 3),
            (std::vector<std::string>{"gpu0.up", "switch0.up", "switch1.down",
                                      "gpu3.down"}));

  // One 400 Gb/s port per GPU by default (a DGX H200's eight); nics=1
  // gives the whole node one.
  Topology cluster = make("nodes=2,gpus=4", 8);
  EXPECT_EQ(routeNames(cluster, 1, 2),
            (std::vector<std::string>{"gpu1.out", "gpu2.in"}));
  EXPECT_EQ(routeNames(cluster, 1, 6),
            (std::vector<std::string>{"gpu1.out", "node0.nic1.out",
                                      "node1.nic2.in", "gpu6.in"}));
  EXPECT_DOUBLE_EQ(cluster.bandwidth(1, 6), 50e9);
  Topology onePort = make("nodes=2,gpus=4,nics=1", 8);
  EXPECT_EQ(routeNames(onePort, 1, 6),
            (std::vector<std::string>{"gpu1.out", "node0.out", "node1.in",
                                      "gpu6.in"}));
  Topology twoPorts = make("nodes=2,gpus=4,nics=2", 8);
  EXPECT_EQ(routeNames(twoPorts, 3, 4),
            (std::vector<std::string>{"gpu3.out", "node0.nic1.out",
                                      "node1.nic0.in", "gpu4.in"}));
  EXPECT_EQ(twoPorts.nodes, 2);
  EXPECT_EQ(cluster.nodes, 2);
  EXPECT_EQ(make("nvswitch", 8).nodes, 1);
  // What --devices defaults to: the device count a topology fixes.
  EXPECT_EQ(topologyDevices("nodes=3,gpus=2"), 6);
  EXPECT_EQ(topologyDevices("dgx1-v100"), 8);
  EXPECT_EQ(topologyDevices("nvswitch"), 0);
  EXPECT_EQ(topologyDevices("/nonexistent/t.json"), 0);
}

TEST(Topology, Refusals) {
  EXPECT_EQ(errorOf("h200-pair", 4),
            "topology 'h200-pair' has 2 GPUs, but the target asks for 4");
  EXPECT_EQ(errorOf("dgx1-v100", 4),
            "topology 'dgx1-v100' is defined for 8 devices, got 4");
  EXPECT_EQ(errorOf("nodes=2,gpus=4", 6),
            "topology 'nodes=2,gpus=4' has 8 GPUs but the target asks for 6");
  EXPECT_EQ(errorOf("nodes=2", 2),
            "topology 'nodes=2' must read 'nodes=K,gpus=G' or "
            "'nodes=K,gpus=G,nics=N' with positive K, G, N");
  EXPECT_EQ(errorOf("nodes=2,gpus=4,nics=3", 8),
            "topology 'nodes=2,gpus=4,nics=3' gives each node 3 network links "
            "for 4 GPUs: the links must divide the GPUs");
  EXPECT_EQ(errorOf("torus", 4),
            "unknown topology 'torus'; expected nvswitch, h200-pair, "
            "dgx1-v100, pcie, nodes=K,gpus=G[,nics=N] or a .json file");
  EXPECT_EQ(errorOf("/nonexistent/t.json", 2),
            "topology file '/nonexistent/t.json' was not resolved: "
            "ein-attach-target reads it into the target");
  std::string spec, error;
  EXPECT_FALSE(resolveTopology("/nonexistent/t.json", 2, spec, error));
  EXPECT_EQ(error, "cannot open topology file '/nonexistent/t.json'");
  EXPECT_FALSE(resolveTopology("torus", 2, spec, error));
  EXPECT_EQ(error, "unknown topology 'torus'; expected nvswitch, h200-pair, "
                   "dgx1-v100, pcie, nodes=K,gpus=G[,nics=N] or a .json file");
}

// A file is read once, when the target is attached: the target then holds
// its JSON text, which rebuilds the same topology with no file in reach.
TEST(Topology, ResolvedFilesNeedNoFile) {
  std::string path = ::testing::TempDir() + "/resolved-topology.json";
  {
    std::FILE *f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(R"({"name": "measured", "devices": 2,
      "links": [{"name": "a", "bandwidth_gb_per_s": 390.123456789012},
                {"name": "b", "bandwidth_gb_per_s": 380}],
      "routes": [{"from": 0, "to": 1, "links": ["a"], "latency_us": 9},
                 {"from": 1, "to": 0, "links": ["b"], "latency_us": 7.5}]})",
               f);
    std::fclose(f);
  }
  std::string spec, error;
  ASSERT_TRUE(resolveTopology(path, 2, spec, error)) << error;
  std::remove(path.c_str());
  EXPECT_EQ(spec.front(), '{');
  Topology t = make(spec, 2);
  EXPECT_EQ(t.name, "measured");
  EXPECT_DOUBLE_EQ(t.bandwidth(0, 1), 390.123456789012e9);
  EXPECT_DOUBLE_EQ(t.route(1, 0).latency, 7.5e-6);
  EXPECT_EQ(errorOf(spec, 4),
            "topology 'measured' describes 2 GPUs; the target has 4");
  // Presets are recorded by name.
  ASSERT_TRUE(resolveTopology("nodes=2,gpus=4", 8, spec, error)) << error;
  EXPECT_EQ(spec, "nodes=2,gpus=4");
}

TEST(Topology, Json) {
  std::string text = R"({"name": "measured", "devices": 2,
    "links": [{"name": "a", "bandwidth_gb_per_s": 390.5},
              {"name": "b", "bandwidth_gb_per_s": 380}],
    "routes": [{"from": 0, "to": 1, "links": ["a"], "latency_us": 9},
               {"from": 1, "to": 0, "links": ["b"], "latency_us": 7.5}]})";
  Topology t;
  std::string error;
  ASSERT_TRUE(parseTopology(text, t, error)) << error;
  EXPECT_EQ(t.name, "measured");
  EXPECT_DOUBLE_EQ(t.bandwidth(0, 1), 390.5e9);
  EXPECT_DOUBLE_EQ(t.route(1, 0).latency, 7.5e-6);
  EXPECT_EQ(t.nodes, 1);
  // "nodes" puts consecutive GPUs on machines of equal size.
  std::string twoNodes = text;
  twoNodes.insert(1, R"("nodes": 2, )");
  ASSERT_TRUE(parseTopology(twoNodes, t, error)) << error;
  EXPECT_EQ(t.nodes, 2);

  auto rejects = [](const std::string &text, const std::string &why) {
    Topology t;
    std::string error;
    EXPECT_FALSE(parseTopology(text, t, error));
    EXPECT_EQ(error, why);
  };
  rejects("{", "not valid JSON");
  for (const char *nodes : {"3", "0"}) {
    std::string odd = text;
    odd.insert(1, std::string(R"("nodes": )") + nodes + ", ");
    rejects(odd, std::string("'nodes' must divide the 2 devices into nodes "
                             "of equal size, got ") +
                     nodes);
  }
  rejects(R"({"devices": 2, "lnks": []})", "topology: unknown field 'lnks'");
  rejects(R"({"devices": 2, "links": [{"name": "a", "bandwidth_gb_per_s": 1}],
              "routes": [{"from": 0.5, "to": 1, "links": ["a"], "latency_us": 1}]})",
          "routes[0]: 'from' must be an integer");
  rejects(R"({"devices": 2, "links": [{"name": "a", "bandwidth_gb_per_s": 1}],
              "routes": [{"from": 0, "to": 1, "links": ["a"], "latency_us": 1},
                         {"from": 0, "to": 1, "links": ["a"], "latency_us": 2}]})",
          "routes[1]: a second route from device 0 to device 1");
  rejects(R"({"devices": 2, "links": [], "routes": []})",
          "no route from device 0 to device 1");
  rejects(R"({"devices": 2, "links": [{"name": "a", "bandwidth_gb_per_s": 0}],
              "routes": []})",
          "links[0]: bandwidth_gb_per_s must be between 0.001 and 1e6 GB/s");
  // Bandwidths and latencies that can only be a slip in the units.
  rejects(
      R"({"devices": 2, "links": [{"name": "a", "bandwidth_gb_per_s": 1e-300}],
              "routes": []})",
      "links[0]: bandwidth_gb_per_s must be between 0.001 and 1e6 GB/s");
  rejects(
      R"({"devices": 2, "links": [{"name": "a", "bandwidth_gb_per_s": 1e308}],
              "routes": []})",
      "links[0]: bandwidth_gb_per_s must be between 0.001 and 1e6 GB/s");
  rejects(R"({"devices": 2, "links": [{"name": "a", "bandwidth_gb_per_s": 1}],
              "routes": [{"from": 0, "to": 1, "links": ["a"], "latency_us": 2e6}]})",
          "routes[0]: latency_us must be between 0 and 1e6 (a second)");
  // Missing or mistyped parts are named, not left to the JSON library.
  rejects(R"({"devices": 2, "routes": []})",
          "'links' must be an array of links");
  rejects(R"({"devices": 2, "links": []})",
          "'routes' must be an array of routes");
  rejects(
      R"({"devices": 2, "links": [{"bandwidth_gb_per_s": 1}], "routes": []})",
      "links[0]: 'name' is missing");
  rejects(R"({"devices": 2, "links": [{"name": 7, "bandwidth_gb_per_s": 1}],
              "routes": []})",
          "links[0].name must be a string");
  rejects(R"({"devices": 2, "links": [{"name": "a", "bandwidth_gb_per_s": 1}],
              "routes": [{"from": 0, "to": 1, "latency_us": 1}]})",
          "routes[0]: 'links' must be an array of link names");
  rejects(R"({"devices": 2, "links": [{"name": "a", "bandwidth_gb_per_s": 1}],
              "routes": [{"from": 0, "to": 1, "links": [3], "latency_us": 1}]})",
          "routes[0]: a link name must be a string");
  rejects(R"({"devices": 2, "links": [{"name": "a", "bandwidth_gb_per_s": 1}],
              "routes": [{"to": 1, "links": ["a"], "latency_us": 1}]})",
          "routes[0]: 'from' must be an integer");
  rejects(R"({"devices": 2, "links": [],
              "routes": [{"from": 0, "to": 1, "links": ["x"], "latency_us": 1}]})",
          "routes[0]: no link is named 'x'");
  rejects(R"({"devices": 2, "links": [],
              "routes": [{"from": 0, "to": 0, "links": [], "latency_us": 1}]})",
          "routes[0]: 'from' and 'to' must be two of the 2 devices");
}

TEST(Simulator, MaxMinSharing) {
  // Flows A over L1, B over L1 and L2, C over L2; L1 = 10, L2 = 4. L2 is
  // the bottleneck (2 each for B and C); A takes what L1 has left, 8.
  std::vector<Link> links = {{"L1", 10}, {"L2", 4}};
  std::vector<double> rates = maxMinRates(links, {{0}, {0, 1}, {1}});
  EXPECT_EQ(rates, (std::vector<double>{8, 2, 2}));
}

namespace {

Task transfer(int64_t from, int64_t to, double bytes, int64_t queue,
              std::vector<int> deps = {}) {
  Task t;
  t.kind = Task::Transfer;
  t.from = from;
  t.to = to;
  t.bytes = bytes;
  t.queue = queue;
  t.deps = std::move(deps);
  return t;
}

Task kernel(int64_t device, double flops, double bytes,
            std::vector<int> deps = {}) {
  Task t;
  t.kind = Task::Kernel;
  t.queue = device;
  t.flops = flops;
  t.memoryBytes = bytes;
  t.deps = std::move(deps);
  return t;
}

} // namespace

TEST(Simulator, OneLink) {
  Topology pair = make("h200-pair", 2);
  SimResult r = simulate(pair, {transfer(0, 1, 395e9 * 1e-3, 1)});
  EXPECT_NEAR(r.seconds, 8e-6 + 1e-3, 1e-12);
  EXPECT_NEAR(r.linkBusy[pair.linkIndex("gpu0->gpu1")], 1e-3, 1e-12);
  EXPECT_NEAR(r.linkBytes[pair.linkIndex("gpu0->gpu1")], 395e6, 1e-3);
}

TEST(Simulator, TwoTransfersShareALink) {
  // GPUs 0 and 1 both send 395 MB to GPU 2 (from their own queues): they
  // share gpu2.in, each at half its bandwidth, and end together.
  Topology s = make("nvswitch", 4);
  SimResult r =
      simulate(s, {transfer(0, 2, 395e6, 0), transfer(1, 2, 395e6, 1)});
  double expected = 5e-6 + 2 * 395e6 / 395e9;
  EXPECT_NEAR(r.end[0], expected, 1e-12);
  EXPECT_NEAR(r.end[1], expected, 1e-12);
  EXPECT_NEAR(r.linkBusy[s.linkIndex("gpu2.in")], 2e-3, 1e-12);
  EXPECT_NEAR(r.linkBusy[s.linkIndex("gpu0.out")], 2e-3, 1e-12);
  // One after the other on one queue: the same end, but no sharing.
  SimResult serial =
      simulate(s, {transfer(0, 2, 395e6, 2), transfer(1, 2, 395e6, 2)});
  EXPECT_NEAR(serial.end[0], 5e-6 + 1e-3, 1e-12);
  EXPECT_NEAR(serial.end[1], 2 * (5e-6 + 1e-3), 1e-12);
}

TEST(Simulator, Relay) {
  // 0 -> 1 -> 2 through a relay: two hops, each latency plus bytes.
  Topology s = make("nvswitch", 3);
  SimResult r =
      simulate(s, {transfer(0, 1, 395e6, 1), transfer(1, 2, 395e6, 2, {0})});
  EXPECT_NEAR(r.seconds, 2 * (5e-6 + 1e-3), 1e-12);
  EXPECT_NEAR(r.start[1], 5e-6 + 1e-3, 1e-12);
}

TEST(Simulator, DependencyChainAndRoofline) {
  Topology s = make("nvswitch", 2);
  Machine m;
  // Compute-bound: 750 GFLOP is 1 ms; memory-bound: 4.24 GB is 1 ms.
  SimResult r = simulate(s,
                         {kernel(0, 750e9, 1e6), transfer(0, 1, 395e6, 1, {0}),
                          kernel(1, 1e6, 4.24e9, {1})},
                         m);
  double k = m.launchSeconds + 1e-3;
  EXPECT_NEAR(r.end[0], k, 1e-12);
  EXPECT_NEAR(r.end[1], k + 5e-6 + 1e-3, 1e-12);
  EXPECT_NEAR(r.seconds, 2 * k + 5e-6 + 1e-3, 1e-12);
  EXPECT_NEAR(r.queueBusy[0], k, 1e-12);
  // Two kernels on one queue run one after the other.
  SimResult serial = simulate(s, {kernel(0, 750e9, 0), kernel(0, 750e9, 0)});
  EXPECT_NEAR(serial.seconds, 2 * k, 1e-12);
  // A view between them (a reshape) runs nothing, not even a launch, and
  // still orders them.
  Task view = kernel(0, 750e9, 4.24e9, {0});
  view.view = true;
  SimResult viewed =
      simulate(s, {kernel(0, 750e9, 0), view, kernel(0, 750e9, 0, {1})});
  EXPECT_NEAR(viewed.end[1], k, 1e-12);
  EXPECT_NEAR(viewed.seconds, 2 * k, 1e-12);
}

// In list order a queue waits for its first task; unordered (a dataflow
// program) it runs a later task whose dependencies are done meanwhile.
TEST(Simulator, UnorderedTasksRunOutOfTurn) {
  Topology s = make("nvswitch", 2);
  Machine m;
  double k = m.launchSeconds + 1e-3, x = 5e-6 + 1e-3;
  // GPU 1: a kernel waiting for a 1 ms transfer, then an independent one.
  std::vector<Task> tasks = {transfer(0, 1, 395e6, 2), kernel(1, 750e9, 0, {0}),
                             kernel(1, 750e9, 0)};
  SimResult inOrder = simulate(s, tasks, m);
  EXPECT_NEAR(inOrder.start[2], x + k, 1e-12);
  EXPECT_NEAR(inOrder.seconds, x + 2 * k, 1e-12);
  for (Task &t : tasks)
    t.unordered = true;
  SimResult anyOrder = simulate(s, tasks, m);
  EXPECT_NEAR(anyOrder.start[2], 0, 1e-12);
  // The waiting kernel starts when the transfer lands and GPU 1 is free.
  EXPECT_NEAR(anyOrder.start[1], std::max(x, k), 1e-12);
  EXPECT_NEAR(anyOrder.seconds, std::max(x, k) + k, 1e-12);
  EXPECT_NEAR(anyOrder.queueBusy[1], 2 * k, 1e-12);
}

// A dataflow program's copy queue runs its transfers in list order, a
// transfer waiting for its source holding back a later one that is ready;
// scheduleTransfers ranks them by when each starts where the queue may take
// any ready one first, and the queue then runs them in that order. A queue
// with a task that has no rank keeps list order.
TEST(Simulator, CopyQueuesRunInTheScheduledOrder) {
  Topology s = make("nvswitch", 2);
  Machine m;
  double k = m.launchSeconds + 1e-3;
  // GPU 1 computes an activation for 1 ms; GPU 0 receives it (queue 2, its
  // copy queue) and, listed after it, a weight (0.4 MB) its own 1 ms kernel
  // reads first; then a kernel reads both.
  std::vector<Task> tasks = {kernel(1, 750e9, 0), transfer(1, 0, 4e5, 2, {0}),
                             transfer(1, 0, 4e5, 2), kernel(0, 750e9, 0, {2}),
                             kernel(0, 75e9, 0, {1, 3})};
  for (Task &t : tasks)
    t.unordered = t.kind == Task::Kernel;
  DeviceProgram program;
  program.tasks = tasks;
  double inList = simulate(s, tasks, m).seconds;
  // In list order the weight waits behind the activation: GPU 0's kernel
  // starts after GPU 1's has run.
  EXPECT_GT(inList, 2 * k);
  scheduleTransfers(program, s);
  ASSERT_GE(program.tasks[1].rank, 0);
  EXPECT_LT(program.tasks[2].rank, program.tasks[1].rank);
  EXPECT_EQ(program.tasks[0].rank, -1); // kernels are not ranked
  SimResult scheduled = simulate(s, program.tasks, m);
  EXPECT_LT(scheduled.start[2], scheduled.start[1]);
  EXPECT_LT(scheduled.seconds, inList - 0.5 * k);
  // Where a queue's tasks are not all ranked, it runs in list order.
  std::vector<Task> partly = program.tasks;
  partly[1].rank = -1;
  EXPECT_EQ(simulate(s, partly, m).seconds, inList);
  // A program already in the best order keeps its list order (no ranks).
  std::vector<Task> swapped = {tasks[0], tasks[2], tasks[1], tasks[3],
                               tasks[4]};
  swapped[2].deps = {0};
  swapped[3].deps = {1};
  swapped[4].deps = {2, 3};
  DeviceProgram good;
  good.tasks = swapped;
  scheduleTransfers(good, s);
  for (const Task &t : good.tasks)
    EXPECT_EQ(t.rank, -1);
}

// Two weights ready at once on one copy queue, each read by a 1 ms kernel:
// taken in list order the large one goes first and the GPU waits for it;
// scheduleTransfers also tries the smallest ready transfer first, and keeps
// that order, which starts the GPU sooner.
TEST(Simulator, TheSmallestReadyTransferMayGoFirst) {
  Topology s = make("nvswitch", 2);
  Machine m;
  std::vector<Task> tasks = {transfer(1, 0, 40e6, 2), transfer(1, 0, 4e6, 2),
                             kernel(0, 750e9, 0, {0}),
                             kernel(0, 750e9, 0, {1})};
  for (Task &t : tasks)
    t.unordered = t.kind == Task::Kernel;
  double big = simulate(s, {tasks[0]}, m).seconds,
         small = simulate(s, {tasks[1]}, m).seconds;
  SimResult inList = simulate(s, tasks, m);
  EXPECT_NEAR(inList.start[2], big, 1e-9); // the GPU idles for the large one
  DeviceProgram program;
  program.tasks = tasks;
  scheduleTransfers(program, s);
  EXPECT_LT(program.tasks[1].rank, program.tasks[0].rank);
  SimResult scheduled = simulate(s, program.tasks, m);
  EXPECT_NEAR(scheduled.start[3], small, 1e-9);
  EXPECT_NEAR(inList.seconds - scheduled.seconds, big - small, 1e-9);
}

// A kernel whose time the chip's kernel tables predict (compute=kernels)
// takes that time after its launch, whatever its FLOPs and bytes.
TEST(Simulator, KernelTimeFromTheTables) {
  Topology s = make("nvswitch", 2);
  Machine m;
  Task t = kernel(0, 750e9, 1e6);
  t.seconds = 3e-3;
  EXPECT_NEAR(simulate(s, {t}, m).seconds, m.launchSeconds + 3e-3, 1e-12);

  // In a program: the search's kernel times reach the simulated step.
  planner::Graph g;
  int a = addValue(g, "a", {8192, 4096}, planner::ValueKind::Activation, 2);
  int b = addValue(g, "b", {4096, 4096}, planner::ValueKind::Weight, 2);
  matmul(g, a, b, "c");
  g.ops[0].kernel = planner::KernelKind::Gemm;
  g.ops[0].gemm.m = 0;
  g.ops[0].gemm.k = 1;
  g.ops[0].gemm.n = 2;
  planner::SearchOptions flops, kernels;
  flops.devices = kernels.devices = 2;
  kernels.kernelTimes = true;
  planner::Plan plan = planner::search(g, flops);
  ASSERT_TRUE(plan.feasible);
  DeviceProgram byFlops = naiveProgram(g, plan, flops);
  DeviceProgram byTables = naiveProgram(g, plan, kernels);
  double table = planner::blockSeconds(g, g.ops[0], plan.specs[0],
                                       delinearize(0, plan.specs[0])) -
                 m.launchSeconds;
  int blocks = 0;
  for (const Task &task : byTables.tasks)
    if (task.kind == Task::Kernel &&
        task.label.find(": block ") != std::string::npos) {
      EXPECT_NEAR(task.seconds, table, 1e-12);
      ++blocks;
    }
  EXPECT_EQ(blocks, 2);
  for (const Task &task : byFlops.tasks)
    EXPECT_LT(task.seconds, 0);
}

namespace {

/// A random canonical layout of `shape`: uneven cuts, each block on a
/// random one of `devices` GPUs; some blocks dropped when `partial`.
std::vector<Placed> randomLayout(std::mt19937 &rng,
                                 const std::vector<int64_t> &shape,
                                 int64_t devices, bool partial) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::vector<int64_t> parts;
  for (int64_t d : shape)
    parts.push_back(pick(1, d));
  std::vector<Placed> layout;
  for (int64_t k = 0; k < numBlocks(parts); ++k) {
    if (partial && pick(0, 3) == 0)
      continue;
    std::vector<int64_t> index = delinearize(k, parts);
    Box box;
    for (size_t d = 0; d < shape.size(); ++d) {
      Range r = blockRange(shape[d], parts[d], index[d]);
      box.begin.push_back(r.offset);
      box.end.push_back(r.offset + r.size);
    }
    layout.push_back({pick(0, devices - 1), box});
  }
  return layout;
}

bool inside(const Box &b, const std::vector<int64_t> &point) {
  for (size_t d = 0; d < point.size(); ++d)
    if (point[d] < b.begin[d] || point[d] >= b.end[d])
      return false;
  return true;
}

} // namespace

TEST(Exchange, RepartitionDeliversEveryNeededRegionExactlyOnce) {
  std::mt19937 rng(11);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 600; ++trial) {
    std::vector<int64_t> shape;
    for (int64_t d = pick(1, 3); d > 0; --d)
      shape.push_back(pick(1, 9));
    int64_t devices = pick(1, 16);
    std::vector<Placed> holds =
        randomLayout(rng, shape, devices, trial % 4 == 0);
    std::vector<Placed> needs = randomLayout(rng, shape, devices, false);
    std::vector<Movement> moves = repartition(holds, needs, 2);
    double bytes = 0;
    for (const Movement &m : moves) {
      bytes += m.bytes;
      EXPECT_NE(m.from, m.to);
      EXPECT_EQ(m.bytes, double(m.region.volume() * 2));
    }
    EXPECT_EQ(bytes, planner::movedBytes(holds, needs, 2)) << "trial " << trial;
    // Element by element: each element of a need that some hold has arrives
    // exactly once (already there, or by one movement to the need's GPU);
    // the others not at all; no movement carries anything unneeded.
    for (const Placed &need : needs) {
      std::vector<int64_t> point(need.box.begin);
      for (int64_t e = 0; e < need.box.volume(); ++e) {
        int64_t rest = e;
        for (size_t d = shape.size(); d-- > 0;) {
          int64_t extent = need.box.end[d] - need.box.begin[d];
          point[d] = need.box.begin[d] + rest % extent;
          rest /= extent;
        }
        int held = 0, local = 0, delivered = 0;
        for (const Placed &h : holds)
          if (inside(h.box, point)) {
            ++held;
            local += h.device == need.device;
          }
        for (const Movement &m : moves)
          delivered += m.to == need.device && inside(m.region, point);
        ASSERT_LE(held, 1); // canonical holds are disjoint
        ASSERT_EQ(local + delivered, held)
            << "trial " << trial << ", an element delivered " << delivered
            << " times";
      }
    }
    for (const Movement &m : moves) {
      // The region lies inside a need of its destination.
      bool within = false;
      for (const Placed &need : needs) {
        if (need.device != m.to)
          continue;
        bool all = true;
        for (size_t d = 0; d < shape.size(); ++d)
          all &= m.region.begin[d] >= need.box.begin[d] &&
                 m.region.end[d] <= need.box.end[d];
        within |= all;
      }
      EXPECT_TRUE(within) << "trial " << trial;
    }
  }
}

namespace {

/// The plan's proxy terms summed over its ops.
void expectProgramMatchesProxy(const planner::Graph &g,
                               const planner::SearchOptions &o,
                               const std::string &what) {
  planner::Plan plan = planner::search(g, o);
  ASSERT_TRUE(plan.feasible) << what << ": " << plan.error;
  DeviceProgram program = naiveProgram(g, plan, o);
  double repartitionBytes = 0, join = 0, aggregation = 0;
  for (const planner::OpCost &c : plan.costs) {
    repartitionBytes += c.repartition;
    join += c.join;
    aggregation += c.aggregation;
  }
  EXPECT_EQ(program.bytes[Movement::Repartition], repartitionBytes) << what;
  EXPECT_EQ(program.bytes[Movement::Join], join) << what;
  EXPECT_EQ(program.bytes[Movement::Aggregate], aggregation) << what;
  // Well formed: dependencies point back, transfers cross GPUs, and the
  // simulator's link bytes add up to the movements' bytes.
  double moved = 0;
  for (size_t t = 0; t < program.tasks.size(); ++t) {
    for (int d : program.tasks[t].deps)
      EXPECT_LT(d, static_cast<int>(t));
    if (program.tasks[t].kind == Task::Transfer) {
      EXPECT_NE(program.tasks[t].from, program.tasks[t].to);
      moved += program.tasks[t].bytes;
    }
  }
  // The structure the IR lowering reads: every need is exactly its pieces,
  // one kernel per join block, one aggregation per output block.
  ASSERT_EQ(program.ops.size(), g.ops.size());
  for (size_t op = 0; op < g.ops.size(); ++op) {
    const OpProgram &p = program.ops[op];
    EXPECT_EQ(p.kernels.size(), size_t(numBlocks(plan.specs[op]))) << what;
    for (const OpProgram::Need &need : p.needs) {
      int64_t covered = 0;
      for (const OpProgram::Piece &piece : need.pieces) {
        covered += piece.region.volume();
        EXPECT_EQ(piece.movement < 0, piece.from == need.device) << what;
      }
      EXPECT_EQ(covered, need.box.volume()) << what;
    }
    int64_t outputs = 0;
    for (const OpProgram::Aggregation &a : p.aggregations)
      outputs += a.box.volume();
    int64_t elements = 1;
    for (int64_t d : g.values[g.ops[op].output.value].shape)
      elements *= d;
    EXPECT_EQ(outputs, elements) << what;
  }
  Topology topology = make("nvswitch", o.devices);
  SimResult r = simulate(topology, program.tasks);
  EXPECT_GT(r.seconds, 0) << what;
  double carried = 0;
  for (size_t l = 0; l < topology.links.size(); l += 2) // every route's .out
    carried += r.linkBytes[l];
  EXPECT_NEAR(carried, moved, 1e-6 * std::max(1.0, moved)) << what;
  for (size_t t = 0; t < program.tasks.size(); ++t)
    EXPECT_GE(r.end[t], r.start[t]) << what;
}

} // namespace

TEST(Exchange, ProgramBytesAreTheProxyTerms) {
  // DESIGN's worked example: the 3-D matmul on 8 GPUs moves |A| + |B| in
  // join copies and |C| in partials.
  {
    planner::Graph g;
    int a = addValue(g, "a", {64, 64}, planner::ValueKind::Activation);
    int b = addValue(g, "b", {64, 64}, planner::ValueKind::Activation);
    matmul(g, a, b, "c");
    planner::SearchOptions o;
    o.devices = 8;
    o.bytesPerFlop = 0;
    planner::Plan plan = planner::search(g, o);
    DeviceProgram program = naiveProgram(g, plan, o);
    EXPECT_EQ(plan.specs[0], (planner::Spec{2, 2, 2}));
    EXPECT_EQ(program.bytes[Movement::Join], 2.0 * 64 * 64 * 4);
    EXPECT_EQ(program.bytes[Movement::Aggregate], 64.0 * 64 * 4);
    EXPECT_EQ(program.bytes[Movement::Repartition], 0);
    expectProgramMatchesProxy(g, o, "worked example");
  }
  // Random chains, trees and DAGs, as the search's brute-force test draws
  // them, on 1 to 8 GPUs.
  std::mt19937 rng(5);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 120; ++trial) {
    planner::Graph g;
    auto size = [&] { return static_cast<int64_t>(pick(2, 12)); };
    auto kind = [&] {
      return pick(0, 1) ? planner::ValueKind::Activation
                        : planner::ValueKind::Weight;
    };
    int64_t m = size(), k = size(), n = size();
    int x = addValue(g, "x", {m, k}, kind());
    int w = addValue(g, "w", {k, n}, kind());
    int y = matmul(g, x, w, "y");
    if (trial % 3 == 0) {
      int v = addValue(g, "v", {n, size()}, kind());
      matmul(g, y, v, "z");
    } else if (trial % 3 == 1) {
      int u = addValue(g, "u", {m, n}, planner::ValueKind::Activation);
      elementwise(g, {y, elementwise(g, {u}, "r")}, "sum");
    } else {
      elementwise(g, {y, elementwise(g, {y}, "r")}, "sum");
    }
    planner::SearchOptions o;
    o.devices = pick(1, 8);
    o.weightsReplicable = pick(0, 1);
    o.bytesPerFlop = pick(0, 1) ? 0.0 : 0.5;
    if (!planner::search(g, o).feasible)
      continue;
    expectProgramMatchesProxy(g, o, "trial " + std::to_string(trial));
  }
  // Attention: collapsed head dimensions and causal work.
  planner::Graph attention = attentionGraph(8, 2, 64);
  for (int64_t devices : {2, 4, 8}) {
    planner::SearchOptions o;
    o.devices = devices;
    expectProgramMatchesProxy(attention, o,
                              "attention on " + std::to_string(devices));
  }
}

namespace {

/// A bushy chain (A B)(C D) of n x n activations.
planner::Graph bushy(int64_t n) {
  planner::Graph g;
  int a = addValue(g, "a", {n, n}, planner::ValueKind::Activation);
  int b = addValue(g, "b", {n, n}, planner::ValueKind::Activation);
  int c = addValue(g, "c", {n, n}, planner::ValueKind::Activation);
  int d = addValue(g, "d", {n, n}, planner::ValueKind::Activation);
  matmul(g, matmul(g, a, b, "ab"), matmul(g, c, d, "cd"), "abcd");
  return g;
}

/// ((a b) c) d with skinny and wide operands.
planner::Graph leftChain() {
  planner::Graph g;
  int a = addValue(g, "a", {4096, 1024}, planner::ValueKind::Activation);
  int b = addValue(g, "b", {1024, 2048}, planner::ValueKind::Activation);
  int c = addValue(g, "c", {2048, 1024}, planner::ValueKind::Activation);
  int d = addValue(g, "d", {1024, 2048}, planner::ValueKind::Activation);
  matmul(g, matmul(g, matmul(g, a, b, "ab"), c, "abc"), d, "abcd");
  return g;
}

} // namespace

TEST(Synthesis, TreesDeliverEveryBlockAndPartialOnce) {
  Topology cube = make("dgx1-v100", 8);
  planner::Graph g = bushy(512);
  planner::SearchOptions o;
  o.devices = 8;
  planner::Plan plan = planner::search(g, o);
  DeviceProgram synth = synthesizedProgram(g, plan, o, cube);
  for (const OpProgram &op : synth.ops) {
    // Multicast: every reader but the first receives once, from one that
    // already has the block.
    std::map<std::pair<int, BoxKeyForTest>, std::set<int64_t>> has;
    for (const OpProgram::Need &n : op.needs)
      has[{n.input, {n.box.begin, n.box.end}}].insert(n.device);
    for (const OpProgram::Copy &c : op.copies) {
      auto &holders = has[{c.input, {c.box.begin, c.box.end}}];
      EXPECT_TRUE(holders.count(c.from)) << "sender lacks the block";
      EXPECT_TRUE(holders.insert(c.to).second) << "received twice";
    }
    // Aggregation: each producer but the owner sends its partial once,
    // after which it neither sends nor receives; the owner receives last.
    for (const OpProgram::Aggregation &a : op.aggregations) {
      std::set<int64_t> done;
      for (auto [sender, receiver] : a.steps) {
        EXPECT_FALSE(done.count(sender));
        EXPECT_FALSE(done.count(receiver));
        done.insert(sender);
      }
      EXPECT_EQ(done.size(), a.producers.size() - 1);
      EXPECT_FALSE(done.count(a.producers[0]));
      if (!a.steps.empty()) {
        EXPECT_EQ(a.steps.back().second, a.producers[0]);
      }
    }
  }
  // Every hop crosses a route the machine has.
  for (const Task &t : synth.tasks)
    if (t.kind == Task::Transfer) {
      ASSERT_NE(t.from, t.to);
      EXPECT_FALSE(cube.route(t.from, t.to).links.empty());
    }
}

TEST(Synthesis, RelaysWhereNoLinkIsFaster) {
  // GPUs 0 and 5 of the cube-mesh share no NVLink: 64 MiB go through a GPU
  // linked to both (1 or 4) instead of PCIe and QPI.
  Topology cube = make("dgx1-v100", 8);
  planner::Graph g;
  int x = addValue(g, "x", {8, 1 << 21}, planner::ValueKind::Activation);
  elementwise(g, {x}, "y");
  planner::Plan plan;
  plan.feasible = true;
  plan.specs = {{8, 1}};
  plan.layouts.resize(g.values.size());
  // x arrives whole on GPU 5; the join's block on GPU 0 needs row 0.
  plan.layouts[x] = {{5, Box{{0, 0}, {8, 1 << 21}}}};
  planner::Options o;
  o.devices = 8;
  plan.layouts[1] = planner::planOp(g, g.ops[0], plan.specs[0], o).holds;
  DeviceProgram synth = synthesizedProgram(g, plan, o, cube);
  bool relayed = false;
  for (const Movement &m : synth.movements)
    if (m.from == 5 && m.to == 0) {
      ASSERT_EQ(m.via.size(), 1u);
      EXPECT_TRUE(m.via[0] == 1 || m.via[0] == 4) << m.via[0];
      relayed = true;
    }
  EXPECT_TRUE(relayed);
  EXPECT_LT(simulate(cube, synth.tasks).seconds,
            simulate(cube, naiveProgram(g, plan, o).tasks).seconds);
}

TEST(Synthesis, AllToAllReceiversStartWithDifferentSenders) {
  // x arrives cut by rows (row block i on GPU i) and is read cut by
  // columns: every GPU needs a 1 MiB piece from each of the 7 others. Each
  // receiver's transfers run one after another, so GPU d pulls from d + 1
  // first, then d + 2, ...: every round uses every GPU's outgoing link once.
  // In source order (the naive program's) every receiver pulls from GPU 0
  // first, and 7 transfers share GPU 0's link while the others idle.
  Topology nvswitch = make("nvswitch", 8);
  const int64_t columns = 8 * 262144;
  planner::Graph g;
  int x = addValue(g, "x", {8, columns}, planner::ValueKind::Activation);
  elementwise(g, {x}, "y");
  planner::Plan plan;
  plan.feasible = true;
  plan.specs = {{1, 8}};
  plan.layouts.resize(g.values.size());
  for (int64_t i = 0; i < 8; ++i)
    plan.layouts[x].push_back({i, Box{{i, 0}, {i + 1, columns}}});
  planner::Options o;
  o.devices = 8;
  plan.layouts[1] = planner::planOp(g, g.ops[0], plan.specs[0], o).holds;
  DeviceProgram synth = synthesizedProgram(g, plan, o, nvswitch);
  std::map<int64_t, std::vector<int64_t>> sendersOf;
  for (const Task &t : synth.tasks)
    if (t.kind == Task::Transfer)
      sendersOf[t.to].push_back(t.from);
  ASSERT_EQ(sendersOf.size(), 8u);
  for (auto &[to, senders] : sendersOf) {
    ASSERT_EQ(senders.size(), 7u) << "GPU " << to;
    for (int64_t r = 0; r < 7; ++r)
      EXPECT_EQ(senders[r], (to + 1 + r) % 8) << "GPU " << to << " round " << r;
  }
  // 7 rounds of one 1 MiB piece per link, each with its latency.
  double piece = 4.0 * 262144, round = 8e-6 + piece / 395e9;
  double rotated = simulate(nvswitch, synth.tasks).seconds;
  EXPECT_LT(rotated, 7 * round * 1.1);
  EXPECT_LT(rotated,
            0.6 * simulate(nvswitch, naiveProgram(g, plan, o).tasks).seconds);
}

TEST(Synthesis, NeverSlowerOnBushyChainsOnTheCubeMesh) {
  Topology cube = make("dgx1-v100", 8);
  for (int64_t n : {1024, 4096, 8192}) {
    planner::Graph g = bushy(n);
    planner::SearchOptions o;
    o.devices = 8;
    planner::Plan plan = planner::search(g, o);
    double naive = simulate(cube, naiveProgram(g, plan, o).tasks).seconds;
    double synth =
        simulate(cube, synthesizedProgram(g, plan, o, cube).tasks).seconds;
    // Without a placement search the trees gain little on this plan (the
    // paper's 1.41x comes with placement, issue 8); never losing is what
    // synthesis alone guarantees, and bestProgram keeps the faster.
    EXPECT_LE(synth, naive) << "n = " << n;
    bool chose = false;
    DeviceProgram best = bestProgram(g, plan, o, cube, chose);
    EXPECT_EQ(simulate(cube, best.tasks).seconds, std::min(naive, synth));
    EXPECT_EQ(chose, synth < naive);
  }
}

namespace {

/// Pearson's correlation of two equally long series.
double pearson(const std::vector<double> &x, const std::vector<double> &y) {
  double n = double(x.size()), mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    mx += x[i] / n;
    my += y[i] / n;
  }
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

/// A plan with the given specs: results where their joins leave them, a
/// charged argument as its first reader needs it (as the lowering does),
/// and the proxy's total bytes (join, aggregation, repartition) for it.
planner::Plan planWith(const planner::Graph &g,
                       const std::vector<planner::Spec> &specs,
                       const planner::Options &o, double &proxyBytes) {
  planner::Plan plan;
  plan.feasible = true;
  plan.specs = specs;
  plan.layouts.resize(g.values.size());
  proxyBytes = 0;
  std::vector<planner::OpPlan> plans;
  for (size_t op = 0; op < g.ops.size(); ++op) {
    plans.push_back(planner::planOp(g, g.ops[op], specs[op], o));
    plan.layouts[g.ops[op].output.value] = plans.back().holds;
    for (size_t i = 0; i < g.ops[op].inputs.size(); ++i) {
      int v = g.ops[op].inputs[i].value;
      if (g.values[v].kind == planner::ValueKind::Activation &&
          plan.layouts[v].empty())
        plan.layouts[v] = plans.back().needs[i];
    }
  }
  for (size_t op = 0; op < g.ops.size(); ++op) {
    for (double b : plans[op].joinBytes)
      proxyBytes += b;
    proxyBytes += plans[op].aggBytes;
    std::set<int> seen;
    for (size_t i = 0; i < g.ops[op].inputs.size(); ++i) {
      int v = g.ops[op].inputs[i].value;
      if (g.values[v].kind == planner::ValueKind::Weight ||
          !seen.insert(v).second)
        continue;
      proxyBytes += planner::movedBytes(plan.layouts[v], plans[op].needs[i],
                                        g.values[v].elementBytes);
    }
  }
  return plan;
}

} // namespace

TEST(Synthesis, ProxyTracksSimulatedTime) {
  // Random legal plans (and the search's) of a bushy chain, a four-matrix
  // chain and GQA attention on 8 GPUs: the byte proxy against the simulated
  // step of their naive programs, on NVSwitch and on the cube-mesh.
  std::vector<planner::Graph> graphs = {bushy(2048), leftChain(),
                                        attentionGraph(32, 8, 2048)};
  std::mt19937 rng(17);
  for (const char *name : {"nvswitch", "dgx1-v100"}) {
    Topology topology = make(name, 8);
    std::vector<double> proxy, simulated;
    for (const planner::Graph &g : graphs) {
      planner::SearchOptions o;
      o.devices = 8;
      o.bytesPerFlop = 0;
      std::vector<std::vector<planner::Spec>> legal;
      for (const planner::Op &op : g.ops)
        legal.push_back(planner::enumerateSpecs(op, 8));
      for (int trial = 0; trial <= 10; ++trial) {
        std::vector<planner::Spec> specs;
        if (trial == 0)
          specs = planner::search(g, o).specs;
        else
          for (const auto &choices : legal)
            specs.push_back(choices[std::uniform_int_distribution<size_t>(
                0, choices.size() - 1)(rng)]);
        double bytes = 0;
        planner::Plan plan = planWith(g, specs, o, bytes);
        proxy.push_back(bytes);
        simulated.push_back(
            simulate(topology, naiveProgram(g, plan, o).tasks).seconds);
      }
    }
    double r = pearson(proxy, simulated);
    std::printf("[ proxy vs simulated ] %s: %zu plans, Pearson r = %.3f\n",
                name, proxy.size(), r);
    EXPECT_GE(proxy.size(), 20u);
    // The paper reports 0.72 to 0.92 against measured times.
    EXPECT_GT(r, 0.6) << name;
  }
}

TEST(Simulator, LongStepsEndAndStallsAreReported) {
  // A big stream late in a long step still finishes (no endless zero-width
  // steps), and a transfer over a link of no bandwidth is reported stalled.
  Topology s = make("nvswitch", 2);
  SimResult r = simulate(s, {kernel(0, 750e15, 0), transfer(0, 1, 7e11, 1, {0}),
                             transfer(0, 1, 3, 1, {1})});
  EXPECT_FALSE(r.stalled);
  EXPECT_GT(r.end[2], r.end[1]);
  Topology broken = s;
  broken.links[broken.linkIndex("gpu1.in")].bandwidth = 0;
  SimResult stuck = simulate(broken, {transfer(0, 1, 1e6, 1)});
  EXPECT_TRUE(stuck.stalled);
  // A transfer to its own GPU moves nothing and takes no time.
  SimResult self = simulate(s, {transfer(1, 1, 1e6, 1)});
  EXPECT_FALSE(self.stalled);
  EXPECT_EQ(self.seconds, 0);
}

TEST(Placement, MinimumAssignmentIsOptimal) {
  // Against every assignment, on random matrices up to 6 x 6.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    size_t rows = 1 + rng() % 6, columns = rows + rng() % (7 - rows);
    std::vector<std::vector<int64_t>> cost(rows, std::vector<int64_t>(columns));
    for (auto &row : cost)
      for (int64_t &c : row)
        c = rng() % 20;
    std::vector<int64_t> got = minimumAssignment(cost);
    ASSERT_EQ(got.size(), rows);
    std::set<int64_t> distinct(got.begin(), got.end());
    EXPECT_EQ(distinct.size(), rows);
    int64_t total = 0;
    for (size_t r = 0; r < rows; ++r)
      total += cost[r][got[r]];
    // Brute force: every ordering of the columns, its first `rows`.
    std::vector<size_t> order(columns);
    for (size_t c = 0; c < columns; ++c)
      order[c] = c;
    int64_t best = INT64_MAX;
    do {
      int64_t sum = 0;
      for (size_t r = 0; r < rows; ++r)
        sum += cost[r][order[r]];
      best = std::min(best, sum);
    } while (std::next_permutation(order.begin(), order.end()));
    EXPECT_EQ(total, best) << "trial " << trial;
  }
}

TEST(Placement, NeverSlowerAndEveryBlockOnADistinctGpu) {
  // The search's plan and random plans of a bushy chain, a left-deep chain
  // and GQA attention on 8 GPUs, on the cube-mesh and NVSwitch: the placed
  // program is never slower than the canonical one, each op's blocks go to
  // distinct GPUs (a permutation of all 8), and what the program records
  // still covers every block (trees and needs checked as for the canonical
  // placement).
  std::vector<planner::Graph> graphs = {bushy(2048), leftChain(),
                                        attentionGraph(32, 8, 1024)};
  std::mt19937 rng(23);
  int faster = 0, plans = 0;
  for (const char *name : {"dgx1-v100", "nvswitch"}) {
    Topology topology = make(name, 8);
    for (const planner::Graph &g : graphs) {
      planner::SearchOptions o;
      o.devices = 8;
      std::vector<std::vector<planner::Spec>> legal;
      for (const planner::Op &op : g.ops)
        legal.push_back(planner::enumerateSpecs(op, 8));
      for (int trial = 0; trial <= 6; ++trial) {
        std::vector<planner::Spec> specs;
        if (trial == 0)
          specs = planner::search(g, o).specs;
        else
          for (const auto &choices : legal)
            specs.push_back(choices[rng() % choices.size()]);
        double bytes = 0;
        planner::Plan plan = planWith(g, specs, o, bytes);
        for (bool synthesized : {false, true}) {
          Placement p = searchPlacement(g, plan, o, topology, {}, synthesized);
          ASSERT_EQ(p.device.size(), g.ops.size());
          for (const std::vector<int64_t> &op : p.device) {
            if (op.empty())
              continue;
            std::set<int64_t> gpus(op.begin(), op.end());
            EXPECT_EQ(op.size(), 8u);
            EXPECT_EQ(gpus.size(), 8u);
          }
          auto program = [&](const Placement &placement) {
            return synthesized
                       ? synthesizedProgram(g, plan, o, topology, placement)
                       : naiveProgram(g, plan, o, placement);
          };
          double canonical = simulate(topology, program({}).tasks).seconds;
          DeviceProgram placed = program(p);
          double time = simulate(topology, placed.tasks).seconds;
          EXPECT_LE(time, canonical) << name << " trial " << trial;
          ++plans;
          faster += time < canonical * (1 - 1e-9);
          // Kernels run where the placement says, one block per GPU.
          for (size_t op = 0; op < placed.ops.size(); ++op) {
            std::set<int64_t> gpus;
            for (const OpProgram::Kernel &k : placed.ops[op].kernels)
              EXPECT_TRUE(gpus.insert(k.device).second);
          }
          // The moved partials are the proxy's aggregation term whatever
          // the placement (which changes where they go, not what a join
          // reads), scattered or not; so are the join copies of a naive
          // program (a synthesized one gathers and reuses blocks where the
          // placement lets it, which moves fewer).
          if (p.placedOps() == 0)
            continue;
          DeviceProgram before = program({});
          if (!synthesized) {
            EXPECT_DOUBLE_EQ(placed.bytes[Movement::Join],
                             before.bytes[Movement::Join]);
          }
          EXPECT_DOUBLE_EQ(placed.bytes[Movement::Aggregate],
                           before.bytes[Movement::Aggregate]);
        }
      }
    }
  }
  std::printf("[ placement ] %d of %d plans simulate faster placed\n", faster,
              plans);
  EXPECT_GT(faster, 0);
}

TEST(Placement, TiedLayoutsStayCanonical) {
  // A block tied to its input: the ops that fix the argument's and the
  // result's layouts keep the canonical placement; the rest may move.
  planner::Graph g;
  int x = addValue(g, "x", {2048, 2048}, planner::ValueKind::Activation);
  int w = addValue(g, "w", {2048, 2048}, planner::ValueKind::Activation);
  int y = matmul(g, x, w, "xw");
  int z = matmul(g, y, w, "yw");
  int out = elementwise(g, {z, x}, "out");
  g.results = {out};
  g.ties = {{x, out}};
  planner::Options o;
  o.devices = 8;
  std::vector<bool> keep = opsKeptForTies(g, o);
  ASSERT_EQ(keep.size(), 3u);
  EXPECT_TRUE(keep[0]);  // first reader of x (and of w)
  EXPECT_FALSE(keep[1]); // interior
  EXPECT_TRUE(keep[2]);  // producer of the tied result
  Topology cube = make("dgx1-v100", 8);
  planner::SearchOptions so;
  so.devices = 8;
  planner::Plan plan = planner::search(g, so);
  for (bool synthesized : {false, true}) {
    Placement p = searchPlacement(g, plan, o, cube, keep, synthesized);
    for (size_t op : {size_t(0), size_t(2)})
      for (int64_t j = 0; j < 8; ++j)
        EXPECT_EQ(p.of(op, j), j);
    // The result and x stay where the canonical plan has them.
    planner::Plan placed = placedPlan(g, plan, p);
    for (int v : {x, out})
      for (size_t b = 0; b < plan.layouts[v].size(); ++b)
        EXPECT_EQ(placed.layouts[v][b].device, plan.layouts[v][b].device);
  }
}

TEST(Synthesis, PerOpFormsAreNeverSlowerThanEitherUniformForm) {
  // mixedProgram with every op one way is that uniform program; the chosen
  // mix, with its placement, simulates no slower than the better uniform
  // form under the same placement.
  for (const char *name : {"dgx1-v100", "nvswitch"}) {
    Topology topology = make(name, 8);
    for (const planner::Graph &g :
         {bushy(1024), leftChain(), attentionGraph(32, 8, 1024)}) {
      planner::SearchOptions o;
      o.devices = 8;
      planner::Plan plan = planner::search(g, o);
      std::vector<bool> all(g.ops.size(), true), none(g.ops.size(), false);
      EXPECT_EQ(
          simulate(topology, mixedProgram(g, plan, o, topology, {}, all).tasks)
              .seconds,
          simulate(topology, synthesizedProgram(g, plan, o, topology).tasks)
              .seconds);
      EXPECT_EQ(
          simulate(topology, mixedProgram(g, plan, o, topology, {}, none).tasks)
              .seconds,
          simulate(topology, naiveProgram(g, plan, o).tasks).seconds);
      ProgramChoice choice;
      DeviceProgram chosen =
          placedBestProgram(g, plan, o, topology, {}, choice);
      const std::vector<bool> &forms = choice.synthesizedOps;
      const Placement &placement = choice.placement;
      ASSERT_EQ(forms.size(), g.ops.size());
      double mixed = simulate(topology, chosen.tasks).seconds;
      double uniform = std::min(
          simulate(topology, naiveProgram(g, plan, o, placement).tasks).seconds,
          simulate(topology,
                   synthesizedProgram(g, plan, o, topology, placement).tasks)
              .seconds);
      EXPECT_LE(mixed, uniform) << name;
      EXPECT_EQ(
          mixed,
          simulate(topology,
                   mixedProgram(g, plan, o, topology, placement, forms).tasks)
              .seconds);
    }
  }
}

// A concat the function returns and no op reads (a chunked plan's chunks
// put back whole) is left in its inputs' blocks: its layout is theirs,
// shifted into it, and nothing moves, whatever its own spec. Read by an op,
// it is built as any op.
TEST(Synthesis, AReturnedConcatStaysInItsInputsBlocks) {
  planner::Graph g;
  int x = addValue(g, "x", {4, 8}, planner::ValueKind::Activation);
  int a = elementwise(g, {x}, "a");
  int b = elementwise(g, {x}, "b");
  int r = addValue(g, "r", {8, 8});
  planner::Op concat;
  concat.name = "concat";
  concat.loopSizes = {8, 8};
  concat.loopNames = {"d0", "d1"};
  concat.cuttable = {true, true};
  concat.inputs = {access(a, {{0}, {1}}), access(b, {{0}, {1}})};
  concat.inputs[0].shift = {0, 0};
  concat.inputs[1].shift = {-4, 0};
  concat.output = access(r, {{0}, {1}});
  concat.kernel = planner::KernelKind::Touch;
  g.ops.push_back(concat);
  g.results = {r};
  planner::SearchOptions o;
  o.devices = 2;
  // a and b cut by rows over both GPUs; the concat's own blocks (rows 0-3
  // on GPU 0, 4-7 on GPU 1) would need half of each moved.
  planner::Plan plan = planner::evaluate(g, {{2, 1}, {2, 1}, {2, 1}}, o);
  ASSERT_TRUE(plan.feasible) << plan.error;
  DeviceProgram program = naiveProgram(g, plan, o);
  ASSERT_EQ(program.ops[2].kept.size(), 4u);
  EXPECT_TRUE(program.ops[2].kernels.empty());
  std::vector<std::pair<int64_t, int64_t>> layout; // (row, GPU)
  for (const Placed &p : program.layouts[r])
    layout.push_back({p.box.begin[0], p.device});
  std::sort(layout.begin(), layout.end());
  EXPECT_EQ(layout, (std::vector<std::pair<int64_t, int64_t>>{
                        {0, 0}, {2, 1}, {4, 0}, {6, 1}}));
  EXPECT_EQ(program.ops[2].kept[2].value, b);
  EXPECT_EQ(program.ops[2].kept[2].box.begin, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(program.ops[2].kept[2].result.box.begin,
            (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(program.bytes[Movement::Repartition], 0);
  for (const Task &t : program.tasks)
    EXPECT_NE(t.kind, Task::Transfer);

  // Read by another op, the concat is built as planned: its blocks move.
  planner::Graph read = g;
  int doubled = elementwise(read, {r}, "doubled");
  read.results = {doubled};
  planner::Plan readPlan =
      planner::evaluate(read, {{2, 1}, {2, 1}, {2, 1}, {2, 1}}, o);
  ASSERT_TRUE(readPlan.feasible) << readPlan.error;
  DeviceProgram built = naiveProgram(read, readPlan, o);
  EXPECT_TRUE(built.ops[2].kept.empty());
  EXPECT_EQ(built.ops[2].kernels.size(), 2u);
  EXPECT_GT(built.bytes[Movement::Repartition], 0);
}

// A slice or concat runs no kernel where each input's region is a run of
// its block's rows, and copies the others' bytes.
TEST(Synthesis, TouchOpsCopyOnlyWhatIsNoRunOfRows) {
  planner::Graph g;
  int x = addValue(g, "x", {8, 8}, planner::ValueKind::Activation);
  int y = addValue(g, "y", {8, 4});
  planner::Op slice;
  slice.name = "slice";
  slice.loopSizes = {8, 4};
  slice.loopNames = {"d0", "d1"};
  slice.cuttable = {true, true};
  slice.inputs = {access(x, {{0}, {1}})};
  slice.inputs[0].shift = {0, 4};
  slice.output = access(y, {{0}, {1}});
  slice.kernel = planner::KernelKind::Touch;
  g.ops.push_back(slice);
  g.results = {y};
  // Its block is the region it reads, whole: no kernel runs.
  EXPECT_EQ(planner::blockSeconds(g, slice, {1, 1}, {0, 0}), 0);
  EXPECT_EQ(planner::blockSeconds(g, slice, {2, 1}, {1, 0}), 0);
  // A concat of two column halves: neither is a run of the block's rows.
  planner::Graph h;
  int left = addValue(h, "left", {8, 4}, planner::ValueKind::Activation);
  int right = addValue(h, "right", {8, 4}, planner::ValueKind::Activation);
  int both = addValue(h, "both", {8, 8});
  planner::Op columns = slice;
  columns.name = "columns";
  columns.loopSizes = {8, 8};
  columns.inputs = {access(left, {{0}, {1}}), access(right, {{0}, {1}})};
  columns.inputs[0].shift = {0, 0};
  columns.inputs[1].shift = {0, -4};
  columns.output = access(both, {{0}, {1}});
  h.ops.push_back(columns);
  double copy = planner::blockSeconds(h, columns, {1, 1}, {0, 0});
  EXPECT_GT(copy, 0);
  // Cut by columns, each block is one input's region whole: no copy.
  EXPECT_EQ(planner::blockSeconds(h, columns, {1, 2}, {0, 1}), 0);
  // The same halves stacked as rows are runs of the rows.
  planner::Op rows = columns;
  rows.loopSizes = {16, 4};
  rows.inputs[1].shift = {-8, 0};
  rows.output = access(addValue(h, "stacked", {16, 4}), {{0}, {1}});
  EXPECT_EQ(planner::blockSeconds(h, rows, {1, 1}, {0, 0}), 0);
}

TEST(Synthesis, WeightsEveryGpuReadsWholeArriveSplit) {
  // x [256, 1024] @ w [1024, 1024] (4 MiB) with the rows of x cut over 4
  // GPUs: every block reads w whole. Weights that move with the plan lay w
  // out in four pieces of its rows, one per block; replicable weights, and
  // weights under 1 MiB (s, 512 KiB), are left alone.
  planner::Graph g;
  int x = addValue(g, "x", {256, 1024}, planner::ValueKind::Activation);
  int w = addValue(g, "w", {1024, 1024}, planner::ValueKind::Weight);
  int small = addValue(g, "s", {1024, 128}, planner::ValueKind::Weight);
  int y = matmul(g, x, w, "y");
  matmul(g, y, small, "z");
  g.results = {static_cast<int>(g.values.size()) - 1};
  planner::SearchOptions o;
  o.devices = 4;
  o.weightsReplicable = false;
  planner::Plan plan = planner::evaluate(g, {{4, 1, 1}, {4, 1, 1}}, o);
  ASSERT_TRUE(plan.feasible) << plan.error;
  std::map<int, std::vector<planner::Placed>> homes =
      splitWeightHomes(g, plan, o);
  ASSERT_EQ(homes.size(), 1u);
  ASSERT_EQ(homes.count(w), 1u);
  ASSERT_EQ(homes[w].size(), 4u);
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_EQ(homes[w][j].device, j);
    EXPECT_EQ(homes[w][j].box.begin, (std::vector<int64_t>{256 * j, 0}));
    EXPECT_EQ(homes[w][j].box.end, (std::vector<int64_t>{256 * (j + 1), 1024}));
  }
  planner::SearchOptions replicable = o;
  replicable.weightsReplicable = true;
  EXPECT_TRUE(splitWeightHomes(g, plan, replicable).empty());
  // On 4 NVSwitch GPUs the split program is kept: each GPU gathers three
  // quarters from the three others at once, faster than GPU 0 sending all
  // of w to each; the program's layout of w says so, and the same bytes
  // move.
  Topology topology = make("nvswitch", 4);
  ProgramChoice choice;
  DeviceProgram chosen = placedBestProgram(g, plan, o, topology, {}, choice);
  EXPECT_EQ(chosen.layouts[w].size(), 4u);
  DeviceProgram wholeProgram = naiveProgram(g, plan, o);
  EXPECT_LT(simulate(topology, chosen.tasks).seconds,
            simulate(topology, wholeProgram.tasks).seconds);
  auto bytesOfW = [&](const DeviceProgram &p) {
    double bytes = 0;
    for (const Movement &m : p.movements)
      if (m.value == w)
        bytes += m.bytes;
    return bytes;
  };
  EXPECT_EQ(bytesOfW(chosen), 3.0 * 1024 * 1024 * 4);
  EXPECT_EQ(bytesOfW(wholeProgram), 3.0 * 1024 * 1024 * 4);
}

TEST(Synthesis, GathersReusesAndScattersWhereTheNextOpReads) {
  // y = x + ((x*x W1) * (x*x W3)) W2 on 2 GPUs, weights split as Megatron
  // splits them: the squares in row halves, read whole by both GPUs twice;
  // the last product's partials read in row halves by the add.
  planner::Graph g;
  int x = addValue(g, "x", {64, 128}, planner::ValueKind::Activation);
  int w1 = addValue(g, "w1", {128, 256}, planner::ValueKind::Weight);
  int w3 = addValue(g, "w3", {128, 256}, planner::ValueKind::Weight);
  int w2 = addValue(g, "w2", {256, 128}, planner::ValueKind::Weight);
  int sq = elementwise(g, {x}, "sq");
  int h = elementwise(g, {matmul(g, sq, w1, "g"), matmul(g, sq, w3, "u")}, "h");
  int o = matmul(g, h, w2, "o");
  g.results = {elementwise(g, {x, o}, "y")};
  planner::Options opts;
  opts.devices = 2;
  double proxy = 0;
  planner::Plan plan =
      planWith(g, {{2, 1}, {1, 1, 2}, {1, 1, 2}, {1, 2}, {1, 2, 1}, {2, 1}},
               opts, proxy);
  Topology t = make("nvswitch", 2);
  DeviceProgram naive = naiveProgram(g, plan, opts);
  DeviceProgram synth = synthesizedProgram(g, plan, opts, t);
  auto movedFor = [](const DeviceProgram &p, int op) {
    double bytes = 0;
    for (const Movement &m : p.movements)
      bytes += m.op == op ? m.bytes : 0;
    return bytes;
  };
  double half = 32 * 128 * 4;
  // All-gather: each GPU assembles the whole from its half and the other's;
  // naive assembles on GPU 0 and copies the whole to GPU 1.
  ASSERT_EQ(synth.ops[1].needs.size(), 2u);
  EXPECT_TRUE(synth.ops[1].copies.empty());
  EXPECT_EQ(movedFor(synth, 1), 2 * half);
  EXPECT_EQ(movedFor(naive, 1), 3 * half);
  // Reuse: the second product reads the same blocks where they are (its
  // canonical need marked reused, no copy to the other reader).
  ASSERT_EQ(synth.ops[2].needs.size(), 1u);
  EXPECT_TRUE(synth.ops[2].needs[0].reused);
  EXPECT_TRUE(synth.ops[2].copies.empty());
  EXPECT_EQ(movedFor(synth, 2), 0);
  EXPECT_EQ(movedFor(naive, 2), 3 * half);
  // Reduce-scatter: a row half aggregated on each GPU, one partial half
  // each way; the halves are where the program leaves o.
  ASSERT_EQ(synth.ops[4].aggregations.size(), 1u);
  const OpProgram::Aggregation &a = synth.ops[4].aggregations[0];
  ASSERT_EQ(a.pieces.size(), 2u);
  EXPECT_TRUE(a.steps.empty());
  for (size_t p = 0; p < 2; ++p) {
    EXPECT_EQ(a.pieces[p].device, int64_t(p));
    EXPECT_EQ(a.pieces[p].box.begin[0], 32 * int64_t(p));
    ASSERT_EQ(a.pieceSends[p].size(), 1u);
    EXPECT_EQ(a.pieceSends[p][0].first, 1 - int64_t(p));
  }
  ASSERT_EQ(synth.layouts[o].size(), 2u);
  EXPECT_EQ(naive.layouts[o].size(), 1u);
  EXPECT_EQ(synth.bytes[Movement::Aggregate], naive.bytes[Movement::Aggregate]);
  // ... and the add then moves nothing, where naive sends a half back.
  EXPECT_EQ(movedFor(synth, 5), 0);
  EXPECT_EQ(movedFor(naive, 5), half);
  EXPECT_LT(simulate(t, synth.tasks).seconds, simulate(t, naive.tasks).seconds);
}

namespace {

bool containsBox(const Box &outer, const Box &inner) {
  for (size_t d = 0; d < inner.begin.size(); ++d)
    if (inner.begin[d] < outer.begin[d] || inner.end[d] > outer.end[d])
      return false;
  return true;
}

/// Replays `p` op by op, in program order (the order the lowering writes
/// the IR in, whose SSA edges order the bundle; the tasks' deps only time
/// the simulation), and checks that every block a kernel reads is on its
/// GPU by then: held there, assembled there from pieces that tile it (each
/// moved piece by a movement from where the piece is to there), copied
/// there from a GPU that had it, or reused where an earlier op put it; and
/// that every output block's partials are aggregated exactly once over,
/// whole at its owner or piece by piece where the layout says.
void expectDelivered(const planner::Graph &g, const planner::Plan &plan,
                     const planner::Options &o, const DeviceProgram &p,
                     const std::string &what) {
  SCOPED_TRACE(what);
  using Key = std::tuple<int, int64_t, BoxKeyForTest>;
  std::set<Key> have;
  std::vector<std::vector<Placed>> holds(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].kind != planner::ValueKind::Intermediate)
      holds[v] = plan.layouts[v];
  auto onGpu = [&](int value, int64_t device, const Box &box) {
    if (have.count({value, device, {box.begin, box.end}}))
      return true;
    for (const Placed &h : holds[value])
      if (h.device == device && containsBox(h.box, box))
        return true;
    return false;
  };
  for (size_t op = 0; op < g.ops.size(); ++op) {
    const OpProgram &r = p.ops[op];
    for (const OpProgram::Need &n : r.needs) {
      if (n.reused) {
        EXPECT_TRUE(have.count({n.value, n.device, {n.box.begin, n.box.end}}))
            << "op " << op << " reuses a block never assembled there";
        continue;
      }
      int64_t covered = 0;
      for (const OpProgram::Piece &piece : n.pieces) {
        EXPECT_TRUE(containsBox(n.box, piece.region));
        EXPECT_TRUE(onGpu(n.value, piece.from, piece.region));
        covered += piece.region.volume();
        if (piece.from == n.device)
          continue;
        ASSERT_GE(piece.movement, 0);
        const Movement &m = p.movements[piece.movement];
        EXPECT_EQ(m.from, piece.from);
        EXPECT_EQ(m.to, n.device);
      }
      EXPECT_EQ(covered, n.box.volume()) << "op " << op;
      have.insert({n.value, n.device, {n.box.begin, n.box.end}});
    }
    for (const OpProgram::Copy &c : r.copies) {
      EXPECT_TRUE(onGpu(c.value, c.from, c.box)) << "op " << op;
      have.insert({c.value, c.to, {c.box.begin, c.box.end}});
    }
    for (const OpProgram::Kernel &k : r.kernels)
      for (size_t i = 0; i < g.ops[op].inputs.size(); ++i) {
        int value = g.ops[op].inputs[i].value;
        if (k.inputs[i].volume() > 0 && movesWithPlan(g.values[value], o)) {
          EXPECT_TRUE(onGpu(value, k.device, k.inputs[i]))
              << "op " << op << " input " << i << " on GPU " << k.device;
        }
      }
    int out = g.ops[op].output.value;
    for (const OpProgram::Aggregation &a : r.aggregations) {
      if (a.pieces.empty()) {
        holds[out].push_back({a.producers[0], a.box});
        continue;
      }
      int64_t covered = 0;
      for (size_t q = 0; q < a.pieces.size(); ++q) {
        const Placed &piece = a.pieces[q];
        EXPECT_TRUE(containsBox(a.box, piece.box));
        covered += piece.box.volume();
        // The local partial and one region from every other producer.
        std::set<int64_t> from = {piece.device};
        for (auto [sender, movement] : a.pieceSends[q]) {
          EXPECT_TRUE(from.insert(sender).second);
          EXPECT_EQ(p.movements[movement].from, sender);
          EXPECT_EQ(p.movements[movement].to, piece.device);
          EXPECT_EQ(p.movements[movement].region.begin, piece.box.begin);
          EXPECT_EQ(p.movements[movement].region.end, piece.box.end);
          EXPECT_EQ(p.movements[movement].bytes,
                    double(piece.box.volume() * g.ops[op].accBytes));
        }
        EXPECT_EQ(from,
                  std::set<int64_t>(a.producers.begin(), a.producers.end()));
        holds[out].push_back(piece);
      }
      EXPECT_EQ(covered, a.box.volume());
    }
    auto boxes = [](std::vector<Placed> v) {
      std::set<std::pair<int64_t, BoxKeyForTest>> s;
      for (const Placed &h : v)
        s.insert({h.device, {h.box.begin, h.box.end}});
      return s;
    };
    EXPECT_EQ(boxes(holds[out]), boxes(p.layouts[out])) << "op " << op;
  }
}

} // namespace

TEST(Synthesis, EveryPresetDeliversOverLinksItHas) {
  // The search's plan and random legal plans of a bushy chain, a
  // four-matrix chain, GQA attention and a Megatron MLP (two uses of one
  // block, partials read in parts), synthesized (placed for the machine,
  // per-op forms) on every preset: every block a kernel reads is there when
  // it runs (expectDelivered), every hop follows a route the machine has,
  // and the step simulates to its end.
  std::vector<std::pair<std::string, int64_t>> presets = {
      {"nvswitch", 8},
      {"h200-pair", 2},
      {"dgx1-v100", 8},
      {"pcie", 6},
      {"nodes=2,gpus=4", 8}};
  planner::Graph mlp;
  {
    int x = addValue(mlp, "x", {64, 128}, planner::ValueKind::Activation);
    int w1 = addValue(mlp, "w1", {128, 256}, planner::ValueKind::Weight);
    int w2 = addValue(mlp, "w2", {256, 128}, planner::ValueKind::Weight);
    int sq = elementwise(mlp, {x}, "sq");
    int h = elementwise(
        mlp, {matmul(mlp, sq, w1, "g"), matmul(mlp, sq, w1, "u")}, "h");
    mlp.results = {elementwise(mlp, {x, matmul(mlp, h, w2, "o")}, "y")};
  }
  std::vector<planner::Graph> graphs = {bushy(256), leftChain(),
                                        attentionGraph(8, 2, 256), mlp};
  std::mt19937 rng(29);
  int scattered = 0, gathered = 0, reused = 0;
  for (auto [name, devices] : presets) {
    Topology topology = make(name, devices);
    for (size_t gi = 0; gi < graphs.size(); ++gi) {
      const planner::Graph &g = graphs[gi];
      planner::SearchOptions o;
      o.devices = devices;
      std::vector<std::vector<planner::Spec>> legal;
      for (const planner::Op &op : g.ops)
        legal.push_back(planner::enumerateSpecs(op, devices));
      for (int trial = 0; trial < 4; ++trial) {
        std::vector<planner::Spec> specs;
        if (trial == 0)
          specs = planner::search(g, o).specs;
        else
          for (const auto &choices : legal)
            specs.push_back(choices[rng() % choices.size()]);
        double bytes = 0;
        planner::Plan plan = planWith(g, specs, o, bytes);
        ProgramChoice choice;
        DeviceProgram p = placedBestProgram(g, plan, o, topology, {}, choice);
        const Placement &placement = choice.placement;
        std::string what = name + " graph " + std::to_string(gi) + " trial " +
                           std::to_string(trial);
        expectDelivered(g, placedPlan(g, plan, placement), o, p, what);
        for (const Task &t : p.tasks)
          if (t.kind == Task::Transfer) {
            ASSERT_NE(t.from, t.to) << what;
            EXPECT_FALSE(topology.route(t.from, t.to).links.empty()) << what;
          }
        EXPECT_FALSE(simulate(topology, p.tasks).stalled) << what;
        for (const OpProgram &r : p.ops) {
          for (const OpProgram::Aggregation &a : r.aggregations)
            scattered += !a.pieces.empty();
          for (const OpProgram::Need &n : r.needs)
            reused += n.reused;
          std::map<BoxKeyForTest, int> readers;
          for (const OpProgram::Need &n : r.needs)
            gathered += !n.reused && ++readers[{n.box.begin, n.box.end}] == 2;
        }
      }
    }
  }
  std::printf("[ synthesis ] %d scattered aggregations, %d gathers, %d "
              "reused blocks\n",
              scattered, gathered, reused);
  // The property covers the new forms, not only trees and relays.
  EXPECT_GT(scattered, 0);
  EXPECT_GT(gathered, 0);
  EXPECT_GT(reused, 0);
}

namespace {

/// Two 4 KiB movements of one op from GPU 0 to GPU 1, their sources made
/// by kernels 0 and 1 on GPU 0, each read by its own kernel on GPU 1 (the
/// first a long one).
DeviceProgram twoTransfers(double secondSourceFlops) {
  DeviceProgram p;
  auto kernel = [&](int64_t queue, double flops, std::vector<int> deps) {
    Task t;
    t.queue = queue;
    t.flops = flops;
    t.deps = std::move(deps);
    p.tasks.push_back(t);
    p.movementOf.push_back(-1);
  };
  auto transfer = [&](int movement, std::vector<int> deps) {
    Movement m;
    m.kind = Movement::Repartition;
    m.op = 2;
    m.from = 0;
    m.to = 1;
    m.bytes = 4096;
    m.batchable = true;
    p.movements.push_back(m);
    Task t;
    t.kind = Task::Transfer;
    t.queue = 1;
    t.from = 0;
    t.to = 1;
    t.bytes = m.bytes;
    t.deps = std::move(deps);
    p.tasks.push_back(t);
    p.movementOf.push_back(movement);
  };
  kernel(0, 1e6, {});
  kernel(0, secondSourceFlops, {0});
  transfer(0, {0});
  transfer(1, {1});
  kernel(1, 75e9, {2}); // 100 us
  kernel(1, 1e6, {3});
  p.batchOf.assign(2, -1);
  return p;
}

} // namespace

TEST(Synthesis, BatchesOnlyWhereTheStepGetsNoSlower) {
  Topology topology = make("h200-pair", 2);
  // Both sources ready together: one latency instead of two.
  DeviceProgram together = twoTransfers(1e6);
  double before = simulate(topology, together.tasks).seconds;
  batchTransfers(together, topology);
  ASSERT_EQ(together.batches.size(), 1u);
  EXPECT_EQ(together.batches[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(together.batchOf, (std::vector<int>{0, 0}));
  ASSERT_EQ(together.tasks.size(), 5u);
  const Task &batch = together.tasks[2];
  EXPECT_EQ(batch.kind, Task::Transfer);
  EXPECT_EQ(batch.bytes, 8192);
  EXPECT_EQ(batch.deps, (std::vector<int>{0, 1}));
  EXPECT_EQ(together.movementOf[2], 0);
  // Both readers now wait for the batch.
  EXPECT_EQ(together.tasks[3].deps, (std::vector<int>{2}));
  EXPECT_EQ(together.tasks[4].deps, (std::vector<int>{2}));
  double after = simulate(topology, together.tasks).seconds;
  EXPECT_LT(after, before - 0.5 * topology.route(0, 1).latency);

  // The second source comes 1 ms later: batching would hold the first
  // region, and the long kernel reading it, back that long.
  DeviceProgram apart = twoTransfers(7.5e11);
  double alone = simulate(topology, apart.tasks).seconds;
  batchTransfers(apart, topology);
  EXPECT_TRUE(apart.batches.empty());
  EXPECT_EQ(apart.tasks.size(), 6u);
  EXPECT_EQ(simulate(topology, apart.tasks).seconds, alone);
}

TEST(Synthesis, BatchedProgramsKeepEveryMovementAndDependency) {
  // The search's plans of GQA attention, a bushy chain and a four-matrix
  // chain, placed and synthesized: the program before batching (the same
  // placement and per-op forms, mixedProgram) against placedBestProgram's.
  std::vector<std::pair<std::string, int64_t>> presets = {
      {"nvswitch", 8}, {"dgx1-v100", 8}, {"h200-pair", 2}};
  std::vector<planner::Graph> graphs = {attentionGraph(8, 2, 256), bushy(256),
                                        leftChain()};
  size_t batches = 0;
  double saved = 0;
  for (auto [name, devices] : presets) {
    Topology topology = make(name, devices);
    for (size_t gi = 0; gi < graphs.size(); ++gi) {
      const planner::Graph &g = graphs[gi];
      std::string what = name + " graph " + std::to_string(gi);
      SCOPED_TRACE(what);
      planner::SearchOptions o;
      o.devices = devices;
      double bytes = 0;
      planner::Plan plan = planWith(g, planner::search(g, o).specs, o, bytes);
      ProgramChoice choice;
      DeviceProgram after = placedBestProgram(g, plan, o, topology, {}, choice);
      const std::vector<bool> &forms = choice.synthesizedOps;
      const Placement &placement = choice.placement;
      DeviceProgram before =
          mixedProgram(g, plan, o, topology, placement, forms);
      ASSERT_EQ(after.movements.size(), before.movements.size());
      for (int k = 0; k < 3; ++k)
        EXPECT_EQ(after.bytes[k], before.bytes[k]);
      double tb = simulate(topology, before.tasks).seconds,
             ta = simulate(topology, after.tasks).seconds;
      EXPECT_LE(ta, tb * (1 + 1e-9));
      saved += tb - ta;
      // Each batch: 2 to kMaxBatch batchable, direct movements of one op and
      // kind between one pair, landed by one task carrying all their bytes.
      size_t merged = 0;
      ASSERT_EQ(after.batchOf.size(), after.movements.size());
      for (size_t b = 0; b < after.batches.size(); ++b) {
        const std::vector<int> &list = after.batches[b];
        EXPECT_GE(list.size(), 2u);
        EXPECT_LE(list.size(), kMaxBatch);
        merged += list.size() - 1;
        const Movement &first = after.movements[list[0]];
        double sum = 0;
        for (int m : list) {
          const Movement &mv = after.movements[m];
          EXPECT_EQ(after.batchOf[m], int(b));
          EXPECT_TRUE(mv.batchable && mv.via.empty());
          EXPECT_EQ(
              std::make_tuple(mv.op, mv.kind, mv.from, mv.to),
              std::make_tuple(first.op, first.kind, first.from, first.to));
          sum += mv.bytes;
        }
        auto task = std::find(after.movementOf.begin(), after.movementOf.end(),
                              list[0]);
        ASSERT_NE(task, after.movementOf.end());
        const Task &t = after.tasks[task - after.movementOf.begin()];
        EXPECT_EQ(t.bytes, sum);
        EXPECT_EQ(std::make_pair(t.from, t.to),
                  std::make_pair(first.from, first.to));
      }
      batches += after.batches.size();
      EXPECT_EQ(after.tasks.size() + merged, before.tasks.size());
      // Every movement is landed by its own tasks or its batch's.
      std::vector<int> hops(after.movements.size(), 0);
      for (size_t t = 0; t < after.tasks.size(); ++t) {
        for (int d : after.tasks[t].deps)
          EXPECT_LT(d, int(t)) << "a dependency after its task";
        int m = after.movementOf[t];
        if (m < 0)
          continue;
        if (after.batchOf[m] < 0)
          ++hops[m];
        else
          for (int member : after.batches[after.batchOf[m]])
            ++hops[member];
      }
      for (size_t m = 0; m < after.movements.size(); ++m)
        EXPECT_EQ(hops[m], int(after.movements[m].via.size() + 1));
      // A task with a label of its own waits, at some remove, for every
      // movement it waited for before batching.
      auto waitedFor = [](const DeviceProgram &p) {
        std::vector<std::set<int>> reach(p.tasks.size());
        for (size_t t = 0; t < p.tasks.size(); ++t)
          for (int d : p.tasks[t].deps) {
            reach[t].insert(reach[d].begin(), reach[d].end());
            if (int m = p.movementOf[d]; m >= 0) {
              if (p.batchOf.empty() || p.batchOf[m] < 0)
                reach[t].insert(m);
              else
                for (int member : p.batches[p.batchOf[m]])
                  reach[t].insert(member);
            }
          }
        std::map<std::string, std::set<int>> byLabel;
        std::map<std::string, int> count;
        for (size_t t = 0; t < p.tasks.size(); ++t) {
          if (p.tasks[t].kind != Task::Kernel)
            continue;
          ++count[p.tasks[t].label];
          byLabel[p.tasks[t].label] = reach[t];
        }
        for (auto &[label, n] : count)
          if (n > 1)
            byLabel.erase(label);
        return byLabel;
      };
      std::map<std::string, std::set<int>> was = waitedFor(before),
                                           now = waitedFor(after);
      for (auto &[label, movements] : was) {
        ASSERT_TRUE(now.count(label)) << label;
        EXPECT_TRUE(std::includes(now[label].begin(), now[label].end(),
                                  movements.begin(), movements.end()))
            << label;
      }
    }
  }
  std::printf("[ batching ] %zu batches, %.1f us of simulated steps saved\n",
              batches, saved * 1e6);
  EXPECT_GT(batches, 0u);
  EXPECT_GT(saved, 0);
}

//===----------------------------------------------------------------------===//
// Pipeline stages (Pipeline.h)
//===----------------------------------------------------------------------===//

namespace {

/// x [batch, width] through `layers` matmuls with weights [width, width],
/// every value of `bytes`-byte elements.
planner::Graph layerChain(int64_t batch, int64_t width, int layers,
                          int64_t bytes = 4) {
  planner::Graph g;
  int h = addValue(g, "x", {batch, width}, planner::ValueKind::Activation);
  for (int l = 0; l < layers; ++l) {
    int w = addValue(g, "w" + std::to_string(l), {width, width},
                     planner::ValueKind::Weight);
    h = matmul(g, h, w, "layer" + std::to_string(l));
  }
  g.results = {h};
  for (planner::Value &value : g.values)
    value.elementBytes = bytes;
  return g;
}

} // namespace

TEST(Pipeline, MicroBatchesCopyBatchedOpsAndShareTheRest) {
  planner::Graph g = layerChain(8, 16, 2);
  // A weight-only op (w0 + w1) reads no batch: kept once, first.
  int sum = elementwise(g, {1, 3}, "weights_sum");
  g.results.push_back(sum);
  std::vector<int> loops, dims;
  int64_t batch = 0;
  std::string error;
  ASSERT_TRUE(batchLoopsOf(g, loops, batch, error, &dims)) << error;
  EXPECT_EQ(batch, 8);
  EXPECT_EQ(loops, (std::vector<int>{0, 0, -1}));
  MicroBatched mb;
  ASSERT_TRUE(microBatch(g, 4, mb, error)) << error;
  ASSERT_EQ(mb.graph.ops.size(), 9u);
  EXPECT_EQ(mb.origin[0], 2);
  EXPECT_EQ(mb.microBatch[0], -1);
  // Micro-batch-major: layer0@0, layer1@0, layer0@1, ...
  EXPECT_EQ(mb.origin[1], 0);
  EXPECT_EQ(mb.origin[2], 1);
  EXPECT_EQ(mb.microBatch[3], 1);
  EXPECT_EQ(mb.graph.ops[1].loopSizes, (std::vector<int64_t>{2, 16, 16}));
  EXPECT_EQ(mb.graph.ops[0].loopSizes, (std::vector<int64_t>{16, 16}));
  // The second layer of micro-batch 0 reads the first's result, and the
  // weights are the same values in every copy.
  EXPECT_EQ(mb.graph.ops[2].inputs[0].value, mb.graph.ops[1].output.value);
  EXPECT_EQ(mb.graph.ops[1].inputs[1].value, mb.graph.ops[3].inputs[1].value);
  EXPECT_EQ(mb.graph.values[mb.graph.ops[1].inputs[0].value].shape,
            (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(mb.graph.results.size(), 5u); // 4 copies of h, the weights' sum
  ASSERT_TRUE(microBatch(g, 4, mb, error, 1)) << error;
  EXPECT_EQ(mb.graph.ops.size(), 3u);
  EXPECT_FALSE(microBatch(g, 3, mb, error));
  EXPECT_NE(error.find("does not split into 3"), std::string::npos) << error;
}

// A chunked plan's graph: op-major copies, and the argument kept whole and
// cut by a slice per chunk, the result put back by a concat (as the IR form
// has them).
TEST(Pipeline, ChunksAreOpMajorWithSlicesAndAConcat) {
  planner::Graph g = layerChain(8, 16, 2);
  std::string error;
  MicroBatched mb;
  ASSERT_TRUE(microBatch(g, 2, mb, error, -1, /*opMajor=*/true,
                         /*slices=*/true))
      << error;
  // slice@0, slice@1, layer0@0, layer0@1, layer1@0, layer1@1, concat.
  ASSERT_EQ(mb.graph.ops.size(), 7u);
  EXPECT_EQ(mb.origin, (std::vector<int>{-1, -1, 0, 0, 1, 1, -1}));
  EXPECT_EQ(mb.microBatch, (std::vector<int>{0, 1, 0, 1, 0, 1, -1}));
  const planner::Op &slice1 = mb.graph.ops[1];
  EXPECT_EQ(slice1.loopSizes, (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(slice1.inputs[0].shift, (std::vector<int64_t>{4, 0}));
  const planner::Value &x = mb.graph.values[slice1.inputs[0].value];
  EXPECT_EQ(x.shape, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(x.kind, planner::ValueKind::Activation);
  EXPECT_EQ(mb.graph.values[slice1.output.value].kind,
            planner::ValueKind::Intermediate);
  EXPECT_EQ(mb.graph.ops[3].inputs[0].value, slice1.output.value);
  const planner::Op &concat = mb.graph.ops[6];
  ASSERT_EQ(concat.inputs.size(), 2u);
  EXPECT_EQ(concat.inputs[1].shift, (std::vector<int64_t>{-4, 0}));
  EXPECT_EQ(concat.inputs[1].value, mb.graph.ops[5].output.value);
  EXPECT_EQ(mb.graph.results, (std::vector<int>{concat.output.value}));
  EXPECT_EQ(mb.graph.values[concat.output.value].shape,
            (std::vector<int64_t>{8, 16}));

  // Priced: every power of two from 2 dividing the batch, as dataflow
  // programs of one stage; a batch of 1 has nothing to chunk.
  planner::SearchOptions options;
  options.devices = 2;
  Topology pair = make("nvswitch", 2);
  std::vector<StagedPlan> plans = chunkedPlans(g, options, pair);
  ASSERT_EQ(plans.size(), 3u);
  for (size_t i = 0; i < plans.size(); ++i) {
    EXPECT_TRUE(plans[i].feasible) << plans[i].error;
    EXPECT_TRUE(plans[i].dataflow);
    EXPECT_EQ(plans[i].stages, 1);
    EXPECT_EQ(plans[i].microBatches, int64_t(2) << i);
  }
  // A batch of 1: its dimension 1 is no sequence (the layers sum over it).
  plans = chunkedPlans(layerChain(1, 16, 2), options, pair);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_FALSE(plans[0].feasible);
  EXPECT_EQ(plans[0].error,
            "the batch is 1 and the sequence cannot be "
            "chunked: op 'layer0' aggregates over the sequence");
}

namespace {

/// One batch row of `tokens` tokens, 2 heads of 4: x [1, tokens, 2, 4]
/// times a table of positions pos [tokens, 4] (as RoPE's), causal
/// attention of the product with itself (its queries, keys and values:
/// loops batch, kv_head, group, query, key), plus x.
planner::Graph sequenceBlock(int64_t tokens, bool causal = true) {
  planner::Graph g;
  using planner::ValueKind;
  int x = addValue(g, "x", {1, tokens, 2, 4}, ValueKind::Activation);
  int pos = addValue(g, "pos", {tokens, 4}, ValueKind::Weight);
  int y = addValue(g, "y", {1, tokens, 2, 4});
  planner::Op rope;
  rope.name = "rope";
  rope.loopSizes = {1, tokens, 2, 4};
  rope.loopNames = {"d0", "d1", "d2", "d3"};
  rope.cuttable = {true, true, true, true};
  rope.inputs = {access(x, {{0}, {1}, {2}, {3}}), access(pos, {{1}, {3}})};
  rope.output = access(y, {{0}, {1}, {2}, {3}});
  rope.flopsPerPoint = 1;
  g.ops.push_back(rope);
  int o = addValue(g, "o", {1, tokens, 2, 4});
  planner::Op att;
  att.name = "attention";
  att.loopSizes = {1, 2, 1, tokens, tokens};
  att.loopNames = {"batch", "kv_head", "group", "query", "key"};
  att.cuttable = {true, true, true, true, true};
  att.inputs = {access(y, {{0}, {3}, {1, 2}, {}}),
                access(y, {{0}, {4}, {1}, {}}), access(y, {{0}, {4}, {1}, {}})};
  att.output = access(o, {{0}, {3}, {1, 2}, {}});
  att.flopsPerPoint = 16;
  att.causal = causal;
  att.attention = {3, 4, 0, 0};
  g.ops.push_back(att);
  planner::Op add = rope;
  add.name = "residual";
  add.inputs = {access(o, {{0}, {1}, {2}, {3}}),
                access(x, {{0}, {1}, {2}, {3}})};
  int z = addValue(g, "z", {1, tokens, 2, 4});
  add.output = access(z, {{0}, {1}, {2}, {3}});
  g.ops.push_back(add);
  g.results = {z};
  return g;
}

} // namespace

// A batch of one row is chunked along its sequence: the ops that read it
// through one loop are copied per chunk, the table of positions is cut with
// them, and attention that is not causal (queries and keys both along the
// sequence, each query seeing every key) runs whole between a concat of its
// input's chunks and slices of its result.
TEST(Pipeline, SequenceChunksRunAttentionWhole) {
  planner::Graph g = sequenceBlock(8, /*causal=*/false);
  ChunkLoops c;
  std::string error;
  ASSERT_TRUE(sequenceLoopsOf(g, c, error)) << error;
  EXPECT_EQ(c.extent, 8);
  EXPECT_EQ(c.loops, (std::vector<int>{1, -1, 1}));
  EXPECT_EQ(c.whole, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(c.prefix, (std::vector<int>{-1, -1, -1}));
  // x, pos (its dimension 0), y, o (written along the queries), z.
  EXPECT_EQ(c.dims, (std::vector<int>{1, 0, 1, 1, 1}));
  // The batch alone (of 1) cannot be cut, and attention stops it anyway.
  std::vector<int> loops;
  int64_t batch = 0;
  EXPECT_TRUE(batchLoopsOf(g, loops, batch, error));
  EXPECT_EQ(batch, 1);

  MicroBatched mb;
  ASSERT_TRUE(sequenceChunks(g, 2, mb, error)) << error;
  // x's and pos's slices, rope@0, rope@1, y's concat, attention, o's
  // slices, residual@0, residual@1, z's concat.
  ASSERT_EQ(mb.graph.ops.size(), 13u);
  EXPECT_EQ(mb.origin,
            (std::vector<int>{-1, -1, -1, -1, 0, 0, -1, 1, -1, -1, 2, 2, -1}));
  EXPECT_EQ(mb.microBatch,
            (std::vector<int>{0, 1, 0, 1, 0, 1, -1, -1, -1, -1, 0, 1, -1}));
  const planner::Op &posSlice = mb.graph.ops[3];
  EXPECT_EQ(posSlice.loopSizes, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(posSlice.inputs[0].shift, (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(mb.graph.ops[5].inputs[1].value, posSlice.output.value);
  EXPECT_EQ(mb.graph.ops[5].loopSizes, (std::vector<int64_t>{1, 4, 2, 4}));
  const planner::Op &concat = mb.graph.ops[6];
  ASSERT_EQ(concat.inputs.size(), 2u);
  EXPECT_EQ(concat.inputs[1].value, mb.graph.ops[5].output.value);
  EXPECT_EQ(concat.inputs[1].shift, (std::vector<int64_t>{0, -4, 0, 0}));
  const planner::Op &att = mb.graph.ops[7];
  EXPECT_EQ(att.loopSizes, (std::vector<int64_t>{1, 2, 1, 8, 8}));
  for (const planner::Access &input : att.inputs)
    EXPECT_EQ(input.value, concat.output.value);
  EXPECT_EQ(mb.graph.ops[9].inputs[0].value, att.output.value);
  EXPECT_EQ(mb.graph.ops[9].inputs[0].shift,
            (std::vector<int64_t>{0, 4, 0, 0}));
  EXPECT_EQ(mb.graph.ops[11].inputs[0].value, mb.graph.ops[9].output.value);
  EXPECT_EQ(mb.graph.values[mb.graph.results[0]].shape,
            (std::vector<int64_t>{1, 8, 2, 4}));
  EXPECT_FALSE(sequenceChunks(g, 3, mb, error));
  EXPECT_EQ(error, "the sequence (8) does not split into 3 chunks");

  // Priced on 2 GPUs: chunks of the sequence, each a dataflow program, op
  // by op (a whole op waits for every chunk).
  planner::SearchOptions options;
  options.devices = 2;
  Topology pair = make("nvswitch", 2);
  std::vector<StagedPlan> plans = chunkedPlans(g, options, pair, 4);
  ASSERT_EQ(plans.size(), 2u);
  for (const StagedPlan &plan : plans) {
    EXPECT_TRUE(plan.feasible) << plan.error;
    EXPECT_EQ(plan.chunkDim, 1);
    EXPECT_TRUE(plan.dataflow);
    EXPECT_EQ(plan.order, ChunkOrder::Op);
  }
  EXPECT_FALSE(sequenceChunks(g, 2, mb, error, /*opMajor=*/false));
  EXPECT_EQ(error, "whole ops are only chunked op by op, every chunk, with "
                   "slices");

  // A weight read whole before it is read along the sequence is not cut.
  planner::Graph late = sequenceBlock(8);
  planner::Op first = late.ops[0];
  first.name = "pos_first";
  first.loopSizes = {8, 4};
  first.loopNames = {"d0", "d1"};
  first.cuttable = {true, true};
  first.inputs = {access(1, {{0}, {1}})};
  int copy = addValue(late, "pos_copy", {8, 4});
  first.output = access(copy, {{0}, {1}});
  late.ops.insert(late.ops.begin(), first);
  late.results.push_back(copy);
  EXPECT_FALSE(sequenceLoopsOf(late, c, error));
  EXPECT_EQ(error, "op 'rope' reads 'pos' along its sequence loop");
}

// Causal attention is chunked like the ops around it: chunk i of its
// queries sees the keys up to its last query, so its copy reads the first
// i + 1 chunks of its keys and values (put back together by a concat) with
// its diagonal shifted by i chunks; the chunks' work adds up to the whole
// op's. Chunk by chunk, each chunk's ops come together.
TEST(Pipeline, SequenceChunksReadAPrefixOfCausalKeys) {
  planner::Graph g = sequenceBlock(8);
  ChunkLoops c;
  std::string error;
  ASSERT_TRUE(sequenceLoopsOf(g, c, error)) << error;
  EXPECT_EQ(c.loops, (std::vector<int>{1, 3, 1}));
  EXPECT_EQ(c.whole, (std::vector<bool>{false, false, false}));
  EXPECT_EQ(c.prefix, (std::vector<int>{-1, 4, -1}));
  EXPECT_FALSE(c.readsPrefix(1, g.ops[1].inputs[0])); // the queries
  EXPECT_TRUE(c.readsPrefix(1, g.ops[1].inputs[1]));  // the keys
  EXPECT_TRUE(c.readsPrefix(1, g.ops[1].inputs[2]));  // the values

  MicroBatched mb;
  ASSERT_TRUE(sequenceChunks(g, 2, mb, error)) << error;
  std::vector<std::string> names;
  for (const planner::Op &op : mb.graph.ops)
    names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "x slice@0", "x slice@1", "pos slice@0", "pos slice@1",
                       "rope@0", "rope@1", "attention@0", "y@0-1 concat",
                       "attention@1", "residual@0", "residual@1", "z concat"}));
  EXPECT_EQ(mb.microBatch,
            (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1, -1}));
  const planner::Op &first = mb.graph.ops[6], &second = mb.graph.ops[8];
  const planner::Op &keys = mb.graph.ops[7];
  int y0 = mb.graph.ops[4].output.value, y1 = mb.graph.ops[5].output.value;
  EXPECT_EQ(first.loopSizes, (std::vector<int64_t>{1, 2, 1, 4, 4}));
  EXPECT_EQ(first.attention.queryOffset, 0);
  for (const planner::Access &input : first.inputs)
    EXPECT_EQ(input.value, y0);
  ASSERT_EQ(keys.inputs.size(), 2u);
  EXPECT_EQ(keys.inputs[0].value, y0);
  EXPECT_EQ(keys.inputs[1].value, y1);
  EXPECT_EQ(keys.inputs[1].shift, (std::vector<int64_t>{0, -4, 0, 0}));
  EXPECT_EQ(keys.kernel, planner::KernelKind::Touch);
  EXPECT_EQ(mb.graph.values[keys.output.value].shape,
            (std::vector<int64_t>{1, 8, 2, 4}));
  EXPECT_EQ(second.loopSizes, (std::vector<int64_t>{1, 2, 1, 4, 8}));
  EXPECT_EQ(second.attention.queryOffset, 4);
  EXPECT_EQ(second.inputs[0].value, y1);
  EXPECT_EQ(second.inputs[1].value, keys.output.value);
  EXPECT_EQ(second.inputs[2].value, keys.output.value);
  // Query s of chunk 1 (4 + s) sees keys 0 .. 4 + s: 26 pairs of the 36,
  // chunk 0 the other 10.
  auto flops = [](const planner::Op &op) {
    return planner::blockFlops(op, planner::Spec(op.loopSizes.size(), 1),
                               std::vector<int64_t>(op.loopSizes.size(), 0));
  };
  EXPECT_DOUBLE_EQ(flops(first), 10 * 2 * 16.0);
  EXPECT_DOUBLE_EQ(flops(second), 26 * 2 * 16.0);
  EXPECT_DOUBLE_EQ(flops(first) + flops(second), flops(g.ops[1]));

  MicroBatched byChunk;
  ASSERT_TRUE(sequenceChunks(g, 2, byChunk, error, /*opMajor=*/false)) << error;
  names.clear();
  for (const planner::Op &op : byChunk.graph.ops)
    names.push_back(op.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "x slice@0", "x slice@1", "pos slice@0", "pos slice@1",
                "rope@0", "attention@0", "residual@0", "rope@1", "y@0-1 concat",
                "attention@1", "residual@1", "z concat"}));

  // Priced both ways on 2 GPUs; each plan says which order it kept.
  planner::SearchOptions options;
  options.devices = 2;
  std::vector<StagedPlan> plans =
      chunkedPlans(g, options, make("nvswitch", 2), 4);
  ASSERT_EQ(plans.size(), 2u);
  for (const StagedPlan &plan : plans) {
    EXPECT_TRUE(plan.feasible) << plan.error;
    EXPECT_EQ(plan.chunkDim, 1);
    for (ChunkOrder order :
         {ChunkOrder::Op, ChunkOrder::Chunk, ChunkOrder::CriticalPath}) {
      StagedPlan other = stagedPlanInOrder(g, options, make("nvswitch", 2), 1,
                                           plan.microBatches,
                                           planner::Strategy::Optimal, order);
      EXPECT_TRUE(other.feasible) << other.error;
      EXPECT_EQ(other.order, order);
      EXPECT_EQ(other.copies.size(), 3u * plan.microBatches);
      EXPECT_LE(plan.seconds, other.seconds);
    }
  }

  // Offsets that differ (a block already shifted) keep it whole.
  g.ops[1].attention.queryOffset = 2;
  ASSERT_TRUE(sequenceLoopsOf(g, c, error)) << error;
  EXPECT_EQ(c.whole, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(c.prefix, (std::vector<int>{-1, -1, -1}));
}

// A value computed once, from no chunked value (a table of positions
// scaled once, a mask from a constant), and then read along the sequence is
// cut as a weight is: its op runs once, slices of its result follow.
TEST(Pipeline, SequenceChunksCutAValueComputedOnce) {
  planner::Graph g = sequenceBlock(8);
  int pos = 1;
  int scaled = addValue(g, "scaled", {8, 4});
  planner::Op once;
  once.name = "scale_pos";
  once.loopSizes = {8, 4};
  once.loopNames = {"d0", "d1"};
  once.cuttable = {true, true};
  once.inputs = {access(pos, {{0}, {1}})};
  once.output = access(scaled, {{0}, {1}});
  once.flopsPerPoint = 1;
  g.ops.insert(g.ops.begin(), once);
  g.ops[1].inputs[1].value = scaled; // rope reads the scaled table
  ChunkLoops c;
  std::string error;
  ASSERT_TRUE(sequenceLoopsOf(g, c, error)) << error;
  EXPECT_EQ(c.loops[0], -1); // computed once
  EXPECT_EQ(c.dims[scaled], 0);
  EXPECT_EQ(c.dims[pos], -1); // the weight is read whole, by scale_pos
  MicroBatched chunked;
  ASSERT_TRUE(sequenceChunks(g, 2, chunked, error)) << error;
  // scale_pos once, then the two slices of its result, before rope's
  // copies read them.
  ASSERT_GE(chunked.graph.ops.size(), 4u);
  std::vector<std::string> names;
  for (const planner::Op &op : chunked.graph.ops)
    names.push_back(op.name);
  EXPECT_EQ(std::count(names.begin(), names.end(), "scale_pos"), 1);
  auto at = [&](const std::string &name) {
    return std::find(names.begin(), names.end(), name) - names.begin();
  };
  EXPECT_LT(at("scale_pos"), at("scaled slice@0"));
  EXPECT_LT(at("scaled slice@1"), at("rope@0"));
  EXPECT_EQ(
      chunked.graph.values[chunked.graph.ops[at("rope@1")].inputs[1].value]
          .shape,
      (std::vector<int64_t>{4, 4}));
  // Read whole by an op before it is read along the sequence, it is not
  // cut: refused by name.
  planner::Graph late = g;
  planner::Op whole = once;
  whole.name = "read_whole";
  whole.inputs = {access(scaled, {{0}, {1}})};
  whole.output = access(addValue(late, "copy", {8, 4}), {{0}, {1}});
  late.ops.insert(late.ops.begin() + 1, whole);
  late.results.push_back(late.ops[1].output.value);
  EXPECT_FALSE(sequenceLoopsOf(late, c, error));
  EXPECT_EQ(error, "op 'rope' reads 'scaled' along its sequence loop");
}

TEST(Pipeline, RefusesBatchesItCannotFollow) {
  std::string error;
  std::vector<int> loops;
  int64_t batch = 0;
  // Two activations of other leading sizes: no common batch.
  planner::Graph chain;
  int a = addValue(chain, "a", {8, 4}, planner::ValueKind::Activation);
  int b = addValue(chain, "b", {4, 6}, planner::ValueKind::Activation);
  matmul(chain, a, b, "ab");
  EXPECT_FALSE(batchLoopsOf(chain, loops, batch, error));
  EXPECT_NE(error.find("share no batch dimension"), std::string::npos) << error;
  // x^T x aggregates over the batch.
  planner::Graph gram;
  int x = addValue(gram, "x", {8, 4}, planner::ValueKind::Activation);
  int out = addValue(gram, "gram", {4, 4});
  planner::Op op;
  op.name = "gram";
  op.loopSizes = {8, 4, 4};
  op.loopNames = {"b", "i", "j"};
  op.cuttable = {true, true, true};
  op.inputs = {access(x, {{0}, {1}}), access(x, {{0}, {2}})};
  op.output = access(out, {{1}, {2}});
  op.flopsPerPoint = 2;
  gram.ops.push_back(op);
  EXPECT_FALSE(batchLoopsOf(gram, loops, batch, error));
  EXPECT_EQ(error, "op 'gram' aggregates over the batch");
  std::vector<StagedPlan> plans =
      stagedPlans(gram, planner::SearchOptions(), make("nodes=2,gpus=1", 2));
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_FALSE(plans[0].feasible);
  EXPECT_EQ(plans[0].error, error);
}

TEST(Pipeline, BalancedStagesCutAtEqualWork) {
  planner::Graph g = layerChain(8, 16, 6);
  EXPECT_EQ(balancedStages(g, 2), (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(balancedStages(g, 3), (std::vector<int>{0, 0, 1, 1, 2, 2}));
  // A heavy first layer takes a stage of its own.
  g.ops[0].flopsPerPoint = 10;
  EXPECT_EQ(balancedStages(g, 2), (std::vector<int>{0, 1, 1, 1, 1, 1}));
}

TEST(Pipeline, MicroBatchesOverlapTheStages) {
  // Eight bf16 layers on two nodes of one GPU: stage 0 runs layers 0-3,
  // stage 1 layers 4-7; only layer 3's result crosses, once in all. Rows
  // enough that a micro-batch's gemms stay compute-bound (256 rows of 8192).
  planner::Graph g = layerChain(2048, 8192, 8, 2);
  Topology topology = make("nodes=2,gpus=1", 2);
  planner::SearchOptions options;
  options.devices = 2;
  StagedPlan one = stagedPlan(g, options, topology, 2, 1);
  StagedPlan eight = stagedPlan(g, options, topology, 2, 8);
  ASSERT_TRUE(one.feasible) << one.error;
  ASSERT_TRUE(eight.feasible) << eight.error;
  EXPECT_EQ(one.stageOf, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  double boundary = 2048.0 * 8192 * 2;
  EXPECT_DOUBLE_EQ(one.bytesBetweenNodes, boundary);
  EXPECT_DOUBLE_EQ(eight.bytesBetweenNodes, boundary);
  EXPECT_EQ(one.transfersBetweenNodes, 1);
  EXPECT_EQ(eight.transfersBetweenNodes, 8);
  // Without micro-batches the stages take turns: the step is both stages'
  // work end to end; with 8 the second starts after an eighth of the first.
  EXPECT_GE(one.seconds, 0.999 * (one.stageBusy[0] + one.stageBusy[1]));
  EXPECT_LT(eight.seconds, 0.75 * one.seconds)
      << eight.seconds << " against " << one.seconds;
  EXPECT_GT(eight.seconds, eight.stageBusy[1]);
  std::vector<StagedPlan> all = stagedPlans(g, options, topology, 8);
  ASSERT_EQ(all.size(), 4u); // 2 stages x {1, 2, 4, 8} micro-batches
  for (const StagedPlan &p : all)
    EXPECT_TRUE(p.feasible) << p.error;
  EXPECT_TRUE(stagedPlans(g, options, make("nvswitch", 2)).empty());
}

TEST(Placement, RepeatedLayersArePlacedOnceAndAlike) {
  // Eight identical layers: blocks are placed and exchange forms chosen on
  // the stack folded to three layers (planner::foldRepetition), the layers
  // between the second and the last taking the second's; the step is never
  // slower than the canonical naive one.
  planner::Graph g = layerStack(8, 1024);
  planner::Options o;
  o.devices = 8;
  std::vector<planner::Spec> specs;
  for (const planner::Op &op : g.ops)
    specs.push_back(op.loopSizes.size() == 3 ? planner::Spec{1, 1, 8}
                                             : planner::Spec{8, 1});
  double bytes = 0;
  planner::Plan plan = planWith(g, specs, o, bytes);
  for (const char *name : {"dgx1-v100", "nvswitch"}) {
    Topology topology = make(name, 8);
    ProgramChoice choice;
    DeviceProgram program = placedBestProgram(g, plan, o, topology, {}, choice);
    const std::vector<bool> &synthesized = choice.synthesizedOps;
    const Placement &placement = choice.placement;
    ASSERT_EQ(synthesized.size(), g.ops.size());
    ASSERT_EQ(program.ops.size(), g.ops.size());
    for (int layer = 2; layer < 7; ++layer)
      for (int k = 0; k < 2; ++k) {
        int op = 1 + 2 * layer + k, second = 3 + k;
        EXPECT_EQ(synthesized[op], synthesized[second]) << name << " " << op;
        for (int64_t j = 0; j < 8; ++j)
          EXPECT_EQ(placement.of(op, j), placement.of(second, j))
              << name << " " << op;
      }
    double step = simulate(topology, program.tasks).seconds;
    EXPECT_EQ(step, simulate(topology,
                             choiceProgram(g, plan, o, topology, choice).tasks)
                        .seconds);
    double naive = simulate(topology, naiveProgram(g, plan, o).tasks).seconds;
    EXPECT_LE(step, naive * (1 + 1e-9)) << name;
    // Every block runs, once, where the placement puts it.
    for (size_t op = 0; op < program.ops.size(); ++op) {
      const std::vector<OpProgram::Kernel> &kernels = program.ops[op].kernels;
      std::set<int64_t> gpus;
      for (size_t j = 0; j < kernels.size(); ++j) {
        EXPECT_EQ(kernels[j].device, placement.of(op, int64_t(j)));
        gpus.insert(kernels[j].device);
      }
      EXPECT_EQ(gpus.size(), 8u);
      EXPECT_EQ(kernels.size(), 8u);
    }
  }
}

TEST(Placement, AChoiceBuildsItsProgramAgain) {
  // choiceProgram rebuilds what placedBestProgram chose, task for task
  // (what ein-synthesize-exchanges does with ein-decompose's recorded
  // choice), whole or folded; choiceKey tells the inputs apart.
  std::vector<planner::Graph> graphs = {
      bushy(1024), leftChain(), attentionGraph(8, 2, 256), layerStack(6, 512)};
  for (const char *name : {"dgx1-v100", "nvswitch"}) {
    Topology topology = make(name, 8);
    for (const planner::Graph &g : graphs) {
      planner::SearchOptions o;
      o.devices = 8;
      planner::Plan plan = planner::search(g, o);
      ProgramChoice choice;
      DeviceProgram chosen =
          placedBestProgram(g, plan, o, topology, {}, choice);
      DeviceProgram again = choiceProgram(g, plan, o, topology, choice);
      ASSERT_EQ(chosen.tasks.size(), again.tasks.size()) << name;
      for (size_t t = 0; t < chosen.tasks.size(); ++t) {
        const Task &x = chosen.tasks[t], &y = again.tasks[t];
        EXPECT_TRUE(x.kind == y.kind && x.queue == y.queue &&
                    x.from == y.from && x.to == y.to && x.bytes == y.bytes &&
                    x.flops == y.flops && x.seconds == y.seconds &&
                    x.deps == y.deps && x.rank == y.rank && x.label == y.label)
            << name << " task " << t;
      }
      EXPECT_EQ(chosen.movementOf, again.movementOf);
      EXPECT_EQ(chosen.batches, again.batches);
      EXPECT_EQ(chosen.layouts.size(), again.layouts.size());
      uint64_t key = choiceKey(g, plan, o, topology, {}, true);
      EXPECT_EQ(key, choiceKey(g, plan, o, topology, {}, true));
      EXPECT_NE(key, choiceKey(g, plan, o, topology, {}, false));
      Topology elsewhere =
          make(std::string(name) == "nvswitch" ? "dgx1-v100" : "nvswitch", 8);
      EXPECT_NE(key, choiceKey(g, plan, o, elsewhere, {}, true));
      planner::Plan other = plan;
      other.specs[0].back() = other.specs[0].back() == 1 ? 2 : 1;
      EXPECT_NE(key, choiceKey(g, other, o, topology, {}, true));
    }
  }
}
