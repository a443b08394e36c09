//===- EinTypes.h - ein types -----------------------------------*- C++ -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EINTYPES_H
#define EINSUMMABLE_DIALECT_EIN_IR_EINTYPES_H

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "Einsummable/Dialect/Ein/IR/EinTypes.h.inc"

#endif // EINSUMMABLE_DIALECT_EIN_IR_EINTYPES_H
