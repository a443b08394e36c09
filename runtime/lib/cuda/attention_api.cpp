//===- attention_api.cpp - The C API of the fused attention ---------------===//

#include "ein/attention.h"

#include "../backend.h"
#include "attention.h"
#include "cuda_check.h"
#include "flash_attention.h"

#include <memory>
#include <string>
#include <vector>

struct ein_attention {
  std::unique_ptr<ein::cuda::Attention> impl;
  std::string name;
};

namespace {

thread_local std::string lastError;

template <typename Body> int guarded(Body &&body) {
  try {
    body();
    return 0;
  } catch (const std::exception &e) {
    lastError = e.what();
    return 1;
  }
}

ein::cuda::ElementType parseType(const char *name, bool allowF32) {
  std::string text = name ? name : "(null)";
  if (text == "bf16")
    return ein::cuda::BF16;
  if (text == "f16")
    return ein::cuda::F16;
  if (allowF32 && text == "f32")
    return ein::cuda::F32;
  throw ein::RuntimeError("element type '" + text + "' is not one of " +
                          (allowF32 ? "f32, " : "") + "bf16 and f16");
}

} // namespace

extern "C" {

const char *ein_attention_last_error(void) { return lastError.c_str(); }

int ein_attention_create(const ein_attention_desc *desc,
                         const char *implementation, int device,
                         ein_attention **attention) {
  return guarded([&] {
    ein::cuda::AttentionProblem p;
    p.batch = desc->batch;
    p.heads = desc->heads;
    p.kvHeads = desc->kv_heads;
    p.queries = desc->queries;
    p.keys = desc->keys;
    p.headDim = desc->head_dim;
    p.valueDim = desc->value_dim;
    p.type = parseType(desc->dtype, /*allowF32=*/false);
    p.scale = desc->scale;
    p.causal = desc->causal != 0;
    p.diagonal = desc->diagonal;
    p.withLse = desc->with_lse != 0;
    for (int64_t n : {p.batch, p.heads, p.kvHeads, p.queries, p.keys, p.headDim,
                      p.valueDim})
      if (n < 1)
        throw ein::RuntimeError("every size must be positive: " + p.describe());
    if (p.heads % p.kvHeads)
      throw ein::RuntimeError("query heads must be a multiple of KV heads: " +
                              p.describe());
    std::string choice = implementation ? implementation : "auto";
    if (choice != "auto" && choice != "cudnn" && choice != "kernel")
      throw ein::RuntimeError("implementation '" + choice +
                              "' is not one of auto, cudnn and kernel");
    ein::cuda::check(cudaSetDevice(device),
                     "cudaSetDevice(" + std::to_string(device) + ")");
    auto made = std::make_unique<ein_attention>();
    made->impl = ein::cuda::createAttention(p, choice);
    made->name = made->impl->name();
    *attention = made.release();
  });
}

void ein_attention_destroy(ein_attention *attention) { delete attention; }

size_t ein_attention_workspace_bytes(const ein_attention *attention) {
  return attention->impl->workspaceBytes();
}

const char *ein_attention_name(const ein_attention *attention) {
  return attention->name.c_str();
}

int ein_attention_run(ein_attention *attention, const void *q, const void *k,
                      const void *v, void *o, float *lse, void *workspace,
                      void *stream) {
  return guarded([&] {
    attention->impl->run(q, k, v, o, lse, workspace,
                         static_cast<cudaStream_t>(stream));
  });
}

int ein_attention_combine(int parts, const void *const *o,
                          const char *const *part_dtypes,
                          const float *const *lse, int64_t rows,
                          int64_t value_dim, void *out, const char *out_dtype,
                          float *lse_out, void *stream) {
  return guarded([&] {
    std::vector<ein::cuda::ElementType> types;
    for (int i = 0; i < parts; ++i)
      types.push_back(parseType(part_dtypes[i], /*allowF32=*/true));
    ein::cuda::combineAttention(parts, o, types.data(), lse, rows, value_dim,
                                out, parseType(out_dtype, /*allowF32=*/true),
                                lse_out, static_cast<cudaStream_t>(stream));
  });
}

} // extern "C"
