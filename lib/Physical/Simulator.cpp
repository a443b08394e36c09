//===- Simulator.cpp - A discrete-event model of one step -----------------===//

#include "Einsummable/Physical/Simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace ein::physical {

std::vector<double> maxMinRates(const std::vector<Link> &links,
                                const std::vector<std::vector<int>> &routes) {
  std::vector<double> rate(routes.size(), 0), capacity(links.size());
  std::vector<int> users(links.size(), 0);
  std::vector<bool> frozen(routes.size(), false);
  for (size_t l = 0; l < links.size(); ++l)
    capacity[l] = links[l].bandwidth;
  for (const std::vector<int> &r : routes)
    for (int l : r)
      ++users[l];
  size_t left = routes.size();
  while (left) {
    // The link whose fair share among its unfrozen transfers is smallest
    // fixes their rate.
    int bottleneck = -1;
    double share = std::numeric_limits<double>::infinity();
    for (size_t l = 0; l < links.size(); ++l)
      if (users[l] > 0 && capacity[l] / users[l] < share) {
        share = capacity[l] / users[l];
        bottleneck = static_cast<int>(l);
      }
    if (bottleneck < 0)
      break;
    for (size_t f = 0; f < routes.size(); ++f) {
      if (frozen[f] || std::find(routes[f].begin(), routes[f].end(),
                                 bottleneck) == routes[f].end())
        continue;
      frozen[f] = true;
      rate[f] = share;
      --left;
      for (int l : routes[f]) {
        capacity[l] = std::max(0.0, capacity[l] - share);
        --users[l];
      }
    }
  }
  return rate;
}

int simulationBudget(size_t tasks) {
  return static_cast<int>(
      std::clamp<size_t>((256 * 256) / std::max<size_t>(tasks, 1), 16, 256));
}

