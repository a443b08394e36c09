//===- ExportProgram.h - Logical ein IR to program.json ---------*- C++ -*-===//
//
// Writes the MLIR-free description of a logical program that the reference
// evaluator reads (format: docs/program-format.md, reader:
// runtime/include/ein/program.h).
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_PROGRAM_EXPORTPROGRAM_H
#define EINSUMMABLE_PROGRAM_EXPORTPROGRAM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

namespace mlir::ein {

/// The version written in program.json's "version" field.
constexpr int64_t kProgramFormatVersion = 1;

/// Describes the logical function `func` (ops on tensors only) as JSON. Emits
/// a diagnostic on the first op that has no program.json form and fails.
FailureOr<llvm::json::Value> exportProgram(func::FuncOp func);

/// The program.json (and bundle) name of an element type: "f32", "bf16",
/// ...; failure for a type they cannot hold.
FailureOr<StringRef> programDTypeName(Type type);

/// A JSON array of integers.
llvm::json::Array jsonIntegers(ArrayRef<int64_t> values);

/// The function of `module` to export: the one named `name`, or, when `name`
/// is empty, the only function with a body. Emits a diagnostic otherwise.
FailureOr<func::FuncOp> selectProgramFunction(ModuleOp module, StringRef name);

} // namespace mlir::ein

#endif // EINSUMMABLE_PROGRAM_EXPORTPROGRAM_H
