//===- cudnn_attention.h - Fused attention through cuDNN --------*- C++ -*-===//
//
// The `attention` steps' cuDNN path: softmax(scale q k^T + mask) v as one
// cuDNN 9 operation graph that its fused flash-attention engines run as a
// single kernel. Planned once per problem, then run on any stream, also
// under CUDA stream capture. cuDNN is loaded with dlopen on first use, never
// linked (library_search.h; $EIN_CUDNN names libcudnn.so.9 explicitly).
// EIN_CUDNN_LOG=1 prints each engine tried, and why it was refused, to
// stderr.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_CUDNN_ATTENTION_H
#define EIN_LIB_CUDA_CUDNN_ATTENTION_H

#include "attention.h"

#include <memory>

namespace ein::cuda {

/// Attention for `problem` on the current CUDA device through cuDNN's fused
/// SDPA graph; throws RuntimeError (from ../backend.h) with the reason when
/// cuDNN is missing or no cuDNN engine supports the problem.
std::unique_ptr<Attention>
createCudnnAttention(const AttentionProblem &problem);

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_CUDNN_ATTENTION_H
