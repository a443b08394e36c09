//===- kernels.cu - The CUDA backend's own kernels ------------------------===//
//
// Aggregation of partials and strided region copies (transfers the copy
// engine cannot do in one call). Compiled by nvcc into a fatbin that the
// runtime embeds and loads with cudaLibraryLoadData; the names are extern
// "C" so cudaLibraryGetKernel finds them.
//
//===----------------------------------------------------------------------===//

#include "elements.cuh"

using namespace ein::cuda;

extern "C" __global__ void ein_aggregate(AggregateParams p) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < p.count;
       i += int64_t(gridDim.x) * blockDim.x) {
    double acc = loadElement(p.in[0], p.inType[0], i);
    for (int k = 1; k < p.inputs; ++k) {
      double x = loadElement(p.in[k], p.inType[k], i);
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
    storeElement(p.out, p.outType, i, acc);
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

__device__ void copyUnits(const CopyParams &p) {
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

extern "C" __global__ void ein_copy(CopyParams p) { copyUnits(p); }

/// Holds its stream until the host sets `*open` (mapped host memory) or
/// `limitNs` has passed on the GPU's global timer. ein-run --profile issues
/// the whole schedule behind one on each stream and then opens them all, so
/// that no step's time includes the host's issuing it; the limit keeps a
/// host that cannot issue everything ahead (a full launch queue) from
/// waiting on it forever.
extern "C" __global__ void ein_gate(const volatile int *open,
                                    unsigned long long limitNs) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (*open == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > limitNs)
      return;
    __nanosleep(1000);
  }
}

/// A batched transfer: copy blockIdx.y of the batch, over blockIdx.x.
extern "C" __global__ void ein_copy_batch(CopyBatchParams p) {
  if (int(blockIdx.y) < p.count)
    copyUnits(p.copies[blockIdx.y]);
}
