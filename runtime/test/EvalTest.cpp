//===- EvalTest.cpp - The reference evaluator against hand-computed results
//===//

#include "ein/eval.h"
#include "ProgramBuilder.h"

#include <gtest/gtest.h>

#include <limits>

#include <cmath>
#include <set>

using namespace ein;
using namespace ein::test;

namespace {

std::vector<HostTensor> run(const json &text, std::vector<HostTensor> inputs,
                            EvalOptions options = {}) {
  Program program;
  std::string error;
  EXPECT_TRUE(parseProgram(text.dump(), program, error)) << error;
  std::vector<HostTensor> results;
  EXPECT_TRUE(evaluate(program, inputs, results, error, options)) << error;
  return results;
}

HostTensor tensor(std::vector<int64_t> shape, std::vector<double> data,
                  DType dtype = DType::F32) {
  return HostTensor{dtype, shape, data};
}

} // namespace

TEST(Eval, Matmul) {
  json p = program({argument("a", type({2, 3})), argument("b", type({3, 2}))},
                   {joinAgg("c", type({2, 2}), {"a", "b"}, {{0, 1}, {1, 2}},
                            {0, 2}, "add", "arith.mulf")},
                   {"c"});
  auto r = run(p, {tensor({2, 3}, {1, 2, 3, 4, 5, 6}),
                   tensor({3, 2}, {7, 8, 9, 10, 11, 12})});
  // [1 2 3; 4 5 6] [7 8; 9 10; 11 12] = [58 64; 139 154]
  EXPECT_EQ(r[0].data, (std::vector<double>{58, 64, 139, 154}));
}

TEST(Eval, MaxAndSumReductions) {
  json p = program({argument("x", type({2, 3}))},
                   {joinAgg("mx", type({2}), {"x"}, {{0, 1}}, {0}, "max"),
                    joinAgg("sum", type({3}), {"x"}, {{0, 1}}, {1}, "add"),
                    joinAgg("all", type({}), {"x"}, {{0, 1}}, {}, "min")},
                   {"mx", "sum", "all"});
  auto r = run(p, {tensor({2, 3}, {3, -1, 2, -5, 7, 0})});
  EXPECT_EQ(r[0].data, (std::vector<double>{3, 7}));
  EXPECT_EQ(r[1].data, (std::vector<double>{-2, 6, 2}));
  EXPECT_EQ(r[2].data, (std::vector<double>{-5}));
}

// Ops of millions of iterations run on threads that split a loop of the
// result; each element is still accumulated in one thread's order, so the
// answer is the one-thread answer to the bit (here summed in the order the
// loops below sum).
TEST(Eval, ThreadedJoinAggsAccumulateInLoopOrder) {
  const int64_t m = 64, k = 1024, n = 64, rows = 4096, cols = 1024;
  json p = program(
      {argument("a", type({m, k})), argument("b", type({k, n})),
       argument("x", type({rows, cols}))},
      {joinAgg("c", type({m, n}), {"a", "b"}, {{0, 1}, {1, 2}}, {0, 2}, "add",
               "arith.mulf"),
       // The result's only loop is the inner one: threads split columns.
       joinAgg("colsum", type({cols}), {"x"}, {{0, 1}}, {1}, "add")},
      {"c", "colsum"});
  auto draw = [](int64_t count, double scale) {
    std::vector<double> v(count);
    for (int64_t i = 0; i < count; ++i)
      v[i] = std::sin(double(i) * scale) * 1.7 + 1e-3 * double(i % 7);
    return v;
  };
  HostTensor a = tensor({m, k}, draw(m * k, 0.37));
  HostTensor b = tensor({k, n}, draw(k * n, 0.11));
  HostTensor x = tensor({rows, cols}, draw(rows * cols, 0.013));
  auto r = run(p, {a, b, x});
  std::vector<double> c(m * n, 0.0), colsum(cols, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t t = 0; t < k; ++t)
      for (int64_t j = 0; j < n; ++j)
        c[i * n + j] += a.data[i * k + t] * b.data[t * n + j];
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      colsum[j] += x.data[i * cols + j];
  EXPECT_EQ(r[0].data, c);
  EXPECT_EQ(r[1].data, colsum);
}

