//===- ein-opt.cpp - The ein optimizer driver ---------------------------===//
//
// mlir-opt for the ein dialect: every ein pass and pipeline, replayable stage
// by stage.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/InitAll.h"
#include "Einsummable/InputGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

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
  // Stack traces on a crash, as mlir-opt's own main sets up.
  llvm::InitLLVM init(argc, argv);
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
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, args.data(), "Einsummable optimizer driver\n", registry);
  // The input is checked for what MLIR's parser crashes on first.
  if (input != "-") {
    std::string error;
    if (std::unique_ptr<llvm::MemoryBuffer> file =
            mlir::openInputFile(input, &error);
        file && !mlir::ein::checkParserSafe(*file, input, llvm::errs()))
      return 1;
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, args.data(), input, output, registry));
  }
  // Standard input can be read once: read, check, then run on the buffer.
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(input, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (!mlir::ein::checkParserSafe(*file, "<stdin>", llvm::errs()))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> out =
      mlir::openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << error << "\n";
    return 1;
  }
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (failed(mlir::MlirOptMain(out->os(), std::move(file), registry, config)))
    return 1;
  out->keep();
  return 0;
}
