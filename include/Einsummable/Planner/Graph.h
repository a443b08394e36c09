//===- Graph.h - The planner's view of a program ----------------*- C++ -*-===//
//
// The logical optimizer works on this plain C++ model of a program, not on
// MLIR: values (tensors) and ops over loops. A pass builds it from ein IR
// (lib/Plan/BuildGraph.cpp); unit tests build it by hand.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLANNER_GRAPH_H
#define EINSUMMABLE_PLANNER_GRAPH_H

#include <cstdint>
#include <string>
#include <vector>

namespace ein::planner {

/// Where a value comes from, which decides what its layout costs.
enum class ValueKind {
  /// A function argument that may arrive in any non-overlapping partition
  /// for free; replicating it is charged.
  Activation,
  /// A function argument laid out ahead of time, in any layout, replicated
  /// included, for free.
  Weight,
  /// A tensor constant: materialised wherever it is needed, for free,
  /// whatever the options say of weights.
  Constant,
  /// The result of an op.
  Intermediate,
};

struct Value {
  std::string name;
  std::vector<int64_t> shape;
  int64_t elementBytes = 4;
  ValueKind kind = ValueKind::Intermediate;
  /// A pinned argument (a user's `shard.shard` on it): the parts per
  /// dimension it arrives in, fixed; moving it elsewhere is charged. Empty
  /// when free.
  std::vector<int64_t> pinnedParts;
};

/// How one operand (or the result) of an op is indexed by its loops.
struct Access {
  int value = -1;
  /// Per dimension, the loops it spans, outermost first (a collapsed
  /// dimension spans several loops; most span one).
  std::vector<std::vector<int>> dimLoops;
  /// For touch ops (slice, concat): per dimension, what to add to a loop
  /// coordinate to get the operand's coordinate; the region a block needs
  /// is then clipped to the operand's shape. Empty for ordinary accesses.
  std::vector<int64_t> shift;
  /// Windowed reads (convolution, pooling), with `shift`: per dimension, a
  /// block of its loop covering [a, b) reads [a * stride + shift,
  /// (b - 1) * stride + shift + extent), clipped: its own rows and the halo
  /// its window reaches into. Empty means 1 everywhere.
  std::vector<int64_t> stride, extent;

  /// Whether some dimension reads more than its loop's block (a halo).
  bool windowed() const;
};

/// Attention's causal structure, for the busiest-GPU compute term.
struct CausalAttention {
  int queryLoop = -1, keyLoop = -1;
  int64_t queryOffset = 0, keyOffset = 0;
};

/// What runs an op's join block, for the compute term's kernel times
/// (blockSeconds).
enum class KernelKind {
  /// A generated kernel (or one priced like it): the slower of its FLOPs at
  /// the chip's gemm rate and its bytes at HBM bandwidth.
  Generated,
  /// A library gemm: the chip's measured gemm times.
  Gemm,
  /// Fused attention (loops batch, kv_head, group, query, key): the chip's
  /// measured attention times.
  Attention,
  /// No kernel: a reshape of row-major blocks, which a bundle does in place.
  InPlace,
  /// A slice or concat (ein.slice, ein.concat): its block is its inputs'
  /// regions put together, which a bundle lays out in place where a region
  /// is a run of the block's rows (the whole block, a chunk of its first
  /// cut dimension) and copies otherwise (touchSeconds in Cost.h).
  Touch,
};

/// A library gemm's loops: batch loops (both operands batched), loops
/// folded into the rows (the batch of an operand the other lacks), the
/// result's rows and columns, the summed loop.
struct GemmLoops {
  std::vector<int> batch, rows;
  int m = -1, n = -1, k = -1;
};

struct Op {
  std::string name;
  std::vector<int64_t> loopSizes;
  std::vector<std::string> loopNames;
  /// Loops a spec may cut (the target's kernels and the op's own rules).
  std::vector<bool> cuttable;
  std::vector<Access> inputs;
  Access output;
  /// Whether loops absent from the output are aggregated (a join-agg with a
  /// reduction); the partial outputs move in `accBytes` per element.
  int64_t accBytes = 4;
  /// Floating-point work per point of the loop space (a multiply-add is 2;
  /// an aggregation counts as one operation).
  double flopsPerPoint = 0;
  /// Set for causal attention: only (query, key) pairs with
  /// key + keyOffset <= query + queryOffset count as work.
  bool causal = false;
  CausalAttention attention;
  KernelKind kernel = KernelKind::Generated;
  /// For KernelKind::Gemm.
  GemmLoops gemm;
  /// Pins (a user's `shard.shard` annotations): per input, the parts per
  /// dimension that input must be read in (empty: free), and the parts of
  /// the result after aggregation (empty: free). Specs that cut otherwise
  /// are not considered.
  std::vector<std::vector<int64_t>> pinnedInputs;
  std::vector<int64_t> pinnedOutput;
};

/// A result that must leave in the layout its paired activation argument
/// arrived in, so stacked blocks compose (--tie-layout).
struct Tie {
  int argument = -1;
  int result = -1;
};

struct Graph {
  std::vector<Value> values;
  std::vector<Op> ops; // in a topological order
  std::vector<int> results;
  std::vector<Tie> ties;
};

} // namespace ein::planner

#endif // EINSUMMABLE_PLANNER_GRAPH_H
