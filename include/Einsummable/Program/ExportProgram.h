//===- ExportProgram.h - Logical ein IR to program.json ---------*- C++ -*-===//
//
// Builds the MLIR-free description of a logical program that the reference
// evaluator reads (format: docs/program-format.md, reader:
// runtime/include/ein/program.h).
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PROGRAM_EXPORTPROGRAM_H
#define EINSUMMABLE_PROGRAM_EXPORTPROGRAM_H

#include "ein/program.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ein {

/// Describes the logical function `func` (ops on tensors, or the
/// device-level form whose values are slices of the logical ones) as an
/// ein::Program; ein::writeProgram writes its program.json. Emits a
/// diagnostic on the first op that has no program.json form and fails.
FailureOr<::ein::Program> exportProgram(func::FuncOp func);

/// The program.json type of `type` (a static ranked tensor of a dtype
/// program.json has); a diagnostic at `where` otherwise.
FailureOr<::ein::TensorType> programTensorType(Operation *where, Type type);

/// A dense constant's values as program.json holds them: one for a splat,
/// else one per element in row-major order.
std::vector<double> programConstantValues(DenseElementsAttr elements);

/// The function of `module` to export: the one named `name`, or, when `name`
/// is empty, the only function with a body. Emits a diagnostic otherwise.
FailureOr<func::FuncOp> selectProgramFunction(ModuleOp module, StringRef name);

} // namespace mlir::ein

#endif // EINSUMMABLE_PROGRAM_EXPORTPROGRAM_H
