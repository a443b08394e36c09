//===- EinGemm.h - The gemm form of a join-agg ------------------*- C++ -*-===//
//
// Which join-aggs are (batched, transposed) matmuls: what a bundle runs as a
// library gemm step and what the planner prices as one. Below both the
// planner's graph builder (lib/Plan) and code generation (lib/Conversion).
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EINGEMM_H
#define EINSUMMABLE_DIALECT_EIN_IR_EINGEMM_H

#include "Einsummable/Dialect/Ein/IR/EinOps.h"

namespace mlir::ein {

/// A device-level join-agg that is a (batched, transposed) matmul, which a
/// bundle runs as a library gemm step.
struct LibraryGemm {
  bool transposeA = false, transposeB = false;
};

/// The gemm form of `join`, or failure when it is not one (no diagnostic).
FailureOr<LibraryGemm> matchLibraryGemm(JoinAggOp join);

} // namespace mlir::ein

#endif // EINSUMMABLE_DIALECT_EIN_IR_EINGEMM_H
