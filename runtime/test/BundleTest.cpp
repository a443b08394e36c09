//===- BundleTest.cpp - manifest.json validation and schedule checks ------===//

#include "ein/bundle.h"
#include "BundleBuilder.h"

#include <gtest/gtest.h>

using namespace ein;
using namespace ein::test;

namespace {

/// The error parseManifest gives for `m`, or "" when it accepts it.
std::string errorOf(const json &m) {
  Manifest manifest;
  std::string error;
  return parseManifest(m.dump(), manifest, error) ? "" : error;
}

/// `m` with the fields of `patch` replaced.
json patched(json m, const json &patch) {
  m.merge_patch(patch);
  return m;
}

#define EXPECT_REJECTS(manifest, text)                                         \
  EXPECT_NE(errorOf(manifest).find(text), std::string::npos)                   \
      << "got: '" << errorOf(manifest) << "'"

} // namespace

TEST(Bundle, SplitMatmulParses) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(splitMatmulManifest().dump(), m, error)) << error;
  EXPECT_EQ(m.devices, 2);
  ASSERT_EQ(m.steps.size(), 4u);
  EXPECT_EQ(m.steps[2].kind, StepKind::Transfer);
  EXPECT_EQ(m.steps[2].copies.at(0).src.extent, (std::vector<int64_t>{8, 6}));
  EXPECT_EQ(m.steps[3].deps, (std::vector<int>{0, 2}));
  // The aggregation reads both partials and writes the first in place.
  std::vector<BufferAccess> accesses = stepAccesses(m, m.steps[3]);
  ASSERT_EQ(accesses.size(), 3u);
  EXPECT_EQ(m.buffers[accesses[2].buffer].name, "P0");
  EXPECT_EQ(accesses[2].access, Access::Write);
}

TEST(Bundle, TopLevelErrors) {
  json m = splitMatmulManifest();
  EXPECT_EQ(errorOf(m), "");
  EXPECT_REJECTS(patched(m, {{"format", "ein-program"}}),
                 "manifest.format: expected \"ein-bundle\"");
  EXPECT_REJECTS(patched(m, {{"version", 2}}),
                 "manifest.version: this runtime understands bundle version "
                 "1, the bundle has version 2");
  EXPECT_REJECTS(patched(m, {{"target", "tpu"}}),
                 "manifest.target: expected \"cpu\" or \"cuda\", got 'tpu'");
  EXPECT_REJECTS(patched(m, {{"chip", "sm_90"}}),
                 "a cpu bundle's chip is \"host\", got 'sm_90'");
  EXPECT_REJECTS(patched(m, {{"target", "cuda"}, {"chip", "gfx90"}}),
                 "a cuda bundle's chip is sm_NN, got 'gfx90'");
  EXPECT_REJECTS(patched(m, {{"devices", 0}}),
                 "manifest.devices: must be 1 to 64, got 0");
  EXPECT_REJECTS(patched(m, {{"arena_bytes", {1024}}}),
                 "manifest.arena_bytes: lists 1 arenas for 2 devices");
  EXPECT_REJECTS(patched(m, {{"stpes", json::array()}}),
                 "manifest: unknown field 'stpes'");
  EXPECT_REJECTS(patched(m, {{"kernel_libraries", {"/lib/x.so"}}}),
                 "manifest.kernel_libraries[0]: kernel library paths are "
                 "relative to the bundle");
  EXPECT_REJECTS(patched(m, {{"kernel_libraries", {"../x.so"}}}),
                 "stay inside it");
  json missing = m;
  missing.erase("steps");
  EXPECT_REJECTS(missing, "manifest: missing field 'steps'");
  Manifest parsed;
  std::string error;
  EXPECT_FALSE(parseManifest("{\"format\": ", parsed, error));
  EXPECT_EQ(error, "not valid JSON");
}

TEST(Bundle, Nodes) {
  json m = splitMatmulManifest();
  Manifest parsed;
  std::string error;
  ASSERT_TRUE(parseManifest(m.dump(), parsed, error)) << error;
  EXPECT_EQ(parsed.nodes, 1);
  // A bundle of one node does not say so; one of several does, and reads
  // back as written.
  EXPECT_EQ(writeManifest(parsed).find("\"nodes\""), std::string::npos);
  ASSERT_TRUE(parseManifest(patched(m, {{"nodes", 2}}).dump(), parsed, error))
      << error;
  EXPECT_EQ(parsed.nodes, 2);
  EXPECT_EQ(parsed.devicesPerNode(), 1);
  EXPECT_EQ(parsed.nodeOf(1), 1);
  Manifest again;
  ASSERT_TRUE(parseManifest(writeManifest(parsed), again, error)) << error;
  EXPECT_EQ(again.nodes, 2);
  for (int bad : {0, 3, -1})
    EXPECT_REJECTS(patched(m, {{"nodes", bad}}),
                   "manifest.nodes: the bundle's 2 devices cannot sit on " +
                       std::to_string(bad) + " nodes of equal size");
  EXPECT_REJECTS(patched(m, {{"nodes", "2"}}), "manifest.nodes");
}

TEST(Bundle, Dataflow) {
  json m = splitMatmulManifest();
  Manifest parsed;
  std::string error;
  ASSERT_TRUE(parseManifest(m.dump(), parsed, error)) << error;
  EXPECT_FALSE(parsed.dataflow);
  // Only a dataflow bundle says so, and it reads back as written.
  EXPECT_EQ(writeManifest(parsed).find("\"dataflow\""), std::string::npos);
  ASSERT_TRUE(
      parseManifest(patched(m, {{"dataflow", true}}).dump(), parsed, error))
      << error;
  EXPECT_TRUE(parsed.dataflow);
  Manifest again;
  ASSERT_TRUE(parseManifest(writeManifest(parsed), again, error)) << error;
  EXPECT_TRUE(again.dataflow);
  EXPECT_REJECTS(patched(m, {{"dataflow", 1}}), "manifest.dataflow");
}

