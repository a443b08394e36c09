//===- attention_abi.h - Parameters of the attention kernels ----*- C++ -*-===//
//
// Shared by the host code (flash_attention.cpp) and the kernels
// (attention_kernels.cu), which nvcc compiles into a fatbin embedded in the
// runtime: plain structs passed by value as each kernel's one parameter, and
// the kernels' index math, which the CPU tests check.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_ATTENTION_ABI_H
#define EIN_LIB_CUDA_ATTENTION_ABI_H

#include "kernels_abi.h"

#include <stdint.h>

namespace ein::cuda {

/// The flash kernel's thread block: 4 warps of 32 query rows each. 128 rows
/// per block halve the K/V reads from L2 per flop compared with 64; 32 rows
/// per warp (two m16 tiles) make each K/V fragment loaded by ldmatrix feed
/// two mmas, halving the shared-memory reads per flop.
constexpr int kFlashWarps = 4;
constexpr int kFlashWarpRows = 32;
constexpr int kFlashThreads = kFlashWarps * 32;
constexpr int kFlashBlockRows = kFlashWarps * kFlashWarpRows;

/// Keys per K/V tile (a multiple of 16). A warp's f32 scores (32 rows x
/// keys) and output accumulators (32 rows x headDim) share the 255 registers
/// a thread may have: per thread, 128 + 64 for headDim 64; for headDim 128,
/// 64 keys would be 64 + 128 and leave ptxas too few for the rest (it
/// spills), 48 keys are 48 + 128.
EIN_HOST_DEVICE constexpr int flashBlockKeys(int headDim) {
  return headDim == 64 ? 128 : 48;
}

/// Dynamic shared memory of the flash kernel: the block's Q tile and two
/// buffers each of K and V tiles (16-bit elements).
EIN_HOST_DEVICE constexpr int flashSharedBytes(int headDim) {
  return (kFlashBlockRows + 4 * flashBlockKeys(headDim)) * headDim * 2;
}

/// ein_flash_attention_{bf16,f16}_d{64,128}: the layouts of attention.h,
/// headDim == valueDim == the kernel's.
struct FlashAttentionParams {
  const void *q, *k, *v;
  void *o;
  float *lse; // null: not written
  int32_t heads, kvHeads;
  int32_t group; // heads / kvHeads: query heads per KV head
  int32_t queries, keys;
  int32_t batchHeads; // batch * heads
  int32_t queryTiles; // ceil(queries / kFlashBlockRows)
  int32_t causal;
  /// Clamped to [-queries, keys], which leaves every query's visible keys
  /// as they were and keeps the index math within 32 bits.
  int32_t diagonal;
  float scaleLog2; // scale * log2(e): the softmax runs on exp2
};

/// The work of thread block `block`: query tile `queryTile` of query head
/// `batchHead` (= b * heads + h). The heaviest query tiles (the last, under
/// a causal mask) come first so that the light ones fill the tail of the
/// grid; neighbouring blocks share a KV head, so its tiles stay in L2.
struct FlashTile {
  int32_t batchHead, queryTile;
};
EIN_HOST_DEVICE inline FlashTile flashTileOf(const FlashAttentionParams &p,
                                             int32_t block) {
  return {block % p.batchHeads, p.queryTiles - 1 - block / p.batchHeads};
}

/// Query `row` sees exactly the keys below this limit.
EIN_HOST_DEVICE inline int32_t flashKeyLimit(const FlashAttentionParams &p,
                                             int32_t row) {
  if (!p.causal)
    return p.keys;
  int32_t limit = row + p.diagonal + 1;
  return limit < 0 ? 0 : limit > p.keys ? p.keys : limit;
}

/// The K/V tiles a query tile processes: [0, flashKeyTiles). The tiles past
/// the keys its last row sees are fully masked and skipped.
EIN_HOST_DEVICE inline int32_t flashKeyTiles(const FlashAttentionParams &p,
                                             int32_t queryTile,
                                             int32_t blockKeys) {
  int32_t last = (queryTile + 1) * kFlashBlockRows;
  last = (last < p.queries ? last : p.queries) - 1;
  return (flashKeyLimit(p, last) + blockKeys - 1) / blockKeys;
}

/// Shared-memory tiles hold rows of `rowChunks` 16-byte chunks (8 elements);
/// chunk c of row r lies at chunk c ^ (r % 8). The 8 rows one ldmatrix
/// matrix reads (the same chunk of 8 consecutive rows) then hit 8 distinct
/// 16-byte bank groups instead of one. Needs rowChunks >= 8.
EIN_HOST_DEVICE constexpr uint32_t flashSwizzled(int row, int chunk,
                                                 int rowChunks) {
  return uint32_t(row * rowChunks + (chunk ^ (row & 7))) * 16;
}

/// Every ldmatrix.x4 of the kernel reads a 16-row x 2-chunk block: lane l
/// gives the address of row l % 16, chunk l / 16, so matrices 0..3 are
/// (rows 0-7, chunk 0), (rows 8-15, chunk 0), (rows 0-7, chunk 1),
/// (rows 8-15, chunk 1). For the block at row0 (a multiple of 16) and
/// chunk0 (even), the lane's address is
///   row0 * rowChunks * 16 + (flashLaneOffset(lane, rowChunks) ^ chunk0 * 16)
/// which equals flashSwizzled(row0 + l % 16, chunk0 + l / 16, rowChunks):
/// one xor per block instead of the full swizzle.
EIN_HOST_DEVICE constexpr uint32_t flashLaneOffset(int lane, int rowChunks) {
  return uint32_t((lane % 16) * rowChunks + ((lane / 16) ^ (lane % 8))) * 16;
}

/// ein_attention_combine: see combineAttention in flash_attention.h.
constexpr int kMaxCombineParts = 64;
constexpr int kCombineThreads = 256; // one warp per row

struct AttentionCombineParams {
  const void *o[kMaxCombineParts];
  const float *lse[kMaxCombineParts];
  int32_t partType[kMaxCombineParts];
  int32_t parts;
  int32_t outType;
  void *out;
  float *lseOut; // null: not written
  int64_t rows, valueDim;
};

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_ATTENTION_ABI_H
