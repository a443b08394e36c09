//===- ProgramTest.cpp - program.json validation
//----------------------------===//

#include "ein/program.h"
#include "ProgramBuilder.h"

#include <gtest/gtest.h>

using namespace ein;
using namespace ein::test;

namespace {

json matmul() {
  return program({argument("a", type({2, 3})), argument("b", type({3, 2}))},
                 {joinAgg("c", type({2, 2}), {"a", "b"}, {{0, 1}, {1, 2}},
                          {0, 2}, "add", "arith.mulf")},
                 {"c"});
}

/// Parses `text` expecting failure; returns the error.
std::string error(const json &text) {
  Program p;
  std::string message;
  EXPECT_FALSE(parseProgram(text.dump(), p, message)) << text.dump();
  return message;
}

/// Parses `text`; returns the error, empty when it is accepted.
std::string accepted(const json &text) {
  Program p;
  std::string message;
  parseProgram(text.dump(), p, message);
  return message;
}

#define EXPECT_ERROR(json_value, fragment)                                     \
  do {                                                                         \
    std::string message = error(json_value);                                   \
    EXPECT_NE(message.find(fragment), std::string::npos) << message;           \
  } while (0)

} // namespace

TEST(Program, ParsesAMatmul) {
  Program p;
  std::string message;
  ASSERT_TRUE(parseProgram(matmul().dump(), p, message)) << message;
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_EQ(p.ops[0].kind, OpKind::JoinAgg);
  EXPECT_EQ(p.ops[0].agg, Agg::Add);
  EXPECT_EQ(p.ops[0].join.ops[0].kind, ScalarKind::MulF);
  EXPECT_EQ(p.results, std::vector<std::string>{"c"});
}

TEST(Program, RejectsBadDocuments) {
  Program p;
  std::string message;
  EXPECT_FALSE(parseProgram("{\"format\": ", p, message));
  EXPECT_EQ(message, "not valid JSON");
  EXPECT_ERROR(json::array(), "program: expected an object");

  json v = matmul();
  v["version"] = 2;
  EXPECT_ERROR(v, "program.version: this reader understands version 1, the "
                  "file has version 2");
  v = matmul();
  v["format"] = "onnx";
  EXPECT_ERROR(v, "program.format: expected \"ein-program\"");
  v = matmul();
  v.erase("results");
  EXPECT_ERROR(v, "program: missing field 'results'");
}

TEST(Program, RejectsBadValues) {
  json v = matmul();
  v["ops"][0]["inputs"][1] = "w";
  EXPECT_ERROR(v,
               "program.ops[0].inputs[1]: value 'w' is not defined before use");
  v = matmul();
  v["arguments"][1]["name"] = "a";
  EXPECT_ERROR(v, "program.arguments[1].name: 'a' is defined twice");
  v = matmul();
  v["arguments"][0]["type"]["dtype"] = "f8";
  EXPECT_ERROR(v, "program.arguments[0].type.dtype: unknown element type 'f8'");
  v = matmul();
  v["arguments"][0]["type"]["shape"] = {2, 0};
  EXPECT_ERROR(v, "dimensions must be positive");
  v = matmul();
  v["results"] = {"nothing"};
  EXPECT_ERROR(v, "program.results[0]: value 'nothing' is not defined");
}

TEST(Program, RejectsBadJoins) {
  json v = matmul();
  v["ops"][0]["input_indices"][1] = {2, 1};
  EXPECT_ERROR(v, "loop d1 has sizes 3 and 2");
  v = matmul();
  v["ops"][0]["input_indices"][0] = {0};
  EXPECT_ERROR(v, "input 0 has rank 2 but 1 indices");
  v = matmul();
  v["ops"][0]["agg"] = "none";
  EXPECT_ERROR(v, "aggregation 'none' but some loop is not in the result");
  v = matmul();
  v["ops"][0]["agg"] = "sum";
  EXPECT_ERROR(v, "unknown aggregation 'sum'");
  v = matmul();
  v["ops"][0]["join"]["ops"][0]["op"] = "arith.frobf";
  EXPECT_ERROR(v, "program.ops[0].join.ops[0].op: unsupported scalar operation "
                  "'arith.frobf'");
  v = matmul();
  v["ops"][0]["join"]["ops"][0]["operands"] = {0, 5};
  EXPECT_ERROR(v, "value 5 is not defined before this operation");
  v = matmul();
  v["ops"][0]["join"]["ops"][0]["operands"] = {0};
  EXPECT_ERROR(v, "arith.mulf takes 2 operands, got 1");
  v = matmul();
  v["ops"][0]["join"]["yield"] = 0;
  v["ops"][0]["join"]["args"] = {"f32", "f16"};
  EXPECT_ERROR(v, "the join's arguments must have the inputs' element types");
  v = matmul();
  v["ops"][0]["acc"] = "f64";
  EXPECT_ERROR(v, "the join yields f32 but the accumulator type is f64");
}

