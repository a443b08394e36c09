/*===- attention.h - The runtime's fused attention, as a C library -*- C -*-===*
 *
 * What a bundle's `attention` library steps run, callable on its own: the
 * CUDA backend's fused attention (cuDNN's SDPA or the runtime's own kernel)
 * and the online-softmax combine, on device pointers and a CUDA stream the
 * caller owns. Built as libein_attention.so when the CUDA toolkit is found;
 * bench/attention_vs_sdpa.py drives it next to PyTorch. Layouts and
 * semantics are docs/bundle-format.md's `attention` step.
 *
 * Functions returning int return 0 on success and 1 on failure, after which
 * ein_attention_last_error() says why, on this thread.
 *
 *===----------------------------------------------------------------------===*/

#ifndef EIN_ATTENTION_H
#define EIN_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ein_attention ein_attention;

typedef struct ein_attention_desc {
  int64_t batch, heads, kv_heads, queries, keys, head_dim, value_dim;
  const char *dtype; /* "bf16" or "f16" */
  float scale;
  int causal;       /* query s sees key t when t <= s + diagonal */
  int64_t diagonal; /* query offset - key offset in the whole sequence */
  int with_lse;     /* write the f32 log-sum-exp [batch, heads, queries] */
} ein_attention_desc;

const char *ein_attention_last_error(void);

/* Plans `desc` on CUDA device `device`; `implementation` is "auto", "cudnn"
 * or "kernel" (NULL: "auto"). */
int ein_attention_create(const ein_attention_desc *desc,
                         const char *implementation, int device,
                         ein_attention **attention);
void ein_attention_destroy(ein_attention *attention);

/* Scratch bytes run needs, and what runs it ("cudnn 9.19.0 ..."). */
size_t ein_attention_workspace_bytes(const ein_attention *attention);
const char *ein_attention_name(const ein_attention *attention);

/* Enqueues o (and lse when planned with_lse) on `stream` (a cudaStream_t;
 * NULL is the legacy default stream); does not wait. */
int ein_attention_run(ein_attention *attention, const void *q, const void *k,
                      const void *v, void *o, float *lse, void *workspace,
                      void *stream);

/* Combines `parts` partial results over disjoint key ranges of the same
 * rows (o_i of `value_dim` elements a row, typed part_dtypes[i], among
 * "f32", "bf16", "f16"; lse_i f32): lse = log sum_i exp(lse_i), o = sum_i
 * exp(lse_i - lse) o_i. `lse_out` may be NULL. Enqueued on `stream`. */
int ein_attention_combine(int parts, const void *const *o,
                          const char *const *part_dtypes,
                          const float *const *lse, int64_t rows,
                          int64_t value_dim, void *out, const char *out_dtype,
                          float *lse_out, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* EIN_ATTENTION_H */
