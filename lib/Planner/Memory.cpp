//===- Memory.cpp - What a plan holds on each GPU -------------------------===//

#include "Einsummable/Planner/Memory.h"

#include "ein/partition.h"

#include <algorithm>
#include <map>
#include <set>

namespace ein::planner {

double PlanMemory::largest() const {
  return peak.empty() ? 0 : *std::max_element(peak.begin(), peak.end());
}

int64_t PlanMemory::largestDevice() const {
  return peak.empty()
             ? 0
             : std::max_element(peak.begin(), peak.end()) - peak.begin();
}

PlanMemory planMemory(const Graph &graph, const Plan &plan, int64_t devices,
                      const std::vector<std::vector<int64_t>> *place) {
  PlanMemory memory;
  memory.weights.assign(devices, 0);
  memory.peak.assign(devices, 0);
  size_t numValues = graph.values.size(), numOps = graph.ops.size();
  // Per value and device, the bytes held of it (a result as produced, an
  // argument as its readers need it), and the last op that reads it.
  std::vector<std::vector<double>> held(numValues,
                                        std::vector<double>(devices, 0));
  std::vector<int> lastRead(numValues, -1), producer(numValues, -1);
  std::vector<std::set<std::pair<std::vector<int64_t>, std::vector<int64_t>>>>
      weightBlocks(devices);
  // Per op and device, the bytes of the input blocks its join reads there
  // and of the result block it writes.
  std::vector<std::vector<double>> reads(numOps,
                                         std::vector<double>(devices, 0)),
      writes(numOps, std::vector<double>(devices, 0));
  for (size_t o = 0; o < numOps; ++o) {
    const Op &op = graph.ops[o];
    const Spec &spec = plan.specs[o];
    producer[op.output.value] = static_cast<int>(o);
    bool aggregated = partialBlocks(op, spec);
    int64_t blocks = numBlocks(spec);
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t k = place ? (*place)[o][b] : b;
      if (k < 0 || k >= devices)
        continue;
      std::vector<int64_t> coords = delinearize(b, spec);
      for (const Access &input : op.inputs) {
        const Value &v = graph.values[input.value];
        Box box = accessBox(input, graph, op, spec, coords);
        double bytes = double(box.volume()) * v.elementBytes;
        lastRead[input.value] = static_cast<int>(o);
        if (v.kind == ValueKind::Weight || v.kind == ValueKind::Constant) {
          // Each distinct block a GPU reads, once (a weight read by two
          // ops in the same cut is held once).
          auto key = std::make_pair(box.begin, box.end);
          key.first.insert(key.first.begin(), input.value);
          if (weightBlocks[k].insert(key).second)
            memory.weights[k] += bytes;
          continue;
        }
        reads[o][k] += bytes;
        if (v.kind == ValueKind::Activation)
          held[input.value][k] = std::max(held[input.value][k], bytes);
      }
      Box out = accessBox(op.output, graph, op, spec, coords);
      double bytes = double(out.volume()) *
                     (aggregated ? op.accBytes
                                 : graph.values[op.output.value].elementBytes);
      writes[o][k] = bytes;
      held[op.output.value][k] = bytes;
    }
  }
  for (int result : graph.results)
    lastRead[result] = static_cast<int>(numOps); // read after the run
  for (int64_t k = 0; k < devices; ++k) {
    double peak = 0;
    for (size_t o = 0; o < numOps; ++o) {
      // The op's own blocks, and the values made before it (arguments:
      // before everything) that later ops still read.
      double live = reads[o][k] + writes[o][k];
      std::set<int> own;
      for (const Access &input : graph.ops[o].inputs)
        own.insert(input.value);
      for (size_t v = 0; v < numValues; ++v) {
        int made = producer[v];
        if (made >= int(o) || lastRead[v] < int(o) || own.count(int(v)))
          continue;
        live += held[v][k];
      }
      peak = std::max(peak, live);
    }
    memory.peak[k] = memory.weights[k] + peak;
  }
  return memory;
}

} // namespace ein::planner
