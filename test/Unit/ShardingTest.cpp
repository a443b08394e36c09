//===- ShardingTest.cpp - Specs as device-grid shardings ------------------===//

#include "Einsummable/Planner/Sharding.h"
#include "GraphBuilder.h"

#include <gtest/gtest.h>

using namespace ein::planner;
using namespace ein::planner::test;

TEST(Sharding, DeviceGridIsThePrimeFactors) {
  EXPECT_EQ(deviceGrid(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(deviceGrid(8), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(deviceGrid(12), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(deviceGrid(7), (std::vector<int64_t>{7}));
}

TEST(Sharding, AxesMultiplyToEachPartDisjointly) {
  std::vector<std::vector<int64_t>> axes;
  ASSERT_TRUE(assignAxes({2, 2, 2}, {2, 1, 4}, axes));
  EXPECT_EQ(axes, (std::vector<std::vector<int64_t>>{{0}, {}, {1, 2}}));
  ASSERT_TRUE(assignAxes({2, 2, 3}, {3, 4}, axes));
  EXPECT_EQ(axes, (std::vector<std::vector<int64_t>>{{2}, {0, 1}}));
  // 6 = 2 x 3 takes the 3 and one 2; the other 2 is left for 2.
  ASSERT_TRUE(assignAxes({2, 2, 3}, {2, 6}, axes));
  EXPECT_EQ(axes, (std::vector<std::vector<int64_t>>{{0}, {1, 2}}));
  // No axes multiply to 3, and three 2s do not fit two axes.
  EXPECT_FALSE(assignAxes({2, 2}, {3}, axes));
  EXPECT_FALSE(assignAxes({2, 2}, {2, 2, 2}, axes));
}

TEST(Sharding, MatmulOnTheDeviceGrid) {
  Graph g;
  int a = addValue(g, "a", {12, 20}, ValueKind::Activation);
  int b = addValue(g, "b", {20, 24}, ValueKind::Activation);
  matmul(g, a, b, "ab");
  // Loops (rows, contraction, columns): the contraction and the columns 2
  // ways each, on a 2x2 grid, in loop order.
  OpSharding s = opSharding(g, g.ops[0], {1, 2, 2}, 4);
  EXPECT_EQ(s.grid, (std::vector<int64_t>{2, 2}));
  ASSERT_TRUE(s.inputs[0] && s.inputs[1] && s.output);
  EXPECT_EQ(s.inputs[0]->splitAxes,
            (std::vector<std::vector<int64_t>>{{}, {0}}));
  EXPECT_EQ(s.inputs[1]->splitAxes,
            (std::vector<std::vector<int64_t>>{{0}, {1}}));
  // After the aggregation: replicated along the contraction's axis.
  EXPECT_EQ(s.output->splitAxes, (std::vector<std::vector<int64_t>>{{}, {1}}));
  EXPECT_TRUE(s.output->offsets.empty());
}

TEST(Sharding, UnevenCutsCarryEinsCutPoints) {
  Graph g;
  int a = addValue(g, "a", {97, 5}, ValueKind::Activation);
  elementwise(g, {a}, "relu");
  OpSharding s = opSharding(g, g.ops[0], {4, 1}, 4);
  ASSERT_TRUE(s.output);
  EXPECT_EQ(s.output->splitAxes, (std::vector<std::vector<int64_t>>{{0, 1}}));
  EXPECT_EQ(s.output->offsets, (std::vector<int64_t>{0, 25, 49, 73, 97}));
}

TEST(Sharding, CutsNoGridFitsGetAGridOfTheirOwn) {
  Graph g;
  int a = addValue(g, "a", {12, 12}, ValueKind::Activation);
  elementwise(g, {a}, "relu");
  // 3 x 2 blocks on 4 devices (more blocks than devices): no axes of 2x2
  // multiply to 3.
  OpSharding s = opSharding(g, g.ops[0], {3, 2}, 4);
  EXPECT_EQ(s.grid, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(s.output->splitAxes, (std::vector<std::vector<int64_t>>{{0}, {1}}));
  // A grid the input names is tried first.
  OpSharding user = opSharding(g, g.ops[0], {1, 4}, 4, {{4}});
  EXPECT_EQ(user.grid, (std::vector<int64_t>{4}));
  EXPECT_EQ(user.output->splitAxes,
            (std::vector<std::vector<int64_t>>{{}, {0}}));
}

TEST(Sharding, LayoutPartsRoundTrip) {
  std::vector<int64_t> shape = {97, 6};
  std::vector<Placed> layout = partsLayout({4, 2}, shape);
  ASSERT_EQ(layout.size(), 8u);
  EXPECT_EQ(layoutParts(layout, shape), (DimParts{4, 2}));
  // Blocks that are not an ordinary cut are not a sharding.
  layout[0].box.end[0] = 20;
  EXPECT_EQ(layoutParts(layout, shape), std::nullopt);
  EXPECT_EQ(layoutParts({}, shape), std::nullopt);
}

TEST(Sharding, ShardingPartsChecksWhatEinCanHonour) {
  std::string why;
  GridSharding s{{2, 2}, {{0, 1}}, {}};
  EXPECT_EQ(shardingParts(s, {8, 3}, why), (DimParts{4, 1}));
  s.offsets = {0, 25, 49, 73, 97};
  EXPECT_EQ(shardingParts(s, {97, 3}, why), (DimParts{4, 1}));
  s.offsets = {0, 24, 48, 72, 97};
  EXPECT_EQ(shardingParts(s, {97, 3}, why), std::nullopt);
  EXPECT_NE(why.find("not where ein cuts those parts ([0, 25, 49, 73, 97])"),
            std::string::npos)
      << why;
  GridSharding twice{{2, 2}, {{0}, {0}}, {}};
  EXPECT_EQ(shardingParts(twice, {8, 8}, why), std::nullopt);
  EXPECT_NE(why.find("axis 0 splits two dimensions"), std::string::npos);
  GridSharding outside{{2}, {{1}}, {}};
  EXPECT_EQ(shardingParts(outside, {8}, why), std::nullopt);
  EXPECT_NE(why.find("axis 1 is not an axis of the grid"), std::string::npos);
  GridSharding tooMany{{8}, {{0}}, {}};
  EXPECT_EQ(shardingParts(tooMany, {4}, why), std::nullopt);
  EXPECT_NE(why.find("into 8 parts"), std::string::npos);
}

TEST(Sharding, SpecCutsInto) {
  Graph g;
  int a = addValue(g, "a", {12, 20}, ValueKind::Activation);
  int b = addValue(g, "b", {20, 24}, ValueKind::Activation);
  matmul(g, a, b, "ab");
  EXPECT_TRUE(specCutsInto(g.ops[0].inputs[0], {2, 2, 1}, {2, 2}));
  EXPECT_FALSE(specCutsInto(g.ops[0].inputs[0], {2, 1, 2}, {2, 2}));
  EXPECT_TRUE(specCutsInto(g.ops[0].output, {2, 1, 2}, {2, 2}));
}
