//===- PlannerTest.cpp - Spec enumeration, the proxy and the search
//---------===//

#include "Einsummable/Planner/Hierarchy.h"
#include "Einsummable/Planner/Memory.h"
#include "Einsummable/Planner/Repetition.h"
#include "Einsummable/Planner/Search.h"
#include "Einsummable/Planner/Strategy.h"
#include "GraphBuilder.h"
#include "ein/partition.h"

#include <gtest/gtest.h>

#include <random>

using namespace ein::planner;
using namespace ein::planner::test;

namespace {

SearchOptions bytesOnly(int64_t devices) {
  SearchOptions o;
  o.devices = devices;
  o.bytesPerFlop = 0;
  return o;
}

} // namespace

TEST(Planner, EnumeratesFactorisations) {
  Graph g;
  int a = addValue(g, "a", {64, 64}, ValueKind::Activation);
  int b = addValue(g, "b", {64, 64}, ValueKind::Activation);
  matmul(g, a, b, "c");
  std::vector<Spec> specs = enumerateSpecs(g.ops[0], 8);
  // Ordered factorisations of 8 into 3 factors: 10, outer cuts first.
  ASSERT_EQ(specs.size(), 10u);
  EXPECT_EQ(specs.front(), (Spec{8, 1, 1}));
  EXPECT_EQ(specs[1], (Spec{4, 2, 1}));
  EXPECT_EQ(specs.back(), (Spec{1, 1, 8}));
  // Uneven cuts are allowed; no loop is cut beyond its size.
  EXPECT_EQ(enumerateSpecs(g.ops[0], 6).size(), 9u);
  g.ops[0].loopSizes = {2, 64, 64};
  for (const Spec &s : enumerateSpecs(g.ops[0], 8))
    EXPECT_LE(s[0], 2);
  g.ops[0].cuttable[1] = false;
  for (const Spec &s : enumerateSpecs(g.ops[0], 8))
    EXPECT_EQ(s[1], 1);
}

TEST(Planner, CollapsedDimensionCutsOnlyLikeOneDimension) {
  // y[(h, g)] over loops h (size 2) and g (size 4): cutting g alone would
  // make each block a strided set of the collapsed dimension.
  Graph g;
  int x = addValue(g, "x", {8}, ValueKind::Activation);
  int y = addValue(g, "y", {8});
  Op op;
  op.name = "copy";
  op.loopSizes = {2, 4};
  op.loopNames = {"h", "g"};
  op.cuttable = {true, true};
  op.inputs = {access(x, {{0, 1}})};
  op.output = access(y, {{0, 1}});
  EXPECT_TRUE(isLegalSpec(op, {2, 1}, 2));
  EXPECT_FALSE(isLegalSpec(op, {1, 2}, 2));
  // With the outer loop cut fully, the inner one may be cut too.
  EXPECT_TRUE(isLegalSpec(op, {2, 2}, 4));
  // 3 parts of g (4 = 2 + 1 + 1) under h: blocks 2,1,1,2,1,1 are not an
  // ordinary cut of 8 in 6 parts (2,2,1,1,1,1).
  EXPECT_FALSE(isLegalSpec(op, {2, 3}, 6));
}

TEST(Planner, WorkedExampleOfDesign) {
  // The 3-D matmul of docs/planner.md: C = A B, all n x n, p = 8, activation
  // inputs.
  const int64_t n = 64, bytes = 4;
  Graph g;
  int a = addValue(g, "a", {n, n}, ValueKind::Activation);
  int b = addValue(g, "b", {n, n}, ValueKind::Activation);
  matmul(g, a, b, "c");
  Options o;
  o.devices = 8;
  auto cost = [&](Spec s) {
    OpPlan p = planOp(g, g.ops[0], s, o);
    return p.joinBytes[0] + p.joinBytes[1] + p.aggBytes;
  };
  EXPECT_EQ(cost({2, 2, 2}), 3 * n * n * bytes);
  EXPECT_EQ(cost({4, 2, 1}), 4 * n * n * bytes);
  EXPECT_EQ(cost({8, 1, 1}), 7 * n * n * bytes);
  Plan plan = search(g, bytesOnly(8));
  ASSERT_TRUE(plan.feasible);
  EXPECT_EQ(plan.specs[0], (Spec{2, 2, 2}));
  EXPECT_EQ(plan.total, 3 * n * n * bytes);
  EXPECT_FALSE(plan.capped);
}

TEST(Planner, WeightsReplicateForFree) {
  // With a replicable weight, cutting the rows of the activation is free.
  Graph g;
  int x = addValue(g, "x", {64, 32}, ValueKind::Activation);
  int w = addValue(g, "w", {32, 32}, ValueKind::Weight);
  matmul(g, x, w, "y");
  Plan plan = search(g, bytesOnly(4));
  EXPECT_EQ(plan.specs[0], (Spec{4, 1, 1}));
  EXPECT_EQ(plan.total, 0);
}

TEST(Planner, MegatronPairingWhenWeightsMayNotReplicate) {
  // y = relu(x W1) W2 with big weights that a memory limit keeps from
  // being replicated: column-split W1, row-split W2, no repartition between.
  Graph g;
  int x = addValue(g, "x", {64, 128}, ValueKind::Activation);
  int w1 = addValue(g, "w1", {128, 512}, ValueKind::Weight);
  int w2 = addValue(g, "w2", {512, 128}, ValueKind::Weight);
  int h = matmul(g, x, w1, "h");
  int r = elementwise(g, {h}, "relu");
  matmul(g, r, w2, "y");
  SearchOptions o = bytesOnly(8);
  o.weightsReplicable = false;
  Plan plan = search(g, o);
  ASSERT_TRUE(plan.feasible);
  EXPECT_EQ(plan.specs[0], (Spec{1, 1, 8}));
  EXPECT_EQ(plan.specs[1], (Spec{1, 8}));
  EXPECT_EQ(plan.specs[2], (Spec{1, 8, 1}));
  EXPECT_EQ(plan.costs[1].repartition, 0);
  EXPECT_EQ(plan.costs[2].repartition, 0);
  // x replicated to 8 GPUs, y aggregated from 8 partials.
  EXPECT_EQ(plan.total, 7.0 * 64 * 128 * 4 * 2);
}

