//===- attention_kernels.cu - The runtime's own fused attention kernels ---===//
//
// A FlashAttention-2 forward pass on warp-level tensor cores (mma.sync
// m16n8k16, f32 accumulation), and the kernel that merges the partial
// results of attention over disjoint key ranges by their log-sum-exp.
// Compiled by nvcc into a fatbin that the runtime embeds and loads with
// cudaLibraryLoadData; the names are extern "C" so cudaLibraryGetKernel
// finds them.
//
// Flash kernel: a block of 4 warps owns 128 query rows of one head, each
// warp 32 rows (two m16 tiles). Q stays in shared memory for the whole block
// (reloaded per K/V tile by ldmatrix: held in registers it would not fit
// beside the 32 x headDim output accumulator); K/V tiles stream through two
// cp.async buffers, the next tile loading while the current one computes.
// Per tile each warp computes S = Q K^T, masks it only where a key crosses
// the causal diagonal or the end of the keys, updates the running max and
// sum (online softmax, base 2, scale folded in) and accumulates O += P V
// with P taken straight from the S accumulators. K/V tiles are 48 keys for
// headDim 128 and 128 for headDim 64 (flashBlockKeys): at 255 registers and
// 80 KiB of shared memory, two blocks share an SM, each hiding the other's
// barriers. Fully masked K/V tiles are never loaded, and the grid runs the
// heaviest query tiles first (flashTileOf).
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
// floating point type" and ldmatrix); g = lane / 4, t = lane % 4; the lower
// column of each element pair is in the lower 16 bits:
//   A (16x16, row): a[0] = (g, 2t..2t+1), a[1] = (g+8, 2t..), a[2] = (g,
//     2t+8..), a[3] = (g+8, 2t+8..)
//   B (16x8, col):  b[0] = (k 2t..2t+1, n g), b[1] = (k 2t+8.., n g)
//   C (16x8, f32):  c[0..1] = (g, 2t..2t+1), c[2..3] = (g+8, 2t..2t+1)
//   ldmatrix.x4:    lanes 8i..8i+7 address the rows of matrix i; each lane
//     receives (row g, columns 2t..2t+1) of every matrix (.trans: of its
//     transpose), matrix i in register i.
// With the 16-row x 2-chunk addressing of flashLaneOffset (matrices (rows
// 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15)):
//   Q [rows][d]:  registers 0..3 are a[0..3] directly.
//   K [keys][d]:  B(k = d, n = key) = K[key][d] is K's row-major tile read
//     as column-major, so plain ldmatrix gives key tile 0 as (r[0], r[2])
//     and key tile 1 (keys 8-15) as (r[1], r[3]).
//   V [keys][d]:  B(k = key, n = d) needs the transpose: ldmatrix.trans
//     gives d tile 0 as (r[0], r[1]) and d tile 1 as (r[2], r[3]).
//   P: S's C fragments of key tiles 2j and 2j+1 are, packed in pairs, the A
//     fragment of keys 16j..16j+15: (c0c1 | c2c3 of tile 2j, then of 2j+1).
//
//===----------------------------------------------------------------------===//

#include "attention_abi.h"
#include "elements.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

using namespace ein::cuda;

namespace {

__device__ __forceinline__ uint32_t sharedAddress(const void *pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

/// 16 bytes from global to shared memory, or 16 zero bytes when `valid` is
/// false (nothing is read then, but `src` must still be a global address).
__device__ __forceinline__ void copyAsync(uint32_t dst, const void *src,
                                          bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void commitAsync() {
  asm volatile("cp.async.commit_group;\n" ::);
}

/// Waits until at most `N` of this thread's committed groups are pending.
template <int N> __device__ __forceinline__ void waitAsync() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void loadMatrices(uint32_t (&r)[4],
                                             uint32_t address) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(address));
}

__device__ __forceinline__ void loadMatricesTransposed(uint32_t (&r)[4],
                                                       uint32_t address) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, "
      "[%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(address));
}

