//===- Passes.h - ein passes ------------------------------------*- C++ -*-===//

#ifndef EINSUMMABLE_TRANSFORMS_PASSES_H
#define EINSUMMABLE_TRANSFORMS_PASSES_H

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::ein {

#define GEN_PASS_DECL
#include "Einsummable/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Einsummable/Transforms/Passes.h.inc"

} // namespace mlir::ein

#endif // EINSUMMABLE_TRANSFORMS_PASSES_H