TEST(Planner, BatchSplitWhenBatchCoversTheDevices) {
  // A batched matmul b[i, j] w[j, k] over batch 16 with a replicable weight.
  Graph g;
  int x = addValue(g, "x", {16, 32, 64}, ValueKind::Activation);
  int w = addValue(g, "w", {64, 64}, ValueKind::Weight);
  int y = addValue(g, "y", {16, 32, 64});
  Op op;
  op.name = "bmm";
  op.loopSizes = {16, 32, 64, 64};
  op.loopNames = {"b", "i", "j", "k"};
  op.cuttable = {true, true, true, true};
  op.inputs = {access(x, {{0}, {1}, {2}}), access(w, {{2}, {3}})};
  op.output = access(y, {{0}, {1}, {3}});
  op.flopsPerPoint = 2;
  g.ops.push_back(op);
  SearchOptions o;
  o.devices = 8;
  Plan plan = search(g, o);
  EXPECT_EQ(plan.specs[0][2], 1); // never cut the contraction
  EXPECT_EQ(plan.costs[0].join + plan.costs[0].aggregation, 0);
}

TEST(Planner, GqaHeadInheritance) {
  // Query heads go with their KV head: cutting kv_head moves nothing, while
  // a group cut would split query heads across GPUs that then both need
  // the same KV head.
  Graph g = attentionGraph(8, 2, 64);
  SearchOptions o;
  o.devices = 2;
  Plan plan = search(g, o);
  EXPECT_EQ(plan.specs[0], (Spec{1, 2, 1, 1, 1}));
  EXPECT_EQ(plan.costs[0].join + plan.costs[0].aggregation, 0);
  o.devices = 4; // more GPUs than KV heads: the group is cut under kv_head
  plan = search(g, o);
  EXPECT_EQ(plan.specs[0], (Spec{1, 2, 2, 1, 1}));
}

TEST(Planner, CausalTokenSplitIsUnbalanced) {
  Graph g = attentionGraph(1, 1, 8);
  Options o;
  o.devices = 2;
  // Queries 0..3 see 1+2+3+4 = 10 keys, queries 4..7 see 5+6+7+8 = 26.
  OpPlan plan = planOp(g, g.ops[0], {1, 1, 1, 2, 1}, o);
  EXPECT_EQ(plan.busiestFlops, 26 * 4.0 * 16);
  // Cutting keys instead: keys 0..3 are seen in 1+2+3+4+4+4+4+4 = 26 pairs,
  // keys 4..7 in 10; the halves are combined (fan-in 2).
  plan = planOp(g, g.ops[0], {1, 1, 1, 1, 2}, o);
  EXPECT_EQ(plan.busiestFlops, 26 * 4.0 * 16);
  EXPECT_EQ(plan.fanIn, 2);
}

TEST(Planner, TooSmallOpsUseFewerGpus) {
  // A 4x4 matmul cannot be cut into 7 (prime, above every loop's size):
  // it gets the most blocks it can make, 6 (2 x 3 or 3 x 2 over i, j; 2 x 3
  // over j, k ...), and the seventh GPU sits it out.
  Graph g;
  int a = addValue(g, "a", {4, 4}, ValueKind::Activation);
  int b = addValue(g, "b", {4, 4}, ValueKind::Activation);
  matmul(g, a, b, "c");
  EXPECT_EQ(usableBlocks(g.ops[0], 7), 6);
  EXPECT_EQ(usableBlocks(g.ops[0], 4), 4);
  for (const Spec &s : enumerateSpecs(g.ops[0], 7)) {
    EXPECT_EQ(::ein::numBlocks(s), 6);
    EXPECT_TRUE(isLegalSpec(g.ops[0], s, 7));
  }
  EXPECT_FALSE(isLegalSpec(g.ops[0], {2, 2, 1}, 7)); // 4 blocks: 6 can be had
  Plan plan = search(g, bytesOnly(7));
  ASSERT_TRUE(plan.feasible) << plan.error;
  EXPECT_EQ(::ein::numBlocks(plan.specs[0]), 6);
  // One loop that cannot be cut at all: one block, on GPU 0.
  Graph h;
  int x = addValue(h, "x", {1, 1}, ValueKind::Activation);
  int y = addValue(h, "y", {1, 1}, ValueKind::Activation);
  matmul(h, x, y, "z");
  EXPECT_EQ(usableBlocks(h.ops[0], 8), 1);
  EXPECT_EQ(enumerateSpecs(h.ops[0], 8), (std::vector<Spec>{Spec{1, 1, 1}}));
}

TEST(Planner, CapIsReported) {
  Graph g;
  int x = addValue(g, "x", {32, 32}, ValueKind::Activation);
  int w = addValue(g, "w", {32, 32}, ValueKind::Activation);
  int a = matmul(g, x, w, "a");
  int b = matmul(g, x, a, "b");
  elementwise(g, {a, b}, "sum");
  SearchOptions o = bytesOnly(8);
  o.stateCap = 1;
  Plan capped = search(g, o);
  EXPECT_TRUE(capped.capped);
  o.stateCap = 1 << 14;
  Plan exact = search(g, o);
  EXPECT_FALSE(exact.capped);
  EXPECT_LE(exact.total, capped.total);
  EXPECT_EQ(exact.total, bruteForce(g, o).total);
  // The capped search's bound holds: no plan is cheaper than it, and an
  // exact search's bound is its plan's cost.
  EXPECT_LE(capped.lowerBound, exact.total);
  EXPECT_LE(capped.lowerBound, capped.total);
  EXPECT_EQ(exact.lowerBound, exact.total);
}

TEST(Planner, BudgetRaisesTheCapWhileItFits) {
  // Ten products of x live until one sum reads them all: the search's
  // frontier holds all ten layouts, far past 4096 states on 8 devices.
  Graph g;
  int x = addValue(g, "x", {64, 64}, ValueKind::Activation);
  std::vector<int> products;
  for (int i = 0; i < 10; ++i) {
    int w =
        addValue(g, "w" + std::to_string(i), {64, 64}, ValueKind::Activation);
    products.push_back(matmul(g, x, w, "p" + std::to_string(i)));
  }
  elementwise(g, products, "sum");
  SearchOptions o = bytesOnly(8);
  o.stateCap = 1 << 15;
  Plan direct = search(g, o); // no budget: the cap from the first step
  ASSERT_TRUE(direct.feasible);
  EXPECT_EQ(direct.stateCap, size_t(1) << 15);
  EXPECT_FALSE(direct.budgetBit);

  // A budget the first run alone spends: its plan, capped at 4096, and
  // the budget named as what stopped the raise.
  o.workBudget = 1;
  Plan first = search(g, o);
  ASSERT_TRUE(first.feasible);
  EXPECT_TRUE(first.capped);
  EXPECT_TRUE(first.budgetBit);
  EXPECT_EQ(first.stateCap, 4096u);
  EXPECT_LT(first.work, direct.work);
  EXPECT_LE(first.lowerBound, first.total);
  EXPECT_EQ(search(g, o).specs, first.specs); // counted, not timed

  // Room for every raise: the runs at 4096 and 32768, the cheaper plan,
  // never worse than the direct search at 32768.
  o.workBudget = uint64_t(1) << 40;
  Plan raised = search(g, o);
  ASSERT_TRUE(raised.feasible);
  EXPECT_FALSE(raised.budgetBit);
  EXPECT_LE(raised.total, direct.total);
  EXPECT_LE(raised.total, first.total);
  EXPECT_EQ(raised.work, first.work + direct.work);
  EXPECT_LE(std::max(first.lowerBound, direct.lowerBound), raised.lowerBound);

  // A graph the first cap does not bite is planned exactly, as without a
  // budget.
  Graph small;
  int a = addValue(small, "a", {32, 32}, ValueKind::Activation);
  int b = addValue(small, "b", {32, 32}, ValueKind::Activation);
  matmul(small, a, b, "ab");
  o.workBudget = 1;
  Plan budgeted = search(small, o);
  o.workBudget = 0;
  Plan exact = search(small, o);
  EXPECT_FALSE(budgeted.capped);
  EXPECT_FALSE(budgeted.budgetBit);
  EXPECT_EQ(budgeted.specs, exact.specs);
  EXPECT_EQ(budgeted.total, exact.total);
}

