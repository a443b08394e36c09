//===- RuntimeTest.cpp - The C API over the CPU backend -------------------===//
//
// Bundles written here run through the public C API; their outputs are
// checked against the reference evaluator or against products computed in
// the test.
//
//===----------------------------------------------------------------------===//

#include "ein/runtime.h"
#include "../lib/ranks.h"
#include "BundleBuilder.h"
#include "ein/check.h"
#include "ein/eval.h"
#include "ein/partition.h"
#include "ein/region.h"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>

#include <sys/wait.h>
#include <unistd.h>

using namespace ein;
using namespace ein::test;

namespace {

struct BundleDeleter {
  void operator()(ein_bundle *b) const { ein_bundle_free(b); }
};
using BundlePtr = std::unique_ptr<ein_bundle, BundleDeleter>;

BundlePtr load(const TempBundle &dir, bool debug = false) {
  ein_load_options options = {};
  options.debug = debug;
  ein_bundle *b = nullptr;
  EXPECT_EQ(ein_bundle_load(dir.path.c_str(), &options, &b), EIN_OK)
      << ein_last_error();
  return BundlePtr(b);
}

std::string loadError(const TempBundle &dir) {
  ein_bundle *b = nullptr;
  EXPECT_EQ(ein_bundle_load(dir.path.c_str(), nullptr, &b), EIN_ERROR);
  EXPECT_EQ(b, nullptr);
  return ein_last_error();
}

/// Sets every input from the seed, runs, and returns the outputs together
/// with the inputs used.
std::vector<HostTensor> runSeeded(ein_bundle *b, const Program &program,
                                  std::vector<HostTensor> &inputs) {
  inputs.clear();
  for (size_t i = 0; i < program.arguments.size(); ++i) {
    inputs.push_back(randomInput(program.arguments[i].type, 7, int(i)));
    std::vector<unsigned char> bytes = tensorBytes(inputs.back());
    EXPECT_EQ(ein_bundle_set_input(b, int(i), bytes.data(), bytes.size()),
              EIN_OK)
        << ein_last_error();
  }
  EXPECT_EQ(ein_bundle_run(b), EIN_OK) << ein_last_error();
  std::vector<HostTensor> outputs;
  for (int i = 0; i < ein_bundle_num_outputs(b); ++i) {
    ein_tensor_info info;
    EXPECT_EQ(ein_bundle_output_info(b, i, &info), EIN_OK);
    std::vector<unsigned char> bytes(info.bytes);
    EXPECT_EQ(ein_bundle_get_output(b, i, bytes.data(), bytes.size()), EIN_OK)
        << ein_last_error();
    DType type = *parseDType(info.dtype);
    outputs.push_back(
        {type, std::vector<int64_t>(info.shape, info.shape + info.rank),
         tensorValues(type, bytes.data(), bytes.size() / dtypeBytes(type))});
  }
  return outputs;
}

/// Runs a loaded bundle on seeded inputs and returns its worst relative
/// error against the reference evaluator.
double errorAgainstReference(ein_bundle *b, const json &programJson) {
  Program program;
  std::string error;
  EXPECT_TRUE(parseProgram(programJson.dump(), program, error)) << error;
  std::vector<HostTensor> inputs, reference;
  std::vector<HostTensor> outputs = runSeeded(b, program, inputs);
  EXPECT_TRUE(evaluate(program, inputs, reference, error)) << error;
  double worst = 0;
  for (size_t i = 0; i < outputs.size(); ++i)
    worst = std::max(worst, maxRelativeError(outputs[i], reference[i]));
  return worst;
}

/// The same for the bundle in `dir`, loaded.
double errorAgainstReference(const TempBundle &dir, const json &programJson,
                             bool debug = false) {
  BundlePtr b = load(dir, debug);
  if (!b)
    return INFINITY;
  return errorAgainstReference(b.get(), programJson);
}

/// `m` for `target`: the chip of a CUDA bundle is the test machines' H200.
json retarget(json m, const std::string &target) {
  m["target"] = target;
  m["chip"] = target == "cuda" ? "sm_90" : "host";
  return m;
}

/// Why this machine cannot run CUDA bundles ("" when it can): the error of
/// loading a one-device CUDA bundle, computed once.
const std::string &cudaUnavailable() {
  static const std::string why = [] {
    json m = manifest(1, {256}, {buffer("X", 0, 0, type({4}))},
                      {layout(type({4}), {block("X", {0})})},
                      {layout(type({4}), {block("X", {0})})}, {});
    json p = program({argument("x", type({4}))}, {}, {"x"});
    TempBundle dir(retarget(m, "cuda"), p);
    ein_bundle *b = nullptr;
    if (ein_bundle_load(dir.path.c_str(), nullptr, &b) != EIN_OK)
      return std::string(ein_last_error());
    ein_bundle_free(b);
    return std::string();
  }();
  return why;
}

/// Whether this machine runs `devices`-GPU CUDA bundles: false where
/// loading one says the machine has fewer GPUs.
bool cudaRunsDevices(int devices) {
  std::vector<json> buffers;
  json blocks = json::array();
  for (int d = 0; d < devices; ++d)
    buffers.push_back(buffer("X" + std::to_string(d), d, 0, type({4})));
  json m = manifest(devices, std::vector<int64_t>(devices, 256), buffers,
                    {layout(type({4}), {block("X0", {0})})},
                    {layout(type({4}), {block("X0", {0})})}, {});
  json p = program({argument("x", type({4}))}, {}, {"x"});
  TempBundle dir(retarget(m, "cuda"), p);
  ein_bundle *b = nullptr;
  if (ein_bundle_load(dir.path.c_str(), nullptr, &b) == EIN_OK) {
    ein_bundle_free(b);
    return true;
  }
  return std::string(ein_last_error()).find("the bundle needs") ==
         std::string::npos;
}

/// In a test of OnEachTarget: its CUDA run skips where the machine has fewer
/// than `n` GPUs (the one-GPU machine), saying so.
#define SKIP_CUDA_WITHOUT_GPUS(n)                                              \
  if (GetParam() == "cuda" && !cudaRunsDevices(n))                             \
  GTEST_SKIP() << "the CUDA run needs " << (n) << " GPUs"

/// Tests that run on the CPU backend and, where a GPU is usable, on CUDA.
class OnEachTarget : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    if (GetParam() == "cuda" && !cudaUnavailable().empty())
      GTEST_SKIP() << "CUDA bundles cannot run here: " << cudaUnavailable();
  }
  json on(json m) const { return retarget(std::move(m), GetParam()); }
};

} // namespace

INSTANTIATE_TEST_SUITE_P(Targets, OnEachTarget,
                         ::testing::Values("cpu", "cuda"));

TEST_P(OnEachTarget, SplitMatmulMatchesTheReference) {
  SKIP_CUDA_WITHOUT_GPUS(2);
  TempBundle dir(on(splitMatmulManifest()), matmulProgram({8, 4}, {4, 6}));
  EXPECT_LT(errorAgainstReference(dir, matmulProgram({8, 4}, {4, 6})), 1e-6);
  EXPECT_LT(errorAgainstReference(dir, matmulProgram({8, 4}, {4, 6}),
                                  /*debug=*/true),
            1e-6);
}

TEST_P(OnEachTarget, AReadOfWhatNothingWroteIsRefusedAtLoad) {
  // The transfer into R0 is gone: the sum would read whatever the arena
  // holds. The data-flow check refuses the bundle before anything runs.
  json m = splitMatmulManifest();
  m["steps"].erase(2);
  m["steps"][2]["deps"] = {0};
  TempBundle dir(on(m), matmulProgram({8, 4}, {4, 6}));
  EXPECT_NE(loadError(dir).find("manifest.steps[2]: reads elements [0:8, 0:6] "
                                "of buffer 'R0', which no earlier step "
                                "writes"),
            std::string::npos)
      << loadError(dir);
}

TEST_P(OnEachTarget, MemoryIsTheArenaPlusWorkspaces) {
  SKIP_CUDA_WITHOUT_GPUS(2);
  json m = splitMatmulManifest();
  TempBundle dir(on(m), matmulProgram({8, 4}, {4, 6}));
  BundlePtr b = load(dir);
  ASSERT_TRUE(b);
  for (int d = 0; d < 2; ++d) {
    ein_memory_info memory;
    ASSERT_EQ(ein_bundle_memory(b.get(), d, &memory), EIN_OK);
    size_t arena = m["arena_bytes"][d].get<size_t>();
    if (GetParam() == "cpu") {
      EXPECT_EQ(memory.planned, arena);
      EXPECT_EQ(memory.measured, 0u);
    } else {
      // Each device runs a gemm: its arena plus a cuBLASLt workspace. The
      // driver hands out whole pages, so the device loses at least that.
      EXPECT_GT(memory.planned, arena);
      EXPECT_GE(memory.measured, memory.planned);
    }
  }
}

