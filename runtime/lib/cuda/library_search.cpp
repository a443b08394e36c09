//===- library_search.cpp - Finding NVIDIA libraries at run time ----------===//

#include "library_search.h"

#include "../backend.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <vector>

namespace ein::cuda {

namespace {

std::vector<std::string> candidates(const char *override,
                                    std::initializer_list<const char *> sonames,
                                    const char *file) {
  // An explicit choice is the only candidate.
  if (const char *chosen = std::getenv(override))
    return {chosen};
  std::vector<std::string> paths(sonames.begin(), sonames.end());
  for (const char *dir :
       {"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"})
    paths.push_back(std::string(dir) + "/" + file);
  std::vector<std::string> prefixes;
  if (const char *venv = std::getenv("VIRTUAL_ENV"))
    prefixes.push_back(std::string(venv) + "/lib/python3*/site-packages");
  if (const char *home = std::getenv("HOME"))
    prefixes.push_back(std::string(home) +
                       "/.local/lib/python3*/site-packages");
  for (const char *prefix : {"/opt/*/.venv/lib/python3*/site-packages",
                             "/opt/*/lib/python3*/site-packages",
                             "/usr/local/lib/python3*/dist-packages",
                             "/usr/local/lib/python3*/site-packages",
                             "/usr/lib/python3/dist-packages"})
    prefixes.push_back(prefix);
  for (const std::string &prefix : prefixes) {
    glob_t found = {};
    std::string pattern = prefix + "/nvidia/*/lib/" + file + "*";
    if (glob(pattern.c_str(), 0, nullptr, &found) == 0)
      for (size_t i = 0; i < found.gl_pathc; ++i)
        paths.push_back(found.gl_pathv[i]);
    globfree(&found);
  }
  return paths;
}

} // namespace

LoadedLibrary openLibrary(const char *override,
                          std::initializer_list<const char *> sonames,
                          const char *file, const std::string &what,
                          bool exportSymbols) {
  int flags = RTLD_NOW | (exportSymbols ? RTLD_GLOBAL : RTLD_LOCAL);
  std::string tried;
  for (const std::string &candidate : candidates(override, sonames, file)) {
    if (void *handle = dlopen(candidate.c_str(), flags))
      return {handle, candidate};
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  throw RuntimeError(what + " was not found (tried " + tried +
                     "); install it or point " + override + " at " + file);
}

void *librarySymbol(const LoadedLibrary &library, const char *name,
                    const std::string &what) {
  void *symbol = dlsym(library.handle, name);
  if (!symbol)
    throw RuntimeError("'" + library.path + "' lacks " + name + "; it is not " +
                       what);
  return symbol;
}

} // namespace ein::cuda
