//===- Passes.h - ein passes ------------------------------------*- C++ -*-===//

#ifndef EINSUMMABLE_TRANSFORMS_PASSES_H
#define EINSUMMABLE_TRANSFORMS_PASSES_H

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ein {

#define GEN_PASS_DECL
#include "Einsummable/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Einsummable/Transforms/Passes.h.inc"

} // namespace mlir::ein

#endif // EINSUMMABLE_TRANSFORMS_PASSES_H
