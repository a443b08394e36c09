//===- TargetBackend.cpp - What the compiler asks of a backend ----------===//

#include "Einsummable/Target/TargetBackend.h"

#include "Einsummable/Dialect/Ein/IR/EinAttrs.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/Mutex.h"

#include <map>

using namespace mlir;
using namespace mlir::ein;

TargetBackend::~TargetBackend() = default;

namespace {
struct Registry {
  llvm::sys::SmartMutex<true> lock;
  std::map<::ein::Backend, std::unique_ptr<TargetBackend>> backends;
};
} // namespace

static llvm::ManagedStatic<Registry> registry;

void mlir::ein::registerTargetBackend(std::unique_ptr<TargetBackend> backend) {
  llvm::sys::SmartScopedLock<true> guard(registry->lock);
  ::ein::Backend kind = backend->kind();
  registry->backends[kind] = std::move(backend);
}

const TargetBackend &mlir::ein::getTargetBackend(::ein::Backend kind) {
  llvm::sys::SmartScopedLock<true> guard(registry->lock);
  auto it = registry->backends.find(kind);
  if (it == registry->backends.end())
    llvm::report_fatal_error(llvm::Twine("no compiler backend '") +
                             ::ein::backendName(kind) +
                             "' is registered (registerAllDialects registers "
                             "them)");
  return *it->second;
}

FailureOr<::ein::Backend> mlir::ein::resolveBackend(ModuleOp module,
                                                    StringRef option,
                                                    bool optionGiven,
                                                    StringRef prefix) {
  auto target =
      module->getAttrOfType<TargetAttr>(EinDialect::getTargetAttrName());
  std::optional<::ein::Backend> named =
      target ? target.getBackendKind() : std::nullopt;
  if (named && !optionGiven)
    return *named;
  ::ein::Backend backend;
  std::string why;
  if (!::ein::parseBackend(option.str(), backend, why))
    return module.emitError() << prefix << why;
  if (named && *named != backend)
    return module.emitError()
           << prefix << "'" << option << "' is not the backend the module's "
           << "#ein.target names ('" << ::ein::backendName(*named) << "')";
  return backend;
}
