//===- HostLibrary.cpp - A lowered kernels module as a shared library -----===//
//
// LLVM dialect -> LLVM IR -> O2 -> generic x86-64 object code (no host CPU
// features, so a bundle runs on any x86-64 machine and two compiles agree)
// -> `cc -shared`. The linker is the only tool run outside the process.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Conversion/EinToCPU/EinToCPU.h"
#include "Einsummable/Support/FileOutput.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

namespace {

/// Removes a temporary file when it goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

std::unique_ptr<llvm::TargetMachine> hostTargetMachine(std::string &error) {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  llvm::Triple triple("x86_64-unknown-linux-gnu");
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, "x86-64", "", llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2)
      .run(module, mam);
}

} // namespace

LogicalResult mlir::ein::writeHostLibrary(ModuleOp kernels, StringRef path) {
  auto fail = [&](const Twine &why) {
    return kernels.emitError()
           << "cannot build the host kernel library '" << path << "': " << why;
  };
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine = hostTargetMachine(error);
  if (!machine)
    return fail("no x86-64 code generator: " + error);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(kernels, context, "ein_kernels");
  if (!module)
    return fail("the kernels do not translate to LLVM IR");
  module->setTargetTriple(machine->getTargetTriple());
  module->setDataLayout(machine->createDataLayout());
  optimize(*module, *machine);

  llvm::SmallVector<char, 0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return fail("the x86-64 code generator cannot emit object files");
    codegen.run(*module);
  }

  TempFile objectFile, log;
  if (llvm::sys::fs::createTemporaryFile("ein-kernels", "o", objectFile.path) ||
      llvm::sys::fs::createTemporaryFile("ein-link", "log", log.path))
    return fail("cannot create temporary files");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectFile.path, ec);
    if (ec)
      return fail("cannot write " + objectFile.path + ": " + ec.message());
    os.write(object.data(), object.size());
    os.close();
    if (std::string why = takeStreamError(os); !why.empty())
      return fail("cannot write " + objectFile.path + ": " + why);
  }
  std::string driver = "cc";
  if (std::optional<std::string> chosen =
          llvm::sys::Process::GetEnv("EIN_HOST_CC"))
    driver = *chosen;
  llvm::ErrorOr<std::string> program = llvm::sys::findProgramByName(driver);
  if (!program)
    return fail("no C compiler driver '" + driver +
                "' on PATH to link it (install gcc, or set EIN_HOST_CC)");
  llvm::SmallVector<llvm::StringRef> args = {*program, "-shared",       "-o",
                                             path,     objectFile.path, "-lm"};
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(log.path), llvm::StringRef(log.path)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*program, args, std::nullopt, redirects, 0,
                                     0, &message);
  if (rc != 0) {
    std::string output;
    if (auto text = llvm::MemoryBuffer::getFile(log.path))
      output = (*text)->getBuffer().trim().str();
    return fail("'" + *program + " -shared' failed" +
                (message.empty() ? "" : " (" + message + ")") +
                (output.empty() ? "" : ": " + output));
  }
  return success();
}