TEST_P(OnEachTarget, ProfileTimesEveryStepOfARealRun) {
  SKIP_CUDA_WITHOUT_GPUS(2);
  TempBundle dir(on(splitMatmulManifest()), matmulProgram({8, 4}, {4, 6}));
  BundlePtr b = load(dir);
  ASSERT_TRUE(b);
  ASSERT_EQ(ein_bundle_num_steps(b.get()), 4);
  const char *kinds[] = {"gemm", "gemm", "transfer", "aggregate"};
  int devices[] = {0, 1, 1, 0};
  for (int i = 0; i < 4; ++i) {
    ein_step_info info;
    ASSERT_EQ(ein_bundle_step_info(b.get(), i, &info), EIN_OK);
    EXPECT_STREQ(info.kind, kinds[i]);
    EXPECT_EQ(info.device, devices[i]);
  }
  std::vector<float> a(32, 1.0f), bIn(24, 2.0f), c(48, 0.0f);
  ASSERT_EQ(ein_bundle_set_input(b.get(), 0, a.data(), 128), EIN_OK);
  ASSERT_EQ(ein_bundle_set_input(b.get(), 1, bIn.data(), 96), EIN_OK);
  std::vector<double> ms(4, -1);
  ASSERT_EQ(ein_bundle_profile(b.get(), ms.data(), ms.size()), EIN_OK)
      << ein_last_error();
  for (double x : ms)
    EXPECT_GE(x, 0);
  // The timeline: each step within the run, after every step it waits for
  // on its own device's lane, none of one lane overlapping another.
  std::vector<double> start(4, -1), end(4, -1);
  std::vector<int> lane(4, -1);
  ASSERT_EQ(ein_bundle_profile_timeline(b.get(), start.data(), end.data(),
                                        lane.data(), 4),
            EIN_OK)
      << ein_last_error();
  for (int i = 0; i < 4; ++i) {
    EXPECT_GE(start[i], 0);
    EXPECT_GE(end[i], start[i]);
    EXPECT_TRUE(lane[i] == 0 || lane[i] == 1);
    for (int j = 0; j < i; ++j)
      if (devices[j] == devices[i] && lane[j] == lane[i])
        EXPECT_LE(end[j], start[i] + 1e-3) << "steps " << j << " and " << i;
  }
  std::vector<int> fewer(3);
  EXPECT_EQ(ein_bundle_profile_timeline(b.get(), start.data(), end.data(),
                                        fewer.data(), 3),
            EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "ein_bundle_profile_timeline: needs room "
                                 "for the bundle's 4 steps, got 3");
  // The profiled run is a run: its outputs are the step's.
  ASSERT_EQ(ein_bundle_get_output(b.get(), 0, c.data(), 192), EIN_OK);
  for (float x : c)
    EXPECT_EQ(x, 8.0f);
}

TEST_P(OnEachTarget, ProfileOnOneDevice) {
  // C = A B, then C copied into D: the copy waits for the gemm. On CUDA the
  // schedule is issued behind a gate (each step's time the GPU's alone);
  // the run still computes the step's outputs.
  json m = manifest(
      1, {1024},
      {buffer("A", 0, 0, type({8, 4})), buffer("B", 0, 256, type({4, 6})),
       buffer("C", 0, 512, type({8, 6})), buffer("D", 0, 768, type({8, 6}))},
      {layout(type({8, 4}), {block("A", {0, 0})}),
       layout(type({4, 6}), {block("B", {0, 0})})},
      {layout(type({8, 6}), {block("D", {0, 0})})},
      {gemm(0, "A", "B", "C"), transfer(0, "C", "D", {0})});
  TempBundle dir(on(m), matmulProgram({8, 4}, {4, 6}));
  BundlePtr b = load(dir);
  ASSERT_TRUE(b);
  std::vector<float> a(32, 1.0f), bIn(24, 2.0f), d(48, 0.0f);
  ASSERT_EQ(ein_bundle_set_input(b.get(), 0, a.data(), 128), EIN_OK);
  ASSERT_EQ(ein_bundle_set_input(b.get(), 1, bIn.data(), 96), EIN_OK);
  for (int round = 0; round < 2; ++round) {
    std::vector<double> start(2, -1), end(2, -1);
    std::vector<int> lane(2, -1);
    ASSERT_EQ(ein_bundle_profile_timeline(b.get(), start.data(), end.data(),
                                          lane.data(), 2),
              EIN_OK)
        << ein_last_error();
    for (int i = 0; i < 2; ++i) {
      EXPECT_GE(start[i], 0);
      EXPECT_GE(end[i], start[i]);
    }
    EXPECT_GE(start[1] + 1e-3, end[0]);
    ASSERT_EQ(ein_bundle_get_output(b.get(), 0, d.data(), 192), EIN_OK);
    for (float x : d)
      EXPECT_EQ(x, 8.0f);
  }
}

TEST_P(OnEachTarget, UnevenBlocksGatherFromEveryDevice) {
  SKIP_CUDA_WITHOUT_GPUS(2);
  // C[5x3] = A[5x2] B[2x3] with rows cut 3, 2 over two devices and B
  // replicated; the output stays where it was computed.
  std::vector<json> buffers, aBlocks, bBlocks, cBlocks, steps;
  int64_t rows[2] = {3, 2}, first = 0;
  for (int d = 0; d < 2; ++d) {
    std::string n = std::to_string(d);
    buffers.push_back(buffer("A" + n, d, 0, type({rows[d], 2})));
    buffers.push_back(buffer("B" + n, d, 256, type({2, 3})));
    buffers.push_back(buffer("C" + n, d, 512, type({rows[d], 3})));
    aBlocks.push_back(block("A" + n, {first, 0}));
    bBlocks.push_back(block("B" + n, {0, 0}));
    cBlocks.push_back(block("C" + n, {first, 0}));
    steps.push_back(gemm(d, "A" + n, "B" + n, "C" + n));
    first += rows[d];
  }
  json m =
      manifest(2, {768, 768}, buffers,
               {layout(type({5, 2}), aBlocks), layout(type({2, 3}), bBlocks)},
               {layout(type({5, 3}), cBlocks)}, steps);
  json p = matmulProgram({5, 2}, {2, 3});
  TempBundle dir(on(m), p);
  EXPECT_LT(errorAgainstReference(dir, p, /*debug=*/true), 1e-6);
}

TEST_P(OnEachTarget, CarryMovesUpdatedOutputsIntoTheirInputs) {
  SKIP_CUDA_WITHOUT_GPUS(2);
  // X[4x6] is cut by rows over two devices (rows 0..3 on device 0, 3..4 on
  // device 1) and also held whole on device 1 (XR, read by Z = XR). Y = X +
  // X per device is X's next value: carrying it fills X0 and X1 from the
  // block on their device and XR from both devices' blocks.
  json m = manifest(
      2, {512, 1024},
      {buffer("X0", 0, 0, type({3, 6})), buffer("Y0", 0, 256, type({3, 6})),
       buffer("X1", 1, 0, type({1, 6})), buffer("Y1", 1, 256, type({1, 6})),
       buffer("XR", 1, 512, type({4, 6})), buffer("Z", 1, 768, type({4, 6}))},
      {layout(type({4, 6}),
              {block("X0", {0, 0}), block("X1", {3, 0}), block("XR", {0, 0})})},
      {layout(type({4, 6}), {block("Y0", {0, 0}), block("Y1", {3, 0})}),
       layout(type({4, 6}), {block("Z", {0, 0})})},
      {aggregate(0, {"X0", "X0"}, "Y0"), aggregate(1, {"X1", "X1"}, "Y1"),
       aggregate(1, {"XR"}, "Z")});
  m["outputs"][0]["updates"] = 0;
  json p =
      program({argument("x", type({4, 6}))},
              {joinAgg("y", type({4, 6}), {"x", "x"}, {{0, 1}, {0, 1}}, {0, 1},
                       "none", "arith.addf"),
               joinAgg("z", type({4, 6}), {"x"}, {{0, 1}}, {0, 1}, "none")},
              {"y", "z"});
  TempBundle dir(on(m), p);
  BundlePtr b = load(dir, /*debug=*/true);
  ASSERT_TRUE(b);
  int updates = -2;
  ASSERT_EQ(ein_bundle_output_updates(b.get(), 0, &updates), EIN_OK);
  EXPECT_EQ(updates, 0);
  ASSERT_EQ(ein_bundle_output_updates(b.get(), 1, &updates), EIN_OK);
  EXPECT_EQ(updates, -1);
  EXPECT_EQ(ein_bundle_output_updates(b.get(), 2, &updates), EIN_ERROR);
  EXPECT_EQ(ein_bundle_output_updates(b.get(), 0, nullptr), EIN_ERROR);
  // Nothing to carry before a run.
  EXPECT_EQ(ein_bundle_carry(b.get()), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(),
               "ein_bundle_carry: the bundle has not run yet");
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i)
    x[i] = float(i) - 7.5f;
  ASSERT_EQ(ein_bundle_set_input(b.get(), 0, x.data(), 96), EIN_OK);
  for (int step = 1; step <= 3; ++step) {
    SCOPED_TRACE(step);
    ASSERT_EQ(ein_bundle_run(b.get()), EIN_OK) << ein_last_error();
    std::vector<float> y(24), z(24);
    ASSERT_EQ(ein_bundle_get_output(b.get(), 0, y.data(), 96), EIN_OK);
    ASSERT_EQ(ein_bundle_get_output(b.get(), 1, z.data(), 96), EIN_OK);
    float scale = float(1 << (step - 1));
    for (int i = 0; i < 24; ++i) {
      EXPECT_EQ(z[i], x[i] * scale) << i;
      EXPECT_EQ(y[i], x[i] * 2 * scale) << i;
    }
    ASSERT_EQ(ein_bundle_carry(b.get()), EIN_OK) << ein_last_error();
    // The outputs stay readable after the carry.
    std::vector<float> again(24);
    ASSERT_EQ(ein_bundle_get_output(b.get(), 0, again.data(), 96), EIN_OK);
    EXPECT_EQ(again, y);
  }
}

