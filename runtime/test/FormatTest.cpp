//===- FormatTest.cpp - One reader and one writer per format --------------===//
//
// manifest.json and program.json round-trip through their structs; the
// writer prints what the compiler's llvm::json printer prints; target.h
// accepts and refuses what it should.
//
//===----------------------------------------------------------------------===//

#include "../lib/json_write.h"
#include "ein/bundle.h"
#include "ein/target.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

using namespace ein;
using json = nlohmann::json;

namespace {

//===----------------------------------------------------------------------===//
// Field-by-field comparison
//===----------------------------------------------------------------------===//

void expectSame(const TensorType &a, const TensorType &b) {
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.shape, b.shape);
}

void expectSame(const Region &a, const Region &b) {
  EXPECT_EQ(a.buffer, b.buffer);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(a.extent, b.extent);
}

void expectSame(const Step &a, const Step &b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.deps, b.deps);
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.kernel, b.kernel);
  ASSERT_EQ(a.args.size(), b.args.size());
  for (size_t i = 0; i < a.args.size(); ++i) {
    EXPECT_EQ(a.args[i].buffer, b.args[i].buffer);
    EXPECT_EQ(a.args[i].access, b.args[i].access);
  }
  EXPECT_EQ(a.scalars, b.scalars);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(a.launch.grid[d], b.launch.grid[d]);
    EXPECT_EQ(a.launch.block[d], b.launch.block[d]);
  }
  EXPECT_EQ(a.launch.sharedBytes, b.launch.sharedBytes);
  EXPECT_EQ(a.call, b.call);
  EXPECT_EQ(a.a, b.a);
  EXPECT_EQ(a.b, b.b);
  EXPECT_EQ(a.c, b.c);
  EXPECT_EQ(a.transposeA, b.transposeA);
  EXPECT_EQ(a.transposeB, b.transposeB);
  EXPECT_EQ(a.alpha, b.alpha);
  EXPECT_EQ(a.beta, b.beta);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.v, b.v);
  EXPECT_EQ(a.o, b.o);
  EXPECT_EQ(a.lse, b.lse);
  EXPECT_EQ(a.causal, b.causal);
  EXPECT_EQ(a.diagonal, b.diagonal);
  EXPECT_EQ(a.scale, b.scale);
  ASSERT_EQ(a.copies.size(), b.copies.size());
  for (size_t i = 0; i < a.copies.size(); ++i) {
    SCOPED_TRACE("copy " + std::to_string(i));
    expectSame(a.copies[i].src, b.copies[i].src);
    expectSame(a.copies[i].dst, b.copies[i].dst);
  }
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.output, b.output);
}

void expectSame(const std::vector<TensorLayout> &a,
                const std::vector<TensorLayout> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("layout " + std::to_string(i));
    expectSame(a[i].type, b[i].type);
    ASSERT_EQ(a[i].blocks.size(), b[i].blocks.size());
    for (size_t j = 0; j < a[i].blocks.size(); ++j) {
      EXPECT_EQ(a[i].blocks[j].buffer, b[i].blocks[j].buffer);
      EXPECT_EQ(a[i].blocks[j].offset, b[i].blocks[j].offset);
    }
    EXPECT_EQ(a[i].value, b[i].value);
  }
}

void expectSame(const Manifest &a, const Manifest &b) {
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.chip, b.chip);
  EXPECT_EQ(a.devices, b.devices);
  EXPECT_EQ(a.arenaBytes, b.arenaBytes);
  EXPECT_EQ(a.kernelLibraries, b.kernelLibraries);
  EXPECT_EQ(a.kernelLibraryHashes, b.kernelLibraryHashes);
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    SCOPED_TRACE("buffer " + std::to_string(i));
    EXPECT_EQ(a.buffers[i].name, b.buffers[i].name);
    EXPECT_EQ(a.buffers[i].device, b.buffers[i].device);
    EXPECT_EQ(a.buffers[i].offset, b.buffers[i].offset);
    expectSame(a.buffers[i].type, b.buffers[i].type);
  }
  {
    SCOPED_TRACE("inputs");
    expectSame(a.inputs, b.inputs);
  }
  {
    SCOPED_TRACE("outputs");
    expectSame(a.outputs, b.outputs);
  }
  {
    SCOPED_TRACE("constants");
    expectSame(a.constants, b.constants);
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    expectSame(a.steps[i], b.steps[i]);
  }
}

