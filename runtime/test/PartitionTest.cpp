//===- PartitionTest.cpp - Block arithmetic
//---------------------------------===//

#include "ein/partition.h"

#include <gtest/gtest.h>

#include <algorithm>

using ein::blockRange;
using ein::Range;

TEST(Partition, EvenCut) {
  EXPECT_EQ(blockRange(64, 4, 0), (Range{0, 16}));
  EXPECT_EQ(blockRange(64, 4, 3), (Range{48, 16}));
}

TEST(Partition, UnevenCutPutsLargerBlocksFirst) {
  // 10 in 4 parts: 3, 3, 2, 2 starting at 0, 3, 6, 8.
  const Range expected[] = {{0, 3}, {3, 3}, {6, 2}, {8, 2}};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(blockRange(10, 4, i), expected[i]) << "block " << i;
}

TEST(Partition, UnevenCutsMoveInGranulesWhereTheSizeAllows) {
  // 4096 in 3: 64 granules of 64 as 22, 21, 21.
  EXPECT_EQ(blockRange(4096, 3, 0), (Range{0, 1408}));
  EXPECT_EQ(blockRange(4096, 3, 1), (Range{1408, 1344}));
  EXPECT_EQ(blockRange(4096, 3, 2), (Range{2752, 1344}));
  // 4096 in 7: granules of 64 would be too coarse (64 < 16 x 7); of 32 not.
  EXPECT_EQ(ein::cutGranule(4096, 7), 32);
  // Even cuts stay exact even where the blocks are not multiples of 8.
  EXPECT_EQ(ein::cutGranule(4104, 2), 1);
  EXPECT_EQ(blockRange(4104, 2, 1), (Range{2052, 2052}));
  // Sizes without a granule of 8 (odd, or too small) cut in elements.
  EXPECT_EQ(ein::cutGranule(131, 2), 1);
  EXPECT_EQ(ein::cutGranule(96, 5), 1);
  EXPECT_EQ(ein::cutGranule(640, 5), 1);
  EXPECT_EQ(ein::cutGranule(648, 5), 8);
}

TEST(Partition, BlocksTileTheDimension) {
  // Every (size, parts) with parts <= size: blocks are non-empty, contiguous,
  // end exactly at the size, differ by at most one granule, and start at a
  // multiple of it; the largest is within 1/16 of an exact share (or one
  // element of it).
  for (int64_t size = 1; size <= 2100; size += size < 64 ? 1 : 7) {
    for (int64_t parts = 1; parts <= std::min<int64_t>(size, 40); ++parts) {
      int64_t granule = ein::cutGranule(size, parts);
      int64_t next = 0, smallest = size, largest = 0;
      for (int64_t i = 0; i < parts; ++i) {
        Range r = blockRange(size, parts, i);
        ASSERT_EQ(r.offset, next) << size << "/" << parts << " block " << i;
        ASSERT_GE(r.size, 1);
        ASSERT_EQ(r.offset % granule, 0);
        smallest = std::min(smallest, r.size);
        largest = std::max(largest, r.size);
        next += r.size;
      }
      EXPECT_EQ(next, size);
      EXPECT_LE(largest - smallest, granule) << size << "/" << parts;
      EXPECT_LE(largest * parts, std::max(size + size / 16, size + parts))
          << size << "/" << parts;
    }
  }
}

TEST(Partition, CutPoints) {
  EXPECT_EQ(ein::cutPoints(10, 4), (std::vector<int64_t>{0, 3, 6, 8, 10}));
  EXPECT_EQ(ein::cutPoints(3, 2, 4), (std::vector<int64_t>{0, 8, 12}));
}

TEST(Partition, LinearizeRoundTrips) {
  std::vector<int64_t> parts = {2, 3, 4};
  EXPECT_EQ(ein::numBlocks(parts), 24);
  for (int64_t linear = 0; linear < 24; ++linear)
    EXPECT_EQ(ein::linearize(ein::delinearize(linear, parts), parts), linear);
  // Row-major: the last dimension varies fastest.
  EXPECT_EQ(ein::delinearize(5, parts), (std::vector<int64_t>{0, 1, 1}));
}

TEST(Partition, BlockShape) {
  std::vector<int64_t> shape = {10, 7}, parts = {4, 2};
  EXPECT_EQ(ein::blockShape(shape, parts, 0), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(ein::blockShape(shape, parts, 7), (std::vector<int64_t>{2, 3}));
}
