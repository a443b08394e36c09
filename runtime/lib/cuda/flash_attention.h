//===- flash_attention.h - The runtime's own attention kernels --*- C++ -*-===//
//
// The FlashAttention-2-style kernel behind the Attention interface, for the
// problems cuDNN does not take (or when asked for), and the combine of
// partial attentions over disjoint key ranges. Both launch kernels from the
// embedded fatbin of attention_kernels.cu, loaded once per process.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_FLASH_ATTENTION_H
#define EIN_LIB_CUDA_FLASH_ATTENTION_H

#include "attention.h"

namespace ein::cuda {

/// Whether the runtime's own kernel runs `problem` (else the reason): F16 or
/// BF16, headDim == valueDim in {64, 128}, a positive finite scale, and
/// sizes whose index math fits 32 bits.
bool flashAttentionSupports(const AttentionProblem &problem, std::string &why);

/// The runtime's own FlashAttention-2-style kernel for `problem` on the
/// current device (compute capability 9.0 or newer); throws RuntimeError
/// (../backend.h) when unsupported. Its run() needs 16-byte aligned q, k, v
/// and o, and no workspace.
std::unique_ptr<Attention>
createFlashAttention(const AttentionProblem &problem);

/// The online-softmax combine of `parts` partial attentions over disjoint
/// key ranges of the same queries:
///   lse = log(sum_i exp(lse_i)),  o = sum_i exp(lse_i - lse) * o_i
/// per row (rows = batch*heads*queries, each of `valueDim` elements);
/// partials whose lse_i is -inf contribute nothing (their o_i is not read);
/// if all are -inf, o = 0 and lse = -inf (no NaN). o_i has element type
/// partType[i] (F32, F16 or BF16), o has outType and may be one of the o_i;
/// lseOut may be null. At most kMaxCombineParts (attention_abi.h) parts.
/// Captureable, no sync, on `stream`; throws RuntimeError on a launch error.
void combineAttention(int parts, const void *const *o,
                      const ElementType *partType, const float *const *lse,
                      int64_t rows, int64_t valueDim, void *out,
                      ElementType outType, float *lseOut, cudaStream_t stream);

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_FLASH_ATTENTION_H
