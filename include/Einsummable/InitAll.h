//===- InitAll.h - Register everything ein-opt knows ------------*- C++ -*-===//

#ifndef EINSUMMABLE_INITALL_H
#define EINSUMMABLE_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::ein {

/// The ein dialect and the upstream dialects the pipelines pass through, and
/// the compiler backends (CPU, CUDA) of Target/TargetBackend.h.
void registerAllDialects(DialectRegistry &registry);

/// Every ein pass and pipeline, plus the upstream passes pipelines use.
void registerAllPasses();

} // namespace mlir::ein

#endif // EINSUMMABLE_INITALL_H