TEST(Planner, CappedBoundHoldsOnRandomChains) {
  // Chains of matmuls whose search a cap of 1 to 4 states cuts short: the
  // bound it reports never passes the brute-force optimum.
  for (unsigned seed = 0; seed < 12; ++seed) {
    Graph g;
    int64_t n = 8 << (seed % 3);
    int v = addValue(g, "x", {n, n}, ValueKind::Activation);
    for (unsigned i = 0; i < 3 + seed % 2; ++i) {
      int w =
          addValue(g, "w" + std::to_string(i), {n, n}, ValueKind::Activation);
      v = matmul(g, v, w, "m" + std::to_string(i));
    }
    SearchOptions o = bytesOnly(4);
    o.stateCap = 1 + seed % 4;
    Plan capped = search(g, o);
    double optimum = bruteForce(g, o).total;
    EXPECT_LE(capped.lowerBound, optimum) << "seed " << seed;
    EXPECT_GE(capped.total, optimum) << "seed " << seed;
  }
}

TEST(Planner, ProgressReportsEveryStepAtZeroSeconds) {
  Graph g;
  int x = addValue(g, "x", {32, 32}, ValueKind::Activation);
  int w = addValue(g, "w", {32, 32}, ValueKind::Activation);
  int a = matmul(g, x, w, "a");
  matmul(g, x, a, "b");
  SearchOptions o = bytesOnly(4);
  o.progressSeconds = 0;
  std::vector<SearchProgress> seen;
  o.onProgress = [&](const SearchProgress &p) { seen.push_back(p); };
  Plan plan = search(g, o);
  ASSERT_TRUE(plan.feasible);
  // One report a node (two arguments' arrivals, two ops), in order; the
  // last step's cheapest state is the plan.
  ASSERT_EQ(seen.size(), 4u);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].step, i + 1);
    EXPECT_EQ(seen[i].steps, 4u);
  }
  EXPECT_EQ(seen.back().op, 1);
  EXPECT_EQ(seen.back().states, 1u);
  EXPECT_EQ(seen.back().cheapest, plan.total);
  // A long interval says nothing.
  seen.clear();
  o.progressSeconds = 3600;
  search(g, o);
  EXPECT_TRUE(seen.empty());
}

TEST(Planner, MatchesBruteForceOnRandomGraphs) {
  // Chains, trees (two chains joined by an add) and DAGs (a value used
  // twice), with random sizes, argument kinds, device counts and weight of
  // the compute term.
  std::mt19937 rng(2026);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  int graphs = 0;
  for (int trial = 0; trial < 240; ++trial) {
    Graph g;
    int shape = trial % 3; // 0 chain, 1 tree, 2 DAG
    auto size = [&] { return static_cast<int64_t>(pick(2, 9)); };
    auto kind = [&] {
      return pick(0, 1) ? ValueKind::Activation : ValueKind::Weight;
    };
    int64_t m = size(), k = size(), n = size();
    int x = addValue(g, "x", {m, k}, kind());
    int w = addValue(g, "w", {k, n}, kind());
    int y = matmul(g, x, w, "y");
    if (shape == 0) {
      int v = addValue(g, "v", {n, size()}, kind());
      matmul(g, y, v, "z");
    } else if (shape == 1) {
      int u = addValue(g, "u", {m, n}, ValueKind::Activation);
      int r = elementwise(g, {u}, "r");
      elementwise(g, {y, r}, "sum");
    } else {
      int r = elementwise(g, {y}, "r");
      elementwise(g, {y, r}, "sum");
    }
    SearchOptions o;
    const int64_t deviceChoices[] = {2, 3, 4, 6};
    o.devices = deviceChoices[pick(0, 3)];
    o.weightsReplicable = pick(0, 1);
    o.bytesPerFlop = pick(0, 1) ? 0.0 : 0.5;
    Plan fast = search(g, o);
    Plan slow = bruteForce(g, o);
    ASSERT_EQ(fast.feasible, slow.feasible);
    if (!fast.feasible)
      continue;
    ++graphs;
    EXPECT_FALSE(fast.capped);
    EXPECT_EQ(fast.total, slow.total)
        << "trial " << trial << " shape " << shape;
    EXPECT_EQ(fast.specs, slow.specs) << "trial " << trial;
  }
  EXPECT_GE(graphs, 200);
}

