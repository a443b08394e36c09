//===- EinAttrs.h - ein attributes and enums --------------------*- C++ -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EINATTRS_H
#define EINSUMMABLE_DIALECT_EIN_IR_EINATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"

#include "ein/target.h"

#include <optional>

#include "Einsummable/Dialect/Ein/IR/EinEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Einsummable/Dialect/Ein/IR/EinAttrs.h.inc"

namespace mlir::ein {

/// The `#ein.target` of the module enclosing `op`, or null.
TargetAttr getTarget(Operation *op);

/// The module's `#ein.target`; when it has none, emits "`pass` needs the
/// module's #ein.target; run ein-attach-target first" and returns null.
TargetAttr requireTarget(ModuleOp module, StringRef pass);

/// Checks that `device` names a GPU of the enclosing target (any
/// non-negative number when there is no target yet). `what` names the
/// attribute in the diagnostic.
LogicalResult verifyDevice(Operation *op, int64_t device, StringRef what);

} // namespace mlir::ein

#endif // EINSUMMABLE_DIALECT_EIN_IR_EINATTRS_H