TEST(Bundle, BufferErrors) {
  json m = splitMatmulManifest();
  json misaligned = m;
  misaligned["buffers"][1]["offset"] = 100;
  EXPECT_REJECTS(misaligned, "manifest.buffers[1].offset: must be a "
                             "non-negative multiple of 256, got 100");
  json tooBig = m;
  tooBig["buffers"][3]["offset"] = 1024;
  EXPECT_REJECTS(tooBig, "manifest.buffers[3]: bytes [1024, 1024 + 192) "
                         "exceed device 0's arena of 1024 bytes");
  // An offset near 2^63: the message must not overflow (UBSan).
  tooBig["buffers"][3]["offset"] = INT64_MAX / 256 * 256;
  EXPECT_REJECTS(tooBig, "manifest.buffers[3]: bytes [9223372036854775552, "
                         "9223372036854775552 + 192) exceed");
  json twice = m;
  twice["buffers"][1]["name"] = "A0";
  EXPECT_REJECTS(twice, "manifest.buffers[1].name: buffer 'A0' is defined "
                        "twice");
  json device = m;
  device["buffers"][0]["device"] = 2;
  EXPECT_REJECTS(device, "manifest.buffers[0].device: device 2 does not "
                         "exist (the bundle has 2)");
  json unknown = m;
  unknown["steps"][0]["a"] = "Q";
  EXPECT_REJECTS(unknown, "manifest.steps[0].a: no buffer is named 'Q'");
}

TEST(Bundle, LayoutErrors) {
  json m = splitMatmulManifest();
  json dtype = m;
  dtype["inputs"][0]["type"]["dtype"] = "f16";
  EXPECT_REJECTS(dtype, "manifest.inputs[0].blocks[0].buffer: buffer 'A0' "
                        "holds f32 but the tensor is f16");
  json outside = m;
  outside["inputs"][0]["blocks"][1]["offset"] = {0, 3};
  EXPECT_REJECTS(outside, "manifest.inputs[0].blocks[1]: block of shape "
                          "[8, 2] at [0, 3] does not fit in the tensor's "
                          "shape [8, 4]");
  // An input may be laid out twice (two ops read a weight in different
  // cuts) and need not be read whole: each block is filled from its region.
  json overlapIn = m;
  overlapIn["inputs"][0]["blocks"][1]["offset"] = {0, 1};
  EXPECT_EQ(errorOf(overlapIn), "");
  // A dropped input block leaves its buffer unfilled, and the gemm on
  // device 1 would read it.
  json partIn = m;
  partIn["inputs"][0]["blocks"].erase(1);
  EXPECT_REJECTS(partIn, "manifest.steps[1]: reads elements [0:8, 0:2] of "
                         "buffer 'A1', which no earlier step writes (and no "
                         "input or constant block fills)");
  // An output is gathered from its blocks: they must tile it.
  json overlap = m;
  overlap["outputs"][0]["blocks"].push_back(block("A0", {0, 1}));
  EXPECT_REJECTS(overlap, "manifest.outputs[0].blocks: blocks in buffers "
                          "'P0' and 'A0' overlap without being replicas");
  json gap = m;
  gap["outputs"][0]["type"]["shape"] = {8, 8};
  EXPECT_REJECTS(gap, "manifest.outputs[0].blocks: the blocks cover 48 of "
                      "the 64 elements of the output");
  // Replicas: the same region twice is fine.
  json replicated = m;
  replicated["outputs"][0]["blocks"].push_back(block("R0", {0, 0}));
  EXPECT_EQ(errorOf(replicated), "");
}

