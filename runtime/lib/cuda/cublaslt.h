//===- cublaslt.h - cuBLASLt, found and loaded at run time ------*- C++ -*-===//
//
// The CUDA backend's gemm steps call cuBLASLt, which it loads with dlopen
// only when a bundle has a gemm: a machine without the library gets an
// error naming every place searched, not a loader failure at start-up
// (library_search.h; $EIN_CUBLASLT names the file explicitly).
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_CUBLASLT_H
#define EIN_LIB_CUDA_CUBLASLT_H

#include <cublasLt.h>

#include <string>

namespace ein::cuda {

struct CublasLt {
#define EIN_CUBLASLT_FUNCTION(name) decltype(&::name) name = nullptr;
#include "cublaslt_functions.def"

  /// Loads the library and every function; throws RuntimeError naming the
  /// paths tried when it is missing.
  void load();
  bool loaded() const { return library != nullptr; }
  ~CublasLt();

  /// The status as a sentence, for errors.
  std::string describe(cublasStatus_t status) const;

  std::string path;

private:
  void *library = nullptr;
};

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_CUBLASLT_H
