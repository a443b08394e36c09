//===- Pipeline.h - Pipeline stages weighed against intra-op plans -*- C++
//-*-===//
//
// Across slow links, is intra-op parallelism still right, or must stages be
// pipelined? A staged plan cuts the program's ops, in their topological
// order, into S stages of consecutive ops (balanced by FLOPs), runs stage s
// on node group s (K / S nodes of the K), and cuts the batch into m
// micro-batches: the program is copied m times over batch / m rows, each
// copy's op on its stage's devices, so that stage s works on micro-batch i
// while stage s + 1 works on micro-batch i - 1 (GPipe's forward schedule,
// which the simulator's per-GPU queues and dependencies give by
// themselves). Within a stage each op is cut by the search for the stage's
// devices (hierarchically where a stage spans several nodes, or restricted
// to a hand strategy); activations move between stages as the exchange
// program's transfers, over the links between nodes.
//
// Everything is priced on the same simulator as the intra-op plan, so the
// two are compared like for like (docs/distributed.md).
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PHYSICAL_PIPELINE_H
#define EINSUMMABLE_PHYSICAL_PIPELINE_H

#include "Einsummable/Physical/Exchange.h"
#include "Einsummable/Planner/Strategy.h"

#include <string>
#include <vector>

namespace ein::physical {

/// Copies of a program's ops in program order: (op of the original,
/// micro-batch or chunk; -1 for a whole op, run once).
using CopyOrder = std::vector<std::pair<size_t, int64_t>>;

/// A graph copied over micro-batches of its batch dimension.
struct MicroBatched {
  planner::Graph graph;
  /// Per op of `graph`: the op of the original it copies (-1: a slice or
  /// concat), and the micro-batch it computes (-1: an op that reads no
  /// batched value, kept once and shared by every micro-batch, or a concat).
  std::vector<int> origin, microBatch;
  /// The copies in the order they were made (the ops kept once come
  /// before them, the slices and concats among them).
  CopyOrder copies;
};

/// The batch loop of every op (-1 where it reads no batched value): the loop
/// over dimension 0 of the activation arguments (all of which must have it,
/// of one size), followed through the ops. Returns false with `error` naming
/// the op where the batch cannot be followed exactly: a batch dimension
/// read through several loops or a shifted or windowed access, an op that
/// aggregates over the batch, a weight indexed by the batch loop. `dims`,
/// if given, receives per value its batch dimension (-1: none).
bool batchLoopsOf(const planner::Graph &graph, std::vector<int> &loops,
                  int64_t &batch, std::string &error,
                  std::vector<int> *dims = nullptr);

/// How a program is followed along the dimension its chunks cut.
struct ChunkLoops {
  /// The activation arguments' dimension cut (0: the batch, 1: the
  /// sequence) and its extent.
  int dim = 0;
  int64_t extent = 0;
  /// Per op, its loop over the cut dimension (-1: none, or a whole op);
  /// per value, its cut dimension (-1: none).
  std::vector<int> loops, dims;
  /// Per op: run whole, once (the sequence only): an op that reads the
  /// sequence through several loops, as causal attention reads it through
  /// its queries and its keys. Its inputs' chunks are put back together
  /// before it and its result cut into chunks after it.
  std::vector<bool> whole;
  /// Per op: the loop it reads a growing prefix of the sequence through
  /// (-1: none). A causal op (attention) reads the sequence through its
  /// queries and its keys, but a chunk of queries sees only the keys up to
  /// its last query: chunk i of it is a copy over chunk i of the queries
  /// (`loops[o]`) and the first i + 1 chunks of the keys, put back together
  /// by a concat before it, its causal diagonal shifted by i chunks. Such
  /// an op is chunked like any other, not whole.
  std::vector<int> prefix;

  /// Whether op `o` of `graph` runs once, reading no chunked value, and
  /// its result is then cut into chunks where it is read along the
  /// sequence (a mask computed once from a constant).
  bool keptOnceAndCut(const planner::Graph &graph, size_t o) const {
    return loops[o] < 0 && !whole[o] && dims[graph.ops[o].output.value] >= 0;
  }

