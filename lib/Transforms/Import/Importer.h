//===- Importer.h - ein-import's importer, private --------------*- C++ -*-===//
//
// The Importer turns one function's linalg on tensors into ein: ein-import
// (lib/Transforms/Import.cpp) runs one per function. Its methods are
// defined by topic in this folder: Importer.cpp (run, elementwise fusion,
// clean-up), Lookups.cpp (gathers, arg-reductions, multi-result generics),
// Windows.cpp (convolutions and poolings), Loops.cpp (unit-dimension reads,
// the floordiv loop split), LayoutOps.cpp (reshapes, slices, concats, pads,
// splats) and Generics.cpp (a generic to one ein.join_agg). Private to
// ein-import.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_LIB_TRANSFORMS_IMPORT_IMPORTER_H
#define EINSUMMABLE_LIB_TRANSFORMS_IMPORT_IMPORTER_H

#include "Einsummable/Dialect/Ein/IR/EinOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/SetVector.h"

#include <optional>

namespace mlir::ein::import_detail {

/// The aggregation `combine` performs, if it is one ein knows.
std::optional<AggKind> aggKindOf(Operation *combine);

/// Whether `value` is the identity of the reduction `combine` (an initial
/// value it may start from without changing its result). NaN is the
/// identity of maxnumf/minnumf (what linalg.softmax's decomposition starts
/// from), not of maximumf/minimumf, which propagate it.
bool isIdentity(Attribute value, Operation *combine);

/// The constant a linalg.fill writes (seen through reshapes), or null.
Attribute fillValue(Value tensor);

/// How two shapes that differ only by unit dimensions regroup: the
/// dimensions of the higher-rank one gathered onto the lower's.
SmallVector<ReassociationIndices> unitDimensionGroups(RankedTensorType from,
                                                      RankedTensorType to);

/// Imports one function: see run().
class Importer {
public:
  explicit Importer(func::FuncOp func) : func(func), builder(func) {}

  /// Imports the function: decomposes and generalizes its linalg ops,
  /// imports lookups, fuses elementwise chains, imports each generic, fill
  /// and layout op, then erases what is dead. Fails, with a diagnostic on
  /// the op that stands in the way, when something is not importable.
  LogicalResult run();

private:
  // Importer.cpp: clean-up and fusion.

  /// A reshape undoing the reshape it reads (a unit dimension added for a
  /// keepdim read and removed again) is its source.
  void foldReshapePairs();

  /// Top-level ops without side effects nothing uses any more (a fill's
  /// generator that only a folded reshape read, say), users first.
  void eraseDeadOps();

  /// Upstream elementwise fusion: an elementwise generic with one user is
  /// folded into that user when the user is elementwise too or reduces a
  /// single input (x * x into a sum of squares), so a chain such as
  /// RMSNorm's `x * rsqrt(mean + eps) * w` imports as one join whose body
  /// ein-fuse-composites can read whole. A producer is never folded into a
  /// contraction: a matmul keeps its plain product body (its kernel is a
  /// library call).
  LogicalResult fuseElementwise();

  // Loops.cpp: unit-dimension reads and the floordiv loop split.

  /// A generic reading a unit dimension of an operand at the constant 0
  /// (torch-mlir's keepdim tensors: `(d0, d1) -> (d0, 0)`) rewritten to read
  /// the operand collapsed without it; a result written so is computed
  /// collapsed and expanded back. Returns the generic unchanged when no map
  /// has a constant.
  FailureOr<linalg::GenericOp> dropUnitReads(linalg::GenericOp op);

  /// `value` collapsed to `type`, which lacks some of its unit dimensions.
  Value collapseTo(Location loc, Value value, RankedTensorType type);

  /// A generic reading an operand at `dK floordiv c` (GQA: query head h
  /// reads KV head h floordiv g) rewritten without it: loop k of extent n
  /// splits into k (n / c values) and a new innermost loop (c values),
  /// dK = dK * c + dNew. The floordiv becomes dK; an operand or the result
  /// indexed by dK itself is expanded there into two dimensions (and the
  /// result collapsed back after), linalg.index k is recomputed. Returns
  /// the generic unchanged when no map has a floordiv.
  FailureOr<linalg::GenericOp> splitFloorDivLoop(linalg::GenericOp op);

  // LayoutOps.cpp: layout ops, pads and splats.

  /// Reshapes, static unit-stride slices and concatenations map one to one
  /// onto ein's layout ops.
  LogicalResult importLayoutOps();

  /// A tensor.pad no window reads: along each padded dimension, a splat of
  /// the padding value before and after the source, concatenated (a join
  /// with no input yielding the constant, computed where needed, so a cut
  /// of the result reads what it needs of each piece by intersection).
  FailureOr<Value> padOf(tensor::PadOp pad);

