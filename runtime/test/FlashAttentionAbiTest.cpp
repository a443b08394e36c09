//===- FlashAttentionAbiTest.cpp - The flash kernel's logic on the CPU ----===//
//
// The runtime's own attention kernel (lib/cuda/attention_kernels.cu) shares
// its index math with the host through attention_abi.h. Here that math is
// emulated on the CPU: which block takes which query tile, which key tiles
// it skips or masks, the online softmax per row against a float64
// reference (o and lse, rows that see no key), and the ldmatrix/mma
// fragment mapping of the PTX ISA with the kernel's exact shared-memory
// addresses, so S = QK^T and O = PV come out exact.
//
//===----------------------------------------------------------------------===//

#include "../lib/cuda/attention_abi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

using namespace ein::cuda;

namespace {

#define CHECK(c)                                                               \
  do {                                                                         \
    EXPECT_TRUE(c);                                                            \
  } while (0)

// ---- Part 1: blocks, tiles, masks, online softmax (scalar per row) -------
FlashAttentionParams makeParams(int batch, int heads, int kvHeads, int queries,
                                int keys, bool causal, long diagonal) {
  FlashAttentionParams p = {};
  p.heads = heads;
  p.kvHeads = kvHeads;
  p.group = heads / kvHeads;
  p.queries = queries;
  p.keys = keys;
  p.batchHeads = batch * heads;
  p.queryTiles = (queries + kFlashBlockRows - 1) / kFlashBlockRows;
  p.causal = causal;
  p.diagonal = (int)std::clamp<long>(diagonal, -queries, keys);
  p.scaleLog2 = 0.125f * 1.4426950408889634f;
  return p;
}

void emulateProblem(int headDim, int batch, int heads, int kvHeads, int queries,
                    int keys, bool causal, long diagonal, std::mt19937 &rng) {
  FlashAttentionParams p =
      makeParams(batch, heads, kvHeads, queries, keys, causal, diagonal);
  const int kKeys = flashBlockKeys(headDim);
  // scores[bh][row][key]: random, standing in for q.k
  std::normal_distribution<float> normal(0, 8);
  int bhCount = batch * heads;
  std::vector<float> score((size_t)bhCount * queries * keys);
  std::vector<float> value((size_t)batch * kvHeads * keys); // 1-dim values
  for (float &x : score)
    x = normal(rng);
  for (float &x : value)
    x = normal(rng);
  std::vector<int> covered((size_t)bhCount * p.queryTiles, 0);
  std::vector<float> out((size_t)bhCount * queries, NAN),
      lse((size_t)bhCount * queries, NAN);
  int blocks = p.batchHeads * p.queryTiles;
  int previousTiles = 1 << 30;
  for (int block = 0; block < blocks; ++block) {
    FlashTile tile = flashTileOf(p, block);
    CHECK(tile.batchHead >= 0 && tile.batchHead < bhCount);
    CHECK(tile.queryTile >= 0 && tile.queryTile < p.queryTiles);
    covered[(size_t)tile.batchHead * p.queryTiles + tile.queryTile]++;
    int b = tile.batchHead / p.heads, h = tile.batchHead % p.heads;
    int kvHead = b * p.kvHeads + h / p.group;
    int firstRow = tile.queryTile * kFlashBlockRows;
    int keyTiles = flashKeyTiles(p, tile.queryTile, kKeys);
    // heaviest first
    CHECK(keyTiles <= previousTiles || block % p.batchHeads != 0);
    if (block % p.batchHeads == 0)
      previousTiles = keyTiles;
    for (int warp = 0; warp < kFlashWarps; ++warp) {
      int warpRow = firstRow + warp * kFlashWarpRows;
      int warpSeesAll = flashKeyLimit(p, warpRow);
      int warpSeesNone =
          warpRow < p.queries
              ? flashKeyLimit(p,
                              std::min(warpRow + kFlashWarpRows, p.queries) - 1)
              : 0;
      for (int r = 0; r < kFlashWarpRows; ++r) {
        int row = warpRow + r;
        if (row >= queries)
          continue;
        // reference visibility
        auto visible = [&](int t) {
          return t < keys && (!causal || (long)t <= row + diagonal);
        };
        int limit = flashKeyLimit(p, row);
        for (int t = 0; t < keys; ++t)
          CHECK(visible(t) == (t < limit));
        CHECK(limit <= keyTiles * kKeys); // every visible key is processed
        float rowMax = -INFINITY, rowSum = 0, acc = 0;
        const float *s =
            &score[((size_t)tile.batchHead * queries + row) * keys];
        for (int n = 0; n < keyTiles; ++n) {
          int key0 = n * kKeys;
          if (!(key0 < warpSeesNone)) {
            for (int t = key0; t < key0 + kKeys; ++t)
              CHECK(!visible(t)); // a skipped tile is fully masked
            continue;
          }
          bool masked = key0 + kKeys > warpSeesAll;
          float x[256];
          for (int e = 0; e < kKeys; ++e) {
            int t = key0 + e;
            x[e] = t < keys ? s[t] : 0.0f; // zero-filled K gives score 0
            if (!masked)
              CHECK(visible(t));
            if (masked && t >= limit)
              x[e] = -INFINITY;
          }
          float max = rowMax;
          for (int e = 0; e < kKeys; ++e)
            max = std::fmax(max, x[e]);
          float base = max == -INFINITY ? 0.f : max * p.scaleLog2;
          float rescale = std::exp2(rowMax * p.scaleLog2 - base);
          rowMax = max;
          float sum = 0, pv = 0;
          for (int e = 0; e < kKeys; ++e) {
            float pe = std::exp2(std::fma(x[e], p.scaleLog2, -base));
            sum += pe;
            int t = key0 + e;
            float vt = t < keys ? value[(size_t)kvHead * keys + t] : 0.0f;
            pv += pe * vt;
          }
          rowSum = rowSum * rescale + sum;
          acc = acc * rescale + pv;
        }
        float inverse = rowSum > 0 ? 1 / rowSum : 0;
        size_t at = (size_t)tile.batchHead * queries + row;
        out[at] = acc * inverse;
        lse[at] = rowSum > 0 ? (rowMax * p.scaleLog2 + std::log2(rowSum)) *
                                   0.693147180559945309f
                             : -INFINITY;
      }
    }
  }
  for (int c : covered)
    CHECK(c == 1);
  // reference in double
  for (int bh = 0; bh < bhCount; ++bh) {
    int b = bh / heads, h = bh % heads,
        kvHead = b * kvHeads + h / (heads / kvHeads);
    for (int row = 0; row < queries; ++row) {
      const float *s = &score[((size_t)bh * queries + row) * keys];
      double max = -INFINITY;
      for (int t = 0; t < keys; ++t)
        if (!causal || (long)t <= row + diagonal)
          max = std::max(max, 0.125 * s[t]);
      double sum = 0, acc = 0;
      for (int t = 0; t < keys; ++t)
        if (!causal || (long)t <= row + diagonal) {
          double e = std::exp(0.125 * s[t] - max);
          sum += e;
          acc += e * value[(size_t)kvHead * keys + t];
        }
      size_t at = (size_t)bh * queries + row;
      double refO = sum > 0 ? acc / sum : 0;
      double refL = sum > 0 ? max + std::log(sum) : -INFINITY;
      CHECK(!std::isnan(out[at]) && !std::isnan(lse[at]));
      CHECK(std::fabs(out[at] - refO) <= 1e-3 * (1 + std::fabs(refO)));
      if (std::isinf(refL))
        CHECK(lse[at] == -INFINITY);
      else
        CHECK(std::fabs(lse[at] - refL) <= 1e-4 * (1 + std::fabs(refL)));
    }
  }
}

// ---- Part 2: fragments (ldmatrix + mma.m16n8k16 per the PTX ISA) ---------
// Shared memory as 16-bit elements; values are small integers (exact).
struct Shared {
  std::vector<float> bytes; // one float per 2-byte element, indexed by byte/2
  explicit Shared(size_t n) : bytes(n / 2, NAN) {}
  float &at(uint32_t byte) {
    static float outside = NAN;
    if (byte % 2 != 0 || byte / 2 >= bytes.size()) {
      ADD_FAILURE() << "shared-memory byte " << byte << " is out of range";
      return outside;
    }
    return bytes[byte / 2];
  }
};

// ldmatrix.x4 (optionally .trans): addr[l] = row address given by lane l.
// Returns r[lane][m][2] = the two elements lane receives of matrix m.
void ldmatrix(Shared &sm, const uint32_t addr[32], bool trans,
              float r[32][4][2]) {
  for (int m = 0; m < 4; ++m)
    for (int lane = 0; lane < 32; ++lane)
      for (int e = 0; e < 2; ++e) {
        int row = lane / 4, col = 2 * (lane % 4) + e;
        if (trans)
          std::swap(row, col); // the lane holds M^T[row][col] = M[col][row]
        r[lane][m][e] = sm.at(addr[8 * m + row] + 2 * col);
      }
}

// D += A B for m16n8k16: a[lane][4 regs][2], b[lane][2 regs][2],
// d[lane][4]. Rebuilds the matrices from the documented fragment layouts.
void mma(float d[32][4], const float a[32][4][2], const float b[32][2][2]) {
  float A[16][16], B[16][8], C[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 8; ++i) {
      int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
      int col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      A[row][col] = a[lane][i / 2][i % 2];
    }
    for (int i = 0; i < 4; ++i) {
      int row = t * 2 + (i & 1) + (i >= 2 ? 8 : 0);
      B[row][g] = b[lane][i / 2][i % 2];
    }
    for (int i = 0; i < 4; ++i)
      C[i < 2 ? g : g + 8][t * 2 + (i & 1)] = d[lane][i];
  }
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      float x = C[i][j];
      for (int k = 0; k < 16; ++k)
        x += A[i][k] * B[k][j];
      C[i][j] = x;
    }
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i)
      d[lane][i] = C[i < 2 ? g : g + 8][t * 2 + (i & 1)];
  }
}

