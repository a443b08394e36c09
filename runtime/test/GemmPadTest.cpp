//===- GemmPadTest.cpp - When the CUDA backend pads a gemm ----------------===//
//
// padGemm's decisions on the shapes measured on the H200s
// (bench/results/2026-11-30-ragged-gemm-h200x2.md): compute-bound gemms
// with a ragged contiguous dimension are padded to multiples of 8; aligned,
// 32-bit, tiny and memory-bound ones run as they are, and so do ragged
// dimensions no operand holds contiguously.
//
//===----------------------------------------------------------------------===//

#include "../lib/cuda/gemm_pad.h"

#include <gtest/gtest.h>

using namespace ein::cuda;

namespace {

GemmDims dims(int64_t rows, int64_t inner, int64_t cols, int64_t bytes = 2,
              bool transposeA = false, bool transposeB = false) {
  GemmDims d;
  d.transposeA = transposeA;
  d.transposeB = transposeB;
  d.rows = rows;
  d.inner = inner;
  d.cols = cols;
  d.inputBytes = d.outputBytes = bytes;
  return d;
}

bool padded(const GemmDims &before, const GemmDims &after) {
  return before.rows != after.rows || before.cols != after.cols ||
         before.inner != after.inner;
}

} // namespace

TEST(GemmPad, RaggedComputeBoundGemmsArePaddedToTheGranule) {
  GemmDims d = padGemm(dims(8191, 8191, 8191), GemmPadMode::Auto);
  EXPECT_EQ(d.rows, 8191); // no operand holds the rows contiguously
  EXPECT_EQ(d.inner, 8192);
  EXPECT_EQ(d.cols, 8192);
  // Only the ragged dimension grows.
  d = padGemm(dims(4096, 14336, 2049), GemmPadMode::Auto);
  EXPECT_EQ(d.rows, 4096);
  EXPECT_EQ(d.inner, 14336);
  EXPECT_EQ(d.cols, 2056);
  d = padGemm(dims(16384, 4097, 4096), GemmPadMode::Auto);
  EXPECT_EQ(d.inner, 4104);
  EXPECT_EQ(d.rows, 16384);
}

TEST(GemmPad, OnlyContiguousDimensionsArePadded) {
  // 16383 rows run at full speed (802 TFLOP/s measured).
  EXPECT_FALSE(padded(dims(16383, 4096, 4096),
                      padGemm(dims(16383, 4096, 4096), GemmPadMode::Always)));
  // A transposed a holds its rows contiguously...
  EXPECT_EQ(padGemm(dims(16383, 4096, 4096, 2, true), GemmPadMode::Auto).rows,
            16384);
  // ...and then the inner dimension only b may hold contiguously.
  EXPECT_EQ(padGemm(dims(4096, 4097, 4096, 2, true, false), GemmPadMode::Always)
                .inner,
            4097);
  EXPECT_EQ(
      padGemm(dims(4096, 4097, 4096, 2, true, true), GemmPadMode::Always).inner,
      4104);
}

TEST(GemmPad, AlignedAndWideElementGemmsRunAsTheyAre) {
  for (GemmPadMode mode : {GemmPadMode::Auto, GemmPadMode::Always}) {
    EXPECT_FALSE(
        padded(dims(8192, 8192, 8192), padGemm(dims(8192, 8192, 8192), mode)));
    // f32 gemms do not run on the 16-bit tensor-core kernels in question.
    EXPECT_FALSE(padded(dims(8191, 8191, 8191, 4),
                        padGemm(dims(8191, 8191, 8191, 4), mode)));
  }
}

TEST(GemmPad, SmallAndMemoryBoundGemmsAreNotWorthTheCopies) {
  EXPECT_FALSE(padded(dims(97, 131, 113),
                      padGemm(dims(97, 131, 113), GemmPadMode::Auto)));
  // A skinny gemm: reading the 8191 x 8191 operand dominates either way.
  EXPECT_FALSE(padded(dims(16, 8191, 8191),
                      padGemm(dims(16, 8191, 8191), GemmPadMode::Auto)));
  // Both still pad when told to, and nothing pads when told not to.
  EXPECT_TRUE(padded(dims(97, 131, 113),
                     padGemm(dims(97, 131, 113), GemmPadMode::Always)));
  EXPECT_FALSE(padded(dims(8191, 8191, 8191),
                      padGemm(dims(8191, 8191, 8191), GemmPadMode::Never)));
}

TEST(GemmPad, WithMatrixReplacesTheLastTwoDimensions) {
  EXPECT_EQ(withMatrix({3, 5, 7}, 8, 16), (std::vector<int64_t>{3, 8, 16}));
  EXPECT_EQ(withMatrix({5, 7}, 5, 8), (std::vector<int64_t>{5, 8}));
}