SimResult simulate(const Topology &topology, const std::vector<Task> &tasks,
                   const Machine &machine) {
  size_t n = tasks.size();
  SimResult r;
  r.start.assign(n, -1);
  r.end.assign(n, -1);
  r.linkBusy.assign(topology.links.size(), 0);
  r.linkBytes.assign(topology.links.size(), 0);
  int64_t queues = 0;
  for (const Task &t : tasks)
    queues = std::max(queues, t.queue + 1);
  r.queueBusy.assign(queues, 0);

  // Each queue runs its tasks in list order.
  std::vector<std::vector<int>> order(queues);
  for (size_t i = 0; i < n; ++i)
    order[tasks[i].queue].push_back(static_cast<int>(i));
  // Or by rank, where every task of the queue has one.
  for (std::vector<int> &queue : order)
    if (std::all_of(queue.begin(), queue.end(),
                    [&](int i) { return tasks[i].rank >= 0; }))
      std::stable_sort(queue.begin(), queue.end(), [&](int a, int b) {
        return tasks[a].rank < tasks[b].rank;
      });
  std::vector<size_t> head(queues, 0);
  std::vector<bool> queueBusy(queues, false);
  std::vector<int> pending(n, 0);
  for (size_t i = 0; i < n; ++i)
    pending[i] = static_cast<int>(tasks[i].deps.size());
  std::vector<std::vector<int>> dependents(n);
  for (size_t i = 0; i < n; ++i)
    for (int d : tasks[i].deps)
      dependents[d].push_back(static_cast<int>(i));

  // In flight: kernels until `until`; transfers in their latency until
  // `until`, then streaming `remaining` bytes.
  struct Running {
    int task;
    double until;
    double remaining;
    bool streaming;
  };
  std::vector<Running> running;
  double now = 0;
  size_t finished = 0;
  const double epsilon = 1e-15;

  auto startReady = [&]() {
    for (int64_t q = 0; q < queues; ++q) {
      if (queueBusy[q] || head[q] >= order[q].size())
        continue;
      // The queue's first task not started, or, where that waits and is
      // unordered, the first after it that is ready.
      int i = -1;
      for (size_t k = head[q]; k < order[q].size(); ++k) {
        int c = order[q][k];
        if (r.start[c] >= 0)
          continue;
        if (pending[c] == 0) {
          i = c;
          break;
        }
        if (!tasks[c].unordered)
          break;
      }
      if (i < 0)
        continue;
      const Task &t = tasks[i];
      r.start[i] = now;
      queueBusy[q] = true;
      if (t.kind == Task::Kernel && t.view) {
        running.push_back({i, now, 0, false}); // a view: nothing runs
      } else if (t.kind == Task::Kernel) {
        double seconds =
            machine.launchSeconds +
            (t.seconds >= 0
                 ? t.seconds
                 : std::max(t.flops / machine.flopsPerSecond,
                            t.memoryBytes / machine.memoryBytesPerSecond));
        running.push_back({i, now + seconds, 0, false});
      } else if (t.from == t.to || t.bytes <= 0) {
        running.push_back({i, now, 0, false}); // nothing to move
      } else {
        const Route &route = topology.route(t.from, t.to);
        running.push_back({i, now + route.latency, t.bytes, false});
      }
    }
  };

  startReady();
  while (finished < n && !running.empty()) {
    // Rates of the streaming transfers.
    std::vector<int> streams;
    std::vector<std::vector<int>> routes;
    for (size_t k = 0; k < running.size(); ++k)
      if (running[k].streaming) {
        streams.push_back(static_cast<int>(k));
        const Task &t = tasks[running[k].task];
        routes.push_back(topology.route(t.from, t.to).links);
      }
    std::vector<double> rates = maxMinRates(topology.links, routes);
    // The next event: a kernel or latency ends, or a stream drains.
    double next = std::numeric_limits<double>::infinity();
    for (const Running &run : running)
      if (!run.streaming)
        next = std::min(next, run.until);
    // The stream that drains first is finished outright, whatever floating
    // point leaves of it, so time always advances to an event.
    int draining = -1;
    for (size_t s = 0; s < streams.size(); ++s)
      if (rates[s] > 0) {
        double at = now + running[streams[s]].remaining / rates[s];
        if (at < next) {
          next = at;
          draining = static_cast<int>(s);
        }
      }
    for (const Running &run : running)
      if (!run.streaming && run.until <= next) {
        draining = -1; // a kernel or latency ends first (or together)
        break;
      }
    if (!std::isfinite(next))
      break; // nothing can progress: r.stalled says so
    double dt = next - now;
    std::vector<bool> linkActive(topology.links.size(), false);
    for (size_t s = 0; s < streams.size(); ++s) {
      double moved =
          static_cast<int>(s) == draining
              ? running[streams[s]].remaining
              : std::min(running[streams[s]].remaining, rates[s] * dt);
      running[streams[s]].remaining -= moved;
      for (int l : routes[s]) {
        r.linkBytes[l] += moved;
        linkActive[l] = true;
      }
    }
    for (size_t l = 0; l < linkActive.size(); ++l)
      if (linkActive[l])
        r.linkBusy[l] += dt;
    now = next;
    // Latencies that ended start streaming (empty transfers end at once);
    // kernels and drained streams end.
    std::vector<Running> still;
    for (Running &run : running) {
      bool done = false;
      if (!run.streaming && run.until <= now + epsilon) {
        if (tasks[run.task].kind == Task::Transfer && run.remaining > 0)
          run.streaming = true;
        else
          done = true;
      } else if (run.streaming &&
                 run.remaining <= 1e-9 * tasks[run.task].bytes) {
        done = true;
      }
      if (!done) {
        still.push_back(run);
        continue;
      }
      int i = run.task;
      r.end[i] = now;
      const Task &t = tasks[i];
      queueBusy[t.queue] = false;
      r.queueBusy[t.queue] += now - r.start[i];
      // Past every task of the queue that has run (unordered ones may have
      // run out of turn).
      while (head[t.queue] < order[t.queue].size() &&
             r.end[order[t.queue][head[t.queue]]] >= 0)
        ++head[t.queue];
      ++finished;
      for (int d : dependents[i])
        --pending[d];
    }
    running.swap(still);
    startReady();
  }
  r.seconds = now;
  r.stalled = finished < n;
  return r;
}

} // namespace ein::physical