// loadTile's placement: thread tid copies chunk tid % kChunks of rows
// tid / kChunks + pass * kRowsPerPass.
void storeTile(Shared &sm, uint32_t dst, const std::vector<float> &src,
               int rows, int D, int valid) {
  int kChunks = D / 8, kRowsPerPass = kFlashThreads / kChunks;
  for (int tid = 0; tid < kFlashThreads; ++tid) {
    int chunk = tid % kChunks, row0 = tid / kChunks;
    uint32_t base = dst + flashSwizzled(row0, chunk, kChunks);
    for (int pass = 0; pass < rows / kRowsPerPass; ++pass) {
      int row = row0 + pass * kRowsPerPass;
      uint32_t at = base + pass * kRowsPerPass * D * 2;
      CHECK(at == dst + flashSwizzled(row, chunk, kChunks));
      for (int e = 0; e < 8; ++e)
        sm.at(at + 2 * e) =
            row < valid ? src[(size_t)row * D + chunk * 8 + e] : 0;
    }
  }
}

void emulateFragments(int D, std::mt19937 &rng) {
  const int kKeys = flashBlockKeys(D), kChunks = D / 8;
  const uint32_t kRowBytes = D * 2;
  const int kRowTiles = kFlashWarpRows / 16, kKeyTiles = kKeys / 8,
            kDimTiles = D / 8;
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<float> Q(kFlashBlockRows * D), K(kKeys * D), V(kKeys * D);
  for (float &x : Q)
    x = small(rng);
  for (float &x : K)
    x = small(rng);
  for (float &x : V)
    x = small(rng);
  int validKeys = kKeys - 5; // a partial tile: zero-filled rows
  uint32_t sQ = 0, sK = kFlashBlockRows * kRowBytes,
           sV = sK + kKeys * kRowBytes;
  Shared sm(sV + kKeys * kRowBytes);
  storeTile(sm, sQ, Q, kFlashBlockRows, D, kFlashBlockRows);
  storeTile(sm, sK, K, kKeys, D, validKeys);
  storeTile(sm, sV, V, kKeys, D, validKeys);
  // every element landed once: check by reading back through flashSwizzled
  for (int r = 0; r < kKeys; ++r)
    for (int c = 0; c < D; ++c)
      CHECK(sm.at(sK + flashSwizzled(r, c / 8, kChunks) + 2 * (c % 8)) ==
            (r < validKeys ? K[r * D + c] : 0));
  for (int lane = 0; lane < 32; ++lane)
    for (int row0 = 0; row0 < 64; row0 += 16)
      for (int chunk0 = 0; chunk0 < kChunks; chunk0 += 2)
        CHECK(row0 * kChunks * 16 +
                  (flashLaneOffset(lane, kChunks) ^ uint32_t(chunk0 * 16)) ==
              flashSwizzled(row0 + lane % 16, chunk0 + lane / 16, kChunks));

  for (int warp = 0; warp < kFlashWarps; ++warp) {
    uint32_t sQWarp = sQ + warp * kFlashWarpRows * kRowBytes;
    float s[32][2][32][4]; // [lane][i][j][4]
    for (auto &l : s)
      for (auto &i : l)
        for (auto &j : i)
          for (float &x : j)
            x = 0;
    for (int kk = 0; kk < D / 16; ++kk) {
      float a[2][32][4][2];
      for (int i = 0; i < kRowTiles; ++i) {
        uint32_t addr[32];
        for (int lane = 0; lane < 32; ++lane)
          addr[lane] = sQWarp + i * 16 * kRowBytes +
                       (flashLaneOffset(lane, kChunks) ^ (kk * 32));
        ldmatrix(sm, addr, false, a[i]);
      }
      for (int j = 0; j < kKeyTiles / 2; ++j) {
        uint32_t addr[32];
        for (int lane = 0; lane < 32; ++lane)
          addr[lane] = sK + j * 16 * kRowBytes +
                       (flashLaneOffset(lane, kChunks) ^ (kk * 32));
        float r[32][4][2];
        ldmatrix(sm, addr, false, r);
        for (int i = 0; i < kRowTiles; ++i) {
          float b0[32][2][2], b1[32][2][2], d0[32][4], d1[32][4];
          for (int lane = 0; lane < 32; ++lane)
            for (int e = 0; e < 2; ++e) {
              b0[lane][0][e] = r[lane][0][e]; // (b[0], b[2])
              b0[lane][1][e] = r[lane][2][e];
              b1[lane][0][e] = r[lane][1][e]; // (b[1], b[3])
              b1[lane][1][e] = r[lane][3][e];
            }
          for (int lane = 0; lane < 32; ++lane)
            for (int e = 0; e < 4; ++e) {
              d0[lane][e] = s[lane][i][2 * j][e];
              d1[lane][e] = s[lane][i][2 * j + 1][e];
            }
          mma(d0, a[i], b0);
          mma(d1, a[i], b1);
          for (int lane = 0; lane < 32; ++lane)
            for (int e = 0; e < 4; ++e) {
              s[lane][i][2 * j][e] = d0[lane][e];
              s[lane][i][2 * j + 1][e] = d1[lane][e];
            }
        }
      }
    }
    // check S against Q K^T
    for (int lane = 0; lane < 32; ++lane) {
      int g = lane / 4, t = lane % 4;
      for (int i = 0; i < kRowTiles; ++i)
        for (int j = 0; j < kKeyTiles; ++j)
          for (int e = 0; e < 4; ++e) {
            int row = warp * kFlashWarpRows + 16 * i + 8 * (e / 2) + g;
            int key = 8 * j + 2 * t + e % 2;
            float ref = 0;
            for (int c = 0; c < D; ++c)
              ref += Q[row * D + c] * (key < validKeys ? K[key * D + c] : 0);
            CHECK(s[lane][i][j][e] == ref);
          }
    }
    // P = S (as if exp were the identity), packed as the kernel packs it.
    float pFrag[32][2][16][4][2]; // [lane][i][kk][reg][half]
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < kRowTiles; ++i)
        for (int h = 0; h < 2; ++h)
          for (int j = 0; j < kKeyTiles; ++j) {
            pFrag[lane][i][j / 2][j % 2 * 2 + h][0] = s[lane][i][j][2 * h];
            pFrag[lane][i][j / 2][j % 2 * 2 + h][1] = s[lane][i][j][2 * h + 1];
          }
    float o[32][2][16][4];
    for (auto &l : o)
      for (auto &i : l)
        for (auto &j : i)
          for (float &x : j)
            x = 0;
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      uint32_t rows = sV + kk * 16 * kRowBytes;
      for (int j = 0; j < kDimTiles / 2; ++j) {
        uint32_t addr[32];
        for (int lane = 0; lane < 32; ++lane)
          addr[lane] = rows + (flashLaneOffset(lane, kChunks) ^ (j * 32));
        float r[32][4][2];
        ldmatrix(sm, addr, true, r);
        for (int i = 0; i < kRowTiles; ++i) {
          float a[32][4][2], b0[32][2][2], b1[32][2][2], d0[32][4], d1[32][4];
          for (int lane = 0; lane < 32; ++lane) {
            for (int reg = 0; reg < 4; ++reg)
              for (int e = 0; e < 2; ++e)
                a[lane][reg][e] = pFrag[lane][i][kk][reg][e];
            for (int e = 0; e < 2; ++e) {
              b0[lane][0][e] = r[lane][0][e]; // (b[0], b[1])
              b0[lane][1][e] = r[lane][1][e];
              b1[lane][0][e] = r[lane][2][e]; // (b[2], b[3])
              b1[lane][1][e] = r[lane][3][e];
            }
            for (int e = 0; e < 4; ++e) {
              d0[lane][e] = o[lane][i][2 * j][e];
              d1[lane][e] = o[lane][i][2 * j + 1][e];
            }
          }
          mma(d0, a, b0);
          mma(d1, a, b1);
          for (int lane = 0; lane < 32; ++lane)
            for (int e = 0; e < 4; ++e) {
              o[lane][i][2 * j][e] = d0[lane][e];
              o[lane][i][2 * j + 1][e] = d1[lane][e];
            }
        }
      }
    }
    // check O against S V, through the epilogue's indexing
    for (int lane = 0; lane < 32; ++lane) {
      int g = lane / 4, t = lane % 4;
      for (int i = 0; i < kRowTiles; ++i)
        for (int h = 0; h < 2; ++h)
          for (int j = 0; j < kDimTiles; ++j)
            for (int e = 0; e < 2; ++e) {
              int row = warp * kFlashWarpRows + 16 * i + 8 * h + g;
              int col = 8 * j + 2 * t + e;
              float ref = 0;
              for (int key = 0; key < validKeys; ++key) {
                float sk = 0;
                for (int c = 0; c < D; ++c)
                  sk += Q[row * D + c] * K[key * D + c];
                ref += sk * V[key * D + col];
              }
              CHECK(o[lane][i][j][2 * h + e] == ref);
            }
    }
  }
}

} // namespace

