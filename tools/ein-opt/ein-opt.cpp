//===- ein-opt.cpp - The ein optimizer driver ---------------------------===//
//
// mlir-opt for the ein dialect: every ein pass and pipeline, replayable stage
// by stage.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include <string>
#include <vector>

/// `--ein-export-program=FILE` is shorthand for the pass option form
/// `--ein-export-program=file=FILE`.
static std::string expandShorthand(const std::string &arg) {
  static const std::string flag = "--ein-export-program=";
  if (arg.rfind(flag, 0) == 0 &&
      arg.find('=', flag.size()) == std::string::npos)
    return flag + "file=" + arg.substr(flag.size());
  return arg;
}

int main(int argc, char **argv) {
  std::vector<std::string> storage(argv, argv + argc);
  std::vector<char *> args;
  for (std::string &arg : storage) {
    arg = expandShorthand(arg);
    args.push_back(arg.data());
  }
  args.push_back(nullptr);

  mlir::DialectRegistry registry;
  mlir::ein::registerAllDialects(registry);
  mlir::ein::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, args.data(), "Einsummable optimizer driver\n", registry));
}
