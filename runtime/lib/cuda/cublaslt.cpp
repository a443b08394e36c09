//===- cublaslt.cpp - cuBLASLt, found and loaded at run time --------------===//

#include "cublaslt.h"

#include "../backend.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <vector>

namespace ein::cuda {

namespace {

/// Where to look, most specific first. The soname alone lets the dynamic
/// loader apply LD_LIBRARY_PATH and the system's cache.
std::vector<std::string> candidates() {
  std::vector<std::string> paths;
  // An explicit choice is the only candidate.
  if (const char *file = std::getenv("EIN_CUBLASLT"))
    return {file};
  paths.push_back("libcublasLt.so.13");
  paths.push_back("libcublasLt.so.12");
  paths.push_back("libcublasLt.so");
  for (const char *dir :
       {"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"})
    paths.push_back(std::string(dir) + "/libcublasLt.so");
  std::vector<std::string> patterns;
  if (const char *venv = std::getenv("VIRTUAL_ENV"))
    patterns.push_back(std::string(venv) + "/lib/python3*/site-packages");
  if (const char *home = std::getenv("HOME"))
    patterns.push_back(std::string(home) +
                       "/.local/lib/python3*/site-packages");
  for (const char *prefix : {"/opt/*/.venv/lib/python3*/site-packages",
                             "/opt/*/lib/python3*/site-packages",
                             "/usr/local/lib/python3*/dist-packages",
                             "/usr/local/lib/python3*/site-packages",
                             "/usr/lib/python3/dist-packages"})
    patterns.push_back(prefix);
  for (const std::string &prefix : patterns) {
    glob_t found = {};
    std::string pattern = prefix + "/nvidia/*/lib/libcublasLt.so*";
    if (glob(pattern.c_str(), 0, nullptr, &found) == 0)
      for (size_t i = 0; i < found.gl_pathc; ++i)
        paths.push_back(found.gl_pathv[i]);
    globfree(&found);
  }
  return paths;
}

} // namespace

void CublasLt::load() {
  if (library)
    return;
  std::string tried;
  for (const std::string &candidate : candidates()) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library) {
      path = candidate;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  if (!library)
    throw RuntimeError("cuBLASLt, which the bundle's gemm steps need, was not "
                       "found (tried " +
                       tried +
                       "); install it or point EIN_CUBLASLT at "
                       "libcublasLt.so");
#define EIN_CUBLASLT_FUNCTION(name)                                            \
  name = reinterpret_cast<decltype(name)>(dlsym(library, #name));              \
  if (!name)                                                                   \
    throw RuntimeError("'" + path +                                            \
                       "' lacks " #name "; it is not a usable cuBLASLt");
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
