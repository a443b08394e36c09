//===- Cost.h - Specs and the communication-cost proxy ----------*- C++ -*-===//
//
// Spec enumeration and the byte proxy of docs/planner.md with a busiest-GPU
// compute term; see docs/planner.md for the definitions and how the terms
// combine.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PLANNER_COST_H
#define EINSUMMABLE_PLANNER_COST_H

#include "Einsummable/Planner/Graph.h"
#include "ein/chip.h"

#include <cstdint>
#include <vector>

namespace ein::planner {

/// Parts per loop; their product is the device count.
using Spec = std::vector<int64_t>;

/// A half-open box: per dimension [begin, end).
struct Box {
  std::vector<int64_t> begin, end;
  int64_t volume() const;
};

/// The intersection of two boxes of one value (possibly empty).
Box intersect(const Box &a, const Box &b);

/// A block of a value on a device.
struct Placed {
  int64_t device;
  Box box;
};

/// What the planner knows of the machine and what it may assume.
struct Options {
  int64_t devices = 1;
  /// Weights may be replicated for free. When false (a memory limit forbids
  /// replicas), weights are charged like activations.
  bool weightsReplicable = true;
  /// Bytes of communication one FLOP on the busiest GPU is worth: the
  /// ratio of the machine's aggregate link bandwidth (bytes/s, all GPUs
  /// sending at once) to one GPU's FLOP rate (ein::bytesPerFlop). This
  /// default is for 8 GPUs of the reference chip; ein-decompose asks the
  /// chip table for the target's chip and device count.
  double bytesPerFlop = ::ein::bytesPerFlop(chipInfo(kReferenceChip), 8);
  /// What the compute term charges: the slowest join block's time by the
  /// chip's measured kernel tables (blockSeconds), as FLOPs at the gemm
  /// rate; false: the busiest block's FLOP count.
  bool kernelTimes = false;
  /// On a topology of several nodes: GPUs per node (block k runs on GPU k,
  /// so node k / gpusPerNode; 0: one node), and what a byte moved between
  /// nodes counts for against one moved inside a node (the ratio of a GPU's
  /// bandwidth inside its node to its bandwidth across nodes), so that
  /// plans keep heavy exchanges inside nodes.
  int64_t gpusPerNode = 0;
  double crossNodeWeight = 1;
  /// The program runs as a dataflow bundle (a chunked plan,
  /// docs/physical.md): each GPU's kernels spread over several streams, so
  /// a kernel waits for its dependencies only. The exchange programs mark
  /// every kernel unordered and queue transfers on queue `devices` + the
  /// receiving GPU, beside its kernels, in program order (the bundle's copy
  /// stream runs them so).
  bool dataflow = false;
};

/// Sets `kernelTimes` from a pass's `compute` option: "kernels" or "flops";
/// anything else is false with `error` saying so.
bool parseCompute(const std::string &compute, bool &kernelTimes,
                  std::string &error);

/// What one byte moved from GPU `from` to GPU `to` counts for in the proxy:
/// options.crossNodeWeight between nodes, else 1.
double byteWeight(const Options &options, int64_t from, int64_t to);

/// How many join blocks `op`'s specs make on `devices` GPUs: `devices`,
/// unless the op is too small to be cut that many ways (fewer elements
/// along its cuttable loops, or no legal combination): then the most it can
/// be cut into, and the other GPUs sit its step out.
int64_t usableBlocks(const Op &op, int64_t devices);

/// Every legal spec of `op` for `devices` GPUs, in decreasing lexicographic
/// order of the parts (outer loops cut most first, which is also how the
/// search breaks ties): products equal usableBlocks(op, devices), no loop
/// cut into more parts than it has elements, uncuttable loops left whole,
/// and every operand dimension that spans several loops cut at the points
/// an ordinary cut of it would be.
std::vector<Spec> enumerateSpecs(const Op &op, int64_t devices);

/// Whether `spec` satisfies the rules enumerateSpecs applies.
bool isLegalSpec(const Op &op, const Spec &spec, int64_t devices);

/// An op under one spec: what each input must hold where, what the result
/// holds where, and its own cost terms.
struct OpPlan {
  /// Per input: each distinct block the join reads, at the lowest join
  /// block (device) that reads it.
  std::vector<std::vector<Placed>> needs;
  /// Per input: the layout an argument read there arrives in: its needs,
  /// except where a windowed read's needs overlap (halos), which arrive as
  /// the even cut of their own parts and move the halos.
  std::vector<std::vector<Placed>> arrivals;
  /// Per input: bytes of the extra copies the join needs (copies - 1 of
  /// each block). Zero for replicable weights.
  std::vector<double> joinBytes;
  /// The result's blocks after aggregation, each at the lowest join block
  /// that produces it.
  std::vector<Placed> holds;
  int64_t fanIn = 1;
  double aggBytes = 0;
  /// FLOPs of the busiest join block.
  double busiestFlops = 0;
  /// Seconds of the slowest join block (blockSeconds).
  double busiestSeconds = 0;
};

OpPlan planOp(const Graph &graph, const Op &op, const Spec &spec,
              const Options &options);

/// The box of `access`'s value that join block `coords` of `op` under
/// `spec` touches (empty where a touch op's block misses the operand).
Box accessBox(const Access &access, const Graph &graph, const Op &op,
              const Spec &spec, const std::vector<int64_t> &coords);

/// The FLOPs of join block `coords` of `op` under `spec` (causal attention
/// counts only visible pairs).
double blockFlops(const Op &op, const Spec &spec,
                  const std::vector<int64_t> &coords);

/// Whether `op`'s join blocks under `spec` hold partial sums (a loop the
/// result does not index, summed over, is cut).
bool partialBlocks(const Op &op, const Spec &spec);

/// Seconds join block `coords` of `op` under `spec` takes on the reference
/// chip: a launch plus the slower of its work and its bytes at HBM bandwidth
/// (read and written), its work priced by what runs it (Graph.h KernelKind):
/// a gemm by the chip's measured gemm times (dimensions padded to 8, as the
/// CUDA backend pads them; f32 partials write their extra bytes on top),
/// attention by its measured attention times (a causal block by its visible
/// share), a generated kernel by its FLOPs at the gemm rate; a reshape (in
/// place) takes none, nor does a slice or concat whose inputs' regions are
/// each a run of its block's rows (laid out in place; other regions are
/// copied: a launch and their bytes read and written).
double blockSeconds(const Graph &graph, const Op &op, const Spec &spec,
                    const std::vector<int64_t> &coords);

/// Bytes of `needs` that `holds` keeps on another device (what must move),
/// each weighted by byteWeight where `options` is given. Where the holds do
/// not cover a need, the uncovered part costs nothing: it can arrive where
/// it is needed.
double movedBytes(const std::vector<Placed> &holds,
                  const std::vector<Placed> &needs, int64_t elementBytes,
                  const Options *options = nullptr);

} // namespace ein::planner

#endif // EINSUMMABLE_PLANNER_COST_H