// The hierarchical search's specs refine the node-level plan's, are legal,
// and the plan it finds is feasible and never cheaper than the flat
// search's (which sees every spec); on random graphs at 2 x 2, 2 x 3 and
// 3 x 2 devices its gap stays small.
TEST(Planner, HierarchicalSpecsRefineTheNodeLevelPlan) {
  std::mt19937 rng(29);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  double worst = 1;
  int equal = 0, graphs = 0;
  for (int trial = 0; trial < 60; ++trial) {
    Graph g;
    auto size = [&] { return static_cast<int64_t>(pick(4, 12)); };
    int64_t m = size(), k = size(), n = size();
    int x = addValue(g, "x", {m, k}, ValueKind::Activation);
    int w = addValue(g, "w", {k, n},
                     pick(0, 1) ? ValueKind::Activation : ValueKind::Weight);
    int y = matmul(g, x, w, "y");
    int v = addValue(g, "v", {n, size()}, ValueKind::Activation);
    int z = matmul(g, y, v, "z");
    elementwise(g, {z}, "r");
    const int64_t shapes[][2] = {{2, 2}, {2, 3}, {3, 2}};
    const int64_t *shape = shapes[trial % 3];
    SearchOptions o = bytesOnly(shape[0] * shape[1]);
    o.weightsReplicable = pick(0, 1);
    SearchOptions nodeLevel = o;
    nodeLevel.devices = shape[0];
    Plan across = search(g, nodeLevel);
    ASSERT_TRUE(across.feasible);
    SearchOptions hierarchical = o;
    std::string error;
    ASSERT_TRUE(
        hierarchicalSpecs(g, o, shape[0], hierarchical.allowedSpecs, error))
        << error;
    for (size_t op = 0; op < g.ops.size(); ++op) {
      ASSERT_FALSE(hierarchical.allowedSpecs[op].empty());
      for (const Spec &spec : hierarchical.allowedSpecs[op]) {
        EXPECT_TRUE(isLegalSpec(g.ops[op], spec, o.devices));
        for (size_t l = 0; l < spec.size(); ++l)
          EXPECT_EQ(spec[l] % across.specs[op][l], 0)
              << "trial " << trial << " op " << op;
      }
    }
    // The product refinement is narrower: each of its specs is one of the
    // multiples, so its plan costs at least as much.
    SearchOptions product = o;
    ASSERT_TRUE(hierarchicalSpecs(g, o, shape[0], product.allowedSpecs, error,
                                  Refinement::Product))
        << error;
    for (size_t op = 0; op < g.ops.size(); ++op)
      for (const Spec &spec : product.allowedSpecs[op])
        EXPECT_NE(std::find(hierarchical.allowedSpecs[op].begin(),
                            hierarchical.allowedSpecs[op].end(), spec),
                  hierarchical.allowedSpecs[op].end())
            << "trial " << trial << " op " << op;
    Plan flat = search(g, o), refined = search(g, hierarchical);
    ASSERT_TRUE(flat.feasible && refined.feasible) << "trial " << trial;
    Plan narrower = search(g, product);
    ASSERT_TRUE(narrower.feasible) << "trial " << trial;
    EXPECT_LE(refined.total, narrower.total) << "trial " << trial;
    ++graphs;
    EXPECT_GE(refined.total, flat.total);
    if (flat.total > 0)
      worst = std::max(worst, refined.total / flat.total);
    equal += refined.total == flat.total;
  }
  EXPECT_EQ(graphs, 60);
  // Measured: the hierarchical plan is the flat one's on most graphs.
  EXPECT_GE(equal, 30);
  std::printf("hierarchical = flat on %d of %d graphs, worst ratio %.3f\n",
              equal, graphs, worst);
}

// GQA attention's heads span two loops (kv-head, group): 8 kv-heads x 2
// of their groups is a legal cut for 16 GPUs and nests in a node-level cut
// of 2 kv-heads, but kv-heads 4 x group 2 is no ordinary cut of the heads
// for one node's 8 GPUs. So only the multiples refinement offers it (the
// flat search's choice for w1 on 2 x 8 GPUs; docs/distributed.md).
TEST(Planner, HierarchicalMultiplesRefineAcrossMergedLoops) {
  Graph g = attentionGraph(/*heads=*/32, /*kvHeads=*/8, /*tokens=*/64);
  const Spec headsAndGroups = {1, 8, 2, 1, 1};
  ASSERT_TRUE(isLegalSpec(g.ops[0], headsAndGroups, 16));
  ASSERT_FALSE(isLegalSpec(g.ops[0], {1, 4, 2, 1, 1}, 8));
  SearchOptions o;
  o.devices = 16;
  // Force the node-level plan to cut kv-heads: its only spec.
  SearchOptions nodeLevel = o;
  nodeLevel.devices = 2;
  ASSERT_EQ(search(g, nodeLevel).specs[0], (Spec{1, 2, 1, 1, 1}));
  std::vector<std::vector<Spec>> multiples, products;
  std::string error;
  ASSERT_TRUE(hierarchicalSpecs(g, o, 2, multiples, error)) << error;
  ASSERT_TRUE(hierarchicalSpecs(g, o, 2, products, error, Refinement::Product))
      << error;
  auto offers = [&](const std::vector<Spec> &specs) {
    return std::find(specs.begin(), specs.end(), headsAndGroups) != specs.end();
  };
  EXPECT_TRUE(offers(multiples[0]));
  EXPECT_FALSE(offers(products[0]));
  for (const Spec &spec : multiples[0])
    EXPECT_EQ(spec[1] % 2, 0);
}

TEST(Planner, TiedResultPaysToLeaveInItsArgumentsLayout) {
  // y = x^T for a square x: whatever the cut, y's blocks are x's mirrored,
  // so leaving in x's layout moves all but the diagonal blocks.
  Graph g;
  int x = addValue(g, "x", {64, 64}, ValueKind::Activation);
  int y = addValue(g, "y", {64, 64});
  Op op;
  op.name = "transpose";
  op.loopSizes = {64, 64};
  op.loopNames = {"d0", "d1"};
  op.cuttable = {true, true};
  op.inputs = {access(x, {{0}, {1}})};
  op.output = access(y, {{1}, {0}});
  g.ops.push_back(op);
  g.results = {y};
  EXPECT_EQ(search(g, bytesOnly(4)).total, 0);
  g.ties = {{x, y}};
  Plan tied = search(g, bytesOnly(4));
  // Cut 2 x 2: the two off-diagonal quarters swap GPUs.
  EXPECT_EQ(tied.specs[0], (Spec{2, 2}));
  EXPECT_EQ(tied.total, 2 * 32 * 32 * 4);
  EXPECT_EQ(tied.costs[0].repartition, tied.total);
  EXPECT_EQ(tied.total, bruteForce(g, bytesOnly(4)).total);
  // A weight cannot be tied.
  g.values[x].kind = ValueKind::Weight;
  Plan bad = search(g, bytesOnly(4));
  EXPECT_FALSE(bad.feasible);
  EXPECT_EQ(bad.error, "value 'x' is not an activation argument its consumers "
                       "read, so no result can be tied to its layout");
}

TEST(Planner, TiedArgumentIsPlacedBeforeTheTiedProducer) {
  // The producer of the tied result comes before the argument's first
  // reader: the argument's layout must still be chosen first.
  Graph g;
  int x = addValue(g, "x", {8, 8}, ValueKind::Activation);
  int w = addValue(g, "w", {8, 8}, ValueKind::Weight);
  int a = elementwise(g, {w}, "a");
  elementwise(g, {x}, "b");
  g.ties = {{x, a}};
  Plan fast = search(g, bytesOnly(2));
  ASSERT_TRUE(fast.feasible);
  EXPECT_EQ(fast.total, bruteForce(g, bytesOnly(2)).total);
}