  /// Whether input `access` of op `o` reads a prefix of the sequence (its
  /// cut dimension through `prefix[o]`).
  bool readsPrefix(size_t o, const planner::Access &access) const {
    int d = dims[access.value];
    return prefix[o] >= 0 && d >= 0 &&
           access.dimLoops[d] == std::vector<int>{prefix[o]};
  }
};

/// The sequence loops of `graph`: as batchLoopsOf, along dimension 1 of
/// its activation arguments (which must all have it, of one size), for
/// programs of one batch row. Unlike the batch, a weight read along the
/// sequence loop (RoPE's table of positions) is cut with it, a causal op
/// reading it through its queries and its keys (attention, unshifted
/// diagonal) reads a prefix of the keys per chunk of queries
/// (ChunkLoops::prefix), and any other op reading the sequence through
/// several loops is a whole op (its result cut along the dimension of its
/// first such input's loop, which must write it alone). Returns false with
/// `error` naming the op where the sequence cannot be followed.
bool sequenceLoopsOf(const planner::Graph &graph, ChunkLoops &chunks,
                     std::string &error);

/// The order of the batched ops' copies (per op with a batch loop,
/// `loops[o] >= 0`): micro-batch-major, or with `opMajor` every
/// micro-batch's copy of one op before the next op's. Pairs (op,
/// micro-batch); microBatch and applyStagedPlan both copy in this order.
/// With `whole` (op-major only), each whole op comes once, as (op, -1),
/// between its producers' copies and its readers'.
CopyOrder copyOrder(const std::vector<int> &loops, int64_t copies, bool opMajor,
                    const std::vector<bool> *whole = nullptr);

/// `graph` over `microBatches` micro-batches (dividing the batch): each op
/// with a batch loop copied once per micro-batch (its batch loop of
/// batch / microBatches rows), micro-batch-major (every op of micro-batch
/// 0, then of 1, ...; with `opMajor`, every micro-batch's copy of the first
/// op, then of the second, ...), ops without one kept once, first.
/// Activation arguments and batched results are copied per micro-batch
/// (with `slices`, as the IR form has them: each argument stays whole and
/// is cut by a slice op per micro-batch, first, and each batched result is
/// put back whole by a concat op, last, when every micro-batch is copied;
/// their `origin` is -1); ties dropped. With `copies` < microBatches, only
/// the first `copies` micro-batches. `order`, if given, is the copies'
/// order instead (a topological one; no whole op).
bool microBatch(const planner::Graph &graph, int64_t microBatches,
                MicroBatched &result, std::string &error, int64_t copies = -1,
                bool opMajor = false, bool slices = false,
                const CopyOrder *order = nullptr);

/// `graph` over `chunks` chunks of its sequence (sequenceLoopsOf), as a
/// chunked plan lowers it: op-major (else chunk-major, where it has no whole
/// op), arguments cut by slices (weights read
/// along the sequence too), results put back by concats, each whole op
/// after concats of its inputs' chunks and before slices of its result
/// (whole ops' and the concats' and slices' `microBatch` is -1), chunk i of
/// a prefix op after the concat of its keys' first i + 1 chunks (whose
/// `microBatch` is i).
bool sequenceChunks(const planner::Graph &graph, int64_t chunks,
                    MicroBatched &result, std::string &error,
                    bool opMajor = true, const CopyOrder *order = nullptr);

/// Stage boundaries for `stages` stages of consecutive ops: per op its
/// stage, non-decreasing, every stage non-empty, minimising the largest
/// stage's FLOPs (ties: fewer bytes live across the boundaries).
std::vector<int> balancedStages(const planner::Graph &graph, int64_t stages);

/// How a dataflow program orders its copies, which its GPUs follow among
/// their ready steps.
enum class ChunkOrder {
  /// Op by op: each op's chunks back to back (a later op waits for every
  /// chunk); the only order with whole ops.
  Op,
  /// Chunk by chunk (micro-batch-major): the first chunk runs ahead, later
  /// chunks fill its waits. A staged plan's micro-batches always.
  Chunk,
  /// By critical path: the copy with the longest chain of kernel time
  /// after it (its own included) first, ties op by op. Chunk i of causal
  /// attention does more than chunk i - 1, so its chain comes first.
  CriticalPath,
};

/// "op", "chunk" or "critical path".
const char *chunkOrderName(ChunkOrder order);

/// One staged plan, priced. One stage over several micro-batches is a
/// **chunked** plan: every GPU runs every op, chunk by chunk (op-major:
/// each op's chunks back to back), as a dataflow bundle (`dataflow`: each
/// GPU's steps on several streams, transfers beside kernels), so that the
/// exchange of one chunk runs while another computes (docs/physical.md).
struct StagedPlan {
  bool feasible = false;
  std::string error;
  int64_t stages = 1, microBatches = 1;
  bool dataflow = false;
  /// The order of the copies, which a dataflow program's GPUs follow among
  /// their ready steps (ChunkOrder; stagedPlan prices a dataflow plan in
  /// each and keeps the fastest), and the copies in it (applyStagedPlan
  /// makes them so).
  ChunkOrder order = ChunkOrder::Chunk;
  CopyOrder copies;
  /// The activation arguments' dimension the micro-batches or chunks cut:
  /// 0, the batch; 1, the sequence (a chunked plan of a program of one
  /// batch row, sequenceLoopsOf).
  int chunkDim = 0;
  /// Per op of the original graph, its stage and its spec (cut for one
  /// micro-batch on a stage's `stageDevices` devices; every copy takes it).
  std::vector<int> stageOf;
  std::vector<planner::Spec> specs;
  int64_t stageDevices = 0;
  /// The simulated step on the topology, bytes moved between nodes and in
  /// all, and how many transfers cross nodes.
  double seconds = 0, bytesBetweenNodes = 0, bytes = 0;
  int64_t transfersBetweenNodes = 0;
  /// Per stage, the simulated busy time of its busiest GPU.
  std::vector<double> stageBusy;
};

/// The staged plan of `graph` on `topology` (K nodes of G GPUs): `stages`
/// (dividing K; 1: a chunked plan) stages over `microBatches` (dividing the
/// batch) micro-batches, each stage's ops cut by the search for K / stages x G
/// devices restricted to `within` (optimal: the exact search, hierarchical
/// across a stage's nodes). `options` gives the state cap and the weights'
/// replicability; its device count is the topology's.
StagedPlan stagedPlan(const planner::Graph &graph,
                      const planner::SearchOptions &options,
                      const Topology &topology, int64_t stages,
                      int64_t microBatches,
                      planner::Strategy within = planner::Strategy::Optimal);

/// stagedPlan with a dataflow plan's copies in the order given rather than
/// the fastest (a plan that is no dataflow program orders its micro-batches
/// chunk by chunk whatever `order` says).
StagedPlan stagedPlanInOrder(const planner::Graph &graph,
                             const planner::SearchOptions &options,
                             const Topology &topology, int64_t stages,
                             int64_t microBatches, planner::Strategy within,
                             ChunkOrder order);

/// Every staged plan worth pricing on `topology`: stages over each divisor
/// of the node count above 1, micro-batches over each power of two
/// dividing the batch (and the batch itself), up to `maxMicroBatches`.
/// Empty when there is one node; one infeasible entry saying why where the
/// batch cannot be followed.
std::vector<StagedPlan>
stagedPlans(const planner::Graph &graph, const planner::SearchOptions &options,
            const Topology &topology, int64_t maxMicroBatches = 16,
            planner::Strategy within = planner::Strategy::Optimal);

/// Every chunked plan worth pricing on `topology` (one stage, see
/// StagedPlan): chunks over each power of two from 2 dividing the batch
/// (and the batch itself), up to `maxChunks`; where the batch is 1, chunks
/// of the sequence (powers of two from 2 dividing it, up to `maxChunks`).
/// One infeasible entry saying why where neither can be followed.
std::vector<StagedPlan>
chunkedPlans(const planner::Graph &graph, const planner::SearchOptions &options,
             const Topology &topology, int64_t maxChunks = 16,
             planner::Strategy within = planner::Strategy::Optimal);

/// The bytes `program`'s transfers carry between nodes of `topology`, and
/// how many such transfers there are.
double bytesBetweenNodes(const DeviceProgram &program, const Topology &topology,
                         int64_t *transfers = nullptr);

} // namespace ein::physical

#endif // EINSUMMABLE_PHYSICAL_PIPELINE_H