TEST(Program, RejectsBadComposites) {
  json attention = {{"kind", "attention"},
                    {"result", "o"},
                    {"type", type({1, 4, 8, 2})},
                    {"inputs", {"q", "k", "k"}},
                    {"causal", true},
                    {"group", 3},
                    {"scale", 0.5},
                    {"query_offset", 0},
                    {"key_offset", 0}};
  json v = program(
      {argument("q", type({1, 4, 8, 2})), argument("k", type({1, 2, 8, 2}))},
      {attention}, {"o"});
  EXPECT_ERROR(v, "do not fit group 3");
  v["ops"][0]["group"] = 2;
  v["ops"][0]["type"] = type({1, 4, 8, 3});
  EXPECT_ERROR(v, "result must be [1, 4, 8, 2] f32, got [1, 4, 8, 3] f32");
  json slice = {{"kind", "slice"}, {"result", "s"},  {"type", type({2})},
                {"inputs", {"x"}}, {"offsets", {3}}, {"sizes", {2}}};
  EXPECT_ERROR(program({argument("x", type({4}))}, {slice}, {"s"}),
               "the slice leaves the source in dimension 0");
  // Windows: the filter's channels, the pool's aggregation, the padding's
  // width and the result's shape.
  json conv = {
      {"kind", "conv"},       {"result", "c"},     {"type", type({1, 4, 4, 5})},
      {"inputs", {"x", "w"}}, {"layout", "nhwc"},  {"strides", {1, 1}},
      {"dilations", {1, 1}},  {"pad_low", {1, 1}}, {"pad_high", {1, 1}}};
  std::vector<json> convArgs = {argument("x", type({1, 4, 4, 3})),
                                argument("w", type({3, 3, 2, 5}))};
  EXPECT_ERROR(program(convArgs, {conv}, {"c"}),
               "the filter does not read the input's channels");
  convArgs[1] = argument("w", type({3, 3, 3, 5}));
  EXPECT_EQ(accepted(program(convArgs, {conv}, {"c"})), "");
  // Groups: a positive count dividing both channel counts, the filter
  // holding one group's input channels.
  json grouped = conv;
  grouped["groups"] = 3;
  grouped["type"] = type({1, 4, 4, 6});
  std::vector<json> groupedArgs = {argument("x", type({1, 4, 4, 3})),
                                   argument("w", type({3, 3, 1, 6}))};
  EXPECT_EQ(accepted(program(groupedArgs, {grouped}, {"c"})), "");
  grouped["groups"] = 2;
  EXPECT_ERROR(program(groupedArgs, {grouped}, {"c"}),
               "groups (2) must be positive and divide the input's 3 "
               "channels and the filter's 6 output channels");
  grouped["groups"] = 0;
  EXPECT_ERROR(program(groupedArgs, {grouped}, {"c"}),
               "groups (0) must be positive");
  grouped["groups"] = 3;
  groupedArgs[1] = argument("w", type({3, 3, 3, 6}));
  EXPECT_ERROR(program(groupedArgs, {grouped}, {"c"}),
               "the filter does not read the input's channels per group");
  conv["pad_high"] = {3, 1};
  EXPECT_ERROR(program(convArgs, {conv}, {"c"}),
               "padding must be non-negative and narrower than the window's "
               "reach");
  conv["pad_high"] = {1, 1};
  conv["strides"] = {2, 1};
  EXPECT_ERROR(program(convArgs, {conv}, {"c"}),
               "result must be [1, 2, 4, 5] f32, got [1, 4, 4, 5] f32");
  conv["layout"] = "hwnc";
  EXPECT_ERROR(program(convArgs, {conv}, {"c"}),
               "layout must be \"nhwc\" or \"nchw\"");
  json pool = {
      {"kind", "pool"},    {"result", "p"},     {"type", type({1, 3, 2, 2})},
      {"inputs", {"x"}},   {"agg", "mul"},      {"layout", "nchw"},
      {"window", {2, 2}},  {"strides", {2, 2}}, {"dilations", {1, 1}},
      {"pad_low", {0, 0}}, {"pad_high", {0, 0}}};
  std::vector<json> poolArgs = {argument("x", type({1, 3, 4, 4}))};
  EXPECT_ERROR(program(poolArgs, {pool}, {"p"}),
               "pool's agg must be max or add");
  pool["agg"] = "max";
  EXPECT_EQ(accepted(program(poolArgs, {pool}, {"p"})), "");
  pool["window"] = {2};
  EXPECT_ERROR(program(poolArgs, {pool}, {"p"}),
               "window, strides, dilations, pad_low and pad_high need 2 "
               "values each");
  json unknown = {{"kind", "scatter"},
                  {"result", "s"},
                  {"type", type({2})},
                  {"inputs", {"x"}}};
  EXPECT_ERROR(program({argument("x", type({4}))}, {unknown}, {"s"}),
               "program.ops[0].kind: unknown op kind 'scatter'");
}

