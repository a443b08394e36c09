//===- ein-opt.cpp - The ein optimizer driver ---------------------------===//
//
// mlir-opt for the ein dialect: every ein pass and pipeline, replayable stage
// by stage.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::ein::registerAllDialects(registry);
  mlir::ein::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Einsummable optimizer driver\n", registry));
}
