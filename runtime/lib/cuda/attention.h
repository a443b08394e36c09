//===- attention.h - Fused attention on one GPU -----------------*- C++ -*-===//
//
// The CUDA backend's `attention` library steps: one fused kernel computes
// softmax(scale q k^T + mask) v without materialising the scores, through
// cuDNN's fused SDPA (cudnn_attention.cpp) or the runtime's own
// FlashAttention-style kernel (attention_kernels.cu), and optionally writes
// the log-sum-exp of each query's scaled, masked scores, which the combine
// kernel needs to merge the partial results of a cut key length.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_ATTENTION_H
#define EIN_LIB_CUDA_ATTENTION_H

#include "kernels_abi.h"

#include <cuda_runtime_api.h>

#include <array>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ein::cuda {

/// Every tensor is dense and row-major:
///   q   [batch, heads,    queries, headDim]
///   k   [batch, kvHeads,  keys,    headDim]
///   v   [batch, kvHeads,  keys,    valueDim]
///   o   [batch, heads,    queries, valueDim]
///   lse [batch, heads,    queries]            (f32, optional)
/// Query head h reads KV head h / (heads / kvHeads) (grouped-query
/// attention; heads is a multiple of kvHeads). q, k, v and o are all F16 or
/// all BF16; scores, softmax statistics and accumulation are f32.
struct AttentionProblem {
  int64_t batch = 1, heads = 1, kvHeads = 1, queries = 1, keys = 1;
  int64_t headDim = 128, valueDim = 128;
  ElementType type = BF16;
  float scale = 1;
  /// With `causal`, query s sees key t when t <= s + diagonal (diagonal =
  /// the block's query offset minus its key offset in the whole sequence:
  /// 0 for a whole causal sequence, positive for a query block after its
  /// key block). A query that sees no key gets o = 0 and lse = -inf.
  bool causal = false;
  int64_t diagonal = 0;
  bool withLse = false;
  /// Strides in elements of q, k, v and o, in the dimension order above,
  /// where one is read or written in place as a strided view (a slice of a
  /// QKV projection, o transposed); all zero: dense row-major. cuDNN takes
  /// them (every dimension's last stride 1); the runtime's own kernel takes
  /// dense tensors only.
  std::array<int64_t, 4> qStrides{}, kStrides{}, vStrides{}, oStrides{};

  /// Whether every tensor is dense row-major.
  bool dense() const;
  /// The strides of q, k, v or o (0-3): the given ones or dense row-major.
  std::array<int64_t, 4> strides(int tensor) const;
  /// The dense row-major strides of q, k, v or o (0-3).
  std::array<int64_t, 4> denseStrides(int tensor) const;
  /// qStrides, kStrides, vStrides or oStrides (0-3).
  const std::array<int64_t, 4> &givenStrides(int tensor) const;

  /// One line for errors and logs: "bf16 b=1 h=32/8 s=8192 t=8192 d=128
  /// causal(diagonal 0) lse".
  std::string describe() const;
};

/// A prepared attention on one GPU: plans once, then runs on any stream,
/// capturable into a CUDA graph.
class Attention {
public:
  virtual ~Attention() = default;
  /// Scratch the run needs (at least 0 bytes), 256-byte aligned.
  virtual size_t workspaceBytes() const = 0;
  /// o (and lse, when the problem has it; else null) from q, k and v.
  virtual void run(const void *q, const void *k, const void *v, void *o,
                   float *lse, void *workspace, cudaStream_t stream) = 0;
  /// What runs it: "cudnn 9.19.0 engine 7", "ein flash kernel".
  virtual std::string name() const = 0;
};

/// Which implementation runs attention: "auto" (cuDNN's fused SDPA where
/// cuDNN is found and supports the problem, else the runtime's own kernel),
/// "cudnn" or "kernel" (that one or an error).
/// Plans `problem` on the current device; throws RuntimeError with every
/// implementation's reason when none runs it.
std::unique_ptr<Attention> createAttention(const AttentionProblem &problem,
                                           const std::string &choice);

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_ATTENTION_H
