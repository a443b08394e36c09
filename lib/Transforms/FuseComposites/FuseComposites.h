//===- FuseComposites.h - ein-fuse-composites' matchers ---------*- C++ -*-===//
//
// The composites ein-fuse-composites (lib/Transforms/FuseComposites.cpp)
// recognises, one family a file in this folder, each with one entry point
// declared here: Softmax.cpp, Attention.cpp, RmsNorm.cpp, LayerNorm.cpp
// and RotateHalf.cpp; JoinRegions.cpp holds what they share for reading
// join regions. Private to ein-fuse-composites.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_LIB_TRANSFORMS_FUSECOMPOSITES_FUSECOMPOSITES_H
#define EINSUMMABLE_LIB_TRANSFORMS_FUSECOMPOSITES_FUSECOMPOSITES_H

#include "Einsummable/Dialect/Ein/IR/EinOps.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir::ein::fuse_composites_detail {

//===----------------------------------------------------------------------===//
// Reading join regions (JoinRegions.cpp)
//===----------------------------------------------------------------------===//

/// The float constant `v` holds, seen through casts (a narrowing rounds
/// it as the program does).
std::optional<double> constantOf(Value v);

/// A scalar as a product: a constant coefficient times leaves raised to
/// integer powers (mulf, divf, negf and powf by an integer constant are
/// looked through; casts too).
struct Product {
  double coefficient = 1;
  SmallVector<std::pair<Value, int>> factors;

  void multiply(Value leaf, int power);
  void multiply(const Product &other, int power);
  /// The power of `leaf` (0 when absent).
  int powerOf(Value leaf) const;
  /// Whether the leaves are exactly `want` (each with its power).
  bool hasFactors(ArrayRef<std::pair<Value, int>> want) const;
};

/// `v`, seen through float casts, as a Product.
Product productOf(Value v);

/// The identity index list of a rank-r value: d0, ..., d(r-1).
bool isIdentity(ArrayRef<int64_t> indices, int64_t rank);

/// The identity list without `dim`.
bool isIdentityWithout(ArrayRef<int64_t> indices, int64_t rank, int64_t dim);

/// A join-agg not yet planned (no spec, no device).
bool isLogical(JoinAggOp op);

/// `op` is elementwise over its output: no aggregation, the identity
/// output list.
bool isElementwise(JoinAggOp op);

/// The only user of `v`, or null.
Operation *soleUser(Value v);

/// Erases `ops` in order, each only once nothing uses it any more.
void eraseIfDead(ArrayRef<Operation *> ops);

//===----------------------------------------------------------------------===//
// The composites, in the order the pass tries them
//===----------------------------------------------------------------------===//

/// Rewrites the softmax rooted at the max reduction `max`, if it is one.
/// A second max reduction it erases (the safe softmax's) joins `erased`.
bool fuseSoftmax(JoinAggOp max, SmallPtrSetImpl<Operation *> &erased);

/// Rewrites the attention whose softmax is `softmax`, if it is one. Where
/// the softmax reads a product of two tensors (the scores of an attention)
/// but the rest does not match, `missed` says what stood in the way.
bool fuseAttention(SoftmaxOp softmax, std::string &missed);

/// Rewrites `op` if it is `x * rsqrt(sum(x * x) / n + eps) * w`.
bool fuseRmsNorm(JoinAggOp op);

/// Rewrites `op` if it is `(x - m) * rsqrt(v + eps) [* w] [+ b]` with
/// `m = sum(x) / n` and `v = sum((x - m)^2) / n` over the last dimension,
/// as ein-import leaves PyTorch's `native_layer_norm` (and the torch-mlir
/// decomposition): the sum, the mean (its own op or in each body), the sum
/// of squared deviations and one elementwise join.
bool fuseLayerNorm(JoinAggOp op);

/// Rewrites `concat(-x[.., h:], x[.., :h])` along dimension D (x's D-th
/// extent 2h) as a rotation over D split into (2, h):
///   xr = reshape x to [.., 2, h, ..]
///   r[.., c, j, ..] = sum over c' of (c + c' == 1 ? (c == 0 ? -1 : 1) : 0)
///                                    * xr[.., c', j, ..]
///   reshape r back to x's shape
/// a join whose every loop a spec may cut, where a concat of slices would
/// fix D's cut to its halves.
bool rewriteRotateHalf(ConcatOp cat);

} // namespace mlir::ein::fuse_composites_detail

#endif // EINSUMMABLE_LIB_TRANSFORMS_FUSECOMPOSITES_FUSECOMPOSITES_H