TEST(FlashAttentionAbi, FragmentsComputeExactProducts) {
  std::mt19937 rng(7);
  for (int D : {64, 128})
    emulateFragments(D, rng);
}

TEST(FlashAttentionAbi, TilesMasksAndOnlineSoftmax) {
  std::mt19937 rng(7);
  struct Case {
    int batch, heads, kvHeads, queries, keys;
    bool causal;
    long diagonal;
  };
  std::vector<Case> cases = {
      {1, 1, 1, 1, 1, false, 0},      {1, 2, 1, 1, 1, true, 0},
      {1, 1, 1, 130, 130, true, 0},   {2, 4, 2, 200, 77, false, 0},
      {1, 2, 2, 300, 300, true, 0},   {1, 1, 1, 257, 100, true, 50},
      {1, 1, 1, 100, 257, true, 157}, {1, 1, 1, 200, 200, true, -70},
      {1, 1, 1, 129, 47, true, -200}, {1, 3, 1, 64, 500, true, 1000},
      {1, 1, 1, 500, 49, true, -10},  {2, 8, 2, 384, 384, true, 0},
      {1, 1, 1, 1, 1000, true, 999},  {1, 1, 1, 1000, 1, true, 0},
      {1, 1, 1, 33, 96, true, -40},
  };
  for (int D : {64, 128})
    for (const Case &c : cases)
      emulateProblem(D, c.batch, c.heads, c.kvHeads, c.queries, c.keys,
                     c.causal, c.diagonal, rng);
  std::uniform_int_distribution<int> len(1, 400), dg(-450, 450), coin(0, 1);
  for (int r = 0; r < 60; ++r)
    emulateProblem(coin(rng) ? 64 : 128, 1, 2, 1, len(rng), len(rng), coin(rng),
                   dg(rng), rng);
}