TEST_P(OnEachTarget, TransfersOfEveryShape) {
  SKIP_CUDA_WITHOUT_GPUS(2);
  // Three slices of X[3x4x5] on device 0 pulled into device 1: a contiguous
  // run, a 2-D one (rows of a plane) and a 3-D one (which a CUDA copy
  // engine call cannot do in one go).
  struct Case {
    std::vector<int64_t> offset, extent;
  };
  for (const Case &c : {Case{{1, 0, 0}, {2, 4, 5}}, Case{{0, 1, 0}, {3, 2, 5}},
                        Case{{1, 1, 1}, {2, 3, 4}}}) {
    SCOPED_TRACE(json(c.extent).dump());
    json m = manifest(
        2, {256, 512},
        {buffer("X", 0, 0, type({3, 4, 5})), buffer("Y", 1, 0, type(c.extent))},
        {layout(type({3, 4, 5}), {block("X", {0, 0, 0})})},
        {layout(type(c.extent), {block("Y", {0, 0, 0})})},
        {transfer(1, "X", "Y")});
    m["steps"][0]["from_offset"] = c.offset;
    m["steps"][0]["extent"] = c.extent;
    json slice = {{"kind", "slice"},        {"result", "y"},
                  {"type", type(c.extent)}, {"inputs", {"x"}},
                  {"offsets", c.offset},    {"sizes", c.extent}};
    json p = program({argument("x", type({3, 4, 5}))}, {slice}, {"y"});
    TempBundle dir(on(m), p);
    EXPECT_EQ(errorAgainstReference(dir, p, /*debug=*/true), 0);
  }
}

TEST_P(OnEachTarget, BatchedTransfersMoveEveryRegion) {
  // One step moves 18 regions of X[3x4x5] (3-D, so the copy kernel) into
  // the slabs of Y, and all of Z (f16) into W: more regions than one launch
  // of the batched copy kernel takes, and of two element types. With
  // EIN_CUDA_COPY=engine, Z goes by the copy engine and the rest by the
  // kernel, in one step. From device 0 to device 1, and within device 0
  // (which a one-GPU machine runs too).
  const int regions = 18;
  for (int devices : {2, 1}) {
    SCOPED_TRACE(devices);
    if (GetParam() == "cuda" && !cudaRunsDevices(devices))
      continue;
    int to = devices - 1;
    std::vector<json> list, slices;
    std::vector<std::string> names;
    for (int i = 0; i < regions; ++i) {
      std::vector<int64_t> offset = {i % 2, (i / 2) % 2, i % 2};
      list.push_back({{"from", "X"},
                      {"from_offset", offset},
                      {"to", "Y"},
                      {"to_offset", {2 * i, 0, 0}},
                      {"extent", {2, 3, 4}}});
      names.push_back("s" + std::to_string(i));
      slices.push_back({{"kind", "slice"},
                        {"result", names.back()},
                        {"type", type({2, 3, 4})},
                        {"inputs", {"x"}},
                        {"offsets", offset},
                        {"sizes", {2, 3, 4}}});
    }
    list.push_back({{"from", "Z"}, {"to", "W"}});
    slices.push_back({{"kind", "concat"},
                      {"result", "y"},
                      {"type", type({2 * regions, 3, 4})},
                      {"inputs", names},
                      {"dim", 0}});
    json step = {{"kind", "transfer"}, {"device", to}, {"regions", list}};
    // Y and W after X and Z on one device, from 512 on.
    int64_t base = devices == 1 ? 512 : 0;
    std::vector<int64_t> arenas = devices == 1
                                      ? std::vector<int64_t>{2560}
                                      : std::vector<int64_t>{512, 2048};
    json m =
        manifest(devices, arenas,
                 {buffer("X", 0, 0, type({3, 4, 5})),
                  buffer("Z", 0, 256, type({8}, "f16")),
                  buffer("Y", to, base, type({2 * regions, 3, 4})),
                  buffer("W", to, base + 1792, type({8}, "f16"))},
                 {layout(type({3, 4, 5}), {block("X", {0, 0, 0})}),
                  layout(type({8}, "f16"), {block("Z", {0})})},
                 {layout(type({2 * regions, 3, 4}), {block("Y", {0, 0, 0})}),
                  layout(type({8}, "f16"), {block("W", {0})})},
                 {step});
    json p = program(
        {argument("x", type({3, 4, 5})), argument("z", type({8}, "f16"))},
        slices, {"y", "z"});
    for (const char *mode : {"auto", "engine"}) {
      SCOPED_TRACE(mode);
      struct CopyMode {
        CopyMode(const char *mode) { setenv("EIN_CUDA_COPY", mode, 1); }
        ~CopyMode() { unsetenv("EIN_CUDA_COPY"); }
      } copyMode(mode);
      TempBundle dir(on(m), p);
      EXPECT_EQ(errorAgainstReference(dir, p, /*debug=*/true), 0);
    }
  }
}

namespace {

/// A gemm step's epilogue: a bias, an addend, an activation ("none",
/// "relu", "gelu_tanh").
struct Epilogue {
  bool bias = false, addend = false;
  std::string activation = "none";
};

/// The activation as its formula, written here apart from the runtime's.
double activate(const std::string &activation, double x) {
  if (activation == "relu")
    return x > 0 ? x : 0;
  if (activation == "gelu_tanh")
    return 0.5 * x *
           (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  return x;
}

/// One gemm on one device: c = act(alpha op(a) op(b) + beta c + bias +
/// addend), where c is also an input (its initial value), checked against
/// a float64 product.
void checkGemm(const std::string &target, std::vector<int64_t> aShape,
               std::vector<int64_t> bShape, std::vector<int64_t> cShape,
               bool ta, bool tb, double alpha, double beta,
               const std::string &inType, const std::string &outType,
               const Epilogue &epilogue = {}) {
  SCOPED_TRACE(inType + " -> " + outType + " " + epilogue.activation +
               (epilogue.bias ? " +bias" : "") +
               (epilogue.addend ? " +addend" : ""));
  // The program is only the bundle's signature here; its body is unused.
  std::vector<int64_t> loops(cShape.size());
  for (size_t i = 0; i < loops.size(); ++i)
    loops[i] = static_cast<int64_t>(i);
  std::vector<int64_t> biasShape = {cShape.back()};
  std::vector<json> arguments = {argument("a", type(aShape, inType)),
                                 argument("b", type(bShape, inType)),
                                 argument("c", type(cShape, outType))};
  if (epilogue.bias)
    arguments.push_back(argument("bias", type(biasShape, outType)));
  if (epilogue.addend)
    arguments.push_back(argument("r", type(cShape, outType)));
  json p = program(arguments,
                   {joinAgg("y", type(cShape, outType), {"c"}, {loops}, loops,
                            "none", "", outType)},
                   {"y"});
  json step = gemm(0, "A", "B", "Y", {0});
  step["transpose_a"] = ta;
  step["transpose_b"] = tb;
  step["alpha"] = alpha;
  step["beta"] = beta;
  if (epilogue.bias)
    step["bias"] = "Bias";
  if (epilogue.addend)
    step["addend"] = "R";
  if (epilogue.activation != "none")
    step["activation"] = epilogue.activation;
  // Buffers one after another, each on a 256-byte boundary.
  int64_t next = 0;
  auto place = [&](const std::vector<int64_t> &shape, const std::string &t) {
    int64_t at = next;
    next += (product(shape) * dtypeBytes(*parseDType(t)) + 255) / 256 * 256;
    return at;
  };
  std::vector<json> buffers = {
      buffer("A", 0, place(aShape, inType), type(aShape, inType)),
      buffer("B", 0, place(bShape, inType), type(bShape, inType)),
      buffer("C", 0, place(cShape, outType), type(cShape, outType)),
      buffer("Y", 0, place(cShape, outType), type(cShape, outType))};
  std::vector<json> layouts = {
      layout(type(aShape, inType),
             {block("A", std::vector<int64_t>(aShape.size(), 0))}),
      layout(type(bShape, inType),
             {block("B", std::vector<int64_t>(bShape.size(), 0))}),
      layout(type(cShape, outType),
             {block("C", std::vector<int64_t>(cShape.size(), 0))})};
  if (epilogue.bias) {
    buffers.push_back(
        buffer("Bias", 0, place(biasShape, outType), type(biasShape, outType)));
    layouts.push_back(layout(type(biasShape, outType), {block("Bias", {0})}));
  }
  if (epilogue.addend) {
    buffers.push_back(
        buffer("R", 0, place(cShape, outType), type(cShape, outType)));
    layouts.push_back(
        layout(type(cShape, outType),
               {block("R", std::vector<int64_t>(cShape.size(), 0))}));
  }
  json m =
      manifest(1, {next}, buffers, layouts,
               {layout(type(cShape, outType),
                       {block("Y", std::vector<int64_t>(cShape.size(), 0))})},
               {transfer(0, "C", "Y"), step});
  // With beta 0 the gemm does not read Y: the copy of C would be data moved
  // for nothing, which the loader refuses.
  if (beta == 0) {
    m["steps"].erase(0);
    m["steps"][0]["deps"] = json::array();
  }
  TempBundle dir(retarget(m, target), p);
  BundlePtr b = load(dir, /*debug=*/true);
  ASSERT_TRUE(b);
  Program program;
  std::string error;
  ASSERT_TRUE(parseProgram(p.dump(), program, error)) << error;
  std::vector<HostTensor> inputs;
  HostTensor got = runSeeded(b.get(), program, inputs)[0];

  size_t rank = cShape.size();
  int64_t rowsC = cShape[rank - 2], colsC = cShape[rank - 1];
  int64_t inner = aShape[aShape.size() - (ta ? 2 : 1)];
  int64_t batch = product(cShape) / (rowsC * colsC);
  HostTensor want = inputs[2];
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < rowsC; ++i)
      for (int64_t j = 0; j < colsC; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < inner; ++k) {
          int64_t aBase = aShape.size() == rank ? n * rowsC * inner : 0;
          int64_t bBase = bShape.size() == rank ? n * inner * colsC : 0;
          double x =
              inputs[0].data[aBase + (ta ? k * rowsC + i : i * inner + k)];
          double y =
              inputs[1].data[bBase + (tb ? j * inner + k : k * colsC + j)];
          sum += x * y;
        }
        int64_t at = (n * rowsC + i) * colsC + j;
        double v = alpha * sum + beta * want.data[at];
        if (epilogue.bias)
          v += inputs[3].data[j];
        if (epilogue.addend)
          v += inputs[epilogue.bias ? 4 : 3].data[at];
        want.data[at] = activate(epilogue.activation, v);
      }
  EXPECT_LE(maxRelativeError(got, want), checkThreshold(got.dtype));
}

} // namespace