TEST(Eval, Softmax) {
  json op = {{"kind", "softmax"},
             {"result", "y"},
             {"type", type({2, 3})},
             {"inputs", {"x"}},
             {"dim", 1}};
  json column = op;
  column["result"] = "z";
  column["dim"] = 0;
  auto r = run(program({argument("x", type({2, 3}))}, {op, column}, {"y", "z"}),
               {tensor({2, 3}, {1, 2, 3, 0, 0, 0})});
  double e = std::exp(1.0), sum = e + e * e + e * e * e;
  EXPECT_NEAR(r[0].data[0], e / sum, 1e-15);
  EXPECT_NEAR(r[0].data[2], e * e * e / sum, 1e-15);
  EXPECT_NEAR(r[0].data[4], 1.0 / 3, 1e-15);
  // Along dim 0: column 0 holds 1 and 0.
  EXPECT_NEAR(r[1].data[0], e / (e + 1), 1e-15);
  EXPECT_NEAR(r[1].data[3], 1 / (e + 1), 1e-15);
}

TEST(Eval, RmsNorm) {
  json op = {{"kind", "rms_norm"},
             {"result", "y"},
             {"type", type({1, 2})},
             {"inputs", {"x", "w"}},
             {"eps", 1e-6}};
  auto r = run(program({argument("x", type({1, 2})), argument("w", type({2}))},
                       {op}, {"y"}),
               {tensor({1, 2}, {3, 4}), tensor({2}, {1, 2})});
  double inv = 1 / std::sqrt(12.5 + 1e-6); // mean of 9 and 16
  EXPECT_NEAR(r[0].data[0], 3 * inv, 1e-15);
  EXPECT_NEAR(r[0].data[1], 8 * inv, 1e-15);
}

TEST(Eval, LayerNorm) {
  // Rows (1, 3) and (2, 2): means 2 and 2, variances 1 and 0.
  json full = {{"kind", "layer_norm"},
               {"result", "y"},
               {"type", type({2, 2})},
               {"inputs", {"x", "w", "b"}},
               {"eps", 0.25}};
  json bare = {{"kind", "layer_norm"},
               {"result", "z"},
               {"type", type({2, 2})},
               {"inputs", {"x"}},
               {"eps", 0.25}};
  auto r = run(program({argument("x", type({2, 2})), argument("w", type({2})),
                        argument("b", type({2}))},
                       {full, bare}, {"y", "z"}),
               {tensor({2, 2}, {1, 3, 2, 2}), tensor({2}, {2, 3}),
                tensor({2}, {10, 20})});
  double inv = 1 / std::sqrt(1.25);
  EXPECT_NEAR(r[0].data[0], -1 * inv * 2 + 10, 1e-12);
  EXPECT_NEAR(r[0].data[1], 1 * inv * 3 + 20, 1e-12);
  EXPECT_NEAR(r[0].data[2], 10, 1e-12);
  EXPECT_NEAR(r[0].data[3], 20, 1e-12);
  EXPECT_NEAR(r[1].data[0], -inv, 1e-12);
  EXPECT_NEAR(r[1].data[1], inv, 1e-12);
  EXPECT_EQ(r[1].data[2], 0);
}

