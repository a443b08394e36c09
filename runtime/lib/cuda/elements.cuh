//===- elements.cuh - Reading and writing any float element type -*- CUDA -*-===//
//
// The runtime's own kernels take buffers whose element type is a runtime
// value (kernels_abi.h's ElementType): aggregation partials, the attention
// combine's parts. Values travel as double, which holds every f32, f16 and
// bf16 exactly, so a store rounds once, from the exact value.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_ELEMENTS_CUH
#define EIN_LIB_CUDA_ELEMENTS_CUH

#include "kernels_abi.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ein::cuda {

__device__ inline double loadElement(const void *base, int32_t type,
                                     int64_t i) {
  switch (type) {
  case F64:
    return static_cast<const double *>(base)[i];
  case F32:
    return static_cast<const float *>(base)[i];
  case F16:
    return __half2float(static_cast<const __half *>(base)[i]);
  default:
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(base)[i]);
  }
}

__device__ inline void storeElement(void *base, int32_t type, int64_t i,
                                    double v) {
  switch (type) {
  case F64:
    static_cast<double *>(base)[i] = v;
    return;
  case F32:
    static_cast<float *>(base)[i] = static_cast<float>(v);
    return;
  case F16:
    static_cast<__half *>(base)[i] = __double2half(v);
    return;
  default:
    static_cast<__nv_bfloat16 *>(base)[i] = __double2bfloat16(v);
    return;
  }
}

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_ELEMENTS_CUH
