//===- EinProgramForm.h - ein types as program.json values ------*- C++ -*-===//
//
// How MLIR types, aggregation kinds and constants map to ein::Program's
// (runtime/include/ein/program.h). Each op's own entry is its
// SpecOpInterface::describeInProgram.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EINPROGRAMFORM_H
#define EINSUMMABLE_DIALECT_EIN_IR_EINPROGRAMFORM_H

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"
#include "ein/program.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace mlir::ein {

/// The program.json element type of `type`, if it has one.
std::optional<::ein::DType> programDType(Type type);

/// The program.json aggregation of a join_agg, if it has one.
std::optional<::ein::Agg> programAgg(AggKind kind);

/// A float or integer attribute as a program.json number (i1 as 0 or 1).
std::optional<double> programScalar(Attribute value);

} // namespace mlir::ein

#endif // EINSUMMABLE_DIALECT_EIN_IR_EINPROGRAMFORM_H
