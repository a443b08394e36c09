//===- EinDialect.h - The ein dialect ---------------------------*- C++ -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EINDIALECT_H
#define EINSUMMABLE_DIALECT_EIN_IR_EINDIALECT_H

#include "mlir/IR/Dialect.h"

#include "Einsummable/Dialect/Ein/IR/EinDialect.h.inc"

#endif // EINSUMMABLE_DIALECT_EIN_IR_EINDIALECT_H
