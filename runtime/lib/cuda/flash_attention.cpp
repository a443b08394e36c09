//===- flash_attention.cpp - The runtime's own attention kernels ----------===//
//
// Host side of attention_kernels.cu: checks what the flash kernel supports,
// loads the embedded fatbin once per process and prepares each device once,
// and turns problems into the kernels' parameter structs. Launches are plain
// cudaLaunchKernel calls (no allocation, copy or sync), so they capture into
// CUDA graphs.
//
//===----------------------------------------------------------------------===//

#include "flash_attention.h"
#include "cuda_check.h"

#include "../backend.h"
#include "attention_abi.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>

extern "C" const unsigned char ein_cuda_attention_fatbin[];

namespace ein::cuda {
namespace {

enum Kernel {
  FlashBF16D64,
  FlashBF16D128,
  FlashF16D64,
  FlashF16D128,
  Combine,
  kKernelCount
};

constexpr const char *kKernelNames[kKernelCount] = {
    "ein_flash_attention_bf16_d64", "ein_flash_attention_bf16_d128",
    "ein_flash_attention_f16_d64", "ein_flash_attention_f16_d128",
    "ein_attention_combine"};

using Kernels = std::array<cudaKernel_t, kKernelCount>;

int headDimOf(Kernel kernel) {
  return kernel == FlashBF16D64 || kernel == FlashF16D64 ? 64 : 128;
}

/// The kernels, ready to launch on the current device. The library loads
/// once per process (a cudaLibrary_t and its cudaKernel_t serve every
/// device) and stays loaded: Attention objects and captured graphs may
/// outlive any owner. The flash kernels' dynamic shared memory limit is
/// raised once per device.
const Kernels &kernelsForCurrentDevice() {
  static std::mutex mutex;
  static cudaLibrary_t library = nullptr;
  static std::map<int, Kernels> prepared;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex);
  auto found = prepared.find(device);
  if (found != prepared.end())
    return found->second;
  if (!library)
    check(cudaLibraryLoadData(&library, ein_cuda_attention_fatbin, nullptr,
                              nullptr, 0, nullptr, nullptr, 0),
          "cannot load the runtime's attention kernels");
  Kernels kernels;
  for (int i = 0; i < kKernelCount; ++i)
    check(cudaLibraryGetKernel(&kernels[i], library, kKernelNames[i]),
          kKernelNames[i]);
  for (Kernel flash : {FlashBF16D64, FlashBF16D128, FlashF16D64, FlashF16D128})
    check(cudaKernelSetAttributeForDevice(
              kernels[flash], cudaFuncAttributeMaxDynamicSharedMemorySize,
              flashSharedBytes(headDimOf(flash)), device),
          std::string("raising the shared memory of ") + kKernelNames[flash] +
              " on GPU " + std::to_string(device));
  return prepared.emplace(device, kernels).first->second;
}

bool aligned16(const void *pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % 16 == 0;
}

class FlashAttention final : public Attention {
public:
  FlashAttention(const AttentionProblem &problem, cudaKernel_t kernel)
      : problem(problem), kernel(kernel) {
    int32_t queryTiles = static_cast<int32_t>(
        (problem.queries + kFlashBlockRows - 1) / kFlashBlockRows);
    params.heads = static_cast<int32_t>(problem.heads);
    params.kvHeads = static_cast<int32_t>(problem.kvHeads);
    params.group = static_cast<int32_t>(problem.heads / problem.kvHeads);
    params.queries = static_cast<int32_t>(problem.queries);
    params.keys = static_cast<int32_t>(problem.keys);
    params.batchHeads = static_cast<int32_t>(problem.batch * problem.heads);
    params.queryTiles = queryTiles;
    params.causal = problem.causal;
    params.diagonal = static_cast<int32_t>(
        std::clamp(problem.diagonal, -problem.queries, problem.keys));
    params.scaleLog2 =
        static_cast<float>(double(problem.scale) * 1.4426950408889634);
    blocks = static_cast<unsigned>(params.batchHeads * queryTiles);
  }

  size_t workspaceBytes() const override { return 0; }

  void run(const void *q, const void *k, const void *v, void *o, float *lse,
           void *, cudaStream_t stream) override {
    if (!aligned16(q) || !aligned16(k) || !aligned16(v) || !aligned16(o))
      throw RuntimeError(name() + ": q, k, v and o must be 16-byte aligned (" +
                         problem.describe() + ")");
    if (problem.withLse && !lse)
      throw RuntimeError(name() + ": no lse output for " + problem.describe());
    FlashAttentionParams p = params;
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    p.lse = problem.withLse ? lse : nullptr;
    void *args[] = {&p};
    cudaError_t status = cudaLaunchKernel(
        reinterpret_cast<const void *>(kernel), dim3(blocks),
        dim3(kFlashThreads), args,
        flashSharedBytes(static_cast<int>(problem.headDim)), stream);
    if (status != cudaSuccess)
      throw RuntimeError(name() + " (" + problem.describe() +
                         "): " + cudaGetErrorString(status));
  }

  std::string name() const override { return "ein flash kernel"; }

private:
  AttentionProblem problem;
  cudaKernel_t kernel;
  FlashAttentionParams params = {};
  unsigned blocks = 0;
};

} // namespace

