//===- cublaslt.cpp - cuBLASLt, found and loaded at run time --------------===//

#include "cublaslt.h"

#include "library_search.h"

#include <dlfcn.h>

namespace ein::cuda {

void CublasLt::load() {
  if (library)
    return;
  LoadedLibrary found = openLibrary(
      "EIN_CUBLASLT",
      {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"},
      "libcublasLt.so", "cuBLASLt, which the bundle's gemm steps need,");
  library = found.handle;
  path = found.path;
#define EIN_CUBLASLT_FUNCTION(name)                                            \
  name = reinterpret_cast<decltype(name)>(                                     \
      librarySymbol(found, #name, "a usable cuBLASLt"));
#include "cublaslt_functions.def"
}

CublasLt::~CublasLt() {
  if (library)
    dlclose(library);
}

std::string CublasLt::describe(cublasStatus_t status) const {
  return cublasLtGetStatusString ? cublasLtGetStatusString(status)
                                 : "cuBLASLt status " + std::to_string(status);
}

} // namespace ein::cuda