TEST(Planner, ConstantsAreFreeEvenWhenWeightsAreNot) {
  Graph g;
  int x = addValue(g, "x", {64, 32}, ValueKind::Activation);
  int c = addValue(g, "c", {32, 32}, ValueKind::Constant);
  matmul(g, x, c, "y");
  SearchOptions o = bytesOnly(4);
  o.weightsReplicable = false;
  EXPECT_EQ(search(g, o).total, 0);
}

TEST(Planner, AValueReadTwiceMovesOnce) {
  // x is made cut by columns (its rows may not be cut) and y = x * x must be
  // cut by rows (its columns may not be): on 2 GPUs each needs the quarter
  // of x the other holds, 2 x 16 elements, moved once, not once per input.
  Graph g;
  int a = addValue(g, "a", {8, 8}, ValueKind::Activation);
  int x = elementwise(g, {a}, "x");
  elementwise(g, {x, x}, "y");
  g.ops[0].cuttable = {false, true};
  g.ops[1].cuttable = {true, false};
  Plan plan = search(g, bytesOnly(2));
  EXPECT_EQ(plan.costs[1].repartition, 2 * 16 * 4);
  EXPECT_EQ(plan.total, bruteForce(g, bytesOnly(2)).total);
}

namespace {
int slice(Graph &g, int source, int64_t row, int64_t rows,
          const std::string &name) {
  std::vector<int64_t> shape = g.values[source].shape;
  int out = addValue(g, name, {rows, shape[1]});
  Op op;
  op.name = name;
  op.loopSizes = {rows, shape[1]};
  op.loopNames = {"d0", "d1"};
  op.cuttable = {true, true};
  op.inputs = {Access{source, {{0}, {1}}, {row, 0}}};
  op.output = access(out, {{0}, {1}});
  g.ops.push_back(op);
  return out;
}
} // namespace

TEST(Planner, ArgumentsReadInPartsArriveFree) {
  // Two slices read the two halves of an activation: it can arrive with each
  // half's blocks where its slice reads them, so nothing moves.
  Graph g;
  int x = addValue(g, "x", {8, 8}, ValueKind::Activation);
  slice(g, x, 0, 4, "top");
  slice(g, x, 4, 4, "bottom");
  Plan plan = search(g, bytesOnly(2));
  ASSERT_TRUE(plan.feasible);
  EXPECT_EQ(plan.total, 0);
  EXPECT_EQ(plan.total, bruteForce(g, bytesOnly(2)).total);
}

namespace {
/// A 1-D "convolution" over rows: out[r] = sum over a window of 3 rows of
/// x[2r - 1 + i] (stride 2, padding 1 before and after), columns plain.
int window(Graph &g, int source, const std::string &name) {
  std::vector<int64_t> shape = g.values[source].shape;
  int64_t rows = (shape[0] + 2 - 3) / 2 + 1;
  int out = addValue(g, name, {rows, shape[1]});
  Op op;
  op.name = name;
  op.loopSizes = {rows, shape[1]};
  op.loopNames = {"oh", "c"};
  op.cuttable = {true, true};
  op.inputs = {Access{source, {{0}, {1}}, {-1, 0}, {2, 1}, {3, 1}}};
  op.output = access(out, {{0}, {1}});
  g.ops.push_back(op);
  return out;
}
} // namespace

