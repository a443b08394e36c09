//===- IntegrityTest.cpp - Hashes, kernel signatures and the data flow ----===//
//
// What the loader checks beyond the manifest's structure and its races:
// each kernel library's SHA-256, every kernel step against the signature
// of its kernel, and that every element a step reads holds its value.
//
//===----------------------------------------------------------------------===//

#include "BundleBuilder.h"
#include "ein/sha256.h"
#include "ein/signature.h"

#include <gtest/gtest.h>

using namespace ein;
using namespace ein::test;

namespace {

std::string errorOf(const json &m) {
  Manifest manifest;
  std::string error;
  return parseManifest(m.dump(), manifest, error) ? "" : error;
}

Manifest parsed(const json &m) {
  Manifest manifest;
  std::string error;
  EXPECT_TRUE(parseManifest(m.dump(), manifest, error)) << error;
  return manifest;
}

} // namespace

TEST(Sha256, KnownDigests) {
  // FIPS 180-4's examples, and both paddings' edges (55 and 56 bytes).
  EXPECT_EQ(sha256Hex(std::string()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex(std::string("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex(std::string(
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

//===----------------------------------------------------------------------===//
// Kernel signatures
//===----------------------------------------------------------------------===//

namespace {

/// splitMatmulManifest with a kernel on device 0 that reads P0 [8, 6] f32
/// and writes S0 [8, 6] f32, and S0 as the output.
json withKernel() {
  json m = splitMatmulManifest();
  m["buffers"].push_back(buffer("S0", 0, 1024, type({8, 6})));
  m["arena_bytes"][0] = 1280;
  m["outputs"][0]["blocks"][0]["buffer"] = "S0";
  m["kernel_libraries"] = {"kernels/host.so"};
  m["kernel_library_sha256"] = {std::string(64, '0')};
  m["steps"].push_back({{"kind", "kernel"},
                        {"device", 0},
                        {"kernel", "k"},
                        {"args",
                         {{{"buffer", "P0"}, {"access", "read"}},
                          {{"buffer", "S0"}, {"access", "write"}}}},
                        {"deps", {3}}});
  return m;
}

KernelSignatures table(const std::string &text) {
  KernelSignatures signatures;
  std::string error;
  EXPECT_TRUE(parseKernelSignatures(text, signatures, error)) << error;
  return signatures;
}

const char *kTable =
    R"({"format": "ein-kernel-signatures", "kernels": {"k": {"args": [)"
    R"({"dtype": "f32", "shape": [8, 6], "access": "read"},)"
    R"({"dtype": "f32", "shape": [8, 6], "access": "write"}], "scalars": 0}}})";

std::string checkError(const json &m, const KernelSignatures &signatures) {
  std::string error;
  return checkKernelSteps(parsed(m), signatures, error) ? "" : error;
}

} // namespace

TEST(Signatures, TableRoundTrips) {
  KernelSignatures signatures = table(kTable);
  ASSERT_EQ(signatures.count("k"), 1u);
  EXPECT_EQ(signatures["k"].args.size(), 2u);
  EXPECT_EQ(table(writeKernelSignatures(signatures)).at("k").args[1].access,
            Access::Write);
  KernelSignatures scalar = table(
      R"({"format": "ein-kernel-signatures", "kernels": {"relu": {"args": [)"
      R"({"dtype": "bf16", "elements_in_scalar": 0, "access": "readwrite"}],)"
      R"( "scalars": 1}}})");
  EXPECT_EQ(scalar["relu"].args[0].elementsScalar, 0);
  EXPECT_EQ(writeKernelSignatures(table(writeKernelSignatures(scalar))),
            writeKernelSignatures(scalar));
}

TEST(Signatures, MalformedTablesAreErrors) {
  auto error = [](const std::string &text) {
    KernelSignatures s;
    std::string why;
    EXPECT_FALSE(parseKernelSignatures(text, s, why)) << text;
    return why;
  };
  EXPECT_EQ(error("not json"), "the kernel signatures are not valid JSON");
  EXPECT_EQ(error(R"({"format": "other", "kernels": {}})"),
            "signatures.format: expected \"ein-kernel-signatures\"");
  EXPECT_EQ(error(R"({"format": "ein-kernel-signatures", "kernels": {"k": )"
                  R"({"args": [{"dtype": "f32", "access": "read"}], )"
                  R"("scalars": 0}}})"),
            "signatures.kernels.k.args[0]: give either 'shape' or "
            "'elements_in_scalar'");
  EXPECT_EQ(error(R"({"format": "ein-kernel-signatures", "kernels": {"k": )"
                  R"({"args": [{"dtype": "f32", "elements_in_scalar": 1, )"
                  R"("access": "read"}], "scalars": 1}}})"),
            "signatures.kernels.k.args[0].elements_in_scalar: names scalar 1, "
            "but the kernel takes 1");
  EXPECT_EQ(error(R"({"format": "ein-kernel-signatures", "kernels": {"k": )"
                  R"({"args": [{"dtype": "f32", "shape": [0], )"
                  R"("access": "read"}], "scalars": 0}}})"),
            "signatures.kernels.k.args[0].shape: expected positive "
            "dimensions, got [0]");
}

TEST(Signatures, EveryKernelStepMatchesItsKernel) {
  KernelSignatures signatures = table(kTable);
  EXPECT_EQ(checkError(withKernel(), signatures), "");
  // The mutations that found the problem: another kernel's name, the
  // arguments of another kernel, a changed element type.
  json other = withKernel();
  other["steps"][4]["kernel"] = "gelu";
  EXPECT_EQ(checkError(other, signatures),
            "manifest.steps[4] (kernel 'gelu'): no kernel library's "
            "signatures name this kernel");
  json fewer = withKernel();
  fewer["steps"][4]["args"].erase(0);
  EXPECT_EQ(checkError(fewer, signatures),
            "manifest.steps[4] (kernel 'k'): passes 1 buffers and 0 scalars, "
            "but the kernel takes 2 and 0");
  json dtype = withKernel();
  dtype["buffers"][7]["type"]["dtype"] = "f16";
  dtype["outputs"][0]["type"]["dtype"] = "f16";
  EXPECT_EQ(checkError(dtype, signatures),
            "manifest.steps[4] (kernel 'k'), argument 1 (buffer 'S0'): is "
            "f16, but the kernel takes f32");
  json shape = withKernel();
  shape["steps"][4]["args"][0]["buffer"] = "A0";
  EXPECT_EQ(checkError(shape, signatures),
            "manifest.steps[4] (kernel 'k'), argument 0 (buffer 'A0'): is "
            "[8, 2], but the kernel takes [8, 6]");
  // A hidden write: the step says it writes what the kernel only reads
  // (or the reverse, the schedule's checks would miss a write).
  json access = withKernel();
  access["steps"][4]["args"][0]["access"] = "readwrite";
  EXPECT_EQ(checkError(access, signatures),
            "manifest.steps[4] (kernel 'k'), argument 0 (buffer 'P0'): the "
            "step says readwrite, but the kernel's access is read");
}

TEST(Signatures, AScalarCountsAnArgumentsElements) {
  KernelSignatures signatures = table(
      R"({"format": "ein-kernel-signatures", "kernels": {"k": {"args": [)"
      R"({"dtype": "f32", "elements_in_scalar": 0, "access": "read"},)"
      R"({"dtype": "f32", "shape": [8, 6], "access": "write"}], "scalars": 1}}})");
  json m = withKernel();
  m["steps"][4]["scalars"] = {48};
  EXPECT_EQ(checkError(m, signatures), "");
  m["steps"][4]["scalars"] = {49};
  EXPECT_EQ(checkError(m, signatures),
            "manifest.steps[4] (kernel 'k'), argument 0 (buffer 'P0'): the "
            "kernel touches scalars[0] = 49 elements, but the buffer holds 48");
}

//===----------------------------------------------------------------------===//
// Data flow
//===----------------------------------------------------------------------===//

TEST(DataFlow, ADroppedStepLeavesAReadUnwritten) {
  json m = splitMatmulManifest();
  // The gemm on device 1 is gone (and the transfer's dependency on it).
  m["steps"].erase(1);
  m["steps"][1]["deps"] = json::array();
  m["steps"][2]["deps"] = {0, 1};
  EXPECT_EQ(errorOf(m), "manifest.steps[1]: reads elements [0:8, 0:6] of "
                        "buffer 'P1', which no earlier step writes (and no "
                        "input or constant block fills)");
}

TEST(DataFlow, AShrunkTransferLeavesAnOutputPartlyUnwritten) {
  // Two devices each send one half of a row into device 0's output.
  json m = twoHalvesManifest();
  EXPECT_EQ(errorOf(m), "");
  json shrunk = m;
  shrunk["steps"][1]["from_offset"] = {0, 0};
  shrunk["steps"][1]["extent"] = {1, 2};
  EXPECT_EQ(errorOf(shrunk), "manifest.outputs[0]: elements [1:2, 2:4] of its "
                             "block buffer 'Y' are never written");
}

TEST(DataFlow, ABufferMovedOntoLiveBytesIsRefused) {
  // T is written, then U over part of T's bytes, then T is read: every
  // access ordered, so no race, but T's row 32 no longer holds T.
  json m = manifest(
      1, {3584},
      {buffer("X", 0, 0, type({64, 4})), buffer("T", 0, 1024, type({64, 4})),
       buffer("U", 0, 1536, type({2, 2})), buffer("Z", 0, 2304, type({2, 2})),
       buffer("O", 0, 2560, type({64, 4}))},
      {layout(type({64, 4}), {block("X", {0, 0})}),
       layout(type({2, 2}), {block("Z", {0, 0})})},
      {layout(type({64, 4}), {block("O", {0, 0})})},
      {aggregate(0, {"X"}, "T"), aggregate(0, {"Z"}, "U", {0}),
       aggregate(0, {"T"}, "O", {1})});
  EXPECT_EQ(errorOf(m), "manifest.steps[2]: reads elements [32:33, 0:4] of "
                        "buffer 'T', which step 1 overwrote through buffer "
                        "'U' (it shares their bytes) after they were written");
  // Elsewhere, U takes nothing from T.
  json apart = m;
  apart["buffers"][2]["offset"] = 2048;
  EXPECT_EQ(errorOf(apart), "");
  // Written again after U, T holds its value again.
  json again = m;
  again["steps"][2] = aggregate(0, {"X"}, "T", {1});
  again["steps"].push_back(aggregate(0, {"T"}, "O", {2}));
  EXPECT_EQ(errorOf(again), "");
}

TEST(DataFlow, DataMovedForNothingIsRefused) {
  // The aggregation that sums device 1's partial into the output is gone:
  // every byte read is written, but the transfer of the partial feeds
  // nothing, and the output holds half the sum.
  json m = splitMatmulManifest();
  m["steps"].erase(3);
  EXPECT_EQ(errorOf(m), "manifest.steps[2]: writes elements [0:8, 0:6] of "
                        "buffer 'R0', which no later step reads before the "
                        "run ends (a step that reads them is missing)");
}

TEST(DataFlow, AViewIsItsBuffersValue) {
  // Y is written as [4, 4] and read as its reshape V, [2, 8].
  json m = manifest(
      1, {768},
      {buffer("X", 0, 0, type({4, 4})), buffer("Y", 0, 256, type({4, 4})),
       buffer("V", 0, 256, type({2, 8})), buffer("O", 0, 512, type({2, 8}))},
      {layout(type({4, 4}), {block("X", {0, 0})})},
      {layout(type({2, 8}), {block("O", {0, 0})})},
      {aggregate(0, {"X"}, "Y"), aggregate(0, {"V"}, "O", {0})});
  // Without saying so, V is another value over Y's bytes, never written.
  EXPECT_EQ(errorOf(m), "manifest.steps[1]: reads elements [0:2, 0:8] of "
                        "buffer 'V', which no earlier step writes (and no "
                        "input or constant block fills)");
  m["buffers"][2]["view_of"] = "Y";
  EXPECT_EQ(errorOf(m), "");
  // Half of Y written (through a transfer of rows 0..2) is half of V.
  json half = manifest(
      2, {768, 256},
      {buffer("X", 0, 0, type({4, 4})), buffer("Y", 0, 256, type({4, 4})),
       buffer("V", 0, 256, type({2, 8})), buffer("O", 0, 512, type({2, 8})),
       buffer("X1", 1, 0, type({4, 4}))},
      {layout(type({4, 4}), {block("X", {0, 0}), block("X1", {0, 0})})},
      {layout(type({2, 8}), {block("O", {0, 0})})},
      {transfer(1, "X1", "Y"), aggregate(0, {"V"}, "O", {0})});
  half["buffers"][2]["view_of"] = "Y";
  half["steps"][0]["from_offset"] = {0, 0};
  half["steps"][0]["to_offset"] = {0, 0};
  half["steps"][0]["extent"] = {2, 4};
  EXPECT_EQ(errorOf(half), "manifest.steps[1]: reads elements [2:4, 0:4] of "
                           "buffer 'V' (a view of 'Y', in whose elements this "
                           "is), which no earlier step writes (and no input "
                           "or constant block fills)");
  half["steps"][0]["extent"] = {4, 4};
  EXPECT_EQ(errorOf(half), "");
}

TEST(DataFlow, ViewsOfRowsAreTheirBuffersRows) {
  // Y [4, 64] is assembled in place: its rows 0..2 written through the view
  // A, rows 2..4 through B (512 bytes in), each a copy of X's rows; the sum
  // reads Y whole.
  json m = manifest(
      1, {4096},
      {buffer("X", 0, 0, type({4, 64})), buffer("Y", 0, 1024, type({4, 64})),
       buffer("A", 0, 1024, type({2, 64})), buffer("B", 0, 1536, type({2, 64})),
       buffer("O", 0, 2048, type({4, 64}))},
      {layout(type({4, 64}), {block("X", {0, 0})})},
      {layout(type({4, 64}), {block("O", {0, 0})})},
      {transfer(0, "X", "A"), transfer(0, "X", "B"),
       aggregate(0, {"Y"}, "O", {0, 1})});
  m["buffers"][2]["view_of"] = "Y";
  m["buffers"][3]["view_of"] = "Y";
  for (int s = 0; s < 2; ++s) {
    m["steps"][s]["from_offset"] = {2 * s, 0};
    m["steps"][s]["to_offset"] = {0, 0};
    m["steps"][s]["extent"] = {2, 64};
  }
  EXPECT_EQ(errorOf(m), "");
  // Without B's rows, Y's rows 2..4 hold nothing.
  json half = m;
  half["steps"].erase(1);
  half["steps"][1]["deps"] = {0};
  EXPECT_EQ(errorOf(half), "manifest.steps[1]: reads elements [2:4, 0:64] of "
                           "buffer 'Y', which no earlier step writes (and no "
                           "input or constant block fills)");
  // The two halves unordered with the sum are a race.
  json racing = m;
  racing["steps"][2]["deps"] = {0};
  EXPECT_NE(errorOf(racing).find("does not depend on it"), std::string::npos);
}

TEST(DataFlow, AnInputViewFillsItsRowsOnly) {
  // The input block A is rows 0..2 of Y: reading Y whole reads rows 2..4,
  // which nothing fills.
  json m = manifest(1, {4096},
                    {buffer("A", 0, 1024, type({2, 64})),
                     buffer("Y", 0, 1024, type({4, 64})),
                     buffer("O", 0, 2048, type({4, 64}))},
                    {layout(type({2, 64}), {block("A", {0, 0})})},
                    {layout(type({4, 64}), {block("O", {0, 0})})},
                    {aggregate(0, {"Y"}, "O")});
  m["buffers"][0]["view_of"] = "Y";
  EXPECT_EQ(errorOf(m), "manifest.steps[0]: reads elements [2:4, 0:64] of "
                        "buffer 'Y', which no earlier step writes (and no "
                        "input or constant block fills)");
}

TEST(DataFlow, AnOutputAssembledInPlace) {
  // The output Y [4, 64]: rows 0..2 written through its view A, rows 2..4
  // into Y itself, by steps that do not wait for each other.
  json m = manifest(1, {4096},
                    {buffer("X", 0, 0, type({4, 64})),
                     buffer("A", 0, 1024, type({2, 64})),
                     buffer("Y", 0, 1024, type({4, 64}))},
                    {layout(type({4, 64}), {block("X", {0, 0})})},
                    {layout(type({4, 64}), {block("Y", {0, 0})})},
                    {transfer(0, "X", "A"), transfer(0, "X", "Y")});
  m["buffers"][1]["view_of"] = "Y";
  m["steps"][0]["from_offset"] = {0, 0};
  m["steps"][0]["to_offset"] = {0, 0};
  m["steps"][0]["extent"] = {2, 64};
  m["steps"][1]["from_offset"] = {2, 0};
  m["steps"][1]["to_offset"] = {2, 0};
  m["steps"][1]["extent"] = {2, 64};
  EXPECT_EQ(errorOf(m), "");
  // A buffer that is no view of Y over the same bytes is another value: its
  // write must come before Y's writers.
  json other = m;
  other["buffers"][1].erase("view_of");
  EXPECT_NE(errorOf(other).find("shares bytes with output buffer 'Y'"),
            std::string::npos);
}

TEST(DataFlow, AViewHoldsItsBuffersBytes) {
  json m = manifest(
      1, {768},
      {buffer("X", 0, 0, type({4, 4})), buffer("Y", 0, 256, type({4, 4})),
       buffer("V", 0, 256, type({2, 8}))},
      {layout(type({4, 4}), {block("X", {0, 0})})},
      {layout(type({4, 4}), {block("Y", {0, 0})})}, {aggregate(0, {"X"}, "Y")});
  json moved = m;
  moved["buffers"][2]["view_of"] = "Y";
  moved["buffers"][2]["offset"] = 512;
  EXPECT_EQ(errorOf(moved),
            "manifest.buffers[2].view_of: a view holds bytes of the buffer it "
            "views: the same device and element type as 'Y', its bytes within "
            "that buffer's");
  // A run of rows inside Y is a view of them; one past Y's end is not.
  json rows = m;
  rows["buffers"][2] = buffer("V", 0, 256, type({2, 4}));
  rows["buffers"][2]["view_of"] = "Y";
  EXPECT_EQ(errorOf(rows), "");
  rows["buffers"][2]["type"] = type({5, 4});
  EXPECT_NE(errorOf(rows).find("its bytes within that buffer's"),
            std::string::npos);
  json retyped = m;
  retyped["buffers"][2] = buffer("V", 0, 256, type({16}, "bf16"));
  retyped["buffers"][2]["view_of"] = "Y";
  EXPECT_NE(errorOf(retyped).find("the same device and element type"),
            std::string::npos);
  json chain = m;
  chain["buffers"][2]["view_of"] = "Y";
  chain["buffers"].push_back(buffer("W", 0, 256, type({16})));
  chain["buffers"][3]["view_of"] = "V";
  EXPECT_EQ(errorOf(chain), "manifest.buffers[3].view_of: buffer 'V' is "
                            "itself a view; name the buffer it views");
  // A view may come before the buffer it views (a part assembled in place
  // is made before the whole); a name no buffer has is refused, and so is a
  // buffer viewing itself.
  json later = m;
  later["buffers"][1]["view_of"] = "V";
  EXPECT_EQ(errorOf(later), "");
  json absent = m;
  absent["buffers"][1]["view_of"] = "Z";
  EXPECT_EQ(errorOf(absent),
            "manifest.buffers[1].view_of: no buffer is named 'Z'");
  json itself = m;
  itself["buffers"][1]["view_of"] = "Y";
  EXPECT_EQ(errorOf(itself), "manifest.buffers[1].view_of: buffer 'Y' is "
                             "itself a view; name the buffer it views");
}

namespace {

/// Y [4, 64] f32 written from X, and V, a view of Y (its rows 0..2, [2, 64],
/// as the test sets it) read by a transfer of its rows 0..2 into O [2, 64],
/// the output.
json viewedRows(json viewType, int64_t viewOffset = 1024) {
  json m = manifest(1, {4096},
                    {buffer("X", 0, 0, type({4, 64})),
                     buffer("Y", 0, 1024, type({4, 64})),
                     buffer("V", 0, viewOffset, viewType),
                     buffer("O", 0, 2048, type({2, 64}))},
                    {layout(type({4, 64}), {block("X", {0, 0})})},
                    {layout(type({2, 64}), {block("O", {0, 0})})},
                    {aggregate(0, {"X"}, "Y"), transfer(0, "V", "O", {0})});
  m["buffers"][2]["view_of"] = "Y";
  m["steps"][1]["from_offset"] = {0, 0};
  m["steps"][1]["to_offset"] = {0, 0};
  m["steps"][1]["extent"] = {2, 64};
  return m;
}

} // namespace

TEST(DataFlow, AViewsShapeIsARunOfItsBuffersRows) {
  // Rows 0..2 of Y, rows 1..3, and Y's reshapes are views of it.
  EXPECT_EQ(errorOf(viewedRows(type({2, 64}))), "");
  EXPECT_EQ(errorOf(viewedRows(type({2, 64}), 1280)), "");
  json reshaped = viewedRows(type({2, 2, 64}));
  reshaped["steps"][1]["from_offset"] = {0, 0, 0};
  reshaped["steps"][1]["extent"] = {1, 2, 64};
  reshaped["steps"][1]["to_offset"] = {0, 0, 0};
  reshaped["buffers"][3]["type"] = type({1, 2, 64});
  reshaped["outputs"][0] = layout(type({1, 2, 64}), {block("O", {0, 0, 0})});
  EXPECT_EQ(errorOf(reshaped), "");
  json whole = viewedRows(type({8, 32}));
  whole["steps"][1]["extent"] = {2, 32};
  whole["buffers"][3]["type"] = type({2, 32});
  whole["outputs"][0] = layout(type({2, 32}), {block("O", {0, 0})});
  EXPECT_EQ(errorOf(whole), "");
  // Part of one row (a run of one row's elements) is a run of rows too.
  json part = viewedRows(type({1, 32}), 1280);
  part["steps"][1]["extent"] = {1, 32};
  part["buffers"][3]["type"] = type({1, 32});
  part["outputs"][0] = layout(type({1, 32}), {block("O", {0, 0})});
  EXPECT_EQ(errorOf(part), "");
}

TEST(DataFlow, AViewOneColumnWiderIsRefused) {
  // [2, 65] over rows of 64: its second row would start one element into
  // Y's second row, and the transfer would read the wrong elements.
  EXPECT_EQ(
      errorOf(viewedRows(type({2, 65}))),
      "manifest.buffers[2].type: view 'V' ([2, 65] f32) holds elements "
      "[0, 130) of 'Y' ([4, 64] f32): a view holds all of its buffer's "
      "elements (a reshape), a run of its rows (whole rows of one of "
      "its dimensions), its last dimensions one such row, or whole rows of "
      "its last dimension in any shape");
}

TEST(DataFlow, AViewOneColumnNarrowerIsRefused) {
  // [2, 63] over rows of 64, read whole: its second row would be the last
  // element of Y's row 1 and most of row 2.
  json m = viewedRows(type({2, 63}), 1280);
  m["steps"][1]["extent"] = {2, 63};
  m["buffers"][3]["type"] = type({2, 63});
  m["outputs"][0] = layout(type({2, 63}), {block("O", {0, 0})});
  EXPECT_EQ(
      errorOf(m),
      "manifest.buffers[2].type: view 'V' ([2, 63] f32) holds elements "
      "[64, 190) of 'Y' ([4, 64] f32): a view holds all of its buffer's "
      "elements (a reshape), a run of its rows (whole rows of one of "
      "its dimensions), its last dimensions one such row, or whole rows of "
      "its last dimension in any shape");
}

TEST(DataFlow, AViewOfWholeRowsMayTakeAnyShape) {
  // Rows 0..2 of Y [4, 64] are 128 elements: read as [2, 2, 32] or as
  // [4, 32] they are whole rows of Y, mapped one to one; [4, 31] is not.
  // Nor is [15, 4, 15] of Y [16, 64] (900 elements, no whole rows), while
  // [16, 4, 15] (960: 15 rows of 64) and [16, 4, 16] are.
  json m = manifest(1, {8192},
                    {buffer("X", 0, 0, type({4, 64})),
                     buffer("Y", 0, 1024, type({4, 64})),
                     buffer("V", 0, 1024, type({2, 2, 32}))},
                    {layout(type({4, 64}), {block("X", {0, 0})})},
                    {layout(type({4, 64}), {block("Y", {0, 0})})},
                    {aggregate(0, {"X"}, "Y")});
  m["buffers"][2]["view_of"] = "Y";
  EXPECT_EQ(errorOf(m), "");
  m["buffers"][2]["type"] = type({4, 32});
  EXPECT_EQ(errorOf(m), "");
  m["buffers"][2]["type"] = type({4, 31});
  EXPECT_EQ(
      errorOf(m),
      "manifest.buffers[2].type: view 'V' ([4, 31] f32) holds elements "
      "[0, 124) of 'Y' ([4, 64] f32): a view holds all of its buffer's "
      "elements (a reshape), a run of its rows (whole rows of one of "
      "its dimensions), its last dimensions one such row, or whole rows of "
      "its last dimension in any shape");
  json tall = manifest(1, {16384},
                       {buffer("X", 0, 0, type({16, 64})),
                        buffer("Y", 0, 4096, type({16, 64})),
                        buffer("V", 0, 4096, type({15, 4, 15}))},
                       {layout(type({16, 64}), {block("X", {0, 0})})},
                       {layout(type({16, 64}), {block("Y", {0, 0})})},
                       {aggregate(0, {"X"}, "Y")});
  tall["buffers"][2]["view_of"] = "Y";
  EXPECT_NE(errorOf(tall).find("view 'V' ([15, 4, 15] f32) holds elements "
                               "[0, 900) of 'Y' ([16, 64] f32)"),
            std::string::npos);
  tall["buffers"][2]["type"] = type({16, 4, 15});
  EXPECT_EQ(errorOf(tall), "");
  tall["buffers"][2]["type"] = type({16, 4, 16});
  EXPECT_EQ(errorOf(tall), "");
}

TEST(DataFlow, AViewOfWholeLastRowsMaySpanRowsBefore) {
  // [96] and [3, 32] of Y [2, 8, 8]: twelve rows of 8, across Y's first
  // index (a part assembled in place, as multi-head attention's projections
  // on 4 GPUs make); [95] is no whole rows.
  json m = manifest(1, {8192},
                    {buffer("X", 0, 0, type({2, 8, 8})),
                     buffer("Y", 0, 1024, type({2, 8, 8})),
                     buffer("V", 0, 1024, type({96}))},
                    {layout(type({2, 8, 8}), {block("X", {0, 0, 0})})},
                    {layout(type({2, 8, 8}), {block("Y", {0, 0, 0})})},
                    {aggregate(0, {"X"}, "Y")});
  m["buffers"][2]["view_of"] = "Y";
  EXPECT_EQ(errorOf(m), "");
  m["buffers"][2]["type"] = type({3, 32});
  EXPECT_EQ(errorOf(m), "");
  m["buffers"][2]["type"] = type({95});
  EXPECT_NE(errorOf(m).find("view 'V' ([95] f32) holds elements [0, 95) of "
                            "'Y' ([2, 8, 8] f32)"),
            std::string::npos);
}

TEST(DataFlow, AScalarViewOfMoreThanOneElementIsRefused) {
  // A scalar read as Y's first element once crashed the data-flow check.
  json m = viewedRows(type({}));
  m["buffers"][3]["type"] = type({});
  m["steps"][1] = aggregate(0, {"V"}, "O", {0});
  m["outputs"][0] = layout(type({}), {block("O", {})});
  EXPECT_EQ(errorOf(m), "manifest.buffers[2].type: view 'V' ([] f32) is a "
                        "scalar, but 'Y' ([4, 64] f32) holds 256 elements: a "
                        "scalar view is a reshape of a buffer of one element");
  // Of a buffer of one element it is its reshape.
  json one = manifest(
      1, {1024},
      {buffer("X", 0, 0, type({1, 1})), buffer("Y", 0, 256, type({1, 1})),
       buffer("V", 0, 256, type({})), buffer("O", 0, 512, type({}))},
      {layout(type({1, 1}), {block("X", {0, 0})})},
      {layout(type({}), {block("O", {})})},
      {aggregate(0, {"X"}, "Y"), aggregate(0, {"V"}, "O", {0})});
  one["buffers"][2]["view_of"] = "Y";
  EXPECT_EQ(errorOf(one), "");
}

TEST(DataFlow, AViewOfAnotherElementTypeIsRefused) {
  for (const char *dtype : {"f16", "bf16", "f64", "i32"})
    EXPECT_EQ(errorOf(viewedRows(type({2, 64}, dtype))),
              "manifest.buffers[2].view_of: a view holds bytes of the buffer "
              "it views: the same device and element type as 'Y', its bytes "
              "within that buffer's")
        << dtype;
}

TEST(DataFlow, ViewsMadeInCodeAreCheckedToo) {
  // checkDataFlow on a manifest built as a struct (no reader): the same
  // refusal, not a crash.
  Manifest m = parsed(viewedRows(type({2, 64})));
  m.buffers[2].type.shape = {};
  std::string error;
  EXPECT_FALSE(checkDataFlow(m, error));
  EXPECT_EQ(error, "manifest.buffers[2].type: view 'V' ([] f32) is a scalar, "
                   "but 'Y' ([4, 64] f32) holds 256 elements: a scalar view "
                   "is a reshape of a buffer of one element");
}