TEST(Bundle, GemmEpilogues) {
  // C[4x3] = gelu(A[4x2] B[2x3] + Bias + R) on one device: parsed, checked
  // and written back as it was.
  json m = manifest(
      1, {1280},
      {buffer("A", 0, 0, type({4, 2})), buffer("B", 0, 256, type({2, 3})),
       buffer("Bias", 0, 512, type({3})), buffer("R", 0, 768, type({4, 3})),
       buffer("C", 0, 1024, type({4, 3}))},
      {layout(type({4, 2}), {block("A", {0, 0})}),
       layout(type({2, 3}), {block("B", {0, 0})}),
       layout(type({3}), {block("Bias", {0})}),
       layout(type({4, 3}), {block("R", {0, 0})})},
      {layout(type({4, 3}), {block("C", {0, 0})})}, {gemm(0, "A", "B", "C")});
  m["steps"][0]["bias"] = "Bias";
  m["steps"][0]["addend"] = "R";
  m["steps"][0]["activation"] = "gelu_tanh";
  Manifest parsed;
  std::string error;
  ASSERT_TRUE(parseManifest(m.dump(), parsed, error)) << error;
  EXPECT_EQ(parsed.steps[0].bias, 2);
  EXPECT_EQ(parsed.steps[0].addend, 3);
  EXPECT_EQ(parsed.steps[0].activation, Activation::GeluTanh);
  Manifest again;
  ASSERT_TRUE(parseManifest(writeManifest(parsed), again, error)) << error;
  EXPECT_EQ(writeManifest(again), writeManifest(parsed));
  EXPECT_EQ(json::parse(writeManifest(parsed))["steps"][0]["activation"],
            "gelu_tanh");
  // A gemm without an epilogue writes none of its keys.
  json plain = m;
  for (const char *key : {"bias", "addend", "activation"})
    plain["steps"][0].erase(key);
  plain["inputs"].erase(3);
  plain["inputs"].erase(2);
  ASSERT_TRUE(parseManifest(plain.dump(), parsed, error)) << error;
  json written = json::parse(writeManifest(parsed));
  for (const char *key : {"bias", "addend", "activation"})
    EXPECT_FALSE(written["steps"][0].contains(key)) << key;

  json act = m;
  act["steps"][0]["activation"] = "swish";
  EXPECT_REJECTS(act, "manifest.steps[0].activation: unknown activation "
                      "'swish'");
  json rows = m;
  rows["steps"][0]["bias"] = "R";
  EXPECT_REJECTS(rows, "manifest.steps[0].bias: a gemm's bias is a vector of "
                       "c's last extent and type (f32 [3]), got f32 [4, 3]");
  json half = m;
  half["buffers"][2]["type"]["dtype"] = "bf16";
  half["inputs"][2]["type"]["dtype"] = "bf16";
  EXPECT_REJECTS(half, "a gemm's bias is a vector of c's last extent and "
                       "type (f32 [3]), got bf16 [3]");
  json addend = m;
  addend["steps"][0]["addend"] = "B";
  EXPECT_REJECTS(addend, "manifest.steps[0].addend: a gemm's addend has c's "
                         "shape and type (f32 [4, 3]), got f32 [2, 3]");
  json both = m;
  both["steps"][0]["beta"] = 1;
  EXPECT_REJECTS(both, "a gemm takes an addend or accumulates into c (beta), "
                       "not both");
  json itself = m;
  itself["steps"][0]["addend"] = "C";
  EXPECT_REJECTS(itself, "a gemm's bias and addend are buffers of their own, "
                         "not a, b or c");
  // The epilogue's reads are reads: the schedule checks them.
  json unwritten = m;
  unwritten["inputs"].erase(3);
  EXPECT_REJECTS(unwritten, "manifest.steps[0]: reads elements [0:4, 0:3] of "
                            "buffer 'R', which no earlier step writes");
}

TEST(Bundle, StepErrors) {
  json m = splitMatmulManifest();
  json kind = m;
  kind["steps"][0]["kind"] = "launch";
  EXPECT_REJECTS(kind, "manifest.steps[0].kind: unknown step kind 'launch'");
  json forward = m;
  forward["steps"][2]["deps"] = {2};
  EXPECT_REJECTS(forward, "manifest.steps[2].deps[0]: a step depends on "
                          "earlier steps only (0 to 1), got 2");
  json remote = m;
  remote["steps"][0]["b"] = "B1";
  EXPECT_REJECTS(remote, "manifest.steps[0].b: buffer 'B1' is on device 1 "
                         "but the step runs on device 0");
  json call = m;
  call["steps"][0]["call"] = "fft";
  EXPECT_REJECTS(call, "manifest.steps[0].call: unknown library call 'fft'; "
                       "this runtime knows gemm, attention and conv");
  json shapes = m;
  shapes["steps"][0]["transpose_a"] = true;
  EXPECT_REJECTS(shapes, "gemm shapes do not agree: a [8, 2] (transposed), "
                         "b [2, 6], c [8, 6]");
  json aliasing = m;
  aliasing["steps"][0]["c"] = "A0";
  EXPECT_REJECTS(aliasing, "gemm's c must not be one of its operands");
  json ints = m;
  ints["buffers"][2]["type"]["dtype"] = "i32";
  ints["outputs"][0]["type"]["dtype"] = "i32";
  EXPECT_REJECTS(ints, "gemm takes a and b of one type among f32, f16 and "
                       "bf16 and c of one of them, got f32, f32, i32");
  json sender = m;
  sender["steps"][2]["device"] = 0;
  sender["steps"][2]["to"] = "P1";
  sender["steps"][2]["from"] = "A1";
  EXPECT_REJECTS(sender, "a transfer runs on its sending or receiving device "
                         "(1 or 1), not 0");
  json region = m;
  region["steps"][2]["to_offset"] = {1, 0};
  EXPECT_REJECTS(region, "region of extent [8, 6] at [1, 0] does not fit in "
                         "buffer 'R0' of shape [8, 6]");
  json convert = m;
  convert["buffers"][3]["type"]["dtype"] = "f16";
  EXPECT_REJECTS(convert, "a transfer copies f32 into f16; it does not "
                          "convert");
  json self = m;
  self["steps"][2]["from"] = "R0";
  self["steps"][2]["extent"] = {4, 6};
  self["steps"][2]["to_offset"] = {2, 0};
  self["steps"][2]["device"] = 0;
  EXPECT_REJECTS(self, "a transfer's source and destination overlap");
  json none = m;
  none["steps"][3]["op"] = "none";
  EXPECT_REJECTS(none, "an aggregation combines with add, max, min or mul");
  json empty = m;
  empty["steps"][3]["inputs"] = json::array();
  EXPECT_REJECTS(empty, "an aggregation needs at least one input");
  json mixed = m;
  mixed["steps"][3]["inputs"] = {"P0", "A0"};
  EXPECT_REJECTS(mixed, "an aggregation combines float buffers of one shape; "
                        "'A0' is [8, 2] f32 and the output [8, 6] f32");
}

