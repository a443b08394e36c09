//===- EinInterfaces.h - ein op interfaces ----------------------*- C++ -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_H
#define EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_H

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "mlir/IR/OpDefinition.h"

#include "Einsummable/Dialect/Ein/IR/EinInterfaces.h.inc"

namespace mlir::ein {

/// Checks a spec against the loops of the op that carries it: one part per
/// loop, no loop cut into more parts than it has elements, and one join block
/// per device of the enclosing target.
LogicalResult verifySpec(SpecOpInterface op);

} // namespace mlir::ein

#endif // EINSUMMABLE_DIALECT_EIN_IR_EININTERFACES_H
