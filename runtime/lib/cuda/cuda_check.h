//===- cuda_check.h - CUDA runtime errors as RuntimeError -------*- C++ -*-===//

#ifndef EIN_LIB_CUDA_CUDA_CHECK_H
#define EIN_LIB_CUDA_CUDA_CHECK_H

#include "../backend.h"

#include <cuda_runtime_api.h>

#include <string>

namespace ein::cuda {

/// Throws RuntimeError "`what`: CUDA's message" unless `status` is success.
inline void check(cudaError_t status, const std::string &what) {
  if (status != cudaSuccess)
    throw RuntimeError(what + ": " + cudaGetErrorString(status));
}

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_CUDA_CHECK_H