TEST(Program, RejectsOverflowingAndUnknownFields) {
  json slice = {{"kind", "slice"},
                {"result", "s"},
                {"type", type({16})},
                {"inputs", {"x"}},
                {"offsets", {9223372036854775800LL}},
                {"sizes", {16}}};
  EXPECT_ERROR(program({argument("x", type({4}))}, {slice}, {"s"}),
               "the slice leaves the source in dimension 0");
  json attention = {{"kind", "attention"},
                    {"result", "o"},
                    {"type", type({1, 4, 1, 1})},
                    {"inputs", {"q", "q", "q"}},
                    {"causal", true},
                    {"group", 4611686018427387905LL},
                    {"scale", 0.5},
                    {"query_offset", 0},
                    {"key_offset", 0}};
  json v = program({argument("q", type({1, 4, 1, 1}))}, {attention}, {"o"});
  EXPECT_ERROR(v, "do not fit group 4611686018427387905");
  v["ops"][0]["group"] = 1;
  v["ops"][0]["key_offset"] = 9223372036854775807LL;
  EXPECT_ERROR(v, "offsets between 0 and 2^48");
  json big = matmul();
  big["arguments"][0]["type"]["shape"] = std::vector<int64_t>(65, 1);
  EXPECT_ERROR(big, "program.arguments[0].type.shape: rank 65 exceeds 64");
  json typo = matmul();
  typo["arguments"][1]["wieght"] = true;
  EXPECT_ERROR(typo, "program.arguments[1]: unknown field 'wieght'");
  typo = matmul();
  typo["ops"][0]["causal"] = true;
  EXPECT_ERROR(typo, "program.ops[0]: unknown field 'causal'");
}

// FLOPs as the compiler counts them, each figure worked out by hand.
TEST(Program, CountsFlops) {
  std::string message;
  auto flopsOf = [&](const json &text) {
    Program p;
    EXPECT_TRUE(parseProgram(text.dump(), p, message)) << message;
    return programFlops(p);
  };
  // A bf16 gemm [6x5] x [5x7]: a multiply and the sum's add per point; its
  // two extf widenings are free. Then ReLU-like maximumf: one per element.
  json gemm = joinAgg("c", type({6, 7}), {"a", "b"}, {{0, 1}, {1, 2}}, {0, 2},
                      "add", "arith.mulf", "bf16");
  json relu = joinAgg("r", type({6, 7}), {"c", "c"}, {{0, 1}, {0, 1}}, {0, 1},
                      "none", "arith.maximumf");
  EXPECT_EQ(flopsOf(program({argument("a", type({6, 5}, "bf16")),
                             argument("b", type({5, 7}, "bf16"))},
                            {gemm, relu}, {"r"})),
            6 * 5 * 7 * 2 + 6 * 7);
  // Causal attention, 2 query heads on 1 KV head, 3 queries at offset 1
  // against 5 keys: query q sees keys 0..q+1 (2, 3, 4 pairs: 9 a head);
  // head dims 4 (Q.K) and 2 (P.V): 2 * (4 + 2) a pair.
  json attention = {{"kind", "attention"},
                    {"result", "o"},
                    {"type", type({1, 2, 3, 2})},
                    {"inputs", {"q", "k", "v"}},
                    {"causal", true},
                    {"group", 2},
                    {"scale", 0.5},
                    {"query_offset", 1},
                    {"key_offset", 0}};
  json qkv = {argument("q", type({1, 2, 3, 4})),
              argument("k", type({1, 1, 5, 4})),
              argument("v", type({1, 1, 5, 2}))};
  EXPECT_EQ(flopsOf(program(qkv, {attention}, {"o"})), 2 * 9 * 2 * (4 + 2));
  attention["causal"] = false;
  EXPECT_EQ(flopsOf(program(qkv, {attention}, {"o"})), 2 * 15 * 2 * (4 + 2));
  // A 2x2 nhwc convolution of 3 input channels into 4: each of the 1x2x2x4
  // results does 3 * 2 * 2 multiply-adds.
  json conv = {
      {"kind", "conv"},       {"result", "y"},     {"type", type({1, 2, 2, 4})},
      {"inputs", {"x", "w"}}, {"layout", "nhwc"},  {"strides", {1, 1}},
      {"dilations", {1, 1}},  {"pad_low", {0, 0}}, {"pad_high", {0, 0}}};
  EXPECT_EQ(flopsOf(program({argument("x", type({1, 3, 3, 3})),
                             argument("w", type({2, 2, 3, 4}))},
                            {conv}, {"y"})),
            16 * 3 * 2 * 4);
}