void expectSame(const ScalarOp &a, const ScalarOp &b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.operands, b.operands);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.constant, b.constant);
  EXPECT_EQ(a.predicate, b.predicate);
  EXPECT_EQ(a.dim, b.dim);
}

void expectSame(const Op &a, const Op &b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.result, b.result);
  expectSame(a.type, b.type);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.inputIndices, b.inputIndices);
  EXPECT_EQ(a.outputIndices, b.outputIndices);
  EXPECT_EQ(a.agg, b.agg);
  EXPECT_EQ(a.acc, b.acc);
  EXPECT_EQ(a.join.args, b.join.args);
  EXPECT_EQ(a.join.yield, b.join.yield);
  ASSERT_EQ(a.join.ops.size(), b.join.ops.size());
  for (size_t i = 0; i < a.join.ops.size(); ++i) {
    SCOPED_TRACE("scalar op " + std::to_string(i));
    expectSame(a.join.ops[i], b.join.ops[i]);
  }
  EXPECT_EQ(a.causal, b.causal);
  EXPECT_EQ(a.group, b.group);
  EXPECT_EQ(a.scale, b.scale);
  EXPECT_EQ(a.queryOffset, b.queryOffset);
  EXPECT_EQ(a.keyOffset, b.keyOffset);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.eps, b.eps);
  EXPECT_EQ(a.rowOffset, b.rowOffset);
  EXPECT_EQ(a.reassociation, b.reassociation);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.sizes, b.sizes);
  EXPECT_EQ(a.values, b.values);
}

void expectSame(const Program &a, const Program &b) {
  EXPECT_EQ(a.function, b.function);
  ASSERT_EQ(a.arguments.size(), b.arguments.size());
  for (size_t i = 0; i < a.arguments.size(); ++i) {
    SCOPED_TRACE("argument " + std::to_string(i));
    EXPECT_EQ(a.arguments[i].name, b.arguments[i].name);
    expectSame(a.arguments[i].type, b.arguments[i].type);
    EXPECT_EQ(a.arguments[i].weight, b.arguments[i].weight);
  }
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    SCOPED_TRACE("op " + std::to_string(i) + " (" + a.ops[i].result + ")");
    expectSame(a.ops[i], b.ops[i]);
  }
  EXPECT_EQ(a.results, b.results);
}

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

