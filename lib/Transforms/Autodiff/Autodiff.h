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

/// `value` converted to the float type `type` (extf, truncf or itself).
Value castFloat(OpBuilder &builder, Location loc, Value value, Type type);

/// Appends to `func` the gradient of its first result with respect to each
/// argument marked {ein.weight} or {ein.grad}, as new results in argument
/// order. Fails with an error naming what stands in the way.
LogicalResult appendGradients(func::FuncOp func);

} // namespace mlir::ein::autodiff_detail

#endif // EINSUMMABLE_LIB_TRANSFORMS_AUTODIFF_AUTODIFF_H
