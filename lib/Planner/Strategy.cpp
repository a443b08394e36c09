//===- Strategy.cpp - Hand-written and random plans -----------------------===//

#include "Einsummable/Planner/Strategy.h"

#include <random>
#include <set>

namespace ein::planner {

std::optional<Strategy> parseStrategy(const std::string &name) {
  if (name == "optimal")
    return Strategy::Optimal;
  if (name == "random")
    return Strategy::Random;
  if (name == "dp")
    return Strategy::DataParallel;
  if (name == "megatron")
    return Strategy::Megatron;
  if (name == "spatial")
    return Strategy::Spatial;
  if (name == "megatron-dp")
    return Strategy::MegatronDataParallel;
  return std::nullopt;
}

const char *strategyName(Strategy strategy) {
  switch (strategy) {
  case Strategy::Optimal:
    return "optimal";
  case Strategy::Random:
    return "random";
  case Strategy::DataParallel:
    return "dp";
  case Strategy::Megatron:
    return "megatron";
  case Strategy::Spatial:
    return "spatial";
  case Strategy::MegatronDataParallel:
    return "megatron-dp";
  }
  return "?";
}

namespace {

/// The loops of `op` that index any dimension of `access`.
std::set<int> loopsOf(const Access &access) {
  std::set<int> loops;
  for (const std::vector<int> &dim : access.dimLoops)
    loops.insert(dim.begin(), dim.end());
  return loops;
}

/// Whether `spec` cuts only loops in `loops`.
bool cutsOnly(const Spec &spec, const std::set<int> &loops) {
  for (size_t l = 0; l < spec.size(); ++l)
    if (spec[l] > 1 && !loops.count(static_cast<int>(l)))
      return false;
  return true;
}

/// The batch loops of every op: loops over dimension 0 of the program's
/// first activation argument, followed forward through the ops (a result
/// dimension spanned only by batch loops is a batch dimension).
std::vector<std::set<int>> batchLoops(const Graph &graph) {
  std::vector<std::set<int>> batchDims(graph.values.size()), loops;
  for (size_t v = 0; v < graph.values.size(); ++v)
    if (graph.values[v].kind == ValueKind::Activation &&
        graph.values[v].shape.size() >= 2) {
      batchDims[v].insert(0);
      break;
    }
  for (const Op &op : graph.ops) {
    std::set<int> batch;
    for (const Access &input : op.inputs)
      for (int d : batchDims[input.value])
        batch.insert(input.dimLoops[d].begin(), input.dimLoops[d].end());
    for (size_t d = 0; d < op.output.dimLoops.size(); ++d) {
      const std::vector<int> &dim = op.output.dimLoops[d];
      bool allBatch = !dim.empty();
      for (int l : dim)
        allBatch = allBatch && batch.count(l);
      if (allBatch)
        batchDims[op.output.value].insert(static_cast<int>(d));
    }
    loops.push_back(std::move(batch));
  }
  return loops;
}

/// The loops that index a windowed dimension of one of `op`'s inputs (a
/// convolution's or pooling's output rows and columns).
std::set<int> windowLoops(const Op &op) {
  std::set<int> loops;
  for (const Access &input : op.inputs)
    for (size_t d = 0; d < input.stride.size(); ++d)
      if (input.stride[d] != 1 || input.extent[d] != 1)
        loops.insert(input.dimLoops[d].begin(), input.dimLoops[d].end());
  return loops;
}

/// Whether `op` contracts (has a loop its result does not index).
bool contracts(const Op &op) {
  std::set<int> out = loopsOf(op.output);
  for (size_t l = 0; l < op.loopSizes.size(); ++l)
    if (!out.count(static_cast<int>(l)))
      return true;
  return false;
}

std::string loopList(const Op &op) {
  std::string text;
  for (const std::string &name : op.loopNames)
    text += (text.empty() ? "" : ", ") + name;
  return "(" + text + ")";
}

} // namespace

bool allowedSpecs(const Graph &graph, Strategy strategy, int64_t devices,
                  uint64_t seed, std::vector<std::vector<Spec>> &allowed,
                  std::string &error) {
  allowed.clear();
  if (strategy == Strategy::MegatronDataParallel) {
    error = "strategy megatron-dp takes the topology's nodes: plan it with "
            "megatronDpSpecs (ein-decompose does, on a topology of several "
            "nodes)";
    return false;
  }
  std::mt19937_64 random(seed);
  int restrictedOps = 0;
  std::vector<std::set<int>> batch;
  if (strategy == Strategy::DataParallel)
    batch = batchLoops(graph);
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const Op &op = graph.ops[o];
    std::vector<Spec> legal = enumerateSpecs(op, devices), kept;
    std::string why;
    switch (strategy) {
    case Strategy::Optimal:
    case Strategy::MegatronDataParallel: // refused above
      kept = legal;
      break;
    case Strategy::Random:
      // A draw per op in program order: the same seed, the same plan.
      kept = {legal[std::uniform_int_distribution<size_t>(0, legal.size() -
                                                                 1)(random)]};
      break;
    case Strategy::DataParallel:
      // An op that reads no batch dimension (one on weights alone: a
      // training step's optimizer update) follows the cheapest layout, as
      // each replica's copy of it would.
      restrictedOps += !batch[o].empty();
      for (const Spec &s : legal)
        if (batch[o].empty() || cutsOnly(s, batch[o]))
          kept.push_back(s);
      why = "cannot cut its batch loops into " + std::to_string(devices) +
            " parts";
      break;
    case Strategy::Spatial: {
      // A convolution or pooling: its output rows and columns (each block
      // reads a halo), where they are enough to cut; other ops, and
      // windows too small to cut that way, follow the cheapest layout.
      std::set<int> loops = windowLoops(op);
      restrictedOps += !loops.empty();
      for (const Spec &s : legal)
        if (loops.empty() || cutsOnly(s, loops))
          kept.push_back(s);
      if (kept.empty())
        kept = legal;
      break;
    }
    case Strategy::Megatron: {
      // Attention: its heads (kv_head, group). A contraction with weights:
      // loops of every weight it reads (column or row parallel).
      std::optional<std::set<int>> cuttable;
      if (op.attention.queryLoop >= 0) {
        cuttable = std::set<int>{1, 2};
        why = "cannot cut its heads into " + std::to_string(devices) + " parts";
      } else if (contracts(op)) {
        for (const Access &input : op.inputs) {
          const Value &v = graph.values[input.value];
          if (v.kind != ValueKind::Weight || v.shape.size() < 2)
            continue;
          std::set<int> loops = loopsOf(input), common;
          for (int l : loops)
            if (!cuttable || cuttable->count(l))
              common.insert(l);
          cuttable = common;
        }
        why = "cannot shard its weights " + std::to_string(devices) +
              " ways without replicas";
      }
      restrictedOps += cuttable.has_value();
      for (const Spec &s : legal)
        if (!cuttable || cutsOnly(s, *cuttable))
          kept.push_back(s);
      break;
    }
    }
    if (kept.empty()) {
      error = std::string("strategy ") + strategyName(strategy) +
              " does not apply: op '" + op.name + "' " + loopList(op) + " " +
              why;
      return false;
    }
    allowed.push_back(std::move(kept));
  }
  if (strategy == Strategy::DataParallel && restrictedOps == 0) {
    error = "strategy dp does not apply: no op reads the batch (dimension 0 "
            "of the first activation argument of rank 2 or more)";
    return false;
  }
  if (strategy == Strategy::Spatial && restrictedOps == 0) {
    error = "strategy spatial does not apply: the program has no "
            "convolution or pooling";
    return false;
  }
  if (strategy == Strategy::Megatron && restrictedOps == 0) {
    error = "strategy megatron does not apply: the program has neither a "
            "contraction with a weight (an argument marked ein.weight) nor "
            "attention";
    return false;
  }
  return true;
}

} // namespace ein::planner
