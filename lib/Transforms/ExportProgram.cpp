//===- ExportProgram.cpp - ein-export-program ---------------------------===//

#include "Einsummable/Program/ExportProgram.h"
#include "Einsummable/Support/FileOutput.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace mlir::ein {
#define GEN_PASS_DEF_EINEXPORTPROGRAM
#include "Einsummable/Transforms/Passes.h.inc"
} // namespace mlir::ein

using namespace mlir;
using namespace mlir::ein;

namespace {
struct EinExportProgramPass
    : public mlir::ein::impl::EinExportProgramBase<EinExportProgramPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (file.empty()) {
      module.emitError() << "ein-export-program needs file=PATH";
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> func = selectProgramFunction(module, function);
    if (failed(func))
      return signalPassFailure();
    FailureOr<::ein::Program> program = exportProgram(*func);
    if (failed(program))
      return signalPassFailure();
    std::string error;
    StringRef parent = llvm::sys::path::parent_path(file);
    if (!parent.empty())
      if (std::error_code ec = llvm::sys::fs::create_directories(parent)) {
        module.emitError() << "cannot create '" << parent
                           << "': " << ec.message();
        return signalPassFailure();
      }
    if (!writeFileAtomically(
            file, [&](raw_ostream &os) { os << ::ein::writeProgram(*program); },
            error)) {
      module.emitError() << "cannot write program.json: " << error;
      return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