  /// `source` as an ein.reshape regrouping its dimensions by `groups`, to
  /// `type` (by default the type of `op`'s result), at `op`'s location.
  Value reshapeOf(Operation *op, Value source,
                  ArrayRef<ReassociationIndices> groups, Type type = {});

  /// A tensor of `type` holding `value` everywhere: a join-agg with no
  /// inputs whose region yields it (a tensor constant would have to travel
  /// in the bundle; this is computed where it is needed). Null when `value`
  /// is not a float or integer.
  Value splat(Location loc, RankedTensorType type, Attribute value);

  /// `value` reshaped to `type`, which differs from it only by unit
  /// dimensions.
  Value reshapeBetween(Operation *op, Value value, RankedTensorType type);

  /// `dest` with `source` written at `offsets`, from dimension `dim` on:
  /// the part of `dest` before the inserted range along `dim`, the range
  /// itself (filled in recursively along the next dimensions) and the part
  /// after it, concatenated. Dimensions the source spans whole are skipped.
  Value insertInto(Operation *op, Value dest, Value source,
                   ArrayRef<int64_t> offsets, int64_t dim);

  // Lookups.cpp: gathers, arg-reductions and generics with several results.

  /// An embedding lookup, as front ends write one: a generic over the
  /// result (the indices' dimensions, then a row's) whose body reads its
  /// integer index, casts it, and extracts `table[index, d_r, ...]` from a
  /// tensor outside. Becomes ein.gather; returns whether it matched.
  bool importGather(linalg::GenericOp op);

  /// A generic with two results over one input, the running maximum and
  /// its index along one reduction loop, as torch-mlir writes argmax (and
  /// argmin, and max/min with indices): the body yields `maximumf(x, m)`
  /// (or a select of x on the compare) and `select(cmpf ogt x m, index,
  /// i)`, from -inf and 0. Becomes ein.arg_reduce for the indices and a
  /// max join-agg for the values, each only where read. Does nothing to
  /// other generics; fails, saying why, on a two-result generic it cannot
  /// take.
  LogicalResult importArgReduce(linalg::GenericOp op);

  /// A generic whose results are computed apart (each yield reads the
  /// inputs, the loop indices and its own accumulator only: a sum and a sum
  /// of squares together) becomes one generic per result, which the rest
  /// of the import takes as any other. Returns whether it split `op`.
  bool splitResults(linalg::GenericOp op);

  // Windows.cpp: convolutions and poolings.

  /// A convolution or pooling, as front ends write them (linalg's
  /// conv_2d_nhwc_hwcf, conv_2d_nchw_fchw, conv_2d_ngchw_gfchw,
  /// depthwise_conv_2d_nchw_chw, depthwise_conv_2d_nhwc_hwc(m),
  /// pooling_nhwc/nchw_max/sum, or generics of their form): an input read
  /// at `oh * stride + kh * dilation` in its rows and columns. A tensor.pad
  /// before it becomes its padding. Becomes ein.conv (with `groups` for the
  /// grouped and depthwise forms, their operands regrouped to 4-D) or
  /// ein.pool; returns false when the op reads no input through a window,
  /// and fails, saying why, when it does but is not one of those forms.
  FailureOr<bool> importWindow(linalg::GenericOp op);

  /// `value` regrouped to `type` by `groups`: the source of a reshape it
  /// already is from `type`, else an ein.reshape at `loc`.
  Value regrouped(Location loc, Value value,
                  ArrayRef<ReassociationIndices> groups, RankedTensorType type);

  // Generics.cpp: a generic to one join-agg.

  /// The loop indices of `map`, a projected permutation, or failure.
  FailureOr<SmallVector<int64_t>> indicesOf(linalg::GenericOp op, AffineMap map,
                                            unsigned operand);

  /// `op`, a generic on tensors with one result, as one ein.join_agg (and
  /// one more, elementwise, where its initial value must be combined after);
  /// fails, saying why, when it is not one.
  LogicalResult importGeneric(linalg::GenericOp op);

  /// Fills the join region: the body's ops that `joined` depends on, with
  /// linalg.index as ein.index, and a yield of `joined` in the accumulator
  /// type (extended where the body computes in a narrower float).
  LogicalResult buildJoin(linalg::GenericOp op, JoinAggOp join, Value joined,
                          bool joinReadsInit, ArrayRef<Attribute> folded);

  /// `result` combined elementwise with the reduction's initial value by
  /// the reduction's own `combine` (maxnumf stays maxnumf), in the
  /// accumulator type.
  Value combineWithInit(linalg::GenericOp op, Value result, Value init,
                        Operation *combine);

  func::FuncOp func;
  OpBuilder builder;

  /// Pads folded into a window's padding and reshapes its operands were
  /// regrouped through, users before what they read, erased once nothing
  /// reads them.
  llvm::SmallSetVector<Operation *, 4> foldedOps;
};

} // namespace mlir::ein::import_detail

#endif // EINSUMMABLE_LIB_TRANSFORMS_IMPORT_IMPORTER_H
