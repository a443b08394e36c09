//===- EinOps.h - ein operations --------------------------------*- C++ -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EINOPS_H
#define EINSUMMABLE_DIALECT_EIN_IR_EINOPS_H

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "Einsummable/Dialect/Ein/IR/EinInterfaces.h"
#include "Einsummable/Dialect/Ein/IR/EinTypes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "Einsummable/Dialect/Ein/IR/EinOps.h.inc"

namespace mlir::ein {

/// `v` seen through float widenings and narrowings (arith.extf,
/// arith.truncf): what a join region computes before its roundings, for
/// the passes that read regions as arithmetic.
Value stripFloatCasts(Value v);

/// What `op`'s join region yields, seen through float casts.
Value yieldedValue(JoinAggOp op);

} // namespace mlir::ein

#endif // EINSUMMABLE_DIALECT_EIN_IR_EINOPS_H