TEST(Eval, ConvolutionWithPaddingStrideAndDilation) {
  // nhwc: one 1x3x4 image of 1 channel, x = 1..12 row by row; a 2x2
  // filter [[1, 2], [3, 4]] of 1 feature, dilation (1, 2), stride (2, 1),
  // padding 1 before the rows (0 elsewhere). Output 2x2:
  // out[y, c] = sum_ij x[2y - 1 + i, c + 2j] * w[i, j], rows outside 0.
  json conv = {
      {"kind", "conv"},       {"result", "y"},     {"type", type({1, 2, 2, 1})},
      {"inputs", {"x", "w"}}, {"layout", "nhwc"},  {"strides", {2, 1}},
      {"dilations", {1, 2}},  {"pad_low", {1, 0}}, {"pad_high", {0, 0}}};
  std::vector<double> x;
  for (int i = 1; i <= 12; ++i)
    x.push_back(i);
  auto r = run(program({argument("x", type({1, 3, 4, 1})),
                        argument("w", type({2, 2, 1, 1}))},
                       {conv}, {"y"}),
               {tensor({1, 3, 4, 1}, x), tensor({2, 2, 1, 1}, {1, 2, 3, 4})});
  // y = 0: row -1 is padding, row 0 = (1 2 3 4): 3 * x[0][c] + 4 * x[0][c+2].
  EXPECT_EQ(r[0].data[0], 3 * 1 + 4 * 3);
  EXPECT_EQ(r[0].data[1], 3 * 2 + 4 * 4);
  // y = 1: rows 1 (5..8) and 2 (9..12).
  EXPECT_EQ(r[0].data[2], 1 * 5 + 2 * 7 + 3 * 9 + 4 * 11);
  EXPECT_EQ(r[0].data[3], 1 * 6 + 2 * 8 + 3 * 10 + 4 * 12);
}

TEST(Eval, ConvolutionNchwSumsChannels) {
  // nchw, 2 channels of 1x2, filter fchw 1x2x1x1 (weights 10 and 100): a
  // pointwise convolution summing the channels.
  json conv = {
      {"kind", "conv"},       {"result", "y"},     {"type", type({1, 1, 1, 2})},
      {"inputs", {"x", "w"}}, {"layout", "nchw"},  {"strides", {1, 1}},
      {"dilations", {1, 1}},  {"pad_low", {0, 0}}, {"pad_high", {0, 0}}};
  auto r = run(
      program({argument("x", type({1, 2, 1, 2})),
               argument("w", type({1, 2, 1, 1}))},
              {conv}, {"y"}),
      {tensor({1, 2, 1, 2}, {1, 2, 3, 4}), tensor({1, 2, 1, 1}, {10, 100})});
  EXPECT_EQ(r[0].data[0], 10 * 1 + 100 * 3);
  EXPECT_EQ(r[0].data[1], 10 * 2 + 100 * 4);
}

TEST(Eval, GroupedConvolutionReadsItsGroup) {
  // nchw, 4 channels of 1x1 (1, 2, 3, 4) in 2 groups, filter fchw 4x2x1x1:
  // features 0 and 1 read channels 0 and 1, features 2 and 3 channels 2
  // and 3.
  json conv = {
      {"kind", "conv"},       {"result", "y"},     {"type", type({1, 4, 1, 1})},
      {"inputs", {"x", "w"}}, {"layout", "nchw"},  {"strides", {1, 1}},
      {"dilations", {1, 1}},  {"pad_low", {0, 0}}, {"pad_high", {0, 0}},
      {"groups", 2}};
  auto r = run(program({argument("x", type({1, 4, 1, 1})),
                        argument("w", type({4, 2, 1, 1}))},
                       {conv}, {"y"}),
               {tensor({1, 4, 1, 1}, {1, 2, 3, 4}),
                tensor({4, 2, 1, 1}, {1, 10, 100, 1000, 2, 20, 200, 2000})});
  EXPECT_EQ(r[0].data[0], 1 * 1 + 10 * 2);
  EXPECT_EQ(r[0].data[1], 100 * 1 + 1000 * 2);
  EXPECT_EQ(r[0].data[2], 2 * 3 + 20 * 4);
  EXPECT_EQ(r[0].data[3], 200 * 3 + 2000 * 4);
}

