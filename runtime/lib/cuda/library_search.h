//===- library_search.h - Finding NVIDIA libraries at run time --*- C++ -*-===//
//
// cuBLASLt and cuDNN are loaded with dlopen only when a bundle needs them,
// so a machine without one gets an error naming every place searched, not a
// loader failure at start-up. On the GPU machines cuDNN exists only inside
// PyTorch's environment (site-packages/nvidia/*/lib), which the system's
// loader does not search.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_LIBRARY_SEARCH_H
#define EIN_LIB_CUDA_LIBRARY_SEARCH_H

#include <initializer_list>
#include <string>

namespace ein::cuda {

struct LoadedLibrary {
  void *handle = nullptr;
  std::string path;
};

/// Opens the first library found, most specific first: the file in
/// environment variable `override` alone when it is set; else each of
/// `sonames` through the loader (LD_LIBRARY_PATH, the system's cache), the
/// CUDA toolkit's lib64, and `site-packages/nvidia/*/lib/<file>` under the
/// usual Python prefixes. Throws RuntimeError naming `what` (the library and
/// why the bundle needs it) and every path tried. `exportSymbols` opens it
/// RTLD_GLOBAL, for libraries whose parts find each other's symbols.
LoadedLibrary openLibrary(const char *override,
                          std::initializer_list<const char *> sonames,
                          const char *file, const std::string &what,
                          bool exportSymbols = false);

/// Looks up `name` in `library`; throws RuntimeError when it is missing.
void *librarySymbol(const LoadedLibrary &library, const char *name,
                    const std::string &what);

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_LIBRARY_SEARCH_H
