//===- kernels_abi.h - Parameters of the CUDA backend's own kernels -*- C++
//-*-//
//
// Shared by the host code (cuda_backend.cpp) and the kernels (kernels.cu),
// which nvcc compiles into a fatbin embedded in the runtime: plain structs,
// passed by value as each kernel's one parameter.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_KERNELS_ABI_H
#define EIN_LIB_CUDA_KERNELS_ABI_H

#include <stdint.h>

#ifdef __CUDACC__
#define EIN_HOST_DEVICE __host__ __device__
#else
#define EIN_HOST_DEVICE
#endif

namespace ein::cuda {

/// Element types the kernels read and write.
enum ElementType : int32_t { F64 = 0, F32 = 1, F16 = 2, BF16 = 3 };
/// Aggregations: as ein::Agg without None.
enum AggregateOp : int32_t { Add = 0, Max = 1, Min = 2, Mul = 3 };

/// As many as devices a bundle may have, so one launch reads every partial
/// (the manifest rejects more).
constexpr int kMaxAggregateInputs = 64;
constexpr int kMaxCopyRank = 8;

/// ein_aggregate: out[i] = in[0][i] op in[1][i] op ..., in float64, rounded
/// once to the output's type. `out` may be one of the inputs.
struct AggregateParams {
  const void *in[kMaxAggregateInputs];
  int32_t inType[kMaxAggregateInputs];
  int32_t inputs;
  int32_t outType;
  int32_t op;
  void *out;
  int64_t count;
};

/// ein_copy: a sub-rectangle of `extent` units of `width` bytes (1, 2, 4, 8
/// or 16) from `src` (strides in units, its offset already applied) to
/// `dst`.
struct CopyParams {
  const unsigned char *src;
  unsigned char *dst;
  int64_t extent[kMaxCopyRank];
  int64_t srcStride[kMaxCopyRank];
  int64_t dstStride[kMaxCopyRank];
  int32_t rank;
  int32_t width;
  int64_t count; // product of the extents
};

/// ein_copy_batch: up to kMaxBatchCopies copies in one launch (a batched
/// transfer), copy `y` on blocks of y-index `y`; within the 4 KiB a kernel
/// parameter may take.
constexpr int kMaxBatchCopies = 16;
struct CopyBatchParams {
  CopyParams copies[kMaxBatchCopies];
  int32_t count;
};
static_assert(sizeof(CopyBatchParams) <= 4096,
              "a kernel parameter may take 4 KiB");

/// Where unit `i` (row-major over `extent`) of a copy comes from and goes
/// to, in units: the kernel's indexing, shared with the CPU tests.
EIN_HOST_DEVICE inline void copyUnitOffsets(const CopyParams &p, int64_t i,
                                            int64_t &src, int64_t &dst) {
  src = dst = 0;
  for (int k = p.rank - 1; k >= 0; --k) {
    int64_t index = i % p.extent[k];
    i /= p.extent[k];
    src += index * p.srcStride[k];
    dst += index * p.dstStride[k];
  }
}

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_KERNELS_ABI_H