bool flashAttentionSupports(const AttentionProblem &problem, std::string &why) {
  const AttentionProblem &p = problem;
  auto unsupported = [&](std::string reason) {
    why = std::move(reason);
    return false;
  };
  if (p.type != F16 && p.type != BF16)
    return unsupported("the element type is not f16 or bf16");
  if (!p.dense())
    return unsupported("it reads and writes dense tensors only");
  if (p.headDim != p.valueDim)
    return unsupported("value dim " + std::to_string(p.valueDim) +
                       " differs from head dim " + std::to_string(p.headDim));
  if (p.headDim != 64 && p.headDim != 128)
    return unsupported("head dim " + std::to_string(p.headDim) +
                       " is not 64 or 128");
  if (p.batch < 1 || p.heads < 1 || p.kvHeads < 1 || p.queries < 1 ||
      p.keys < 1)
    return unsupported("a size is below 1");
  if (p.heads % p.kvHeads != 0)
    return unsupported(std::to_string(p.heads) + " heads are not a " +
                       "multiple of " + std::to_string(p.kvHeads) +
                       " KV heads");
  // The running max of the raw scores is the max of the scaled ones only
  // for a positive scale.
  if (!(p.scale > 0) || !std::isfinite(p.scale))
    return unsupported("the scale is not positive and finite");
  // 32-bit row and key indices, with room for row + diagonal.
  constexpr int64_t kMaxLength = int64_t(1) << 30;
  if (p.queries > kMaxLength || p.keys > kMaxLength)
    return unsupported("more than 2^30 queries or keys");
  int64_t queryTiles = (p.queries + kFlashBlockRows - 1) / kFlashBlockRows;
  if (p.batch > INT32_MAX || p.heads > INT32_MAX ||
      p.batch * p.heads > INT32_MAX / queryTiles)
    return unsupported("more than 2^31 - 1 thread blocks");
  why.clear();
  return true;
}

std::unique_ptr<Attention>
createFlashAttention(const AttentionProblem &problem) {
  std::string why;
  if (!flashAttentionSupports(problem, why))
    throw RuntimeError("the ein flash kernel cannot run " + problem.describe() +
                       ": " + why);
  int device = 0, major = 0, sharedOptIn = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
      "cudaDeviceGetAttribute");
  check(cudaDeviceGetAttribute(&sharedOptIn,
                               cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
        "cudaDeviceGetAttribute");
  int shared = flashSharedBytes(static_cast<int>(problem.headDim));
  // The fatbin holds sm_90 code and compute_90 PTX only.
  if (major < 9)
    throw RuntimeError("the ein flash kernel needs compute capability 9.0 or "
                       "newer; GPU " +
                       std::to_string(device) + " is " + std::to_string(major) +
                       ".x");
  if (sharedOptIn < shared)
    throw RuntimeError("the ein flash kernel needs " + std::to_string(shared) +
                       " bytes of shared memory per block; GPU " +
                       std::to_string(device) + " allows " +
                       std::to_string(sharedOptIn));
  const Kernels &kernels = kernelsForCurrentDevice();
  Kernel kernel = problem.type == BF16
                      ? (problem.headDim == 64 ? FlashBF16D64 : FlashBF16D128)
                      : (problem.headDim == 64 ? FlashF16D64 : FlashF16D128);
  return std::make_unique<FlashAttention>(problem, kernels[kernel]);
}

void combineAttention(int parts, const void *const *o,
                      const ElementType *partType, const float *const *lse,
                      int64_t rows, int64_t valueDim, void *out,
                      ElementType outType, float *lseOut, cudaStream_t stream) {
  if (parts < 1 || parts > kMaxCombineParts)
    throw RuntimeError("attention combine: " + std::to_string(parts) +
                       " parts (1 to " + std::to_string(kMaxCombineParts) +
                       " allowed)");
  if (rows < 0 || valueDim < 1)
    throw RuntimeError("attention combine: " + std::to_string(rows) +
                       " rows of " + std::to_string(valueDim) + " elements");
  auto supported = [](ElementType type) {
    return type == F32 || type == F16 || type == BF16;
  };
  AttentionCombineParams p = {};
  for (int i = 0; i < parts; ++i) {
    if (!supported(partType[i]))
      throw RuntimeError("attention combine: part " + std::to_string(i) +
                         " is not f32, f16 or bf16");
    p.o[i] = o[i];
    p.lse[i] = lse[i];
    p.partType[i] = partType[i];
  }
  if (!supported(outType))
    throw RuntimeError("attention combine: the output is not f32, f16 or bf16");
  if (rows == 0)
    return;
  p.parts = parts;
  p.outType = outType;
  p.out = out;
  p.lseOut = lseOut;
  p.rows = rows;
  p.valueDim = valueDim;
  // One warp per row; past 2^16 blocks the warps stride over the rows.
  constexpr int64_t kRowsPerBlock = kCombineThreads / 32;
  int64_t blocks = std::min<int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock,
                                     int64_t(1) << 16);
  void *args[] = {&p};
  check(cudaLaunchKernel(
            reinterpret_cast<const void *>(kernelsForCurrentDevice()[Combine]),
            dim3(static_cast<unsigned>(blocks)), dim3(kCombineThreads), args, 0,
            stream),
        "attention combine");
}

} // namespace ein::cuda
