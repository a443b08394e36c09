//===- kernels.cu - The CUDA backend's own kernels ------------------------===//
//
// Aggregation of partials and strided region copies (transfers the copy
// engine cannot do in one call). Compiled by nvcc into a fatbin that the
// runtime embeds and loads with cudaLibraryLoadData; the names are extern
// "C" so cudaLibraryGetKernel finds them.
//
//===----------------------------------------------------------------------===//

#include "kernels_abi.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

using namespace ein::cuda;

namespace {

__device__ double load(const void *base, int32_t type, int64_t i) {
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

__device__ void store(void *base, int32_t type, int64_t i, double v) {
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

} // namespace

extern "C" __global__ void ein_aggregate(AggregateParams p) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < p.count;
       i += int64_t(gridDim.x) * blockDim.x) {
    double acc = load(p.in[0], p.inType[0], i);
    for (int k = 1; k < p.inputs; ++k) {
      double x = load(p.in[k], p.inType[k], i);
      switch (p.op) {
      case Add:
        acc += x;
        break;
      case Mul:
        acc *= x;
        break;
      case Max:
        acc = isnan(x) || x > acc ? x : acc;
        break;
      default:
        acc = isnan(x) || x < acc ? x : acc;
        break;
      }
    }
    store(p.out, p.outType, i, acc);
  }
}

namespace {

template <typename T> __device__ void copyElements(const CopyParams &p) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < p.count;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t s, d;
    copyUnitOffsets(p, i, s, d);
    reinterpret_cast<T *>(p.dst)[d] = reinterpret_cast<const T *>(p.src)[s];
  }
}

} // namespace

extern "C" __global__ void ein_copy(CopyParams p) {
  switch (p.width) {
  case 1:
    copyElements<uint8_t>(p);
    return;
  case 2:
    copyElements<uint16_t>(p);
    return;
  case 4:
    copyElements<uint32_t>(p);
    return;
  case 8:
    copyElements<uint64_t>(p);
    return;
  default:
    copyElements<uint4>(p);
    return;
  }
}