TEST_P(OnEachTarget, Gemm) {
  std::string t = GetParam();
  checkGemm(t, {6, 5}, {5, 7}, {6, 7}, false, false, 1, 0, "f32", "f32");
  checkGemm(t, {5, 6}, {7, 5}, {6, 7}, true, true, 0.5, 2, "f32", "f32");
  // Batched, with b shared by every batch (cuBLASLt: folded into the rows).
  checkGemm(t, {3, 4, 5}, {5, 2}, {3, 4, 2}, false, false, 1, 1, "f32", "f32");
  // Batched, with a shared (cuBLASLt: a batch stride of 0).
  checkGemm(t, {4, 5}, {3, 2, 5}, {3, 4, 2}, false, true, 1, 0, "f32", "f32");
  checkGemm(t, {2, 5, 4}, {2, 5, 3}, {2, 4, 3}, true, false, 1, 0, "f32",
            "f32");
  // 16-bit operands, f32 accumulation, results rounded once.
  checkGemm(t, {6, 9}, {9, 4}, {6, 4}, false, false, 1, 0, "bf16", "bf16");
  checkGemm(t, {6, 9}, {9, 4}, {6, 4}, false, false, 1, 1, "f16", "f32");
  checkGemm(t, {64, 96}, {96, 80}, {64, 80}, false, false, 1, 0, "f16", "f16");
}

TEST_P(OnEachTarget, RaggedGemmsOnPaddedCopies) {
  // With EIN_GEMM_PAD=always every 16-bit gemm here, each with a dimension
  // that is not a multiple of 8, runs on CUDA on zero-padded copies: the
  // inputs copied in, c copied in where beta is not 0 and out. The CPU
  // backend ignores the switch.
  struct PadAlways {
    PadAlways() { setenv("EIN_GEMM_PAD", "always", 1); }
    ~PadAlways() { unsetenv("EIN_GEMM_PAD"); }
  } pad;
  std::string t = GetParam();
  checkGemm(t, {5, 6}, {7, 5}, {6, 7}, true, true, 0.5, 2, "bf16", "f32");
  checkGemm(t, {3, 4, 5}, {5, 2}, {3, 4, 2}, false, false, 1, 1, "f16", "f16");
  checkGemm(t, {4, 5}, {3, 2, 5}, {3, 4, 2}, false, true, 1, 0, "bf16", "bf16");
  checkGemm(t, {2, 9, 4}, {2, 9, 3}, {2, 4, 3}, true, false, 1, 0, "bf16",
            "f32");
  checkGemm(t, {70, 33}, {33, 17}, {70, 17}, false, false, 1, 0, "bf16",
            "bf16");
}

TEST_P(OnEachTarget, GemmEpilogues) {
  // A bias of the columns, an addend of c's shape, each activation; f32
  // and bf16, plain, transposed and batched over a shared b (cuBLASLt's
  // bias broadcast over the batch's rows), and on CUDA on padded copies
  // (the bias padded, the addend copied into the padded c).
  std::string t = GetParam();
  for (bool padded : {false, true}) {
    SCOPED_TRACE(padded ? "EIN_GEMM_PAD=always" : "EIN_GEMM_PAD=auto");
    if (padded)
      setenv("EIN_GEMM_PAD", "always", 1);
    for (const char *act : {"none", "relu", "gelu_tanh"}) {
      checkGemm(t, {6, 5}, {5, 7}, {6, 7}, false, false, 1, 0, "f32", "f32",
                {true, false, act});
      checkGemm(t, {5, 6}, {7, 5}, {6, 7}, true, true, 1, 0, "bf16", "bf16",
                {true, true, act});
      checkGemm(t, {3, 4, 5}, {5, 6}, {3, 4, 6}, false, false, 1, 0, "bf16",
                "bf16", {true, true, act});
      checkGemm(t, {16, 24}, {24, 32}, {16, 32}, false, false, 1, 0, "bf16",
                "f32", {false, true, act});
    }
    // An activation alone, and accumulating into c (beta) with a bias.
    checkGemm(t, {6, 9}, {9, 4}, {6, 4}, false, false, 1, 0, "f16", "f16",
              {false, false, "gelu_tanh"});
    checkGemm(t, {6, 9}, {9, 4}, {6, 4}, false, false, 1, 1, "f32", "f32",
              {true, false, "relu"});
    unsetenv("EIN_GEMM_PAD");
  }
}

TEST_P(OnEachTarget, AggregationKinds) {
  for (std::string op : {"add", "max", "min", "mul"}) {
    SCOPED_TRACE(op);
    json m = manifest(1, {1024},
                      {buffer("X", 0, 0, type({3, 2})),
                       buffer("Y", 0, 256, type({3, 2})),
                       buffer("Z", 0, 512, type({3, 2}, "bf16"))},
                      {layout(type({3, 2}), {block("X", {0, 0})}),
                       layout(type({3, 2}), {block("Y", {0, 0})})},
                      {layout(type({3, 2}, "bf16"), {block("Z", {0, 0})})},
                      {aggregate(0, {"X", "Y"}, "Z", {}, op)});
    std::string scalar = op == "add"   ? "arith.addf"
                         : op == "max" ? "arith.maximumf"
                         : op == "min" ? "arith.minimumf"
                                       : "arith.mulf";
    json p = program({argument("x", type({3, 2})), argument("y", type({3, 2}))},
                     {joinAgg("z", type({3, 2}, "bf16"), {"x", "y"},
                              {{0, 1}, {0, 1}}, {0, 1}, "none", scalar)},
                     {"z"});
    TempBundle dir(on(m), p);
    EXPECT_LE(errorAgainstReference(dir, p), checkThreshold(DType::BF16));
  }
  // More inputs than the CUDA kernel takes in one launch: 20 partials.
  std::vector<json> buffers, blocks, args;
  std::vector<std::string> names, inputs;
  std::string expr;
  for (int i = 0; i < 20; ++i) {
    std::string n = "P" + std::to_string(i);
    buffers.push_back(buffer(n, 0, 256 * i, type({2, 3})));
    inputs.push_back(n);
    names.push_back("x" + std::to_string(i));
    args.push_back(argument(names.back(), type({2, 3})));
  }
  buffers.push_back(buffer("S", 0, 256 * 20, type({2, 3})));
  std::vector<json> inputLayouts;
  for (int i = 0; i < 20; ++i)
    inputLayouts.push_back(layout(type({2, 3}), {block(inputs[i], {0, 0})}));
  json m = manifest(1, {256 * 21}, buffers, inputLayouts,
                    {layout(type({2, 3}), {block("S", {0, 0})})},
                    {aggregate(0, inputs, "S")});
  // The program: a chain of adds.
  std::vector<json> ops;
  std::string last = names[0];
  for (int i = 1; i < 20; ++i) {
    std::string next = "s" + std::to_string(i);
    ops.push_back(joinAgg(next, type({2, 3}), {last, names[i]},
                          {{0, 1}, {0, 1}}, {0, 1}, "none", "arith.addf"));
    last = next;
  }
  json p = program(args, ops, {last});
  TempBundle dir(on(m), p);
  EXPECT_LE(errorAgainstReference(dir, p), 1e-6);
}

/// Causal GQA attention over 16 tokens (4 query heads, 2 KV heads, head
/// dimension 64) split by queries across two devices, each block a fused
/// attention step whose diagonal is its query offset, with a log-sum-exp
/// output on device 1; against the reference's attention.
TEST_P(OnEachTarget, AttentionSteps) {
  SKIP_CUDA_WITHOUT_GPUS(2);
  for (std::string dtype : {"bf16", "f16"}) {
    SCOPED_TRACE(dtype);
    json q = type({1, 4, 16, 64}, dtype), kv = type({1, 2, 16, 64}, dtype),
         half = type({1, 4, 8, 64}, dtype);
    int64_t qBytes = 4 * 16 * 64 * 2, kvBytes = 2 * 16 * 64 * 2,
            halfBytes = qBytes / 2;
    std::vector<json> buffers;
    for (int d = 0; d < 2; ++d) {
      std::string s = std::to_string(d);
      buffers.push_back(buffer("Q" + s, d, 0, half));
      buffers.push_back(buffer("K" + s, d, halfBytes, kv));
      buffers.push_back(buffer("V" + s, d, halfBytes + kvBytes, kv));
      buffers.push_back(buffer("O" + s, d, halfBytes + 2 * kvBytes, half));
    }
    buffers.push_back(
        buffer("L1", 1, 2 * halfBytes + 2 * kvBytes, type({1, 4, 8})));
    json step1 = attentionStep(1, "Q1", "K1", "V1", "O1", true, 8, 0.125);
    step1["lse"] = "L1";
    json m = manifest(
        2,
        {2 * halfBytes + 2 * kvBytes + 256, 2 * halfBytes + 2 * kvBytes + 256},
        buffers,
        {layout(q, {block("Q0", {0, 0, 0, 0}), block("Q1", {0, 0, 8, 0})}),
         layout(kv, {block("K0", {0, 0, 0, 0}), block("K1", {0, 0, 0, 0})}),
         layout(kv, {block("V0", {0, 0, 0, 0}), block("V1", {0, 0, 0, 0})})},
        {layout(q, {block("O0", {0, 0, 0, 0}), block("O1", {0, 0, 8, 0})})},
        {attentionStep(0, "Q0", "K0", "V0", "O0", true, 0, 0.125), step1});
    json op = {{"kind", "attention"}, {"result", "o"},
               {"type", q},           {"inputs", {"q", "k", "v"}},
               {"causal", true},      {"group", 2},
               {"scale", 0.125},      {"query_offset", 0},
               {"key_offset", 0}};
    json p = program({argument("q", q), argument("k", kv), argument("v", kv)},
                     {op}, {"o"});
    TempBundle dir(on(m), p);
    EXPECT_LE(errorAgainstReference(dir, p, /*debug=*/true),
              checkThreshold(*parseDType(dtype)));
  }
}