/// d += a b for one m16n8k16 tile, f32 accumulators.
template <typename T>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4],
                                    uint32_t b0, uint32_t b1);

template <>
__device__ __forceinline__ void mma<__nv_bfloat16>(float (&d)[4],
                                                   const uint32_t (&a)[4],
                                                   uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void
mma<__half>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Two floats rounded to T, `low` in the lower 16 bits.
template <typename T>
__device__ __forceinline__ uint32_t pack(float low, float high);

template <>
__device__ __forceinline__ uint32_t pack<__nv_bfloat16>(float low, float high) {
  __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
  uint32_t bits;
  memcpy(&bits, &pair, sizeof bits);
  return bits;
}

template <>
__device__ __forceinline__ uint32_t pack<__half>(float low, float high) {
  __half2 pair = __floats2half2_rn(low, high);
  uint32_t bits;
  memcpy(&bits, &pair, sizeof bits);
  return bits;
}

/// 2^x in one MUFU instruction (exp2f without fast math adds range
/// handling); 2^-inf = 0, which the masking relies on.
__device__ __forceinline__ float exp2Fast(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

/// Issues the copy of `rows` rows of D elements from `src` (row-major) into
/// the swizzled tile at `dst`; rows from `valid` on become zeros, so that
/// keys past the end add 0 * V (never 0 * NaN from stale memory) and queries
/// past the end compute harmless scores.
template <int Rows, int D, typename T>
__device__ __forceinline__ void loadTile(uint32_t dst, const T *src,
                                         int valid) {
  constexpr int kChunks = D / 8;
  constexpr int kRowsPerPass = kFlashThreads / kChunks;
  static_assert(Rows % kRowsPerPass == 0 && kRowsPerPass % 8 == 0,
                "the passes cover the tile, each moving the swizzle by 0");
  const int chunk = threadIdx.x % kChunks, row = threadIdx.x / kChunks;
  // Each pass is the first one moved by whole rows: immediate offsets.
  dst += flashSwizzled(row, chunk, kChunks);
  src += row * D + chunk * 8;
  valid -= row;
#pragma unroll
  for (int pass = 0; pass < Rows / kRowsPerPass; ++pass) {
    bool inside = pass * kRowsPerPass < valid;
    copyAsync(dst + pass * kRowsPerPass * D * 2,
              inside ? src + pass * kRowsPerPass * D : src - row * D, inside);
  }
}

template <int D, typename T>
__device__ __forceinline__ void flashAttention(const FlashAttentionParams &p) {
  constexpr int kKeys = flashBlockKeys(D);
  constexpr int kChunks = D / 8;
  constexpr uint32_t kRowBytes = D * 2;
  constexpr uint32_t kTileBytes = kKeys * kRowBytes;
  constexpr int kRowTiles = kFlashWarpRows / 16; // m16 tiles per warp
  constexpr int kKeyTiles = kKeys / 8;           // n8 tiles of S
  constexpr int kDimTiles = D / 8;               // n8 tiles of O
  static_assert(kChunks >= 8, "the swizzle needs 8 chunks per row");

  extern __shared__ __align__(128) unsigned char shared[];
  const uint32_t sQ = sharedAddress(shared);
  const uint32_t sK = sQ + kFlashBlockRows * kRowBytes;
  const uint32_t sV = sK + 2 * kTileBytes;

  const FlashTile tile = flashTileOf(p, blockIdx.x);
  const int firstRow = tile.queryTile * kFlashBlockRows;
  const int64_t kvHead = int64_t(tile.batchHead / p.heads) * p.kvHeads +
                         tile.batchHead % p.heads / p.group;
  const T *q = static_cast<const T *>(p.q) +
               (int64_t(tile.batchHead) * p.queries + firstRow) * D;
  const T *k = static_cast<const T *>(p.k) + kvHead * p.keys * D;
  const T *v = static_cast<const T *>(p.v) + kvHead * p.keys * D;
  const int keyTiles = flashKeyTiles(p, tile.queryTile, kKeys);

  // Group 0: Q and the first K/V tile. A block that sees no key loads
  // nothing and writes zeros below.
  if (keyTiles > 0) {
    loadTile<kFlashBlockRows, D>(sQ, q, p.queries - firstRow);
    loadTile<kKeys, D>(sK, k, p.keys);
    loadTile<kKeys, D>(sV, v, p.keys);
  }
  commitAsync();

  // The warp index as a warp-uniform value, so that ptxas keeps what derives
  // from it in uniform registers: the accumulators need all the others.
  const int warp = __shfl_sync(0xffffffff, threadIdx.x / 32, 0);
  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int warpRow = firstRow + warp * kFlashWarpRows;
  // Every row of the warp sees the keys below warpSeesAll; none sees a key
  // from warpSeesNone on (rows past the queries do not count).
  const int warpSeesAll = flashKeyLimit(p, warpRow);
  const int warpSeesNone =
      warpRow < p.queries
          ? flashKeyLimit(p, min(warpRow + kFlashWarpRows, p.queries) - 1)
          : 0;
  const uint32_t laneOffset = flashLaneOffset(lane, kChunks);
  const uint32_t sQWarp = sQ + warp * kFlashWarpRows * kRowBytes;

  // Row r of this thread is r = i * 2 + h: query warpRow + 16 i + 8 h + g.
  // rowMax is the raw (unscaled) running max, rowSum this thread's share of
  // the running sum of 2^(scaled score - scaled max) (the 4 threads of a row
  // add theirs at the end).
  float o[kRowTiles][kDimTiles][4] = {};
  float rowMax[kRowTiles][2], rowSum[kRowTiles][2];
#pragma unroll
  for (int i = 0; i < kRowTiles; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      rowMax[i][h] = -INFINITY;
      rowSum[i][h] = 0;
    }

  for (int n = 0; n < keyTiles; ++n) {
    const uint32_t buffer = (n & 1) * kTileBytes;
    if (n + 1 < keyTiles) {
      const int next = (n + 1) * kKeys;
      loadTile<kKeys, D>(sK + (buffer ^ kTileBytes), k + int64_t(next) * D,
                         p.keys - next);
      loadTile<kKeys, D>(sV + (buffer ^ kTileBytes), v + int64_t(next) * D,
                         p.keys - next);
    }
    // Always commit, even nothing, so that "all but the newest group" is
    // always tile n.
    commitAsync();
    waitAsync<1>();
    __syncthreads();

    const int key0 = n * kKeys;
    if (key0 < warpSeesNone) { // warp-uniform: ldmatrix/mma need the warp
      // S = Q K^T over the head dimension, 16 at a time.
      float s[kRowTiles][kKeyTiles][4] = {};
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        const uint32_t lanePart = laneOffset ^ (kk * 32);
        uint32_t a[kRowTiles][4];
#pragma unroll
        for (int i = 0; i < kRowTiles; ++i)
          loadMatrices(a[i], sQWarp + i * 16 * kRowBytes + lanePart);
#pragma unroll
        for (int j = 0; j < kKeyTiles / 2; ++j) {
          uint32_t b[4];
          loadMatrices(b, sK + buffer + j * 16 * kRowBytes + lanePart);
#pragma unroll
          for (int i = 0; i < kRowTiles; ++i) {
            mma<T>(s[i][2 * j], a[i], b[0], b[2]);
            mma<T>(s[i][2 * j + 1], a[i], b[1], b[3]);
          }
        }
      }

      // Only tiles where some row misses some key pay for the mask.
      if (key0 + kKeys > warpSeesAll) {
#pragma unroll
        for (int i = 0; i < kRowTiles; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int limit = flashKeyLimit(p, warpRow + 16 * i + 8 * h + g);
#pragma unroll
            for (int j = 0; j < kKeyTiles; ++j)
#pragma unroll
              for (int e = 0; e < 2; ++e)
                if (key0 + 8 * j + 2 * t + e >= limit)
                  s[i][j][2 * h + e] = -INFINITY;
          }
      }

      // Online softmax: 2^(s * scaleLog2 - max * scaleLog2) by one FFMA and
      // one MUFU per score. A row that has seen only masked keys keeps max
      // -inf; it then subtracts 0 instead, so its scores give 2^-inf = 0
      // rather than NaN, and its (zero) accumulators scale by 2^-inf = 0.
      // Each row's probabilities are packed into P's A fragments as soon as
      // they exist: S's f32 registers die before O is rescaled. (Rescaling O
      // only when some max moved would save its FMULs, but the branch costs
      // ptxas the registers it has left and it spills.)
      float rescale[kRowTiles][2];
      uint32_t pFrag[kRowTiles][kKeys / 16][4];
#pragma unroll
      for (int i = 0; i < kRowTiles; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float max = rowMax[i][h];
#pragma unroll
          for (int j = 0; j < kKeyTiles; ++j)
            max = fmaxf(max, fmaxf(s[i][j][2 * h], s[i][j][2 * h + 1]));
          max = fmaxf(max, __shfl_xor_sync(0xffffffff, max, 1));
          max = fmaxf(max, __shfl_xor_sync(0xffffffff, max, 2));
          const float base = max == -INFINITY ? 0.f : max * p.scaleLog2;
          rescale[i][h] = exp2Fast(rowMax[i][h] * p.scaleLog2 - base);
          rowMax[i][h] = max;
          float sum = 0;
#pragma unroll
          for (int j = 0; j < kKeyTiles; ++j) {
            const float x0 = exp2Fast(fmaf(s[i][j][2 * h], p.scaleLog2, -base));
            const float x1 =
                exp2Fast(fmaf(s[i][j][2 * h + 1], p.scaleLog2, -base));
            sum += x0 + x1;
            // Key tile j is half j % 2 of P's 16-key step j / 2; row h is
            // register h of that half.
            pFrag[i][j / 2][j % 2 * 2 + h] = pack<T>(x0, x1);
          }
          rowSum[i][h] = rowSum[i][h] * rescale[i][h] + sum;
        }
#pragma unroll
      for (int i = 0; i < kRowTiles; ++i)
#pragma unroll
        for (int j = 0; j < kDimTiles; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            o[i][j][e] *= rescale[i][e / 2];

      // O += P V, 16 keys at a time.
#pragma unroll
      for (int kk = 0; kk < kKeys / 16; ++kk) {
        const uint32_t rows = sV + buffer + kk * 16 * kRowBytes;
#pragma unroll
        for (int j = 0; j < kDimTiles / 2; ++j) {
          uint32_t b[4];
          loadMatricesTransposed(b, rows + (laneOffset ^ (j * 32)));
#pragma unroll
          for (int i = 0; i < kRowTiles; ++i) {
            mma<T>(o[i][2 * j], pFrag[i][kk], b[0], b[1]);
            mma<T>(o[i][2 * j + 1], pFrag[i][kk], b[2], b[3]);
          }
        }
      }
    }
    // The next iteration's loads overwrite this tile's buffers.
    __syncthreads();
  }

  if (warpRow >= p.queries)
    return;
  T *out = static_cast<T *>(p.o) + int64_t(tile.batchHead) * p.queries * D;
#pragma unroll
  for (int i = 0; i < kRowTiles; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = rowSum[i][h];
      sum += __shfl_xor_sync(0xffffffff, sum, 1);
      sum += __shfl_xor_sync(0xffffffff, sum, 2);
      const int row = warpRow + 16 * i + 8 * h + g;
      if (row >= p.queries)
        continue;
      // A row that sees no key has sum 0: o = 0, lse = -inf.
      const float inverse = sum > 0 ? 1 / sum : 0;
      T *rowOut = out + int64_t(row) * D + 2 * t;
#pragma unroll
      for (int j = 0; j < kDimTiles; ++j)
        // Even element offsets of a 16-byte aligned tensor: 4-byte aligned.
        *reinterpret_cast<uint32_t *>(rowOut + 8 * j) =
            pack<T>(o[i][j][2 * h] * inverse, o[i][j][2 * h + 1] * inverse);
      if (p.lse && t == 0)
        p.lse[int64_t(tile.batchHead) * p.queries + row] =
            sum > 0 ? (rowMax[i][h] * p.scaleLog2 + log2f(sum)) *
                          0.693147180559945309f
                    : -INFINITY;
    }
}

} // namespace

#define EIN_FLASH_KERNEL(name, D, T)                                           \
  extern "C" __global__ void __launch_bounds__(kFlashThreads, 2)               \
      name(FlashAttentionParams p) {                                           \
    flashAttention<D, T>(p);                                                   \
  }

EIN_FLASH_KERNEL(ein_flash_attention_bf16_d64, 64, __nv_bfloat16)
EIN_FLASH_KERNEL(ein_flash_attention_bf16_d128, 128, __nv_bfloat16)
EIN_FLASH_KERNEL(ein_flash_attention_f16_d64, 64, __half)
EIN_FLASH_KERNEL(ein_flash_attention_f16_d128, 128, __half)


/// One warp per row: the lanes hold the parts' lse (lane, lane + 32), reduce
/// them to the row's lse and leave each part's weight exp(lse_i - lse) in
/// shared memory, then stride over the row's elements. Each element reads
/// every part before it is written, so `out` may be one of the parts.
extern "C" __global__ void __launch_bounds__(kCombineThreads)
    ein_attention_combine(AttentionCombineParams p) {
  constexpr int kWarps = kCombineThreads / 32;
  __shared__ float weights[kWarps][kMaxCombineParts];
  // The warp index as a warp-uniform value, so that ptxas keeps what derives
  // from it in uniform registers: the accumulators need all the others.
  const int warp = __shfl_sync(0xffffffff, threadIdx.x / 32, 0);
  const int lane = threadIdx.x % 32;
  float *weight = weights[warp];
  for (int64_t row = int64_t(blockIdx.x) * kWarps + warp; row < p.rows;
       row += int64_t(gridDim.x) * kWarps) {
    const float lse0 = lane < p.parts ? p.lse[lane][row] : -INFINITY;
    const float lse1 = lane + 32 < p.parts ? p.lse[lane + 32][row] : -INFINITY;
    float max = fmaxf(lse0, lse1);
    for (int offset = 16; offset > 0; offset /= 2)
      max = fmaxf(max, __shfl_xor_sync(0xffffffff, max, offset));
    // All parts empty: lse -inf and every weight 0, not exp(-inf + inf).
    float sum = max == -INFINITY ? 0 : expf(lse0 - max) + expf(lse1 - max);
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffff, sum, offset);
    const float lse = max == -INFINITY ? -INFINITY : max + logf(sum);
    __syncwarp(); // the previous row's reads of `weight` are done
    if (lane < p.parts)
      weight[lane] = max == -INFINITY ? 0 : expf(lse0 - lse);
    if (lane + 32 < p.parts)
      weight[lane + 32] = max == -INFINITY ? 0 : expf(lse1 - lse);
    __syncwarp();
    if (p.lseOut && lane == 0)
      p.lseOut[row] = lse;
    for (int64_t j = lane; j < p.valueDim; j += 32) {
      const int64_t i = row * p.valueDim + j;
      float x = 0;
      // A part of weight 0 is not read: an empty part's o may be anything.
      for (int part = 0; part < p.parts; ++part)
        if (weight[part] != 0)
          x += weight[part] * loadElement(p.o[part], p.partType[part], i);
      storeElement(p.out, p.outType, i, x);
    }
  }
}
