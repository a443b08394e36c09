//===- ein-opt.cpp - The ein optimizer driver ---------------------------===//
//
// mlir-opt for the ein dialect: every ein pass and pipeline, replayable stage
// by stage.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/InitAll.h"
#include "Einsummable/InputGuard.h"
#include "Einsummable/Support/FileOutput.h"

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
  // The input is read once and checked for what MLIR's parser crashes on
  // first; the output is ours, so a failed write is our error (below).
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(input, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (!mlir::ein::checkParserSafe(*file, input == "-" ? "<stdin>" : input,
                                  llvm::errs()))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> out =
      mlir::openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << error << "\n";
    return 1;
  }
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  bool ran = succeeded(
      mlir::MlirOptMain(out->os(), std::move(file), registry, config));
  // A full disk is our error, not LLVM's fatal one; the file goes.
  if (std::string why = mlir::ein::takeStreamError(out->os()); !why.empty()) {
    llvm::errs() << "ein-opt: error: cannot write '" << output << "': " << why
                 << "\n";
    return 1;
  }
  if (!ran)
    return 1;
  out->keep();
  return 0;
}