/// GPT-2's attention without its copies: q (4 heads), k and v (2 KV heads
/// each) read in place from one fused QKV projection [2, 16, 512] through
/// strided views, and o written transposed to [b, s, h, d]; against the
/// reference's slices, reshapes, transposes and attention. On CUDA both
/// ways: cuDNN reading the views, and the runtime's own kernel (dense
/// operands only) through gathered copies.
TEST_P(OnEachTarget, AttentionReadsAndWritesViews) {
  SKIP_CUDA_WITHOUT_GPUS(1);
  json qkv = type({2, 16, 512}, "bf16"), out = type({2, 16, 4, 64}, "bf16");
  // Inputs of standard deviation 1/sqrt(512) give scores near 0; a scale
  // of 512 peaks the softmax, so that the result depends on q and k.
  json step = attentionStep(0, "QKV", "QKV", "QKV", "O", true, 0, 512.0);
  auto view = [](std::vector<int64_t> shape, int64_t offset,
                 std::vector<int64_t> strides) {
    return json{{"shape", shape}, {"offset", offset}, {"strides", strides}};
  };
  step["q_view"] = view({2, 4, 16, 64}, 0, {8192, 64, 512, 1});
  step["k_view"] = view({2, 2, 16, 64}, 256, {8192, 64, 512, 1});
  step["v_view"] = view({2, 2, 16, 64}, 384, {8192, 64, 512, 1});
  step["o_view"] = view({2, 4, 16, 64}, 0, {4096, 64, 256, 1});
  json m = manifest(1, {32768 + 16384},
                    {buffer("QKV", 0, 0, qkv), buffer("O", 0, 32768, out)},
                    {layout(qkv, {block("QKV", {0, 0, 0})})},
                    {layout(out, {block("O", {0, 0, 0, 0})})}, {step});
  // The program: slices of the projection, split into heads, transposed.
  std::vector<json> ops;
  auto heads = [&](const std::string &name, int64_t offset, int64_t count) {
    ops.push_back({{"kind", "slice"},
                   {"result", name + "s"},
                   {"type", type({2, 16, count * 64}, "bf16")},
                   {"inputs", {"qkv"}},
                   {"offsets", {0, 0, offset}},
                   {"sizes", {2, 16, count * 64}}});
    ops.push_back({{"kind", "reshape"},
                   {"result", name + "h"},
                   {"type", type({2, 16, count, 64}, "bf16")},
                   {"inputs", {name + "s"}},
                   {"reassociation", {{0}, {1}, {2, 3}}}});
    ops.push_back(joinAgg(name, type({2, count, 16, 64}, "bf16"), {name + "h"},
                          {{0, 2, 1, 3}}, {0, 1, 2, 3}, "none", "", "bf16"));
  };
  heads("q", 0, 4);
  heads("k", 256, 2);
  heads("v", 384, 2);
  ops.push_back({{"kind", "attention"},
                 {"result", "a"},
                 {"type", type({2, 4, 16, 64}, "bf16")},
                 {"inputs", {"q", "k", "v"}},
                 {"causal", true},
                 {"group", 2},
                 {"scale", 512.0},
                 {"query_offset", 0},
                 {"key_offset", 0}});
  ops.push_back(joinAgg("o", out, {"a"}, {{0, 2, 1, 3}}, {0, 1, 2, 3}, "none",
                        "", "bf16"));
  json p = program({argument("qkv", qkv)}, ops, {"o"});
  TempBundle dir(on(m), p);
  EXPECT_LE(errorAgainstReference(dir, p, /*debug=*/true),
            checkThreshold(DType::BF16));
  if (GetParam() == std::string("cuda")) {
    setenv("EIN_ATTENTION", "kernel", 1);
    EXPECT_LE(errorAgainstReference(dir, p, /*debug=*/true),
              checkThreshold(DType::BF16));
    unsetenv("EIN_ATTENTION");
  }

  // A view past its buffer's end, and an o view that misses elements of
  // its buffer, are refused when the bundle loads.
  json past = m;
  past["steps"][0]["v_view"]["offset"] = 448;
  EXPECT_NE(loadError(TempBundle(on(past), p)).find("past the end"),
            std::string::npos);
  json gaps = m;
  gaps["steps"][0]["o_view"]["strides"] = {4096, 32, 256, 1};
  EXPECT_NE(loadError(TempBundle(on(gaps), p)).find("each element"),
            std::string::npos);
}

TEST(Runtime, KernelsComeFromTheBundlesLibrary) {
  std::string so = EIN_TEST_BUNDLES_DIR "/uneven-3gpu/kernels/host.so";
  json kernel = {{"kind", "kernel"},
                 {"device", 0},
                 {"kernel", "relu_bf16"},
                 {"args", {{{"buffer", "Y"}, {"access", "readwrite"}}}},
                 {"scalars", {6}},
                 {"deps", {0}}};
  json m = manifest(1, {512},
                    {buffer("X", 0, 0, type({2, 3}, "bf16")),
                     buffer("Y", 0, 256, type({2, 3}, "bf16"))},
                    {layout(type({2, 3}, "bf16"), {block("X", {0, 0})})},
                    {layout(type({2, 3}, "bf16"), {block("Y", {0, 0})})},
                    {transfer(0, "X", "Y"), kernel});
  m["kernel_libraries"] = {"kernels/host.so"};
  m["kernel_library_sha256"] = {fileSha256(so)};
  // y = maximumf(extf(x), 0)
  json join = {
      {"args", {"bf16"}},
      {"ops",
       {{{"op", "arith.extf"}, {"operands", {0}}, {"type", "f32"}},
        {{"op", "arith.constant"},
         {"operands", json::array()},
         {"type", "f32"},
         {"value", 0.0}},
        {{"op", "arith.maximumf"}, {"operands", {1, 2}}, {"type", "f32"}}}},
      {"yield", 3}};
  json relu =
      joinAgg("y", type({2, 3}, "bf16"), {"x"}, {{0, 1}}, {0, 1}, "none");
  relu["join"] = join;
  json p = program({argument("x", type({2, 3}, "bf16"))}, {relu}, {"y"});
  TempBundle dir(m, p);
  std::filesystem::create_directories(dir.path + "/kernels");
  std::filesystem::copy_file(so, dir.path + "/kernels/host.so");
  EXPECT_LE(errorAgainstReference(dir, p, /*debug=*/true), 2e-2);

  json missing = m;
  missing["steps"][1]["kernel"] = "gelu_bf16";
  TempBundle noSymbol(missing, p);
  std::filesystem::create_directories(noSymbol.path + "/kernels");
  std::filesystem::copy_file(so, noSymbol.path + "/kernels/host.so");
  EXPECT_EQ(loadError(noSymbol),
            "manifest.steps[1] (kernel 'gelu_bf16'): no kernel library's "
            "signatures name this kernel");

  TempBundle noLibrary(m, p);
  EXPECT_EQ(loadError(noLibrary), "cannot load kernel library: cannot open '" +
                                      noLibrary.path + "/kernels/host.so'");
}

TEST(Runtime, AKernelHittingAGuardPageIsAnError) {
  // One device whose arena is one page: X and Y fill its first 512 bytes.
  json poke = {{"kind", "kernel"},
               {"device", 0},
               {"kernel", "poke"},
               {"args", {{{"buffer", "Y"}, {"access", "readwrite"}}}},
               {"scalars", {0}},
               {"deps", {0}}};
  json m = manifest(
      1, {512}, {buffer("X", 0, 0, type({4})), buffer("Y", 0, 256, type({4}))},
      {layout(type({4}), {block("X", {0})})},
      {layout(type({4}), {block("Y", {0})})}, {transfer(0, "X", "Y"), poke});
  m["kernel_libraries"] = {"kernels/faulty.so"};
  m["kernel_library_sha256"] = {fileSha256(EIN_TEST_KERNELS_DIR "/faulty.so")};
  json p = program({argument("x", type({4}))},
                   {joinAgg("y", type({4}), {"x"}, {{0}}, {0}, "none")}, {"y"});
  long page = sysconf(_SC_PAGESIZE);
  for (auto [offset, where] :
       {std::pair<int64_t, std::string>{page - 256, "after"},
        std::pair<int64_t, std::string>{-257, "before"}}) {
    m["steps"][1]["scalars"] = {offset};
    TempBundle dir(m, p);
    std::filesystem::create_directories(dir.path + "/kernels");
    std::filesystem::copy_file(EIN_TEST_KERNELS_DIR "/faulty.so",
                               dir.path + "/kernels/faulty.so");
    BundlePtr b = load(dir);
    ASSERT_TRUE(b);
    float x[4] = {1, 2, 3, 4};
    ASSERT_EQ(ein_bundle_set_input(b.get(), 0, x, sizeof x), EIN_OK);
    EXPECT_EQ(ein_bundle_run(b.get()), EIN_ERROR);
    std::string error = ein_last_error();
    EXPECT_NE(error.find("kernel 'poke' on device 0 faulted: it touched "),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("in the guard page " + where + " device 0's arena"),
              std::string::npos)
        << error;
  }
  // Within bounds the same kernel runs.
  m["steps"][1]["scalars"] = {3};
  TempBundle dir(m, p);
  std::filesystem::create_directories(dir.path + "/kernels");
  std::filesystem::copy_file(EIN_TEST_KERNELS_DIR "/faulty.so",
                             dir.path + "/kernels/faulty.so");
  BundlePtr b = load(dir);
  float x[4] = {1, 2, 3, 4};
  ASSERT_EQ(ein_bundle_set_input(b.get(), 0, x, sizeof x), EIN_OK);
  EXPECT_EQ(ein_bundle_run(b.get()), EIN_OK) << ein_last_error();
}