std::string readFile(const std::filesystem::path &path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// Writes `first`, parses that, writes again: the texts are equal and the
/// struct read back is `first`. Returns the first text.
template <typename T, typename Parse, typename Write>
std::string roundTrip(const T &first, Parse parse, Write write) {
  std::string text = write(first), error;
  T second;
  EXPECT_TRUE(parse(text, second, error)) << error << "\n" << text;
  expectSame(first, second);
  EXPECT_EQ(write(second), text);
  return text;
}

std::string roundTripManifest(const Manifest &m) {
  return roundTrip(m, parseManifest, writeManifest);
}

std::string roundTripProgram(const Program &p) {
  return roundTrip(p, parseProgram, writeProgram);
}

TEST(Format, TestBundlesRoundTrip) {
  int manifests = 0, programs = 0;
  for (const auto &entry :
       std::filesystem::directory_iterator(EIN_TEST_SOURCE_BUNDLES_DIR)) {
    std::filesystem::path manifestPath = entry.path() / "manifest.json",
                          programPath = entry.path() / "program.json";
    std::string error;
    if (std::filesystem::exists(manifestPath)) {
      SCOPED_TRACE(manifestPath.string());
      Manifest m;
      ASSERT_TRUE(parseManifest(readFile(manifestPath), m, error)) << error;
      roundTripManifest(m);
      ++manifests;
    }
    if (std::filesystem::exists(programPath)) {
      SCOPED_TRACE(programPath.string());
      std::string text = readFile(programPath);
      Program p;
      ASSERT_TRUE(parseProgram(text, p, error)) << error;
      // These the compiler exported: the writer gives back their bytes.
      EXPECT_EQ(roundTripProgram(p), text);
      ++programs;
    }
  }
  EXPECT_GE(manifests, 4);
  EXPECT_GE(programs, 2);
}

TensorType tensor(DType dtype, std::vector<int64_t> shape) {
  return {dtype, std::move(shape)};
}

/// A cuda manifest with every field set away from its default: a kernel
/// with scalars and a launch, a gemm with transposes, alpha and beta,
/// attention with lse, a one-region and a batched transfer, a max
/// aggregation, labels, input and output blocks at offsets.
Manifest everyManifestField() {
  Manifest m;
  m.backend = Backend::Cuda;
  m.chip = "sm_90";
  m.devices = 2;
  m.arenaBytes = {4096, 4096};
  m.kernelLibraries = {"kernels/device.cubin"};
  m.kernelLibraryHashes = {std::string(64, 'e')};
  auto buffer = [&](const char *name, int device, TensorType type) {
    int64_t offset = 0;
    for (const Buffer &b : m.buffers)
      offset += b.device == device ? kBufferAlignment : 0;
    m.buffers.push_back({name, device, offset, std::move(type)});
    return static_cast<int>(m.buffers.size() - 1);
  };
  int q = buffer("Q0", 0, tensor(DType::BF16, {1, 2, 4, 8}));
  int k = buffer("K0", 0, tensor(DType::BF16, {1, 1, 4, 8}));
  int v = buffer("V0", 0, tensor(DType::BF16, {1, 1, 4, 8}));
  int o = buffer("O0", 0, tensor(DType::BF16, {1, 2, 4, 8}));
  int lse = buffer("L0", 0, tensor(DType::F32, {1, 2, 4}));
  int a = buffer("A0", 0, tensor(DType::BF16, {8, 4}));
  int b = buffer("B0", 0, tensor(DType::BF16, {6, 8}));
  int c = buffer("C0", 0, tensor(DType::F32, {4, 6}));
  int x = buffer("X1", 1, tensor(DType::F32, {4, 6}));
  int y = buffer("Y1", 1, tensor(DType::BF16, {1, 2, 4, 8}));
  int w = buffer("W1", 1, tensor(DType::F32, {4, 6}));
  int t = buffer("T1", 1, tensor(DType::F32, {2, 6}));
  int cx = buffer("CX1", 1, tensor(DType::BF16, {1, 5, 3, 2}));
  int cw = buffer("CW1", 1, tensor(DType::BF16, {2, 2, 2, 3}));
  int cy = buffer("CY1", 1, tensor(DType::BF16, {1, 2, 3, 3}));
  int s0 = buffer("S0", 0, tensor(DType::F32, {4, 6}));
  int u1 = buffer("U1", 1, tensor(DType::F32, {4, 6}));

  m.inputs = {{tensor(DType::BF16, {1, 2, 4, 8}), {{q, {0, 0, 0, 0}}}},
              {tensor(DType::BF16, {1, 1, 4, 8}), {{k, {0, 0, 0, 0}}}},
              {tensor(DType::BF16, {1, 1, 4, 8}), {{v, {0, 0, 0, 0}}}},
              {tensor(DType::BF16, {8, 8}), {{a, {0, 4}}}},
              {tensor(DType::BF16, {6, 8}), {{b, {0, 0}}}},
              // What the gemm (beta 2) reads of C0, and the rest of X1
              // around what the transfer writes: the data flow is whole.
              {tensor(DType::F32, {4, 6}), {{s0, {0, 0}}}},
              {tensor(DType::F32, {4, 6}), {{u1, {0, 0}}}},
              {tensor(DType::BF16, {1, 5, 3, 2}), {{cx, {0, 0, 0, 0}}}},
              {tensor(DType::BF16, {2, 2, 2, 3}), {{cw, {0, 0, 0, 0}}}}};
  m.outputs = {{tensor(DType::F32, {8, 6}), {{w, {0, 0}}, {x, {4, 0}}}},
               {tensor(DType::BF16, {1, 2, 4, 8}), {{y, {0, 0, 0, 0}}}}};
  m.constants = {{tensor(DType::F32, {4, 6}), {{t, {2, 0}}}, "v3"}};

  Step attention;
  attention.kind = StepKind::Library;
  attention.label = "attention block";
  attention.call = "attention";
  attention.q = q;
  attention.k = k;
  attention.v = v;
  attention.o = o;
  attention.lse = lse;
  attention.causal = true;
  attention.diagonal = -3;
  attention.scale = 0.35355339059327373;

  Step gemm;
  gemm.kind = StepKind::Library;
  gemm.label = "gemm block";
  gemm.call = "gemm";
  gemm.a = a;
  gemm.b = b;
  gemm.c = c;
  gemm.transposeA = gemm.transposeB = true;
  gemm.alpha = 0.5;
  gemm.beta = 2;

  Step initC;
  initC.kind = StepKind::Aggregate;
  initC.inputs = {s0};
  initC.output = c;
  gemm.deps = {1};

  Step initX;
  initX.kind = StepKind::Aggregate;
  initX.device = 1;
  initX.inputs = {u1};
  initX.output = x;

  Step one;
  one.kind = StepKind::Transfer;
  one.device = 1;
  one.deps = {2, 3};
  one.label = "pull";
  one.copies = {{{c, {1, 2}, {3, 4}}, {x, {1, 2}, {3, 4}}}};

  Step batch;
  batch.kind = StepKind::Transfer;
  batch.deps = {0};
  batch.label = "push two halves";
  batch.copies = {
      {{o, {0, 0, 0, 0}, {1, 1, 4, 8}}, {y, {0, 1, 0, 0}, {1, 1, 4, 8}}},
      {{o, {0, 1, 0, 0}, {1, 1, 4, 8}}, {y, {0, 0, 0, 0}, {1, 1, 4, 8}}}};

  Step kernel;
  kernel.device = 1;
  kernel.deps = {4, 5};
  kernel.label = "scale";
  kernel.kernel = "scale_bf16";
  kernel.args = {{y, Access::ReadWrite}, {x, Access::Read}};
  kernel.scalars = {64, -3};
  kernel.launch = {{2, 3, 4}, {32, 2, 1}, 1024};

  Step aggregate;
  aggregate.kind = StepKind::Aggregate;
  aggregate.device = 1;
  aggregate.deps = {4, 6};
  aggregate.label = "max";
  aggregate.op = Agg::Max;
  aggregate.inputs = {x, x};
  aggregate.output = w;

  // A conv on the layout fields' other values: stride 2 by 1, dilation 2
  // by 1, padding 0 and 1 before, 1 and 0 after.
  Step conv;
  conv.kind = StepKind::Library;
  conv.device = 1;
  conv.label = "conv block";
  conv.call = "conv";
  conv.a = cx;
  conv.b = cw;
  conv.c = cy;
  conv.conv.layout = "nhwc";
  conv.conv.strides = {2, 1};
  conv.conv.dilations = {2, 1};
  conv.conv.padLow = {0, 1};
  conv.conv.padHigh = {1, 0};

  m.steps = {attention, initC,  gemm,      initX, one,
             batch,     kernel, aggregate, conv};
  return m;
}

TEST(Format, EveryManifestFieldRoundTrips) {
  Manifest m = everyManifestField();
  std::string text = roundTripManifest(m);
  // What only the non-default fields bring.
  for (const char *field :
       {"\"lse\": \"L0\"", "\"value\": \"v3\"", "\"alpha\": 0.5", "\"beta\": 2",
        "\"scalars\"", "\"label\": \"max\"", "\"regions\"",
        "\"shared_bytes\": 1024", "\"call\": \"conv\"", "\"layout\": \"nhwc\""})
    EXPECT_NE(text.find(field), std::string::npos) << field;

  // At their defaults they are left out, as the compiler leaves them.
  for (Step &s : m.steps) {
    s.label.clear();
    s.scalars.clear();
    if (s.call == "attention")
      s.lse = -1;
    if (s.call == "gemm") {
      s.alpha = 1;
      s.beta = 0;
    }
  }
  text = roundTripManifest(m);
  for (const char *field :
       {"\"lse\"", "\"alpha\"", "\"beta\"", "\"scalars\"", "\"label\""})
    EXPECT_EQ(text.find(field), std::string::npos) << field;
}

/// A program with every op kind and, in its join, every scalar operation,
/// every field away from its default.
Program everyProgramField() {
  Program p;
  p.function = "everything";
  p.arguments = {{"x", tensor(DType::F32, {4, 8}), /*weight=*/true},
                 {"w", tensor(DType::F32, {8}), false},
                 {"q", tensor(DType::BF16, {1, 2, 4, 8}), false},
                 {"k", tensor(DType::BF16, {1, 1, 4, 8}), false},
                 {"v", tensor(DType::BF16, {1, 1, 4, 8}), false},
                 {"ids", tensor(DType::I32, {2, 3}), false},
                 {"img", tensor(DType::F32, {1, 2, 7, 6}), false},
                 {"fil", tensor(DType::F32, {3, 2, 3, 2}), false},
                 {"gfil", tensor(DType::F32, {4, 1, 3, 2}), false}};
  auto op = [&](OpKind kind, const char *result, TensorType type,
                std::vector<std::string> inputs) -> Op & {
    Op o;
    o.kind = kind;
    o.result = result;
    o.type = std::move(type);
    o.inputs = std::move(inputs);
    p.ops.push_back(std::move(o));
    return p.ops.back();
  };

  Op &join = op(OpKind::JoinAgg, "j", tensor(DType::F64, {4}), {"x", "w"});
  join.inputIndices = {{0, 1}, {1}};
  join.outputIndices = {0};
  join.agg = Agg::Max;
  join.acc = DType::F64;
  join.join.args = {DType::F32, DType::F32};
  for (int kind = 0; kind <= static_cast<int>(ScalarKind::LoopIndex); ++kind) {
    ScalarOp s;
    s.kind = static_cast<ScalarKind>(kind);
    s.name = scalarKindName(s.kind);
    s.type = DType::F32;
    for (size_t i = 0; i < scalarOperandCount(s.kind); ++i)
      s.operands.push_back(static_cast<int>(i));
    if (s.kind == ScalarKind::CmpF)
      s.predicate = "olt";
    if (s.kind == ScalarKind::CmpI)
      s.predicate = "sge";
    if (s.kind == ScalarKind::LoopIndex) {
      s.type = DType::Index;
      s.dim = 1;
    }
    if (s.kind == ScalarKind::Constant) {
      s.type = DType::F64;
      s.constant = 0.088388347648318433;
    }
    join.join.ops.push_back(s);
  }
  // Integer constants (one too large for "%.17g" to print as an integer),
  // and float ones JSON has no literal for.
  for (auto [type, value] :
       {std::pair{DType::I64, -7.0}, std::pair{DType::I64, 0x1p62},
        std::pair{DType::I1, 1.0},
        std::pair{DType::F32, -std::numeric_limits<double>::infinity()},
        std::pair{DType::F64, 1.0}}) {
    ScalarOp s;
    s.kind = ScalarKind::Constant;
    s.name = scalarKindName(s.kind);
    s.type = type;
    s.constant = value;
    join.join.ops.push_back(s);
  }
  join.join.yield = static_cast<int>(join.join.ops.size() + 1);

  Op &attention = op(OpKind::Attention, "a", tensor(DType::BF16, {1, 2, 4, 8}),
                     {"q", "k", "v"});
  attention.causal = true;
  attention.group = 2;
  attention.scale = 0.35355339059327373;
  attention.queryOffset = 3;
  attention.keyOffset = 1;
  op(OpKind::Softmax, "s", tensor(DType::F32, {4, 8}), {"x"}).dim = 1;
  Op &arg = op(OpKind::ArgReduce, "am", tensor(DType::I32, {8}), {"x"});
  arg.agg = Agg::Min;
  arg.dim = 0;
  op(OpKind::RmsNorm, "n", tensor(DType::F32, {4, 8}), {"x", "w"}).eps = 1e-5;
  op(OpKind::LayerNorm, "ln", tensor(DType::F32, {4, 8}), {"x", "w", "w"}).eps =
      1e-6;
  op(OpKind::Gather, "g", tensor(DType::F32, {2, 3, 8}), {"x", "ids"})
      .rowOffset = 3;
  Op &conv =
      op(OpKind::Conv, "cv", tensor(DType::F32, {1, 3, 2, 3}), {"img", "fil"});
  conv.window.layout = "nchw";
  conv.window.strides = {3, 2};
  conv.window.dilations = {2, 1};
  conv.window.padLow = {1, 0};
  conv.window.padHigh = {2, 1};
  Window2d window = conv.window; // (op() may move `conv`)
  window.groups = 2;
  op(OpKind::Conv, "gcv", tensor(DType::F32, {1, 4, 2, 3}), {"img", "gfil"})
      .window = window;
  Op &pool = op(OpKind::Pool, "pl", tensor(DType::F32, {1, 2, 3, 5}), {"img"});
  pool.agg = Agg::Max;
  pool.window.layout = "nchw";
  pool.window.sizes = {3, 2};
  pool.window.strides = {2, 1};
  pool.window.dilations = {1, 2};
  pool.window.padLow = {1, 1};
  pool.window.padHigh = {0, 0};
  op(OpKind::Reshape, "r", tensor(DType::F32, {32}), {"x"}).reassociation = {
      {0, 1}};
  Op &slice = op(OpKind::Slice, "l", tensor(DType::F32, {2, 3}), {"x"});
  slice.offsets = {1, 2};
  slice.sizes = {2, 3};
  op(OpKind::Concat, "c", tensor(DType::F32, {4, 16}), {"x", "s"}).dim = 1;
  op(OpKind::Constant, "f", tensor(DType::F32, {2, 2}), {}).values = {
      0.5, -2, 1024, std::numeric_limits<double>::infinity()};
  op(OpKind::Constant, "i", tensor(DType::I32, {3}), {}).values = {1, -5, 7};
  p.results = {"j",  "a", "n", "ln", "am", "cv", "gcv",
               "pl", "r", "l", "c",  "f",  "i"};
  return p;
}

TEST(Format, EveryProgramFieldRoundTrips) {
  Program p = everyProgramField();
  ASSERT_EQ(p.ops[0].join.yield,
            static_cast<int>(p.ops[0].join.ops.size() + 1));
  std::string text = roundTripProgram(p);
  for (const char *field :
       {"\"weight\": true", "\"value\": 0.088388347648318433", "\"value\": -7",
        "\"value\": 4611686018427387904\n", "\"value\": \"-inf\"",
        "\"value\": 1\n", "\"predicate\": \"olt\"",
        "\"eps\": 1.0000000000000001e-05", "\"kind\": \"layer_norm\"",
        "\"row_offset\": 3", "\"scale\": 0.35355339059327373",
        "\"kind\": \"conv\"", "\"layout\": \"nchw\"", "\"agg\": \"max\"",
        "\"kind\": \"arg_reduce\"", "\"agg\": \"min\"", "\"window\": [\n",
        "\"groups\": 2"})
    EXPECT_NE(text.find(field), std::string::npos) << field;
  // Only a weight says so.
  EXPECT_EQ(text.find("\"weight\": false"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// The emitter against what llvm::json prints
//===----------------------------------------------------------------------===//

using format::writeJson;

TEST(Format, EmitterSortsAndIndents) {
  json value = {{"b", 1},
                {"a", json::array()},
                {"c", json::object()},
                {"d", {1, json{{"y", {true, nullptr}}, {"x", "s"}}}}};
  EXPECT_EQ(writeJson(value), "{\n"
                              "  \"a\": [],\n"
                              "  \"b\": 1,\n"
                              "  \"c\": {},\n"
                              "  \"d\": [\n"
                              "    1,\n"
                              "    {\n"
                              "      \"x\": \"s\",\n"
                              "      \"y\": [\n"
                              "        true,\n"
                              "        null\n"
                              "      ]\n"
                              "    }\n"
                              "  ]\n"
                              "}");
  // Keys sort as bytes: upper case, '_', lower case, then UTF-8.
  EXPECT_EQ(writeJson({{"\xc3\xa9", 0}, {"a", 0}, {"_", 0}, {"B", 0}}),
            "{\n  \"B\": 0,\n  \"_\": 0,\n  \"a\": 0,\n  \"\xc3\xa9\": 0\n}");
  EXPECT_EQ(writeJson(json::array()), "[]");
  EXPECT_EQ(writeJson(json::object()), "{}");
  EXPECT_EQ(writeJson(false), "false");
  EXPECT_EQ(writeJson(nullptr), "null");
}

TEST(Format, EmitterNumbers) {
  // Doubles as "%.17g": the shortest is not what LLVM prints.
  EXPECT_EQ(writeJson(0.088388347648318433), "0.088388347648318433");
  EXPECT_EQ(writeJson(0.1), "0.10000000000000001");
  EXPECT_EQ(writeJson(1e-5), "1.0000000000000001e-05");
  EXPECT_EQ(writeJson(1.0), "1");
  EXPECT_EQ(writeJson(-2.0), "-2");
  EXPECT_EQ(writeJson(-0.0), "-0");
  EXPECT_EQ(writeJson(1e300), "1.0000000000000001e+300");
  EXPECT_EQ(writeJson(123456789012345680.0), "1.2345678901234568e+17");
  // Integers as integers, to both ends of int64 (and uint64 above).
  EXPECT_EQ(writeJson(std::numeric_limits<int64_t>::max()),
            "9223372036854775807");
  EXPECT_EQ(writeJson(std::numeric_limits<int64_t>::min()),
            "-9223372036854775808");
  EXPECT_EQ(writeJson(std::numeric_limits<uint64_t>::max()),
            "18446744073709551615");
  EXPECT_EQ(writeJson(json::array({int64_t(0), 0.0})), "[\n  0,\n  0\n]");
}

TEST(Format, EmitterEscapes) {
  EXPECT_EQ(writeJson("q\"b\\t\tn\nr\rb\bf\f\x01\x1f\x7f \xc3\xa9"),
            "\"q\\\"b\\\\t\\tn\\nr\\rb\\u0008f\\u000c\\u0001\\u001f\x7f "
            "\xc3\xa9\"");
  EXPECT_EQ(writeJson(std::string("nul\0end", 7)), "\"nul\\u0000end\"");
  EXPECT_EQ(writeJson({{"k\"ey", "v"}}), "{\n  \"k\\\"ey\": \"v\"\n}");
}

//===----------------------------------------------------------------------===//
// target.h
//===----------------------------------------------------------------------===//

TEST(Format, ParseBackend) {
  for (Backend b : {Backend::Cpu, Backend::Cuda}) {
    Backend parsed = b == Backend::Cpu ? Backend::Cuda : Backend::Cpu;
    std::string error;
    EXPECT_TRUE(parseBackend(backendName(b), parsed, error)) << error;
    EXPECT_EQ(parsed, b);
  }
  EXPECT_STREQ(backendName(Backend::Cpu), "cpu");
  EXPECT_STREQ(backendName(Backend::Cuda), "cuda");
  for (const char *name : {"tpu", "CPU", "", "cuda "}) {
    Backend parsed = Backend::Cuda;
    std::string error;
    EXPECT_FALSE(parseBackend(name, parsed, error)) << name;
    EXPECT_EQ(error,
              std::string("expected \"cpu\" or \"cuda\", got '") + name + "'");
    EXPECT_EQ(parsed, Backend::Cuda) << "left as it was";
  }
}

TEST(Format, CheckDevices) {
  std::string error;
  for (int64_t n : {int64_t(1), int64_t(2), kMaxDevices})
    EXPECT_TRUE(checkDevices(n, error)) << n << ": " << error;
  for (int64_t n : {int64_t(0), int64_t(-1), kMaxDevices + 1}) {
    EXPECT_FALSE(checkDevices(n, error)) << n;
    EXPECT_EQ(error, "must be 1 to 64, got " + std::to_string(n));
  }
}

TEST(Format, CheckChips) {
  std::string error;
  EXPECT_TRUE(checkChipForBackend(Backend::Cpu, "host", error)) << error;
  for (const char *chip : {"sm_90", "sm_100", "sm_8"})
    EXPECT_TRUE(checkChipForBackend(Backend::Cuda, chip, error))
        << chip << ": " << error;
  for (const char *chip : {"sm_90", "", "Host"}) {
    EXPECT_FALSE(checkChipForBackend(Backend::Cpu, chip, error)) << chip;
    EXPECT_EQ(error, std::string("a cpu bundle's chip is \"host\", got '") +
                         chip + "'");
  }
  for (const char *chip : {"host", "sm_", "sm_00", "sm_9a", "gfx90", "SM_90"}) {
    EXPECT_FALSE(checkChipForBackend(Backend::Cuda, chip, error)) << chip;
    EXPECT_EQ(error,
              std::string("a cuda bundle's chip is sm_NN, got '") + chip + "'");
  }

  for (const char *chip : {"host", "sm_90", "sm_100"})
    EXPECT_TRUE(checkChipName(chip, error)) << chip << ": " << error;
  for (const char *chip : {"gfx90", "", "sm_", "sm_0", "hostx"}) {
    EXPECT_FALSE(checkChipName(chip, error)) << chip;
    EXPECT_EQ(error, std::string("unknown chip '") + chip +
                         "'; expected 'sm_<N>' (e.g. sm_90) or 'host'");
  }

  EXPECT_EQ(bundleChip(Backend::Cpu, "sm_90"), kHostChip);
  EXPECT_EQ(bundleChip(Backend::Cuda, "sm_90"), "sm_90");
}

} // namespace
