//===- Import.cpp - linalg on tensors to ein (ein-import) -----------------===//
//
// Named linalg ops are first generalized (upstream's generalizeNamedOp);
// every linalg.generic then becomes one ein.join_agg: its indexing maps,
// projected permutations, give each operand's loop indices; a body that
// yields `combine(accumulator, f(inputs))` over reduction loops becomes the
// join f and the aggregation kind of `combine`; linalg.index becomes
// ein.index. An initial value that is the combine's identity (a
// linalg.fill, or an unwritten tensor.empty) is dropped; any other initial
// value is combined with the result by one more elementwise join-agg. A
// fill that no reduction starts from becomes a splat constant.
//
// This file is the pass alone: it runs one Importer per function with a
// body. The importer is in lib/Transforms/Import/, by topic (Importer.h
// says which file holds what).
//
//===----------------------------------------------------------------------===//

#include "Import/Importer.h"

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINIMPORT
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;
using mlir::ein::import_detail::Importer;

namespace {

struct EinImport : mlir::ein::impl::EinImportBase<EinImport> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(Importer(func).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
