//===- StridedView.h - Copies a library step can read in place --*- C++ -*-===//
//
// A slice of a block, a split of its dimensions and a transpose are all
// copies a strided read does without: each element of the copy is one of
// the source's, at an offset plus one stride per dimension. These find the
// chains of such copies in device-level ein (a QKV split of one projection
// into heads, a head transpose) and describe them as one strided view, which
// a library step that takes strided tensors (cuDNN's fused attention) reads
// in place.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_CONVERSION_BLOCKKERNELS_STRIDEDVIEW_H
#define EINSUMMABLE_CONVERSION_BLOCKKERNELS_STRIDEDVIEW_H

#include "Einsummable/Dialect/Ein/IR/EinOps.h"

namespace mlir::ein {

/// `value[i] = source[offset + sum_k i_k strides[k]]`, `source` read as its
/// elements in row-major order.
struct StridedView {
  Value source;
  int64_t offset = 0;
  SmallVector<int64_t> strides;
};

/// Whether `block` is a device-level join-agg that only transposes its one
/// input: no aggregation, every loop an index of both the input and the
/// result, one element type, and a region that yields its argument (widened
/// and narrowed back at most: an exact copy).
bool isExactTranspose(JoinAggOp block);

/// `value` as a view of the furthest value it copies on its GPU, through
/// static unit-stride `tensor.extract_slice`, `ein.reshape` (expanding, and
/// collapsing where the collapsed dimensions are contiguous) and exact
/// transposes; `value` itself, dense, where it copies nothing. A dimension
/// of extent 1 gets the stride a dense layout would give it.
StridedView traceStridedView(Value value);

/// Whether `view` of `value` is its source's elements in order: a reshape
/// would do, and no copy is saved.
bool isDenseView(const StridedView &view, Value value);

/// Where a view that permutes the dimensions of its dense source (every
/// source element read once, nothing else) puts each source dimension in
/// its result's row-major storage: one stride per source dimension (any for
/// a dimension of extent 1). Failure for any other view.
FailureOr<SmallVector<int64_t>> permutationStrides(ViewOp view);

} // namespace mlir::ein

#endif // EINSUMMABLE_CONVERSION_BLOCKKERNELS_STRIDEDVIEW_H