TEST(Planner, WindowedReadsNeedHalosAndArriveAsTheirOwnRows) {
  // 9 rows, 5 outputs: cut in 2 (3 + 2 outputs), the blocks read rows
  // [0, 6) and [5, 9) (2r - 1 .. 2r + 1, clipped): one row of halo in the
  // second block. An argument read so arrives as the even cut ([0, 5) and
  // [5, 9)) and moves the halo: row 5 to the first block, 4 columns of 4
  // bytes.
  Graph g;
  int x = addValue(g, "x", {9, 4}, ValueKind::Activation);
  window(g, x, "y");
  OpPlan plan = planOp(g, g.ops[0], {2, 1}, bytesOnly(2));
  ASSERT_EQ(plan.needs[0].size(), 2u);
  EXPECT_EQ(plan.needs[0][0].box.begin, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(plan.needs[0][0].box.end, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(plan.needs[0][1].box.begin, (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(plan.needs[0][1].box.end, (std::vector<int64_t>{9, 4}));
  ASSERT_EQ(plan.arrivals[0].size(), 2u);
  EXPECT_EQ(plan.arrivals[0][0].box.end, (std::vector<int64_t>{5, 4}));
  EXPECT_EQ(plan.arrivals[0][1].box.begin, (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(movedBytes(plan.arrivals[0], plan.needs[0], 4), 1 * 4 * 4);
  // The search charges exactly that halo for a row cut, and prefers the
  // column cut, which needs none.
  SearchOptions rowsOnly = bytesOnly(2);
  rowsOnly.allowedSpecs = {{{2, 1}}};
  EXPECT_EQ(search(g, rowsOnly).total, 16);
  Plan best = search(g, bytesOnly(2));
  EXPECT_EQ(best.specs[0], (Spec{1, 2}));
  EXPECT_EQ(best.total, 0);
  EXPECT_EQ(best.total, bruteForce(g, bytesOnly(2)).total);
}

TEST(Planner, GroupedWindowsReadTheirGroupsChannels) {
  // A grouped 1-D "convolution": x [rows 9, channels 6] in 3 groups of 2,
  // loops (oh, g, c), the rows windowed as above and the channels spanning
  // (g, c). Cut by groups into 3, block g reads rows [0, 9) and channels
  // [2g, 2g + 2): its group's, no halo across groups. Cut into 2 (groups
  // 2 and 1), its channel cut is no ordinary cut of 6 (3 and 3): not a
  // legal spec.
  Graph g;
  int x = addValue(g, "x", {9, 6}, ValueKind::Activation);
  int out = addValue(g, "y", {5, 3});
  Op op;
  op.name = "y";
  op.loopSizes = {5, 3, 2};
  op.loopNames = {"oh", "g", "c"};
  op.cuttable = {true, true, true};
  op.inputs = {Access{x, {{0}, {1, 2}}, {-1, 0}, {2, 1}, {3, 1}}};
  op.output = access(out, {{0}, {1}});
  g.ops.push_back(op);
  OpPlan plan = planOp(g, g.ops[0], {1, 3, 1}, bytesOnly(3));
  ASSERT_EQ(plan.needs[0].size(), 3u);
  for (int64_t b = 0; b < 3; ++b) {
    EXPECT_EQ(plan.needs[0][b].box.begin, (std::vector<int64_t>{0, 2 * b}));
    EXPECT_EQ(plan.needs[0][b].box.end, (std::vector<int64_t>{9, 2 * b + 2}));
  }
  EXPECT_FALSE(isLegalSpec(g.ops[0], {1, 2, 1}, 2));
  EXPECT_TRUE(isLegalSpec(g.ops[0], {1, 3, 1}, 3));
  // Single groups cut further by channel: block (g, c) reads channel
  // 2g + c.
  plan = planOp(g, g.ops[0], {1, 3, 2}, bytesOnly(6));
  ASSERT_EQ(plan.needs[0].size(), 6u);
  EXPECT_EQ(plan.needs[0][3].box.begin, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(plan.needs[0][3].box.end, (std::vector<int64_t>{9, 4}));
}

TEST(Planner, EvaluatingTheSearchsSpecsGivesItsTotal) {
  // evaluate() with the search's own specs finds the same plan; any other
  // assignment of legal specs costs at least as much.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    Graph g;
    auto size = [&] {
      return static_cast<int64_t>(
          std::uniform_int_distribution<int>(2, 9)(rng));
    };
    int64_t m = size(), k = size(), n = size();
    int x = addValue(g, "x", {m, k}, ValueKind::Activation);
    int w = addValue(g, "w", {k, n}, ValueKind::Weight);
    int y = matmul(g, x, w, "y");
    elementwise(g, {y}, "r");
    SearchOptions o = bytesOnly(trial % 2 ? 2 : 4);
    Plan best = search(g, o);
    if (!best.feasible)
      continue;
    Plan same = evaluate(g, best.specs, o);
    ASSERT_TRUE(same.feasible);
    EXPECT_EQ(same.total, best.total);
    std::vector<Spec> other;
    for (const Op &op : g.ops) {
      std::vector<Spec> legal = enumerateSpecs(op, o.devices);
      other.push_back(legal[std::uniform_int_distribution<size_t>(
          0, legal.size() - 1)(rng)]);
    }
    Plan random = evaluate(g, other, o);
    ASSERT_TRUE(random.feasible);
    EXPECT_EQ(random.specs, other);
    EXPECT_GE(random.total, best.total);
  }
}

TEST(Planner, StrategiesRestrictTheSpecs) {
  // x [batch 4, 8] through a weight 8x6, then a ReLU, on 2 GPUs.
  Graph g;
  int x = addValue(g, "x", {4, 8}, ValueKind::Activation);
  int w = addValue(g, "w", {8, 6}, ValueKind::Weight);
  int y = matmul(g, x, w, "y");
  elementwise(g, {y}, "r");
  std::vector<std::vector<Spec>> allowed;
  std::string error;
  // dp: only the batch loop (the matmul's first, the ReLU's first).
  ASSERT_TRUE(allowedSpecs(g, Strategy::DataParallel, 2, 0, allowed, error))
      << error;
  EXPECT_EQ(allowed[0], (std::vector<Spec>{{2, 1, 1}}));
  EXPECT_EQ(allowed[1], (std::vector<Spec>{{2, 1}}));
  // megatron: the matmul cuts only the weight's loops (k or n).
  ASSERT_TRUE(allowedSpecs(g, Strategy::Megatron, 2, 0, allowed, error))
      << error;
  for (const Spec &s : allowed[0])
    EXPECT_EQ(s[0], 1);
  EXPECT_EQ(allowed[1].size(), enumerateSpecs(g.ops[1], 2).size());
  // random: one legal spec per op, the same for the same seed.
  std::vector<std::vector<Spec>> again;
  ASSERT_TRUE(allowedSpecs(g, Strategy::Random, 2, 9, allowed, error));
  ASSERT_TRUE(allowedSpecs(g, Strategy::Random, 2, 9, again, error));
  EXPECT_EQ(allowed, again);
  for (size_t o = 0; o < g.ops.size(); ++o) {
    ASSERT_EQ(allowed[o].size(), 1u);
    EXPECT_TRUE(isLegalSpec(g.ops[o], allowed[o][0], 2));
  }
  // Searching under a strategy keeps to its specs.
  SearchOptions o = bytesOnly(2);
  ASSERT_TRUE(allowedSpecs(g, Strategy::Megatron, 2, 0, o.allowedSpecs, error));
  Plan plan = search(g, o);
  ASSERT_TRUE(plan.feasible);
  EXPECT_EQ(plan.specs[0][0], 1);
  // dp where the batch is too small to cut: an error naming the op.
  Graph small;
  int a = addValue(small, "a", {1, 8}, ValueKind::Activation);
  int b = addValue(small, "b", {8, 6}, ValueKind::Weight);
  matmul(small, a, b, "c");
  EXPECT_FALSE(
      allowedSpecs(small, Strategy::DataParallel, 2, 0, allowed, error));
  EXPECT_NE(error.find("strategy dp does not apply: op 'c'"), std::string::npos)
      << error;
}

TEST(Planner, PlanMemoryCountsWeightsAndLiveBlocks) {
  // y = x w on 2 GPUs, x [4, 8] an activation, w [8, 6] a weight, f32.
  Graph g;
  int x = addValue(g, "x", {4, 8}, ValueKind::Activation);
  int w = addValue(g, "w", {8, 6}, ValueKind::Weight);
  int y = matmul(g, x, w, "y");
  g.results = {y};
  auto memoryOf = [&](Spec spec) {
    Plan plan;
    plan.specs = {spec};
    return planMemory(g, plan, 2);
  };
  // Rows split: w whole on each GPU (192 B), half of x (64 B) and of y
  // (48 B).
  PlanMemory rows = memoryOf({2, 1, 1});
  EXPECT_EQ(rows.weights, (std::vector<double>{192, 192}));
  EXPECT_EQ(rows.peak, (std::vector<double>{304, 304}));
  // Columns: half of w (96 B), all of x (128 B), half of y (48 B).
  EXPECT_EQ(memoryOf({1, 1, 2}).peak, (std::vector<double>{272, 272}));
  // The contraction: half of w and of x (96 B, 64 B), a whole f32 partial
  // of y (96 B).
  EXPECT_EQ(memoryOf({1, 2, 1}).peak, (std::vector<double>{256, 256}));
  EXPECT_EQ(memoryOf({1, 2, 1}).largest(), 256);
}

TEST(Strategy, MegatronDpMultipliesDpAcrossByMegatronWithin) {
  Graph g;
  int x = addValue(g, "x", {8, 16}, ValueKind::Activation);
  int w = addValue(g, "w", {16, 32}, ValueKind::Weight);
  matmul(g, x, w, "xw");
  std::vector<std::vector<Spec>> allowed;
  std::string error;
  // 2 nodes of 2: the rows (the batch) 2 ways across, the weight's loops
  // (contraction or columns) 2 ways within.
  ASSERT_TRUE(megatronDpSpecs(g, 4, 2, allowed, error)) << error;
  ASSERT_EQ(allowed.size(), 1u);
  EXPECT_EQ(allowed[0], (std::vector<Spec>{{2, 2, 1}, {2, 1, 2}}));
  // One node: not a topology megatron-dp plans for.
  EXPECT_FALSE(megatronDpSpecs(g, 4, 1, allowed, error));
  EXPECT_NE(error.find("needs a topology of several nodes"), std::string::npos);
  // The plain strategy entry refuses it: it needs the nodes.
  EXPECT_FALSE(
      allowedSpecs(g, Strategy::MegatronDataParallel, 4, 0, allowed, error));
}

// The chip's measured gemm times: a grid point is the table's own figure,
// sizes below the grid cost as its smallest (launch-bound), sizes beyond it
// grow in proportion, and more work never costs less.
TEST(KernelTimes, GemmTableInterpolates) {
  const ein::ChipInfo &chip = ein::chipInfo(ein::kReferenceChip);
  double t = ein::gemmSeconds(chip, 1024, 4096, 4096);
  // bench/results/data/2026-12-04-kernel-tables-heated-h200x1.json: 52.96 us
  // (the table's figure after emit's tidy pass).
  EXPECT_NEAR(t, 52.96e-6, 0.01e-6);
  EXPECT_DOUBLE_EQ(ein::gemmSeconds(chip, 8, 4096, 4096),
                   ein::gemmSeconds(chip, 64, 4096, 4096));
  EXPECT_NEAR(ein::gemmSeconds(chip, 65536, 4096, 4096),
              2 * ein::gemmSeconds(chip, 32768, 4096, 4096), 1e-9);
  double between = ein::gemmSeconds(chip, 1536, 4096, 4096);
  EXPECT_GT(between, t);
  EXPECT_LT(between, ein::gemmSeconds(chip, 2048, 4096, 4096));
  // A skinny block is slower per FLOP: 8192 x 4096 x 512 (the summed loop
  // cut 8 ways) against 1024 x 4096 x 4096 (the rows cut 8 ways).
  EXPECT_GT(ein::gemmSeconds(chip, 8192, 4096, 512), t);
}

// cuDNN's causal kernel does half the pairs, but not in half the time
// (bench/results/data/2026-12-04-causal-attention-heated-h200x1.json): on one
// head of 2048 it takes as long as the unmasked one, on 128 heads of 8192 about
// half; a block the mask leaves whole pays no penalty.
TEST(KernelTimes, CausalAttentionIsSlowerPerPair) {
  const ein::ChipInfo &chip = ein::chipInfo(ein::kReferenceChip);
  double flopsPerPoint = 4 * 128;
  auto ratio = [&](double heads, double length) {
    double floor = ein::attentionSeconds(chip, 1, 1, 1, flopsPerPoint);
    double full =
        ein::attentionSeconds(chip, heads, length, length, flopsPerPoint);
    double half =
        ein::attentionSeconds(chip, heads, length, length, flopsPerPoint, 0.5);
    return (half - floor) / (0.5 * (full - floor));
  };
  EXPECT_NEAR(ratio(1, 2048), 2.0, 1e-9);
  EXPECT_NEAR(ratio(128, 8192), 1.0, 1e-9);
  double between = ratio(32, 2048); // w2's block on 8 GPUs: 4 heads x 8
  EXPECT_GT(between, 1.25);
  EXPECT_LT(between, 1.875);
  EXPECT_DOUBLE_EQ(
      ein::attentionSeconds(chip, 32, 2048, 2048, flopsPerPoint, 1),
      ein::attentionSeconds(chip, 32, 2048, 2048, flopsPerPoint));
}

// The compute term tells apart plans of equal FLOPs: a gemm cut along its
// summed loop (skinny blocks, measured slower) against one cut along its
// rows; and a causal attention's last query block from its first.
TEST(KernelTimes, BlockSecondsByShape) {
  Graph g;
  int a = addValue(g, "a", {8192, 4096}, ValueKind::Activation, 2);
  int b = addValue(g, "b", {4096, 4096}, ValueKind::Weight, 2);
  matmul(g, a, b, "c");
  Op &op = g.ops[0];
  op.kernel = KernelKind::Gemm;
  op.gemm.m = 0;
  op.gemm.k = 1;
  op.gemm.n = 2;
  Spec rows = {8, 1, 1}, summed = {1, 8, 1};
  EXPECT_DOUBLE_EQ(blockFlops(op, rows, {0, 0, 0}),
                   blockFlops(op, summed, {0, 0, 0}));
  EXPECT_GT(blockSeconds(g, op, summed, {0, 0, 0}),
            blockSeconds(g, op, rows, {0, 0, 0}));
  Options kernels, flops;
  kernels.devices = flops.devices = 8;
  kernels.kernelTimes = true;
  flops.kernelTimes = false;
  EXPECT_GT(planOp(g, op, summed, kernels).busiestSeconds,
            planOp(g, op, rows, kernels).busiestSeconds);
  EXPECT_EQ(planOp(g, op, rows, flops).busiestSeconds, 0);

  Graph att = attentionGraph(32, 8, 8192);
  Op &attention = att.ops[0];
  attention.kernel = KernelKind::Attention;
  Spec query = {1, 1, 1, 4, 1};
  EXPECT_GT(blockSeconds(att, attention, query, {0, 0, 0, 3, 0}),
            2 * blockSeconds(att, attention, query, {0, 0, 0, 0, 0}));
}

// Several nodes: a byte between nodes counts crossNodeWeight times, one
// inside a node once; block k runs on GPU k, node k / gpusPerNode.
TEST(Planner, BytesBetweenNodesCountMore) {
  Options options;
  options.devices = 4;
  options.gpusPerNode = 2;
  options.crossNodeWeight = 4;
  EXPECT_EQ(byteWeight(options, 0, 1), 1);
  EXPECT_EQ(byteWeight(options, 1, 2), 4);
  Box box{{0, 0}, {2, 2}};
  std::vector<Placed> holds = {{0, box}};
  EXPECT_EQ(movedBytes(holds, {{1, box}}, 4, &options), 16);
  EXPECT_EQ(movedBytes(holds, {{2, box}}, 4, &options), 64);
  EXPECT_EQ(movedBytes(holds, {{2, box}}, 4), 16);

  // A matmul with its summed loop cut 4 ways: three partials go to the
  // owner (block 0), two of them from the other node.
  Graph g;
  int a = addValue(g, "a", {8, 8}, ValueKind::Activation);
  int b = addValue(g, "b", {8, 8}, ValueKind::Weight);
  matmul(g, a, b, "c");
  Options one = options;
  one.gpusPerNode = 0;
  double flat = planOp(g, g.ops[0], {1, 4, 1}, one).aggBytes;
  EXPECT_EQ(flat, 3 * 64 * 4);
  EXPECT_EQ(planOp(g, g.ops[0], {1, 4, 1}, options).aggBytes,
            flat + 2 * 64 * 4 * (4 - 1));
}

namespace {

/// Specs cutting every layer of a layerStack alike: each matmul by its
/// columns, each add by its rows.
std::vector<Spec> stackSpecs(const Graph &g) {
  std::vector<Spec> specs;
  for (const Op &op : g.ops)
    specs.push_back(op.loopSizes.size() == 3 ? Spec{1, 1, 8} : Spec{8, 1});
  return specs;
}

} // namespace

TEST(Repetition, FindsTheLayersOfAStack) {
  // Six layers of (matmul, add) between an embedding and a head: period 2
  // from op 1, however the layers are cut, as long as every layer is cut
  // alike; the head, a matmul too, does not extend the run (its result is
  // returned).
  Graph g = layerStack(6);
  std::vector<Spec> specs = stackSpecs(g);
  Repetition r = findRepetition(g, specs);
  EXPECT_EQ(r.first, 1);
  EXPECT_EQ(r.period, 2);
  EXPECT_EQ(r.count, 6);
  // A layer cut otherwise ends the run before it.
  specs[1 + 2 * 4] = Spec{8, 1, 1};
  r = findRepetition(g, specs);
  EXPECT_EQ(r.first, 1);
  EXPECT_EQ(r.period, 2);
  EXPECT_EQ(r.count, 4);
  EXPECT_EQ(findRepetition(g, specs, /*minCount=*/5).count, 0);
  // A layer reading its own weight twice is not its neighbours' repeat.
  Graph h = layerStack(3);
  h.ops[3].inputs[1].value = h.ops[3].inputs[0].value;
  EXPECT_LT(findRepetition(h, stackSpecs(h)).count, 3);
}

TEST(Repetition, FoldingKeepsTheFirstTwoLayersAndTheLast) {
  Graph g = layerStack(6);
  std::vector<Spec> specs = stackSpecs(g);
  Repetition r = findRepetition(g, specs);
  ASSERT_EQ(r.count, 6);
  Plan plan;
  plan.feasible = true;
  plan.specs = specs;
  plan.layouts.resize(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    plan.layouts[v] = {Placed{int64_t(v % 8), Box{{0, 0}, {1, 1}}}};
  FoldedGraph f;
  ASSERT_TRUE(foldRepetition(g, plan, r, f));
  // The embedding, layers 0 and 1, layer 5 and the head.
  EXPECT_EQ(f.opOf, (std::vector<int>{0, 1, 2, 3, 4, 11, 12, 13}));
  ASSERT_EQ(f.graph.ops.size(), 8u);
  ASSERT_EQ(f.plan.specs.size(), 8u);
  for (size_t o = 0; o < f.opOf.size(); ++o) {
    EXPECT_EQ(f.graph.ops[o].name, g.ops[f.opOf[o]].name);
    EXPECT_EQ(f.plan.specs[o], specs[f.opOf[o]]);
    EXPECT_EQ(r.foldedOp(f.opOf[o]), static_cast<int>(o));
  }
  // Layer 5 reads what layer 1 leaves (its matmul and its add), with its
  // own weight; the dropped layers' weights are gone.
  EXPECT_EQ(f.graph.ops[5].inputs[0].value, f.graph.ops[4].output.value);
  EXPECT_EQ(f.graph.values[f.graph.ops[5].inputs[1].value].name, "w5");
  EXPECT_EQ(f.graph.ops[6].inputs[1].value, f.graph.ops[4].output.value);
  for (const Value &v : f.graph.values)
    EXPECT_TRUE(v.name != "w2" && v.name != "w3" && v.name != "w4") << v.name;
  EXPECT_EQ(f.graph.values[f.graph.results[0]].name, "head");
  // Layouts go with their values.
  for (size_t v = 0; v < f.graph.values.size(); ++v)
    for (size_t w = 0; w < g.values.size(); ++w)
      if (g.values[w].name == f.graph.values[v].name) {
        EXPECT_EQ(f.plan.layouts[v][0].device, int64_t(w % 8));
      }
  // The dropped layers' ops decide as layer 1's.
  EXPECT_EQ(r.foldedOp(5), 3);
  EXPECT_EQ(r.foldedOp(8), 4);
  EXPECT_EQ(r.foldedOp(10), 4);
  // A dropped layer's value that leaves the graph cannot be folded away.
  g.results.push_back(g.ops[7].output.value);
  EXPECT_FALSE(foldRepetition(g, plan, r, f));
}

TEST(Planner, AlternativeTotalsAreEvaluatesTotals) {
  // Every op alone cut by every spec, priced from one build, against
  // evaluate() of that plan whole: the same totals and the same infeasible
  // ones, with weights replicable and not (arguments whose best layout
  // changes with their readers' specs), a tied result and a pinned input.
  std::vector<Graph> graphs = {layerStack(3, 256), attentionGraph(8, 2, 64)};
  {
    Graph tied;
    int x = addValue(tied, "x", {512, 512}, ValueKind::Activation);
    int w = addValue(tied, "w", {512, 512}, ValueKind::Weight);
    int y = matmul(tied, x, w, "xw");
    int out = elementwise(tied, {y, x}, "out");
    tied.results = {out};
    tied.ties = {{x, out}};
    tied.ops[1].pinnedInputs = {{}, {4, 1}};
    graphs.push_back(tied);
  }
  for (const Graph &g : graphs)
    for (bool replicable : {true, false}) {
      SearchOptions o;
      o.devices = 4;
      o.weightsReplicable = replicable;
      Plan plan = search(g, o);
      ASSERT_TRUE(plan.feasible) << plan.error;
      std::vector<std::vector<Spec>> candidates;
      for (const Op &op : g.ops)
        candidates.push_back(enumerateSpecs(op, 4));
      // One spec no op may take, to be refused.
      candidates[0].push_back(Spec(g.ops[0].loopSizes.size(), 3));
      auto totals = alternativeTotals(g, plan.specs, o, candidates);
      ASSERT_EQ(totals.size(), g.ops.size());
      int feasible = 0;
      for (size_t op = 0; op < g.ops.size(); ++op)
        for (size_t c = 0; c < candidates[op].size(); ++c) {
          std::vector<Spec> specs = plan.specs;
          specs[op] = candidates[op][c];
          Plan whole = evaluate(g, specs, o);
          ASSERT_EQ(whole.feasible, totals[op][c].has_value())
              << "op " << op << " candidate " << c;
          if (whole.feasible) {
            EXPECT_EQ(whole.total, *totals[op][c])
                << "op " << op << " candidate " << c;
            ++feasible;
          }
        }
      EXPECT_GT(feasible, 3);
    }
}