TEST(Eval, DepthwiseConvolutionNhwc) {
  // nhwc 1x1x3x2, channels (1, 2, 3) and (10, 20, 30) along the columns;
  // depthwise (groups 2) with 2 features per channel, hwcf filter 1x2x1x4
  // (a 1x2 window), padding 1 after the columns: feature f reads channel
  // f / 2.
  json conv = {
      {"kind", "conv"},       {"result", "y"},     {"type", type({1, 1, 3, 4})},
      {"inputs", {"x", "w"}}, {"layout", "nhwc"},  {"strides", {1, 1}},
      {"dilations", {1, 1}},  {"pad_low", {0, 0}}, {"pad_high", {0, 1}},
      {"groups", 2}};
  // w[0, j, 0, f]: j = 0 row (1, 2, 3, 4), j = 1 row (5, 6, 7, 8).
  auto r = run(program({argument("x", type({1, 1, 3, 2})),
                        argument("w", type({1, 2, 1, 4}))},
                       {conv}, {"y"}),
               {tensor({1, 1, 3, 2}, {1, 10, 2, 20, 3, 30}),
                tensor({1, 2, 1, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
  // Column 0: x[0] and x[1] of the feature's channel.
  EXPECT_EQ(r[0].data[0], 1 * 1 + 5 * 2);
  EXPECT_EQ(r[0].data[1], 2 * 1 + 6 * 2);
  EXPECT_EQ(r[0].data[2], 3 * 10 + 7 * 20);
  EXPECT_EQ(r[0].data[3], 4 * 10 + 8 * 20);
  // Column 2: only x[2] (the padding after it reads 0).
  EXPECT_EQ(r[0].data[8], 1 * 3);
  EXPECT_EQ(r[0].data[11], 4 * 30);
}

TEST(Eval, PoolingSkipsPadding) {
  // nchw 1x1x3x3 = [[-5, -1, -3], [-4, -2, -6], [-7, -8, -9]], 2x2 windows,
  // stride 2, padding 1 before: windows cover rows and columns {-1, 0} and
  // {1, 2}. Max skips the padding (every value is negative); add counts it
  // as nothing.
  json pool = {
      {"kind", "pool"},    {"result", "m"},     {"type", type({1, 1, 2, 2})},
      {"inputs", {"x"}},   {"agg", "max"},      {"layout", "nchw"},
      {"window", {2, 2}},  {"strides", {2, 2}}, {"dilations", {1, 1}},
      {"pad_low", {1, 1}}, {"pad_high", {0, 0}}};
  json sum = pool;
  sum["result"] = "s";
  sum["agg"] = "add";
  auto r =
      run(program({argument("x", type({1, 1, 3, 3}))}, {pool, sum}, {"m", "s"}),
          {tensor({1, 1, 3, 3}, {-5, -1, -3, -4, -2, -6, -7, -8, -9})});
  EXPECT_EQ(r[0].data, (std::vector<double>{-5, -1, -4, -2}));
  EXPECT_EQ(r[1].data,
            (std::vector<double>{-5, -1 - 3, -4 - 7, -2 - 6 - 8 - 9}));
}

TEST(Eval, ArgReduceTakesTheFirstExtremeAndSkipsNaN) {
  // Rows: a tie (the first wins), a NaN before the maximum (skipped), all
  // -inf (index 0), and the minimum along dimension 1.
  double inf = std::numeric_limits<double>::infinity();
  double nan = std::numeric_limits<double>::quiet_NaN();
  json argmax = {
      {"kind", "arg_reduce"}, {"result", "i"}, {"type", type({4}, "i64")},
      {"inputs", {"x"}},      {"agg", "max"},  {"dim", 1}};
  json argmin = argmax;
  argmin["result"] = "j";
  argmin["agg"] = "min";
  argmin["type"] = type({4}, "i32");
  auto r =
      run(program({argument("x", type({4, 3}))}, {argmax, argmin}, {"i", "j"}),
          {tensor({4, 3}, {2, 5, 5, nan, 1, 3, -inf, -inf, -inf, 0, -1, -1})});
  EXPECT_EQ(r[0].data, (std::vector<double>{1, 2, 0, 0}));
  EXPECT_EQ(r[1].data, (std::vector<double>{0, 1, 0, 1}));
}

TEST(Eval, GatherReadsRowsAndZeroOutside) {
  // A table of 3 rows of 2; row_offset 1 (a block holding rows 1..3 of a
  // larger table): index 1 is its first row, 0 and 4 are outside it.
  json op = {{"kind", "gather"},
             {"result", "y"},
             {"type", type({4, 2})},
             {"inputs", {"t", "i"}},
             {"row_offset", 1}};
  json p =
      program({argument("t", type({3, 2})), argument("i", type({4}, "i64"))},
              {op}, {"y"});
  auto r = run(p, {tensor({3, 2}, {10, 11, 20, 21, 30, 31}),
                   tensor({4}, {3, 0, 1, 4}, DType::I64)});
  EXPECT_EQ(r[0].data, (std::vector<double>{30, 31, 0, 0, 10, 11, 0, 0}));
}

TEST(Eval, RandomIndicesCoverTheTable) {
  // Drawn for a gather over 5 rows: -1 to 5, every one of them.
  json op = {{"kind", "gather"},
             {"result", "y"},
             {"type", type({64, 2})},
             {"inputs", {"t", "i"}},
             {"row_offset", 0}};
  Program parsed;
  std::string error;
  ASSERT_TRUE(parseProgram(
      program({argument("t", type({5, 2})), argument("i", type({64}, "i64"))},
              {op}, {"y"})
          .dump(),
      parsed, error))
      << error;
  std::vector<int64_t> bounds = indexBounds(parsed);
  EXPECT_EQ(bounds, (std::vector<int64_t>{0, 5}));
  HostTensor ids = randomInput(parsed.arguments[1].type, 7, 1, bounds[1]);
  std::set<double> seen(ids.data.begin(), ids.data.end());
  EXPECT_EQ(seen, (std::set<double>{-1, 0, 1, 2, 3, 4, 5}));
}

TEST(Eval, GatherRefusesBadOperands) {
  auto errorOf = [](json table, json ids, json result, int64_t offset) {
    json op = {{"kind", "gather"},
               {"result", "y"},
               {"type", result},
               {"inputs", {"t", "i"}},
               {"row_offset", offset}};
    Program parsed;
    std::string error;
    EXPECT_FALSE(parseProgram(
        program({argument("t", table), argument("i", ids)}, {op}, {"y"}).dump(),
        parsed, error));
    return error;
  };
  EXPECT_NE(errorOf(type({3, 2}), type({4}, "f32"), type({4, 2}), 0)
                .find("gather's indices must be i64 or i32"),
            std::string::npos);
  EXPECT_NE(errorOf(type({3, 2}, "i64"), type({4}, "i64"), type({4, 2}), 0)
                .find("gather reads a float table of rank 1 or more"),
            std::string::npos);
  EXPECT_NE(errorOf(type({3, 2}), type({4}, "i64"), type({4, 2}), -1)
                .find("row_offset must be between 0 and 2^48"),
            std::string::npos);
  EXPECT_NE(errorOf(type({3, 2}), type({4}, "i64"), type({2, 4}), 0)
                .find("result must be [4, 2] f32"),
            std::string::npos);
}

TEST(Eval, LayerNormRefusesABadWeight) {
  json op = {{"kind", "layer_norm"},
             {"result", "y"},
             {"type", type({1, 2})},
             {"inputs", {"x", "w"}},
             {"eps", 1e-5}};
  json bad = program({argument("x", type({1, 2})), argument("w", type({3}))},
                     {op}, {"y"});
  Program parsed;
  std::string error;
  EXPECT_FALSE(parseProgram(bad.dump(), parsed, error));
  EXPECT_NE(error.find("weight must have one element"), std::string::npos)
      << error;
}

TEST(Eval, CausalGqaAttention) {
  // One batch, two query heads sharing one KV head, two tokens, head dim 1,
  // scale 1. Keys 0 and ln 3, values 1 and 5.
  json op = {{"kind", "attention"},
             {"result", "o"},
             {"type", type({1, 2, 2, 1})},
             {"inputs", {"q", "k", "v"}},
             {"causal", true},
             {"group", 2},
             {"scale", 1.0},
             {"query_offset", 0},
             {"key_offset", 0}};
  json p = program({argument("q", type({1, 2, 2, 1})),
                    argument("k", type({1, 1, 2, 1})),
                    argument("v", type({1, 1, 2, 1}))},
                   {op}, {"o"});
  auto r = run(p, {tensor({1, 2, 2, 1}, {9, 1, 9, 0}),
                   tensor({1, 1, 2, 1}, {0, std::log(3.0)}),
                   tensor({1, 1, 2, 1}, {1, 5})});
  // Token 0 sees only key 0: output 1 whatever the query. Token 1 of head 0
  // (q = 1) weighs the keys 1 : 3, giving 4; head 1 (q = 0) weighs them
  // equally, giving 3.
  EXPECT_NEAR(r[0].data[0], 1, 1e-12);
  EXPECT_NEAR(r[0].data[1], 4, 1e-12);
  EXPECT_NEAR(r[0].data[2], 1, 1e-12);
  EXPECT_NEAR(r[0].data[3], 3, 1e-12);
}

TEST(Eval, OnlineSoftmaxCombineEqualsWholeAttention) {
  TensorType qt{DType::F32, {1, 4, 8, 4}}, kt{DType::F32, {1, 2, 8, 4}};
  HostTensor q = randomInput(qt, 7, 0), k = randomInput(kt, 7, 1),
             v = randomInput(kt, 7, 2);
  HostTensor whole, wholeLse;
  attention(q, k, v, /*causal=*/true, 2, 0.5, 0, 0, whole, &wholeLse);
  // Split the keys in two blocks; the second starts at key 3.
  auto keys = [](const HostTensor &t, int64_t from, int64_t count) {
    HostTensor part{t.dtype, {1, 2, count, 4}, {}};
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t s = from; s < from + count; ++s)
        for (int64_t d = 0; d < 4; ++d)
          part.data.push_back(t.data[(h * 8 + s) * 4 + d]);
    return part;
  };
  HostTensor o1, l1, o2, l2, combined, combinedLse;
  attention(q, keys(k, 0, 3), keys(v, 0, 3), true, 2, 0.5, 0, 0, o1, &l1);
  attention(q, keys(k, 3, 5), keys(v, 3, 5), true, 2, 0.5, 0, 3, o2, &l2);
  // Query 0 sees no key of the second block.
  EXPECT_TRUE(std::isinf(l2.data[0]) && l2.data[0] < 0);
  combineAttention({o1, o2}, {l1, l2}, combined, &combinedLse);
  for (size_t i = 0; i < whole.data.size(); ++i)
    EXPECT_NEAR(combined.data[i], whole.data[i], 1e-12) << i;
  for (size_t i = 0; i < wholeLse.data.size(); ++i)
    EXPECT_NEAR(combinedLse.data[i], wholeLse.data[i], 1e-12) << i;
}

TEST(Eval, ReshapeSliceConcat) {
  json reshape = {{"kind", "reshape"},
                  {"result", "r"},
                  {"type", type({2, 2, 3})},
                  {"inputs", {"x"}},
                  {"reassociation", {{0}, {1, 2}}}};
  json slice = {{"kind", "slice"},         {"result", "s"},
                {"type", type({1, 2, 2})}, {"inputs", {"r"}},
                {"offsets", {1, 0, 1}},    {"sizes", {1, 2, 2}}};
  json concat = {{"kind", "concat"},
                 {"result", "c"},
                 {"type", type({2, 4})},
                 {"inputs", {"a", "b"}},
                 {"dim", 1}};
  json p = program({argument("x", type({2, 6})), argument("a", type({2, 1})),
                    argument("b", type({2, 3}))},
                   {reshape, slice, concat}, {"s", "c"});
  auto r =
      run(p, {tensor({2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
              tensor({2, 1}, {-1, -2}), tensor({2, 3}, {1, 2, 3, 4, 5, 6})});
  // x as 2x2x3: second row holds [[6 7 8] [9 10 11]]; columns 1..2 of it.
  EXPECT_EQ(r[0].data, (std::vector<double>{7, 8, 10, 11}));
  EXPECT_EQ(r[1].data, (std::vector<double>{-1, 1, 2, 3, -2, 4, 5, 6}));
}

TEST(Eval, CausalMaskReadsLoopIndices) {
  // y[i, j] = j <= i ? x[i, j] : -inf, then a row max.
  json join = {
      {"args", {"f32"}},
      {"ops",
       {{{"op", "ein.index"},
         {"operands", json::array()},
         {"type", "index"},
         {"dim", 0}},
        {{"op", "ein.index"},
         {"operands", json::array()},
         {"type", "index"},
         {"dim", 1}},
        {{"op", "arith.cmpi"},
         {"operands", {2, 1}},
         {"type", "i1"},
         {"predicate", "ule"}},
        {{"op", "arith.constant"},
         {"operands", json::array()},
         {"type", "f32"},
         {"value", "-inf"}},
        {{"op", "arith.select"}, {"operands", {3, 0, 4}}, {"type", "f32"}}}},
      {"yield", 5}};
  json op = joinAgg("m", type({2}), {"x"}, {{0, 1}}, {0}, "max");
  op["join"] = join;
  auto r = run(program({argument("x", type({2, 2}))}, {op}, {"m"}),
               {tensor({2, 2}, {1, 9, 4, 3})});
  EXPECT_EQ(r[0].data, (std::vector<double>{1, 4}));
}

TEST(Eval, RoundIntermediates) {
  json p = program(
      {argument("a", type({1}, "bf16")), argument("b", type({1}, "bf16"))}, {},
      {});
  json op = joinAgg("c", type({1}, "bf16"), {"a", "b"}, {{0}, {0}}, {0}, "none",
                    "arith.addf");
  op["join"]["args"] = {"bf16", "bf16"};
  op["join"]["ops"][0]["operands"] = {0, 1};
  p["ops"] = {op};
  p["results"] = {"c"};
  // Inputs are exact in bf16 (1 and 2^-8); their sum is not.
  std::vector<HostTensor> in = {tensor({1}, {1}, DType::BF16),
                                tensor({1}, {0.00390625}, DType::BF16)};
  EXPECT_EQ(run(p, in)[0].data[0], 1.00390625);
  EvalOptions rounding;
  rounding.roundIntermediates = true;
  EXPECT_EQ(run(p, in, rounding)[0].data[0], 1.0);
}

TEST(Eval, RandomInputsFollowTheRule) {
  TensorType t{DType::BF16, {64, 256}};
  HostTensor a = randomInput(t, 3, 0), b = randomInput(t, 3, 0),
             c = randomInput(t, 3, 1), d = randomInput(t, 4, 0);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  EXPECT_NE(a.data, d.data);
  double sum = 0, squares = 0;
  for (double x : a.data) {
    EXPECT_EQ(x, roundTo(DType::BF16, x));
    sum += x;
    squares += x * x;
  }
  double n = static_cast<double>(a.data.size());
  // Standard normal scaled by 1/sqrt(256): mean 0, variance 1/256.
  EXPECT_NEAR(sum / n, 0, 0.005);
  EXPECT_NEAR(squares / n, 1.0 / 256, 0.0003);
}

TEST(Eval, RefusesHugeWork) {
  json p = program(
      {argument("a", type({512, 512})), argument("b", type({512, 512}))},
      {joinAgg("c", type({512, 512}), {"a", "b"}, {{0, 1}, {1, 2}}, {0, 2},
               "add", "arith.mulf")},
      {"c"});
  Program program;
  std::string error;
  ASSERT_TRUE(parseProgram(p.dump(), program, error)) << error;
  EvalOptions small;
  small.maxIterations = 1000;
  std::vector<HostTensor> inputs = {randomInput(program.arguments[0].type, 0,
                                                0),
                                    randomInput(program.arguments[1].type, 0,
                                                1)},
                          results;
  EXPECT_FALSE(evaluate(program, inputs, results, error, small));
  EXPECT_NE(error.find("op 0 (join_agg 'c') needs 134217728 iterations"),
            std::string::npos)
      << error;
}

namespace {
/// A join with no inputs computing `op` on two i64 constants.
json integerOp(const std::string &opName, int64_t a, int64_t b) {
  json join = {{"args", json::array()},
               {"ops",
                {{{"op", "arith.constant"},
                  {"operands", json::array()},
                  {"type", "i64"},
                  {"value", a}},
                 {{"op", "arith.constant"},
                  {"operands", json::array()},
                  {"type", "i64"},
                  {"value", b}},
                 {{"op", opName}, {"operands", {0, 1}}, {"type", "i64"}}}},
               {"yield", 2}};
  json op = {{"kind", "join_agg"},
             {"result", "r"},
             {"type", type({1}, "i64")},
             {"inputs", json::array()},
             {"input_indices", json::array()},
             {"output_indices", {0}},
             {"agg", "none"},
             {"acc", "i64"},
             {"join", join}};
  return program({}, {op}, {"r"});
}
} // namespace

TEST(Eval, IntegerDivisionNeverTraps) {
  EXPECT_EQ(run(integerOp("arith.divsi", INT64_MIN, -1), {})[0].data[0],
            static_cast<double>(INT64_MIN));
  EXPECT_EQ(run(integerOp("arith.remsi", INT64_MIN, -1), {})[0].data[0], 0);
  EXPECT_EQ(run(integerOp("arith.divsi", 7, 0), {})[0].data[0], 0);
  EXPECT_EQ(run(integerOp("arith.divsi", -7, 2), {})[0].data[0], -3);
  EXPECT_EQ(run(integerOp("arith.remsi", -7, 2), {})[0].data[0], -1);
}

TEST(Eval, NanPoisonsItsAttentionRow) {
  json op = {{"kind", "attention"},
             {"result", "o"},
             {"type", type({1, 1, 2, 1})},
             {"inputs", {"q", "k", "v"}},
             {"causal", false},
             {"group", 1},
             {"scale", 1.0},
             {"query_offset", 0},
             {"key_offset", 0}};
  json p = program({argument("q", type({1, 1, 2, 1})),
                    argument("k", type({1, 1, 2, 1})),
                    argument("v", type({1, 1, 2, 1}))},
                   {op}, {"o"});
  auto r = run(p, {tensor({1, 1, 2, 1}, {std::nan(""), 1}),
                   tensor({1, 1, 2, 1}, {0, 1}), tensor({1, 1, 2, 1}, {1, 5})});
  EXPECT_TRUE(std::isnan(r[0].data[0]));
  EXPECT_FALSE(std::isnan(r[0].data[1]));
}

TEST(Eval, RefusesHugeAttentionAndTensors) {
  json op = {{"kind", "attention"},
             {"result", "o"},
             {"type", type({1, 1, 64, 8})},
             {"inputs", {"q", "q", "q"}},
             {"causal", false},
             {"group", 1},
             {"scale", 1.0},
             {"query_offset", 0},
             {"key_offset", 0}};
  Program program;
  std::string error;
  ASSERT_TRUE(parseProgram(
      ein::test::program({argument("q", type({1, 1, 64, 8}))}, {op}, {"o"})
          .dump(),
      program, error))
      << error;
  EvalOptions small;
  small.maxIterations = 1000;
  std::vector<HostTensor> results;
  EXPECT_FALSE(evaluate(program, {randomInput(program.arguments[0].type, 0, 0)},
                        results, error, small));
  EXPECT_NE(error.find("op 0 (attention 'o') needs about 65536 multiply-adds"),
            std::string::npos)
      << error;
  small.maxElements = 100;
  EXPECT_FALSE(evaluate(program, {randomInput(program.arguments[0].type, 0, 0)},
                        results, error, small));
  EXPECT_NE(
      error.find(
          "argument 'q' has 512 elements; the CPU reference stops at 100"),
      std::string::npos)
      << error;
}

TEST(Eval, RoundIntermediatesRoundsTheAccumulator) {
  // 512 ones summed in a bf16 accumulator stop at 256 (256 + 1 rounds back).
  json p =
      program({argument("x", type({512}, "bf16"))},
              {joinAgg("s", type({}, "bf16"), {"x"}, {{0}}, {}, "add")}, {"s"});
  p["ops"][0]["acc"] = "bf16";
  p["ops"][0]["join"]["args"] = {"bf16"};
  HostTensor ones{DType::BF16, {512}, std::vector<double>(512, 1.0)};
  EXPECT_EQ(run(p, {ones})[0].data[0], 512);
  EvalOptions rounding;
  rounding.roundIntermediates = true;
  EXPECT_EQ(run(p, {ones}, rounding)[0].data[0], 256);
}