namespace {

/// The poke bundle of AKernelHittingAGuardPageIsAnError, poking within
/// bounds, or with `kernel` "segv" a kernel that sends its process SIGSEGV.
TempBundle faultyBundle(const std::string &kernel) {
  json step = {{"kind", "kernel"},
               {"device", 0},
               {"kernel", kernel},
               {"args", {{{"buffer", "Y"}, {"access", "readwrite"}}}},
               {"scalars", kernel == "poke" ? json{3} : json::array()},
               {"deps", {0}}};
  json m = manifest(
      1, {512}, {buffer("X", 0, 0, type({4})), buffer("Y", 0, 256, type({4}))},
      {layout(type({4}), {block("X", {0})})},
      {layout(type({4}), {block("Y", {0})})}, {transfer(0, "X", "Y"), step});
  m["kernel_libraries"] = {"kernels/faulty.so"};
  m["kernel_library_sha256"] = {fileSha256(EIN_TEST_KERNELS_DIR "/faulty.so")};
  json p = program({argument("x", type({4}))},
                   {joinAgg("y", type({4}), {"x"}, {{0}}, {0}, "none")}, {"y"});
  TempBundle dir(m, p);
  std::filesystem::create_directories(dir.path + "/kernels");
  std::filesystem::copy_file(EIN_TEST_KERNELS_DIR "/faulty.so",
                             dir.path + "/kernels/faulty.so");
  return dir;
}

/// Runs `body` in a child process and returns how it ended (waitpid's
/// status); the child exits 0 if `body` returns.
int inChild(const std::function<void()> &body) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

/// Whether a child was killed by SIGSEGV, or (under AddressSanitizer, whose
/// handler reports the signal and exits) exited non-zero: not exit 0.
bool diedOfSegv(int status) {
  return (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) ||
         (WIFEXITED(status) && WEXITSTATUS(status) != 0);
}

std::string statusText(int status) {
  return WIFSIGNALED(status)
             ? "killed by signal " + std::to_string(WTERMSIG(status))
             : "exit " + std::to_string(WEXITSTATUS(status));
}

} // namespace

TEST(Runtime, ASegvSentFromOutsideIsNotSwallowed) {
  // kill -SEGV from outside, after a run installed the fault handlers: the
  // process dies of it, as it would without them (it once returned from the
  // handler and went on to exit 0).
  TempBundle dir = faultyBundle("poke");
  int status = inChild([&] {
    BundlePtr b = load(dir);
    float x[4] = {1, 2, 3, 4};
    if (!b || ein_bundle_set_input(b.get(), 0, x, sizeof x) != EIN_OK ||
        ein_bundle_run(b.get()) != EIN_OK)
      _exit(3); // the run itself failed: not what is tested
    kill(getpid(), SIGSEGV);
  });
  EXPECT_TRUE(diedOfSegv(status)) << statusText(status);
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 3);
}

TEST(Runtime, ASegvSentDuringAKernelIsNoKernelFault) {
  // SIGSEGV sent to the process while a kernel runs (si_code SI_USER) is no
  // fault of the kernel's: the process dies of it, it is not reported as
  // the kernel faulting (nor swallowed).
  TempBundle dir = faultyBundle("segv");
  int status = inChild([&] {
    BundlePtr b = load(dir);
    float x[4] = {1, 2, 3, 4};
    if (!b || ein_bundle_set_input(b.get(), 0, x, sizeof x) != EIN_OK)
      _exit(3);
    ein_bundle_run(b.get());
  });
  EXPECT_TRUE(diedOfSegv(status)) << statusText(status);
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 3);
}

TEST(Runtime, LoadErrors) {
  json p = matmulProgram({8, 4}, {4, 6});
  TempBundle absent(splitMatmulManifest(), p);
  std::filesystem::remove(absent.path + "/manifest.json");
  EXPECT_EQ(loadError(absent), "'" + absent.path +
                                   "' is not a bundle: " + "cannot open '" +
                                   absent.path + "/manifest.json'");

  TempBundle corrupt(splitMatmulManifest(), p);
  corrupt.write("manifest.json", "{\"format\": \"ein-bundle\", ");
  EXPECT_EQ(loadError(corrupt),
            corrupt.path + "/manifest.json: not valid JSON");

  // Without a CUDA backend or GPU, or with the wrong chip, a CUDA bundle is
  // refused with the reason.
  json cuda = retarget(splitMatmulManifest(), "cuda");
  cuda["chip"] = "sm_10";
  TempBundle gpu(cuda, p);
  std::string why = loadError(gpu);
  EXPECT_TRUE(why.rfind("the bundle targets cuda, but ", 0) == 0 ||
              why.rfind("the bundle is compiled for sm_10, but GPU 0", 0) ==
                  0 ||
              why == "the bundle needs 2 GPUs; this machine has 1")
      << why;

  TempBundle mismatch(splitMatmulManifest(), matmulProgram({8, 4}, {4, 7}));
  EXPECT_EQ(loadError(mismatch),
            mismatch.path + "/manifest.json: input 1 is [4, 6] f32, not the "
                            "[4, 7] f32 argument of program.json ('f')");

  TempBundle noProgram(splitMatmulManifest(), p);
  std::filesystem::remove(noProgram.path + "/program.json");
  EXPECT_EQ(loadError(noProgram),
            "cannot open '" + noProgram.path + "/program.json'");
}

TEST(Runtime, ApiMisuse) {
  json p = matmulProgram({8, 4}, {4, 6});
  TempBundle dir(splitMatmulManifest(), p);
  BundlePtr b = load(dir);
  ASSERT_TRUE(b);
  EXPECT_EQ(ein_bundle_num_inputs(b.get()), 2);
  EXPECT_EQ(ein_bundle_devices(b.get()), 2);
  EXPECT_STREQ(ein_bundle_target(b.get()), "cpu");
  ein_tensor_info info;
  ASSERT_EQ(ein_bundle_input_info(b.get(), 1, &info), EIN_OK);
  EXPECT_STREQ(info.dtype, "f32");
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.bytes, 4u * 4 * 6);
  EXPECT_EQ(ein_bundle_input_info(b.get(), 2, &info), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "no input 2");

  std::vector<float> a(32, 1.0f);
  EXPECT_EQ(ein_bundle_set_input(b.get(), 0, a.data(), 12), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "input 0 holds 128 bytes, got 12");
  EXPECT_EQ(ein_bundle_set_input(b.get(), 0, a.data(), 128), EIN_OK);
  EXPECT_EQ(ein_bundle_run(b.get()), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "input 1 was not set");
  std::vector<float> c(48);
  EXPECT_EQ(ein_bundle_get_output(b.get(), 0, c.data(), 192), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "the bundle has not run yet");

  std::vector<float> bIn(24, 2.0f);
  EXPECT_EQ(ein_bundle_set_input(b.get(), 1, bIn.data(), 96), EIN_OK);
  double ms = -1;
  EXPECT_EQ(ein_bundle_bench(b.get(), 1, 3, &ms), EIN_OK);
  EXPECT_GE(ms, 0);
  EXPECT_EQ(ein_bundle_get_output(b.get(), 0, c.data(), 192), EIN_OK);
  for (float x : c)
    EXPECT_EQ(x, 8.0f); // four products of 1 and 2
  EXPECT_EQ(ein_bundle_bench(b.get(), 0, 0, &ms), EIN_ERROR);
  ms = -1;
  EXPECT_EQ(ein_bundle_bench_with(b.get(), EIN_TIMER_HOST, 0, 2, &ms), EIN_OK);
  EXPECT_GE(ms, 0);
  EXPECT_EQ(
      ein_bundle_bench_with(b.get(), static_cast<ein_timer>(7), 0, 2, &ms),
      EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "ein_bundle_bench: unknown timer 7");
  ein_memory_info memory;
  EXPECT_EQ(ein_bundle_memory(b.get(), 2, &memory), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(),
               "ein_bundle_memory: device 2 is not one of the bundle's 2");
  EXPECT_EQ(ein_bundle_memory(b.get(), 0, nullptr), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "ein_bundle_memory: no result pointer");
  ein_step_info step;
  EXPECT_EQ(ein_bundle_step_info(b.get(), 4, &step), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "no step 4");
  EXPECT_EQ(ein_bundle_step_info(b.get(), 0, nullptr), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "ein_bundle_step_info: no result pointer");
  std::vector<double> times(3);
  EXPECT_EQ(ein_bundle_profile(b.get(), times.data(), times.size()), EIN_ERROR);
  EXPECT_STREQ(
      ein_last_error(),
      "ein_bundle_profile: needs room for the bundle's 4 steps, got 3");
}

namespace {

/// Loads `dir` through ein_bundle_load_with with the device map `map` (its
/// size `size` and pointer as given); the error, or "" once loaded (and
/// freed).
std::string loadWithMap(const TempBundle &dir, int size, const int *map,
                        size_t optionsSize = sizeof(ein_load_options)) {
  ein_load_options options = {};
  options.device_map_size = size;
  options.device_map = map;
  ein_bundle *b = nullptr;
  if (ein_bundle_load_with(dir.path.c_str(), &options, optionsSize, &b) ==
      EIN_OK) {
    ein_bundle_free(b);
    return "";
  }
  EXPECT_EQ(b, nullptr);
  return ein_last_error();
}

} // namespace

