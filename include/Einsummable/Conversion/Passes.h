//===- Passes.h - Conversions out of ein ------------------------*- C++ -*-===//

#ifndef EINSUMMABLE_CONVERSION_PASSES_H
#define EINSUMMABLE_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ein {

#define GEN_PASS_DECL
#include "Einsummable/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Einsummable/Conversion/Passes.h.inc"

} // namespace mlir::ein

#endif // EINSUMMABLE_CONVERSION_PASSES_H