TEST(Bundle, BatchedTransfers) {
  // Device 1 pulls both halves of X from device 0 into Y, swapped, in one
  // step.
  auto region = [](std::vector<int64_t> from, std::vector<int64_t> to) {
    return json{{"from", "X"},
                {"from_offset", from},
                {"to", "Y"},
                {"to_offset", to},
                {"extent", {2, 4}}};
  };
  json m = manifest(
      2, {256, 512},
      {buffer("X", 0, 0, type({4, 4})), buffer("Y", 1, 0, type({4, 4})),
       buffer("V", 1, 256, type({4, 4}))},
      {layout(type({4, 4}), {block("X", {0, 0})})},
      {layout(type({4, 4}), {block("Y", {0, 0})})},
      {{{"kind", "transfer"},
        {"device", 1},
        {"regions", {region({0, 0}, {2, 0}), region({2, 0}, {0, 0})}}}});
  Manifest parsed;
  std::string error;
  ASSERT_TRUE(parseManifest(m.dump(), parsed, error)) << error;
  ASSERT_EQ(parsed.steps[0].copies.size(), 2u);
  EXPECT_EQ(parsed.steps[0].copies[1].src.offset, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(parsed.steps[0].copies[1].dst.offset, (std::vector<int64_t>{0, 0}));
  std::vector<BufferAccess> accesses = stepAccesses(parsed, parsed.steps[0]);
  ASSERT_EQ(accesses.size(), 4u);
  EXPECT_EQ(accesses[3].access, Access::Write);
  EXPECT_EQ(accesses[3].offset, (std::vector<int64_t>{0, 0}));

  json overlap = m;
  overlap["steps"][0]["regions"][1]["to_offset"] = {1, 0};
  EXPECT_REJECTS(overlap, "manifest.steps[0].regions[1]: region 1 and region "
                          "0 of a batched transfer touch the same bytes, "
                          "and one writes them");
  // U is a view of V's bytes: writing U's rows 2-3 while V's are written
  // is a race checkSchedule refuses, as for any step.
  json aliased = m;
  aliased["buffers"].push_back(buffer("U", 1, 256, type({4, 4})));
  aliased["steps"][0]["regions"][0]["to"] = "V";
  aliased["steps"][0]["regions"][1]["to"] = "U";
  aliased["steps"][0]["regions"][1]["to_offset"] = {2, 0};
  EXPECT_REJECTS(aliased, "manifest.steps[0]: writes bytes it also accesses "
                          "through another buffer ('V' and 'U' share bytes)");
  json pairs = m;
  pairs["steps"][0]["regions"][1]["from"] = "V";
  pairs["steps"][0]["regions"][1]["to"] = "Y";
  EXPECT_REJECTS(pairs, "manifest.steps[0].regions[1]: a batched transfer "
                        "moves every region between the same two devices, as "
                        "region 0 does (0 to 1)");
  json none = m;
  none["steps"][0]["regions"] = json::array();
  EXPECT_REJECTS(none, "manifest.steps[0].regions: a batched transfer needs "
                       "at least one region");
  json both = m;
  both["steps"][0]["from"] = "X";
  EXPECT_REJECTS(both, "manifest.steps[0]");
  json stray = m;
  stray["steps"][0]["regions"][0]["device"] = 1;
  EXPECT_REJECTS(stray, "manifest.steps[0].regions[0]");
  // Reading one source twice is no conflict.
  json twice = m;
  twice["steps"][0]["regions"][1]["from_offset"] = {0, 0};
  EXPECT_EQ(errorOf(twice), "");
}

TEST(Bundle, AttentionSteps) {
  // 4 queries over 8 keys: Q and O 2 KiB each, K and V 2 KiB each, room
  // for the variants below.
  json bf16q = type({1, 4, 4, 64}, "bf16"),
       bf16kv = type({1, 2, 8, 64}, "bf16");
  json m = manifest(1, {16384},
                    {buffer("Q", 0, 0, bf16q), buffer("K", 0, 4096, bf16kv),
                     buffer("V", 0, 8192, bf16kv), buffer("O", 0, 2048, bf16q),
                     buffer("L", 0, 12288, type({1, 4, 8}))},
                    {layout(bf16q, {block("Q", {0, 0, 0, 0})}),
                     layout(bf16kv, {block("K", {0, 0, 0, 0})}),
                     layout(bf16kv, {block("V", {0, 0, 0, 0})})},
                    {layout(bf16q, {block("O", {0, 0, 0, 0})})},
                    {attentionStep(0, "Q", "K", "V", "O", true, 0, 0.125)});
  EXPECT_EQ(errorOf(m), "");
  json lse = m;
  lse["steps"][0]["lse"] = "L";
  EXPECT_REJECTS(lse, "attention's lse must be f32 [1, 4, 4], got f32 "
                      "[1, 4, 8]");
  json types = m;
  types["buffers"][1]["type"] = type({1, 2, 8, 64}, "f16");
  types["inputs"][1]["type"] = type({1, 2, 8, 64}, "f16");
  EXPECT_REJECTS(types, "attention takes q, k, v and o of one type among "
                        "f32, f16 and bf16, got bf16, f16, bf16, bf16");
  json heads = m;
  heads["buffers"][1]["type"] = type({1, 3, 8, 64}, "bf16");
  heads["buffers"][2]["type"] = type({1, 3, 8, 64}, "bf16");
  heads["inputs"][1]["type"] = type({1, 3, 8, 64}, "bf16");
  heads["inputs"][2]["type"] = type({1, 3, 8, 64}, "bf16");
  EXPECT_REJECTS(heads, "attention's 4 query heads are not a multiple of its "
                        "3 KV heads");
  json dims = m;
  dims["buffers"][1]["type"] = type({1, 2, 8, 32}, "bf16");
  dims["inputs"][1]["type"] = type({1, 2, 8, 32}, "bf16");
  EXPECT_REJECTS(dims, "attention shapes do not agree: q [1, 4, 4, 64], k "
                       "[1, 2, 8, 32], v [1, 2, 8, 64], o [1, 4, 4, 64]");
  json rank = m;
  rank["buffers"][0]["type"] = type({4, 4, 64}, "bf16");
  rank["inputs"][0]["type"] = type({4, 4, 64}, "bf16");
  rank["inputs"][0]["blocks"][0]["offset"] = {0, 0, 0};
  EXPECT_REJECTS(rank, "attention takes rank-4 [batch, heads, tokens, dim] "
                       "tensors");
  json alias = m;
  alias["steps"][0]["o"] = "Q";
  EXPECT_REJECTS(alias, "attention's outputs must not be one of its inputs");
  json scale = m;
  scale["steps"][0]["scale"] = 0;
  EXPECT_REJECTS(scale, "attention's scale must be positive and finite");
  json unknown = m;
  unknown["steps"][0]["mask"] = "M";
  EXPECT_REJECTS(unknown, "mask");
  // Views: q as its heads transposed (in bounds, accepted), and each way a
  // view is refused.
  json viewed = m;
  viewed["steps"][0]["q_view"] = {
      {"shape", {1, 4, 4, 64}}, {"offset", 0}, {"strides", {1024, 64, 256, 1}}};
  EXPECT_EQ(errorOf(viewed), "");
  json strides = viewed;
  strides["steps"][0]["q_view"]["strides"] = {1024, 64, 256};
  EXPECT_REJECTS(strides, "a view has one stride per dimension: [1, 4, 4, 64] "
                          "with 3 strides");
  json negative = viewed;
  negative["steps"][0]["q_view"]["offset"] = -1;
  EXPECT_REJECTS(negative, "its offset and strides not negative");
  json past = viewed;
  past["steps"][0]["q_view"]["offset"] = 1;
  EXPECT_REJECTS(past, "manifest.steps[0].q_view: the view reads past the end "
                       "of buffer 'Q' (1024 elements)");
  json huge = viewed;
  huge["steps"][0]["q_view"]["strides"] = {1024, int64_t(1) << 62, 256, 1};
  EXPECT_REJECTS(huge, "past the end");
  json broadcast = viewed;
  broadcast["steps"][0]["q_view"]["shape"] = {int64_t(1) << 40, 4, 4, 64};
  broadcast["steps"][0]["q_view"]["strides"] = {0, 64, 256, 1};
  EXPECT_REJECTS(broadcast, "manifest.steps[0].q_view: the view holds more "
                            "elements than buffer 'Q' (1024)");
  json disagree = viewed;
  disagree["steps"][0]["q_view"]["shape"] = {1, 4, 2, 64};
  EXPECT_REJECTS(disagree, "attention shapes do not agree: q [1, 4, 2, 64]");
  json keys = m;
  keys["steps"][0]["q_view"] = {{"shape", {1, 4, 4, 64}},
                                {"offset", 0},
                                {"strides", {1024, 64, 256, 1}},
                                {"dims", 4}};
  EXPECT_REJECTS(keys, "dims");
  json gaps = m;
  gaps["steps"][0]["o_view"] = {
      {"shape", {1, 4, 4, 64}}, {"offset", 0}, {"strides", {1024, 32, 256, 1}}};
  EXPECT_REJECTS(gaps, "an attention's o view must hold each element of its "
                       "buffer once");
  json f32 = patched(m, {{"target", "cuda"}, {"chip", "sm_90"}});
  EXPECT_EQ(errorOf(f32), "");
  for (int b : {0, 1, 2, 3})
    f32["buffers"][b]["type"]["dtype"] = "f32";
  for (int i : {0, 1, 2})
    f32["inputs"][i]["type"]["dtype"] = "f32";
  f32["outputs"][0]["type"]["dtype"] = "f32";
  EXPECT_REJECTS(f32, "attention on cuda takes f16 or bf16, not f32");
}

TEST(Bundle, ConvSteps) {
  // nhwc 1x6x6x8 bf16 by an hwcf 3x3x8x4 filter, padding 1: 1x6x6x4.
  json x = type({1, 6, 6, 8}, "bf16"), w = type({3, 3, 8, 4}, "bf16"),
       y = type({1, 6, 6, 4}, "bf16");
  json step = {{"kind", "library"}, {"device", 0},       {"call", "conv"},
               {"a", "X"},          {"b", "W"},          {"c", "Y"},
               {"layout", "nhwc"},  {"strides", {1, 1}}, {"dilations", {1, 1}},
               {"pad_low", {1, 1}}, {"pad_high", {1, 1}}};
  json m = manifest(
      1, {2048},
      {buffer("X", 0, 0, x), buffer("W", 0, 768, w), buffer("Y", 0, 1536, y)},
      {layout(x, {block("X", {0, 0, 0, 0})}),
       layout(w, {block("W", {0, 0, 0, 0})})},
      {layout(y, {block("Y", {0, 0, 0, 0})})}, {step});
  m["target"] = "cuda";
  m["chip"] = "sm_90";
  EXPECT_EQ(errorOf(m), "");
  Manifest parsed;
  std::string error;
  ASSERT_TRUE(parseManifest(m.dump(), parsed, error)) << error;
  EXPECT_EQ(parsed.steps[0].conv.padLow, (std::vector<int64_t>{1, 1}));
  std::vector<BufferAccess> accesses = stepAccesses(parsed, parsed.steps[0]);
  ASSERT_EQ(accesses.size(), 3u);
  EXPECT_EQ(accesses[2].access, Access::Write);
  EXPECT_REJECTS(patched(m, {{"target", "cpu"}, {"chip", "host"}}),
                 "conv library steps run on cuda (cuDNN); a cpu bundle "
                 "convolves in its kernels");
  json strides = m;
  strides["steps"][0]["strides"] = {2, 1};
  EXPECT_REJECTS(strides, "conv of a [1, 6, 6, 8] by b [3, 3, 8, 4] into c "
                          "[1, 6, 6, 4]: c must be [1, 3, 6, 4]");
  json pad = m;
  pad["steps"][0]["pad_high"] = {3, 1};
  EXPECT_REJECTS(pad, "padding must be non-negative and narrower than the "
                      "window's reach");
  json channels = m;
  channels["steps"][0]["layout"] = "nchw";
  EXPECT_REJECTS(channels, "the filter does not read the input's channels");
  json types = m;
  types["buffers"][1]["type"] = type({3, 3, 8, 4}, "f16");
  types["inputs"][1]["type"] = type({3, 3, 8, 4}, "f16");
  EXPECT_REJECTS(types, "conv takes a, b and c of one type among f32, f16 and "
                        "bf16, got bf16, f16, bf16");
  json alias = m;
  alias["steps"][0]["c"] = "X";
  EXPECT_REJECTS(alias, "conv's c must not be one of its operands");
  // Grouped: 4 groups of 2 input channels, the filter holding one
  // group's; written only where it is not 1.
  json grouped = m;
  grouped["steps"][0]["groups"] = 2;
  EXPECT_REJECTS(grouped, "conv of a [1, 6, 6, 8] by b [3, 3, 8, 4] into c "
                          "[1, 6, 6, 4]: the filter does not read the "
                          "input's channels per group");
  json wg = type({3, 3, 2, 4}, "bf16");
  grouped["steps"][0]["groups"] = 4;
  grouped["buffers"][1]["type"] = wg;
  grouped["inputs"][1]["type"] = wg;
  EXPECT_EQ(errorOf(grouped), "");
  ASSERT_TRUE(parseManifest(grouped.dump(), parsed, error)) << error;
  EXPECT_EQ(parsed.steps[0].conv.groups, 4);
  EXPECT_NE(writeManifest(parsed).find("\"groups\": 4"), std::string::npos);
  grouped["steps"][0]["groups"] = 3;
  EXPECT_REJECTS(grouped, "groups (3) must be positive and divide the "
                          "input's 8 channels and the filter's 4 output "
                          "channels");
  ASSERT_TRUE(parseManifest(m.dump(), parsed, error)) << error;
  EXPECT_EQ(writeManifest(parsed).find("\"groups\""), std::string::npos);
}

TEST(Bundle, KernelSteps) {
  json m = splitMatmulManifest();
  json kernel = {{"kind", "kernel"},
                 {"device", 0},
                 {"kernel", "scale"},
                 {"args", {{{"buffer", "P0"}, {"access", "readwrite"}}}},
                 {"scalars", {48}},
                 {"deps", {3}}};
  json noLibrary = m;
  noLibrary["steps"].push_back(kernel);
  EXPECT_REJECTS(noLibrary, "manifest.steps[4]: a kernel step needs a kernel "
                            "library");
  json ok = noLibrary;
  ok["kernel_libraries"] = {"kernels/host.so"};
  EXPECT_REJECTS(ok, "manifest: missing field 'kernel_library_sha256'");
  ok["kernel_library_sha256"] = {std::string(64, 'a')};
  EXPECT_EQ(errorOf(ok), "");
  json hashes = ok;
  hashes["kernel_library_sha256"] = {std::string(64, 'a'),
                                     std::string(64, 'b')};
  EXPECT_REJECTS(hashes, "manifest.kernel_library_sha256: expected one hash "
                         "per kernel library (1), got 2");
  hashes["kernel_library_sha256"] = {std::string(63, 'a') + "A"};
  EXPECT_REJECTS(hashes, "manifest.kernel_library_sha256[0]: expected a "
                         "SHA-256 as 64 lowercase hex digits");
  json access = ok;
  access["steps"][4]["args"][0]["access"] = "rw";
  EXPECT_REJECTS(access, "manifest.steps[4].args[0].access: unknown access "
                         "'rw'; expected read, write or readwrite");
  json launch = ok;
  launch["steps"][4]["launch"] = {{"grid", {1, 1, 1}}, {"block", {1, 1, 1}}};
  EXPECT_REJECTS(launch, "a cpu kernel step takes no 'launch'");
  json cuda = ok;
  cuda["target"] = "cuda";
  cuda["chip"] = "sm_90";
  EXPECT_REJECTS(cuda, "a cuda kernel step needs 'launch' (grid, block)");
  cuda["steps"][4]["launch"] = {{"grid", {4, 1, 1}}, {"block", {128, 0, 1}}};
  EXPECT_REJECTS(cuda, "launch.block: expected three positive sizes");
  cuda["steps"][4]["launch"]["block"] = {128, 1, 1};
  EXPECT_EQ(errorOf(cuda), "");
}

TEST(Schedule, MissingDependencyIsARace) {
  json m = splitMatmulManifest();
  // The aggregation no longer waits for the transfer into R0.
  m["steps"][3]["deps"] = {0};
  EXPECT_REJECTS(m, "manifest.steps[3]: touches buffer 'R0' on device 0 as "
                    "step 2 does, one of them writing, but does not depend "
                    "on it");
  // Dependencies count transitively: a chain through step 2 orders 1 and 3.
  json chain = splitMatmulManifest();
  chain["steps"][3]["deps"] = {0, 2};
  EXPECT_EQ(errorOf(chain), "");
}

TEST(Schedule, DisjointRegionsOfOneBufferNeedNoOrder) {
  // Two devices each send one half of a row into device 0's buffer, with no
  // dependency between the two transfers.
  json m = twoHalvesManifest();
  EXPECT_EQ(errorOf(m), "");
  // Overlapping regions do conflict.
  m["steps"][1]["to_offset"] = {0, 1};
  EXPECT_REJECTS(m, "manifest.steps[1]: touches buffer 'Y' on device 0 as "
                    "step 0 does");
}

TEST(Schedule, AliasedBuffersConflict) {
  // T shares its bytes with S: writing T while S is read needs an order.
  json m = manifest(
      1, {1024},
      {buffer("X", 0, 0, type({4, 4})), buffer("S", 0, 256, type({4, 4})),
       buffer("T", 0, 256, type({4, 4})), buffer("Y", 0, 512, type({4, 4}))},
      {layout(type({4, 4}), {block("X", {0, 0})})},
      {layout(type({4, 4}), {block("Y", {0, 0})})},
      {aggregate(0, {"X"}, "S"), aggregate(0, {"S"}, "Y", {0}),
       aggregate(0, {"X"}, "T", {0})});
  EXPECT_REJECTS(m, "manifest.steps[2]: touches bytes of buffer 'T' shared "
                    "with buffer 'S' on device 0 as step 1 does");
  m["steps"][2]["deps"] = {1};
  EXPECT_EQ(errorOf(m), "");
}

TEST(Schedule, InputsStayIntact) {
  // W lies over input buffer A0's bytes.
  json m = splitMatmulManifest();
  m["buffers"].push_back(buffer("W", 0, 0, type({8, 6})));
  m["steps"][3]["output"] = "W";
  EXPECT_REJECTS(m, "manifest.steps[3]: writes buffer 'W', which shares "
                    "bytes with input buffer 'A0' (inputs must survive a "
                    "run so it can be replayed)");
  json direct = splitMatmulManifest();
  direct["steps"][2]["to"] = "B0";
  direct["steps"][2]["extent"] = {2, 6};
  EXPECT_REJECTS(direct, "manifest.steps[2]: writes input buffer 'B0'");
}

TEST(Schedule, ConstantsStayIntact) {
  // C is a constant's block; a step that writes it is refused, one that
  // reads it is fine.
  json m = manifest(1, {1024},
                    {buffer("X", 0, 0, type({4, 4})),
                     buffer("C", 0, 256, type({4, 4})),
                     buffer("Y", 0, 512, type({4, 4}))},
                    {layout(type({4, 4}), {block("X", {0, 0})})},
                    {layout(type({4, 4}), {block("Y", {0, 0})})},
                    {aggregate(0, {"X", "C"}, "Y")});
  json constant = layout(type({4, 4}), {block("C", {0, 0})});
  constant["value"] = "v0";
  m["constants"] = {constant};
  EXPECT_EQ(errorOf(m), "");
  m["steps"][0] = aggregate(0, {"X"}, "C");
  EXPECT_REJECTS(m, "manifest.steps[0]: writes constant buffer 'C' "
                    "(constants are filled once, when the bundle loads)");
  // A constant's entry names its value.
  m["constants"][0].erase("value");
  EXPECT_REJECTS(m, "manifest.constants[0]");
}

TEST(Schedule, InputsDoNotShareBytes) {
  json m = splitMatmulManifest();
  m["buffers"][1]["offset"] = 0; // B0 over A0
  EXPECT_REJECTS(m, "manifest.buffers: input buffers 'A0' and 'B0' share "
                    "bytes on device 0");
}

TEST(Schedule, OutputsAreNotClobbered) {
  // T shares its bytes with the output Y: writing T after Y is produced
  // would change the result, so T's write must come first.
  json m = manifest(1, {768},
                    {buffer("X", 0, 0, type({4, 4})),
                     buffer("Y", 0, 256, type({4, 4})),
                     buffer("T", 0, 256, type({4, 4}))},
                    {layout(type({4, 4}), {block("X", {0, 0})})},
                    {layout(type({4, 4}), {block("Y", {0, 0})})},
                    {aggregate(0, {"X"}, "Y"), aggregate(0, {"X"}, "T", {0})});
  EXPECT_REJECTS(m, "manifest.steps[1]: writes buffer 'T', which shares "
                    "bytes with output buffer 'Y', but does not come before "
                    "step 0, which writes the output");
  // Reusing the output's bytes earlier is fine.
  json earlier = m;
  earlier["steps"] = {aggregate(0, {"X"}, "T"), aggregate(0, {"X"}, "Y", {0})};
  EXPECT_EQ(errorOf(earlier), "");
}

TEST(Bundle, OutputUpdates) {
  // Y = X + X, and Y is the next value of X (a training step's weight).
  json m = manifest(
      1, {512},
      {buffer("X", 0, 0, type({4, 4})), buffer("Y", 0, 256, type({4, 4}))},
      {layout(type({4, 4}), {block("X", {0, 0})})},
      {layout(type({4, 4}), {block("Y", {0, 0})})},
      {aggregate(0, {"X", "X"}, "Y")});
  m["outputs"][0]["updates"] = 0;
  Manifest parsed;
  std::string error;
  ASSERT_TRUE(parseManifest(m.dump(), parsed, error)) << error;
  EXPECT_EQ(parsed.outputs[0].updates, 0);
  EXPECT_EQ(parsed.inputs[0].updates, -1);
  // Written back as read.
  EXPECT_NE(writeManifest(parsed).find("\"updates\": 0"), std::string::npos);
  json missing = m;
  missing["outputs"][0]["updates"] = 1;
  EXPECT_REJECTS(missing, "manifest.outputs[0].updates: names input 1 of 1");
  json negative = m;
  negative["outputs"][0]["updates"] = -1;
  EXPECT_REJECTS(negative, "manifest.outputs[0].updates: names input -1 of 1");
  json text = m;
  text["outputs"][0]["updates"] = "x";
  EXPECT_REJECTS(text, "manifest.outputs[0].updates");
  // Of another type than the input it would replace.
  json other = manifest(1, {512},
                        {buffer("X", 0, 0, type({4, 4})),
                         buffer("Y", 0, 256, type({4, 4}, "bf16"))},
                        {layout(type({4, 4}), {block("X", {0, 0})})},
                        {layout(type({4, 4}, "bf16"), {block("Y", {0, 0})})},
                        {aggregate(0, {"X"}, "Y")});
  other["outputs"][0]["updates"] = 0;
  EXPECT_REJECTS(other, "manifest.outputs[0].updates: the output is bf16 "
                        "[4, 4] but input 0 is f32 [4, 4]");
  // Two outputs cannot both replace one input.
  json twice = manifest(
      1, {768},
      {buffer("X", 0, 0, type({4, 4})), buffer("Y", 0, 256, type({4, 4})),
       buffer("Z", 0, 512, type({4, 4}))},
      {layout(type({4, 4}), {block("X", {0, 0})})},
      {layout(type({4, 4}), {block("Y", {0, 0})}),
       layout(type({4, 4}), {block("Z", {0, 0})})},
      {aggregate(0, {"X", "X"}, "Y"), aggregate(0, {"X"}, "Z")});
  twice["outputs"][0]["updates"] = 0;
  twice["outputs"][1]["updates"] = 0;
  EXPECT_REJECTS(twice, "manifest.outputs[1].updates: input 0 is already "
                        "updated by another output");
  // Inputs do not take the field.
  json onInput = m;
  onInput["inputs"][0]["updates"] = 0;
  EXPECT_REJECTS(onInput, "manifest.inputs[0]");
}

TEST(Bundle, ReviewedRefusals) {
  json m = splitMatmulManifest();
  // An offset near 2^63 must not wrap around the arena check.
  json huge = m;
  huge["buffers"][0]["offset"] = int64_t(9223372036854775552LL);
  EXPECT_REJECTS(huge, "manifest.buffers[0]: bytes [");
  // One buffer cannot hold two blocks of an input.
  json twice = m;
  twice["inputs"][0]["blocks"][1]["buffer"] = "A0";
  EXPECT_REJECTS(twice, "manifest.inputs[0].blocks[1].buffer: buffer 'A0' "
                        "already holds another block");
  // Launch sizes CUDA cannot run.
  json kernel = {{"kind", "kernel"},
                 {"device", 0},
                 {"kernel", "k"},
                 {"args", {{{"buffer", "P0"}, {"access", "readwrite"}}}},
                 {"deps", {3}},
                 {"launch", {{"grid", {1, 70000, 1}}, {"block", {64, 1, 1}}}}};
  json cuda = patched(m, {{"target", "cuda"},
                          {"chip", "sm_90"},
                          {"kernel_libraries", {"kernels/k.cubin"}},
                          {"kernel_library_sha256", {std::string(64, '0')}}});
  cuda["steps"].push_back(kernel);
  EXPECT_REJECTS(cuda, "launch.grid: exceeds CUDA's grid limits");
  cuda["steps"][4]["launch"] = {{"grid", {1, 1, 1}}, {"block", {64, 32, 1}}};
  EXPECT_REJECTS(cuda, "launch.block: exceeds CUDA's block limits");
  // A gemm cuBLASLt cannot compute: f32 operands into bf16.
  json narrow = patched(m, {{"target", "cuda"}, {"chip", "sm_90"}});
  narrow["buffers"][2]["type"]["dtype"] = "bf16";
  narrow["buffers"][3]["type"]["dtype"] = "bf16";
  narrow["outputs"][0]["type"]["dtype"] = "bf16";
  EXPECT_REJECTS(narrow, "cuBLASLt computes f32 operands into f32 or f32, "
                         "not bf16");
  // At most 64 partials in one aggregation.
  json many = m;
  std::vector<std::string> inputs(65, "P0");
  many["steps"][3]["inputs"] = inputs;
  EXPECT_REJECTS(many, "an aggregation combines at most 64 inputs, got 65");
}

TEST(Schedule, AStepDoesNotReadWhatItWritesThroughAnotherBuffer) {
  // Y's bytes start inside X's: a transfer from X to Y would overwrite
  // what it is still reading.
  json m = manifest(
      1, {1024},
      {buffer("X", 0, 0, type({128})), buffer("Y", 0, 256, type({128})),
       buffer("I", 0, 768, type({64}))},
      {layout(type({64}), {block("I", {0})})},
      {layout(type({64}), {block("I", {0})})}, {transfer(0, "X", "Y")});
  EXPECT_REJECTS(m, "manifest.steps[0]: writes bytes it also accesses "
                    "through another buffer ('X' and 'Y' share bytes)");
}