TEST(Runtime, DeviceMapIsCheckedAndRefusedOnTheCpu) {
  json p = matmulProgram({8, 4}, {4, 6});
  TempBundle cpu(splitMatmulManifest(), p);
  int twoOnZero[] = {0, 0}, negative[] = {0, -1}, one[] = {0};
  // The struct's sizes: `debug` alone (the first), or all of it.
  EXPECT_EQ(loadWithMap(cpu, 2, twoOnZero, 3),
            "ein_bundle_load_with: options_size is 3 bytes, which is no size "
            "ein_load_options has had (4 or 16): pass "
            "sizeof(ein_load_options) of the runtime.h you built against");
  EXPECT_NE(loadWithMap(cpu, 2, twoOnZero, 24), "");
  // A caller of the first size is read as it was written: no map.
  EXPECT_EQ(loadWithMap(cpu, 2, twoOnZero, sizeof(int)), "");
  // ein_bundle_load reads `debug` alone.
  ein_load_options old = {};
  old.device_map_size = 2;
  old.device_map = twoOnZero;
  ein_bundle *b = nullptr;
  ASSERT_EQ(ein_bundle_load(cpu.path.c_str(), &old, &b), EIN_OK)
      << ein_last_error();
  EXPECT_EQ(ein_bundle_gpus(b), 0); // the cpu target has none
  ein_bundle_free(b);
  // No map: as before.
  EXPECT_EQ(loadWithMap(cpu, 0, nullptr), "");

  // The map's form, before the bundle is read.
  EXPECT_EQ(loadWithMap(cpu, -1, twoOnZero),
            "the device map has a negative size (-1)");
  EXPECT_EQ(loadWithMap(cpu, 2, nullptr),
            "the device map has 2 entries but a NULL pointer to them");
  EXPECT_EQ(loadWithMap(cpu, 2, negative),
            "the device map 0,-1 puts device 1 on GPU -1: a GPU is a CUDA "
            "device index, 0 or more");
  // A cpu bundle's devices are virtual GPUs: no map.
  EXPECT_EQ(loadWithMap(cpu, 2, twoOnZero),
            "the device map 0,0 applies to the CUDA backend, and this bundle "
            "targets cpu (its devices are virtual GPUs in this process's "
            "memory)");

  // A CUDA bundle takes one entry per device, checked whether or not this
  // runtime has the CUDA backend or the machine a GPU.
  TempBundle cuda(retarget(splitMatmulManifest(), "cuda"), p);
  EXPECT_EQ(loadWithMap(cuda, 1, one),
            "the device map 0 has 1 entry, but the bundle has 2 devices (one "
            "entry per device: the GPU it runs on)");
  int three[] = {0, 0, 0};
  EXPECT_EQ(loadWithMap(cuda, 3, three),
            "the device map 0,0,0 has 3 entries, but the bundle has 2 "
            "devices (one entry per device: the GPU it runs on)");
  std::string folded = loadWithMap(cuda, 2, twoOnZero);
  if (!cudaUnavailable().empty())
    EXPECT_EQ(folded, cudaUnavailable());
  else
    EXPECT_EQ(folded, "");
  int far[] = {0, 4096};
  std::string beyond = loadWithMap(cuda, 2, far);
  if (!cudaUnavailable().empty())
    EXPECT_EQ(beyond, cudaUnavailable());
  else
    EXPECT_EQ(beyond.rfind("the device map 0,4096 puts device 1 on GPU 4096, "
                           "but this machine has ",
                           0),
              0u)
        << beyond;
}

TEST(Cuda, LogicalDevicesShareOneGpu) {
  if (!cudaUnavailable().empty())
    GTEST_SKIP() << "CUDA bundles cannot run here: " << cudaUnavailable();
  // The split matmul's two devices on GPU 0: each its own arena and stream
  // there, the transfer between them a copy within the GPU, one graph.
  json p = matmulProgram({8, 4}, {4, 6});
  TempBundle dir(retarget(splitMatmulManifest(), "cuda"), p);
  for (int debug = 0; debug < 2; ++debug) {
    int map[] = {0, 0};
    ein_load_options options = {};
    options.debug = debug;
    options.device_map_size = 2;
    options.device_map = map;
    ein_bundle *raw = nullptr;
    ASSERT_EQ(
        ein_bundle_load_with(dir.path.c_str(), &options, sizeof options, &raw),
        EIN_OK)
        << ein_last_error();
    BundlePtr b(raw);
    EXPECT_EQ(ein_bundle_devices(b.get()), 2);
    EXPECT_EQ(ein_bundle_gpus(b.get()), 1);
    EXPECT_NE(std::string(ein_bundle_describe(b.get()))
                  .find("cuda: 2 logical devices on 1 x "),
              std::string::npos)
        << ein_bundle_describe(b.get());
    EXPECT_LT(errorAgainstReference(b.get(), p), 1e-6);
    // The GPU's memory is the first device's figure; the second's is in it.
    ein_memory_info first, second;
    ASSERT_EQ(ein_bundle_memory(b.get(), 0, &first), EIN_OK);
    ASSERT_EQ(ein_bundle_memory(b.get(), 1, &second), EIN_OK);
    EXPECT_EQ(second.measured, 0u);
    EXPECT_GE(first.measured, first.planned + second.planned);
    double ms = -1;
    EXPECT_EQ(ein_bundle_bench(b.get(), 1, 3, &ms), EIN_OK) << ein_last_error();
    EXPECT_GE(ms, 0);
  }
}

TEST(Region, CopiesASubRectangle) {
  // Copy the [1:3, 2:4] corner of a 3x4 tensor into [0:2, 1:3] of a 2x5 one.
  std::vector<int32_t> src(12), dst(10, -1);
  for (int i = 0; i < 12; ++i)
    src[i] = i;
  copyRegion(reinterpret_cast<const unsigned char *>(src.data()), {3, 4},
             {1, 2}, reinterpret_cast<unsigned char *>(dst.data()), {2, 5},
             {0, 1}, {2, 2}, 4);
  EXPECT_EQ(dst, (std::vector<int32_t>{-1, 6, 7, -1, -1, -1, 10, 11, -1, -1}));
}

TEST(Check, RelativeErrorAndNaNs) {
  HostTensor ref{DType::F32, {3}, {4, -2, 0}}, got = ref;
  got.data[1] = -2.002;
  EXPECT_NEAR(maxRelativeError(got, ref), 0.002 / 4, 1e-12);
  HostTensor small{DType::F32, {1}, {0.1}}, smallGot{DType::F32, {1}, {0.2}};
  EXPECT_NEAR(maxRelativeError(smallGot, small), 0.1, 1e-12);
  got.data[2] = NAN;
  EXPECT_TRUE(std::isinf(maxRelativeError(got, ref)));
  EXPECT_EQ(checkThreshold(DType::BF16), 2e-2);
}

TEST(Check, DebugFlagsOnlyNonFiniteValuesTheReferenceLacks) {
  HostTensor ref{DType::F32, {4}, {1, NAN, INFINITY, 2}}, got = ref;
  EXPECT_EQ(firstUnexpectedNonFinite(got, ref), -1);
  got.data[3] = NAN; // poison where the reference is finite
  EXPECT_EQ(firstUnexpectedNonFinite(got, ref), 3);
  got = ref;
  got.data[2] = -INFINITY; // another infinity
  EXPECT_EQ(firstUnexpectedNonFinite(got, ref), 2);
  got = ref;
  got.data[0] = 7; // finite but wrong: --check's business
  EXPECT_EQ(firstUnexpectedNonFinite(got, ref), -1);
}

TEST(Cuda, RefusesWhatTheMachineCannotRun) {
  if (!cudaUnavailable().empty())
    GTEST_SKIP() << "CUDA bundles cannot run here: " << cudaUnavailable();
  if (!cudaRunsDevices(2))
    GTEST_SKIP() << "its bundles need 2 GPUs";
  json p = matmulProgram({8, 4}, {4, 6});
  json base = retarget(splitMatmulManifest(), "cuda");

  json chip = base;
  chip["chip"] = "sm_10";
  TempBundle wrongChip(chip, p);
  EXPECT_NE(loadError(wrongChip).find(
                "the bundle is compiled for sm_10, but GPU 0 ("),
            std::string::npos);

  json many = base;
  many["devices"] = 64;
  many["arena_bytes"] = std::vector<int64_t>(64, 1024);
  TempBundle tooMany(many, p);
  EXPECT_NE(loadError(tooMany).find("the bundle needs 64 GPUs; this machine "
                                    "has "),
            std::string::npos);

  json huge = base;
  huge["arena_bytes"][0] = int64_t(1) << 47;
  TempBundle outOfMemory(huge, p);
  EXPECT_NE(loadError(outOfMemory)
                .find("out of memory on GPU 0: the plan needs 134217760.0 MiB "
                      "(arena 134217728.0 MiB, cuBLASLt workspace 32.0 MiB) "
                      "but only "),
            std::string::npos)
      << loadError(outOfMemory);

  setenv("EIN_CUBLASLT", "/nonexistent/libcublasLt.so", 1);
  TempBundle noLibrary(base, p);
  std::string missing = loadError(noLibrary);
  unsetenv("EIN_CUBLASLT");
  EXPECT_EQ(missing, "cuBLASLt, which the bundle's gemm steps need, was not "
                     "found (tried /nonexistent/libcublasLt.so); install it "
                     "or point EIN_CUBLASLT at libcublasLt.so");

  // Kernel libraries: absent, not a cubin, or without the kernel.
  json kernel = base;
  std::string relu =
      EIN_TEST_BUNDLES_DIR "/gather-2gpu-cuda/kernels/relu.cubin";
  kernel["kernel_libraries"] = {"kernels/relu.cubin"};
  kernel["kernel_library_sha256"] = {sha256Hex(std::string("not a cubin"))};
  kernel["steps"].push_back(
      {{"kind", "kernel"},
       {"device", 0},
       {"kernel", "gelu_bf16"},
       {"args", {{{"buffer", "P0"}, {"access", "readwrite"}}}},
       {"scalars", {48}},
       {"deps", {3}},
       {"launch", {{"grid", {1, 1, 1}}, {"block", {64, 1, 1}}}}});
  TempBundle absent(kernel, p);
  EXPECT_EQ(loadError(absent), "cannot load kernel library: cannot open '" +
                                   absent.path + "/kernels/relu.cubin'");
  TempBundle garbage(kernel, p);
  garbage.write("kernels/relu.cubin", "not a cubin");
  EXPECT_EQ(loadError(garbage), "cannot load kernel library '" + garbage.path +
                                    "/kernels/relu.cubin': it is neither a "
                                    "cubin (ELF) nor a fatbin");
  kernel["kernel_library_sha256"] = {fileSha256(relu)};
  TempBundle wrongName(kernel, p);
  std::filesystem::create_directories(wrongName.path + "/kernels");
  std::filesystem::copy_file(relu, wrongName.path + "/kernels/relu.cubin");
  EXPECT_EQ(loadError(wrongName),
            "manifest.steps[4] (kernel 'gelu_bf16'): no kernel library's "
            "signatures name this kernel");
}

