//===- Autodiff.h - ein-autodiff's rules ------------------------*- C++ -*-===//
//
// The rules ein-autodiff (lib/Transforms/Autodiff.cpp) applies: Region.cpp
// differentiates the scalar region of a join-agg with respect to one of its
// arguments; Adjoints.cpp holds the adjoint of each op kind and the reverse
// sweep over a function. Private to ein-autodiff.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_LIB_TRANSFORMS_AUTODIFF_AUTODIFF_H
#define EINSUMMABLE_LIB_TRANSFORMS_AUTODIFF_AUTODIFF_H

#include "Einsummable/Conversion/BlockKernels/BlockKernels.h"
#include "Einsummable/Dialect/Ein/IR/EinOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ein::autodiff_detail {

/// The derivative of `value` (computed in the block `builder` inserts
/// into) with respect to the block argument `wrt`, built with `builder`
/// from the values already there: null where it is zero. Fails, with an
/// error on the op, at an op without a rule whose operands carry a
/// derivative.
FailureOr<Value> differentiate(OpBuilder &builder, Value value,
                               BlockArgument wrt);

//===----------------------------------------------------------------------===//
// Building join-aggs (Joins.cpp)
//===----------------------------------------------------------------------===//

RankedTensorType tensorType(Value v);

/// The type a join-agg with result element type `element` accumulates in
/// by default (JoinAggOp::getAccType without `acc`).
Type defaultAcc(Type element);

/// d0, ..., d(rank-1).
SmallVector<int64_t> identity(int64_t rank);

/// A join-agg of `inputs` read at `indices`, writing `type` at `out`,
/// whose region `body` fills (given the block's arguments and the
/// accumulator type) and yields (cast to the accumulator type).
JoinAggOp createJoin(OpBuilder &b, Location loc, RankedTensorType type,
                     ValueRange inputs, ArrayRef<SmallVector<int64_t>> indices,
                     ArrayRef<int64_t> out, AggKind agg,
                     function_ref<Value(OpBuilder &, ValueRange, Type)> body);

/// A tensor of `type` holding `x` everywhere.
Value fill(OpBuilder &b, Location loc, RankedTensorType type, double x);

/// The type of `x` with dimension `dim` of size `size`.
RankedTensorType withDim(Value x, int64_t dim, int64_t size);

/// `x[..., offset : offset + size, ...]` along `dim` (`x` itself when that
/// is all of it).
Value sliceDim(OpBuilder &b, Location loc, Value x, int64_t dim, int64_t offset,
               int64_t size);

/// `x` with `low` elements of `value` before and `high` after along
/// `dim` (one concat); a negative count removes that many instead.
Value padDim(OpBuilder &b, Location loc, Value x, int64_t dim, int64_t low,
             int64_t high, double value);

//===----------------------------------------------------------------------===//
// Convolutions and pools (Windows.cpp)
//===----------------------------------------------------------------------===//

/// The adjoints of a convolution's input and filter (null where not
/// asked for), themselves convolutions.
struct ConvAdjoints {
  Value input, filter;
};
ConvAdjoints convAdjoints(OpBuilder &b, ConvOp op, Value adjoint, bool input,
                          bool filter);

/// `op`'s values as the windows it reads, stacked, and a max or sum
/// join-agg over them, built with `b`: what ein-autodiff differentiates in
/// the pool's place.
Value expandPool(OpBuilder &b, PoolOp op);

//===----------------------------------------------------------------------===//
// Optimizers (Optimizer.cpp)
//===----------------------------------------------------------------------===//

/// One optimizer step appended after the gradients, as torch.optim
/// computes it. The learning rate (and AdamW's step count) are scalar
/// arguments of the function, so they may change between steps.
struct OptimizerConfig {
  enum class Kind { None, Sgd, AdamW };
  Kind kind = Kind::None;
  double momentum = 0, weightDecay = 0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  /// Clip the gradients to this global 2-norm first (0: no clipping).
  double maxGradNorm = 0;
};

/// Parses ein-autodiff's `optimizer` option: "" (none),
/// "sgd[:momentum=M,nesterov=0|1,weight_decay=W,max_grad_norm=N]" or
/// "adamw[:beta1=B1,beta2=B2,eps=E,weight_decay=W,max_grad_norm=N]".
/// Fails with `error` naming the bad item.
FailureOr<OptimizerConfig> parseOptimizer(StringRef text, std::string &error);

/// Appends to `func` the arguments the step reads (the learning rate,
/// AdamW's step count, each weight's state) and builds the updated
/// weights and state with `b`; returns them with the argument each one
/// replaces after the step.
SmallVector<std::pair<Value, unsigned>>
appendOptimizerStep(func::FuncOp func, OpBuilder &b,
                    ArrayRef<BlockArgument> weights, ArrayRef<Value> gradients,
                    const OptimizerConfig &config);

//===----------------------------------------------------------------------===//
// The sweep (Adjoints.cpp)
//===----------------------------------------------------------------------===//

/// Appends to `func` the gradient of its first result with respect to each
/// argument marked {ein.weight} or {ein.grad}, as new results in argument
/// order; with an optimizer, the weights' gradients feed one step of it
/// instead and the updated weights and state are the new results (each
/// marked `ein.updates` with the argument it replaces). Fails with an
/// error naming what stands in the way.
LogicalResult appendGradients(func::FuncOp func,
                              const OptimizerConfig &optimizer);

} // namespace mlir::ein::autodiff_detail

#endif // EINSUMMABLE_LIB_TRANSFORMS_AUTODIFF_AUTODIFF_H