//===----------------------------------------------------------------------===//
// Handles: every entry point that takes a bundle refuses NULL and a freed one
//===----------------------------------------------------------------------===//

namespace {

/// One entry point of runtime.h taking a bundle handle: `refused` calls it
/// on a handle and says whether it returned its error value (EIN_ERROR; -1
/// for a count or a number; NULL for a string).
struct EntryPoint {
  const char *name;
  std::function<bool(ein_bundle *)> refused;
};

std::vector<EntryPoint> entryPoints() {
  static float data[64];
  static double times[64], ends[64];
  static int lanes[64];
  return {
      {"ein_bundle_target",
       [](ein_bundle *b) { return ein_bundle_target(b) == nullptr; }},
      {"ein_bundle_devices",
       [](ein_bundle *b) { return ein_bundle_devices(b) == -1; }},
      {"ein_bundle_gpus",
       [](ein_bundle *b) { return ein_bundle_gpus(b) == -1; }},
      {"ein_bundle_nodes",
       [](ein_bundle *b) { return ein_bundle_nodes(b) == -1; }},
      {"ein_bundle_ranks",
       [](ein_bundle *b) { return ein_bundle_ranks(b) == -1; }},
      {"ein_bundle_rank",
       [](ein_bundle *b) { return ein_bundle_rank(b) == -1; }},
      {"ein_bundle_describe",
       [](ein_bundle *b) { return ein_bundle_describe(b) == nullptr; }},
      {"ein_bundle_flops",
       [](ein_bundle *b) { return ein_bundle_flops(b) == -1; }},
      {"ein_bundle_peak_flops",
       [](ein_bundle *b) { return ein_bundle_peak_flops(b) == -1; }},
      {"ein_bundle_num_inputs",
       [](ein_bundle *b) { return ein_bundle_num_inputs(b) == -1; }},
      {"ein_bundle_num_outputs",
       [](ein_bundle *b) { return ein_bundle_num_outputs(b) == -1; }},
      {"ein_bundle_input_info",
       [](ein_bundle *b) {
         ein_tensor_info info;
         return ein_bundle_input_info(b, 0, &info) == EIN_ERROR;
       }},
      {"ein_bundle_output_info",
       [](ein_bundle *b) {
         ein_tensor_info info;
         return ein_bundle_output_info(b, 0, &info) == EIN_ERROR;
       }},
      {"ein_bundle_set_input",
       [](ein_bundle *b) {
         return ein_bundle_set_input(b, 0, data, 128) == EIN_ERROR;
       }},
      {"ein_bundle_run",
       [](ein_bundle *b) { return ein_bundle_run(b) == EIN_ERROR; }},
      {"ein_bundle_get_output",
       [](ein_bundle *b) {
         return ein_bundle_get_output(b, 0, data, 192) == EIN_ERROR;
       }},
      {"ein_bundle_bench_with",
       [](ein_bundle *b) {
         double ms;
         return ein_bundle_bench_with(b, EIN_TIMER_HOST, 0, 1, &ms) ==
                EIN_ERROR;
       }},
      {"ein_bundle_bench",
       [](ein_bundle *b) {
         double ms;
         return ein_bundle_bench(b, 0, 1, &ms) == EIN_ERROR;
       }},
      {"ein_bundle_memory",
       [](ein_bundle *b) {
         ein_memory_info memory;
         return ein_bundle_memory(b, 0, &memory) == EIN_ERROR;
       }},
      {"ein_bundle_num_steps",
       [](ein_bundle *b) { return ein_bundle_num_steps(b) == -1; }},
      {"ein_bundle_step_info",
       [](ein_bundle *b) {
         ein_step_info step;
         return ein_bundle_step_info(b, 0, &step) == EIN_ERROR;
       }},
      {"ein_bundle_profile",
       [](ein_bundle *b) {
         return ein_bundle_profile(b, times, 4) == EIN_ERROR;
       }},
      {"ein_bundle_profile_timeline",
       [](ein_bundle *b) {
         return ein_bundle_profile_timeline(b, times, ends, lanes, 4) ==
                EIN_ERROR;
       }},
  };
}

void PrintTo(const EntryPoint &e, std::ostream *os) { *os << e.name; }

class Handles : public ::testing::TestWithParam<EntryPoint> {};

} // namespace

TEST_P(Handles, NullIsRefused) {
  // Python's Bundle passes NULL once closed; C callers may too.
  const EntryPoint &e = GetParam();
  EXPECT_TRUE(e.refused(nullptr));
  EXPECT_EQ(std::string(ein_last_error()),
            std::string(e.name) + ": the bundle handle is NULL");
}

TEST_P(Handles, FreedIsRefused) {
  // A handle ein_bundle_free has freed is refused, not read.
  const EntryPoint &e = GetParam();
  TempBundle dir(splitMatmulManifest(), matmulProgram({8, 4}, {4, 6}));
  ein_bundle *b = nullptr;
  ASSERT_EQ(ein_bundle_load(dir.path.c_str(), nullptr, &b), EIN_OK)
      << ein_last_error();
  ein_bundle_free(b);
  EXPECT_TRUE(e.refused(b));
  EXPECT_EQ(std::string(ein_last_error()),
            std::string(e.name) +
                ": not a bundle ein_bundle_load returned (or one "
                "ein_bundle_free has freed)");
}

INSTANTIATE_TEST_SUITE_P(EntryPoints, Handles,
                         ::testing::ValuesIn(entryPoints()),
                         [](const ::testing::TestParamInfo<EntryPoint> &info) {
                           return std::string(info.param.name);
                         });

TEST(Runtime, FreeingNullOrTwiceIsHarmless) {
  // As free(NULL): nothing, and no error.
  ein_bundle_free(nullptr);
  TempBundle dir(splitMatmulManifest(), matmulProgram({8, 4}, {4, 6}));
  ein_bundle *b = nullptr;
  ASSERT_EQ(ein_bundle_load(dir.path.c_str(), nullptr, &b), EIN_OK)
      << ein_last_error();
  ein_bundle_free(b);
  // A second free is refused (the error says so), not a double free.
  ein_bundle_free(b);
  EXPECT_STREQ(ein_last_error(),
               "ein_bundle_free: not a bundle ein_bundle_load returned (or "
               "one ein_bundle_free has freed)");
}

TEST(Runtime, InfoWithoutAResultPointerIsRefused) {
  TempBundle dir(splitMatmulManifest(), matmulProgram({8, 4}, {4, 6}));
  BundlePtr b = load(dir);
  ASSERT_TRUE(b);
  EXPECT_EQ(ein_bundle_input_info(b.get(), 0, nullptr), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "ein_bundle_input_info: no result pointer");
  EXPECT_EQ(ein_bundle_output_info(b.get(), 0, nullptr), EIN_ERROR);
  EXPECT_STREQ(ein_last_error(), "ein_bundle_output_info: no result pointer");
}

// The transport between a CUDA bundle's ranks, as rank 0 chooses it from
// every rank's GPU identities (ranks.h): here 2-byte identities, two
// devices a node.
TEST(GpuTransport, ChosenFromTheRanksGpus) {
  using Kind = GpuTransport::Kind;
  std::vector<std::string> distinct = {"a1a2", "b1b2"},
                           sharedAcross = {"a1a2", "a2b2"},
                           sharedWithin = {"a1a1", "b1b2"};
  GpuTransport t = chooseGpuTransport("auto", distinct, 2, 2);
  EXPECT_EQ(t.kind, Kind::Nccl);
  EXPECT_EQ(t.why, "EIN_TRANSPORT=auto, every device on a GPU of its own");
  EXPECT_EQ(chooseGpuTransport("nccl", distinct, 2, 2).kind, Kind::Nccl);
  t = chooseGpuTransport("mpi", distinct, 2, 2);
  EXPECT_EQ(t.kind, Kind::Mpi);
  EXPECT_EQ(t.why, "EIN_TRANSPORT=mpi");

  t = chooseGpuTransport("auto", sharedAcross, 2, 2);
  EXPECT_EQ(t.kind, Kind::Mpi);
  EXPECT_EQ(t.why,
            "EIN_TRANSPORT=auto, devices 1 (rank 0) and 2 (rank 1) are on "
            "one GPU");
  t = chooseGpuTransport("nccl", sharedAcross, 2, 2);
  EXPECT_EQ(t.kind, Kind::Refused);
  EXPECT_EQ(t.why.rfind("EIN_TRANSPORT=nccl: devices 1 (rank 0) and 2 (rank "
                        "1) are on one GPU, and NCCL refuses two of its ranks "
                        "on one GPU",
                        0),
            0u)
      << t.why;
  // Two devices of one rank on one GPU count too (one NCCL rank each).
  t = chooseGpuTransport("nccl", sharedWithin, 2, 2);
  EXPECT_EQ(t.kind, Kind::Refused);
  EXPECT_NE(t.why.find("devices 0 (rank 0) and 1 (rank 0) are on one GPU"),
            std::string::npos)
      << t.why;
  EXPECT_EQ(chooseGpuTransport("mpi", sharedWithin, 2, 2).kind, Kind::Mpi);
}
