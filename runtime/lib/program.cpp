//===- program.cpp - program.json: its schema, reader and writer ----------===//

#include "ein/program.h"

#include "ein/partition.h"
#include "json_node.h"
#include "json_write.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace ein {

using namespace format;

namespace {

constexpr const char *kFormatName = "ein-program";

constexpr Spelling<Agg> kAggs[] = {{Agg::None, "none"},
                                   {Agg::Add, "add"},
                                   {Agg::Max, "max"},
                                   {Agg::Min, "min"},
                                   {Agg::Mul, "mul"}};

constexpr Spelling<OpKind> kOpKinds[] = {{OpKind::JoinAgg, "join_agg"},
                                         {OpKind::Attention, "attention"},
                                         {OpKind::Softmax, "softmax"},
                                         {OpKind::RmsNorm, "rms_norm"},
                                         {OpKind::LayerNorm, "layer_norm"},
                                         {OpKind::Gather, "gather"},
                                         {OpKind::Conv, "conv"},
                                         {OpKind::ArgReduce, "arg_reduce"},
                                         {OpKind::Pool, "pool"},
                                         {OpKind::Reshape, "reshape"},
                                         {OpKind::Slice, "slice"},
                                         {OpKind::Concat, "concat"},
                                         {OpKind::Constant, "constant"}};

constexpr Spelling<ScalarKind> kScalarKinds[] = {
    {ScalarKind::AddF, "arith.addf"},
    {ScalarKind::SubF, "arith.subf"},
    {ScalarKind::MulF, "arith.mulf"},
    {ScalarKind::DivF, "arith.divf"},
    {ScalarKind::RemF, "arith.remf"},
    {ScalarKind::NegF, "arith.negf"},
    {ScalarKind::MaximumF, "arith.maximumf"},
    {ScalarKind::MinimumF, "arith.minimumf"},
    {ScalarKind::MaxNumF, "arith.maxnumf"},
    {ScalarKind::MinNumF, "arith.minnumf"},
    {ScalarKind::Exp, "math.exp"},
    {ScalarKind::Exp2, "math.exp2"},
    {ScalarKind::Log, "math.log"},
    {ScalarKind::Log2, "math.log2"},
    {ScalarKind::Log1p, "math.log1p"},
    {ScalarKind::Sqrt, "math.sqrt"},
    {ScalarKind::Rsqrt, "math.rsqrt"},
    {ScalarKind::Tanh, "math.tanh"},
    {ScalarKind::AbsF, "math.absf"},
    {ScalarKind::Erf, "math.erf"},
    {ScalarKind::Sin, "math.sin"},
    {ScalarKind::Cos, "math.cos"},
    {ScalarKind::PowF, "math.powf"},
    {ScalarKind::Fma, "math.fma"},
    {ScalarKind::AddI, "arith.addi"},
    {ScalarKind::SubI, "arith.subi"},
    {ScalarKind::MulI, "arith.muli"},
    {ScalarKind::DivSI, "arith.divsi"},
    {ScalarKind::RemSI, "arith.remsi"},
    {ScalarKind::MaxSI, "arith.maxsi"},
    {ScalarKind::MinSI, "arith.minsi"},
    {ScalarKind::AndI, "arith.andi"},
    {ScalarKind::OrI, "arith.ori"},
    {ScalarKind::XOrI, "arith.xori"},
    {ScalarKind::ExtF, "arith.extf"},
    {ScalarKind::TruncF, "arith.truncf"},
    {ScalarKind::SIToFP, "arith.sitofp"},
    {ScalarKind::UIToFP, "arith.uitofp"},
    {ScalarKind::FPToSI, "arith.fptosi"},
    {ScalarKind::IndexCast, "arith.index_cast"},
    {ScalarKind::CmpF, "arith.cmpf"},
    {ScalarKind::CmpI, "arith.cmpi"},
    {ScalarKind::Select, "arith.select"},
    {ScalarKind::Constant, "arith.constant"},
    {ScalarKind::LoopIndex, "ein.index"}};

} // namespace

int64_t TensorType::numElements() const { return product(shape); }

const char *aggName(Agg agg) { return spell(kAggs, agg); }

const char *opKindName(OpKind kind) { return spell(kOpKinds, kind); }

const char *scalarKindName(ScalarKind kind) {
  return spell(kScalarKinds, kind);
}

namespace format {
Agg parseAgg(const Node &node) {
  return parseSpelling(kAggs, node, "aggregation");
}
} // namespace format

namespace {

constexpr int64_t kMaxOffset = int64_t(1) << 48;

const std::set<std::string> kCmpFPredicates = {
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq",   "ugt", "uge", "ult", "ule", "une", "uno", "true"};
const std::set<std::string> kCmpIPredicates = {
    "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};

JoinRegion parseJoin(const Node &node, const std::vector<DType> &inputTypes,
                     int64_t numLoops, DType acc) {
  node.only({"args", "ops", "yield"});
  JoinRegion region;
  Node args = node.at("args");
  for (size_t i = 0, e = args.size(); i < e; ++i)
    region.args.push_back(args[i].dtype());
  if (region.args != inputTypes)
    fail(args.path, "the join's arguments must have the inputs' element types");
  std::vector<DType> valueTypes = region.args;
  Node ops = node.at("ops");
  for (size_t i = 0, e = ops.size(); i < e; ++i) {
    Node n = ops[i];
    n.only({"op", "operands", "type", "value", "predicate", "dim"});
    ScalarOp op;
    op.name = n.at("op").str();
    std::optional<ScalarKind> kind = lookUp(kScalarKinds, op.name);
    if (!kind)
      fail(n.path + ".op", "unsupported scalar operation '" + op.name + "'");
    op.kind = *kind;
    op.type = n.at("type").dtype();
    op.operands.clear();
    for (int64_t v : n.at("operands").integers()) {
      if (v < 0 || v >= static_cast<int64_t>(valueTypes.size()))
        fail(n.path + ".operands", "value " + std::to_string(v) +
                                       " is not defined before this operation");
      op.operands.push_back(static_cast<int>(v));
    }
    if (op.operands.size() != scalarOperandCount(op.kind))
      fail(n.path, op.name + " takes " +
                       std::to_string(scalarOperandCount(op.kind)) +
                       " operands, got " + std::to_string(op.operands.size()));
    if (op.kind == ScalarKind::Constant)
      op.constant = roundTo(op.type, n.at("value").number());
    if (op.kind == ScalarKind::LoopIndex) {
      op.dim = n.at("dim").integer();
      if (op.dim < 0 || op.dim >= numLoops)
        fail(n.path + ".dim", "loop d" + std::to_string(op.dim) +
                                  " does not exist: the op has " +
                                  std::to_string(numLoops) + " loops");
    }
    if (op.kind == ScalarKind::CmpF || op.kind == ScalarKind::CmpI) {
      op.predicate = n.at("predicate").str();
      const auto &valid =
          op.kind == ScalarKind::CmpF ? kCmpFPredicates : kCmpIPredicates;
      if (!valid.count(op.predicate))
        fail(n.path + ".predicate", "unknown predicate '" + op.predicate + "'");
    }
    valueTypes.push_back(op.type);
    region.ops.push_back(op);
  }
  int64_t yield = node.at("yield").integer();
  if (yield < 0 || yield >= static_cast<int64_t>(valueTypes.size()))
    fail(node.path + ".yield",
         "value " + std::to_string(yield) + " does not exist");
  if (valueTypes[yield] != acc)
    fail(node.path + ".yield",
         std::string("the join yields ") + dtypeName(valueTypes[yield]) +
             " but the accumulator type is " + dtypeName(acc));
  region.yield = static_cast<int>(yield);
  return region;
}

/// Checks a join-agg's index lists against its operand shapes and returns
/// the loop count.
int64_t checkIndices(const std::string &where, const Op &op,
                     const std::vector<TensorType> &inputs) {
  if (op.inputIndices.size() != inputs.size())
    fail(where, std::to_string(inputs.size()) + " inputs but " +
                    std::to_string(op.inputIndices.size()) + " index lists");
  std::map<int64_t, int64_t> sizes;
  auto collect = [&](const std::vector<int64_t> &indices,
                     const std::vector<int64_t> &shape,
                     const std::string &what) {
    if (indices.size() != shape.size())
      fail(where, what + " has rank " + std::to_string(shape.size()) + " but " +
                      std::to_string(indices.size()) + " indices");
    std::set<int64_t> seen;
    for (size_t d = 0; d < indices.size(); ++d) {
      if (indices[d] < 0 || !seen.insert(indices[d]).second)
        fail(where, what + " has a negative or repeated index");
      auto [it, inserted] = sizes.emplace(indices[d], shape[d]);
      if (!inserted && it->second != shape[d])
        fail(where, "loop d" + std::to_string(indices[d]) + " has sizes " +
                        std::to_string(it->second) + " and " +
                        std::to_string(shape[d]));
    }
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    collect(op.inputIndices[i], inputs[i].shape, "input " + std::to_string(i));
  collect(op.outputIndices, op.type.shape, "the result");
  int64_t numLoops = static_cast<int64_t>(sizes.size());
  if (!sizes.empty() && sizes.rbegin()->first != numLoops - 1)
    fail(where, "loop indices must be numbered densely from d0");
  if (op.agg == Agg::None && op.outputIndices.size() != sizes.size())
    fail(where, "aggregation 'none' but some loop is not in the result");
  return numLoops;
}

void checkReshape(const std::string &where, const Op &op,
                  const TensorType &in) {
  bool expand = op.type.shape.size() > in.shape.size();
  const auto &high = expand ? op.type.shape : in.shape;
  const auto &low = expand ? in.shape : op.type.shape;
  if (op.reassociation.size() != low.size())
    fail(where, "reassociation has " + std::to_string(op.reassociation.size()) +
                    " groups for rank " + std::to_string(low.size()));
  int64_t next = 0;
  for (size_t g = 0; g < op.reassociation.size(); ++g) {
    int64_t elements = 1;
    if (op.reassociation[g].empty())
      fail(where, "reassociation group " + std::to_string(g) + " is empty");
    for (int64_t d : op.reassociation[g]) {
      if (d != next++ || d >= static_cast<int64_t>(high.size()))
        fail(where, "reassociation must list dimensions in order");
      elements *= high[d];
    }
    if (elements != low[g])
      fail(where, "reassociation group " + std::to_string(g) +
                      " does not match the shapes");
  }
  if (next != static_cast<int64_t>(high.size()))
    fail(where, "reassociation does not cover every dimension");
}

/// Fails at `where` with `error` where `shape` is empty (an invalid
/// window), and returns it.
std::vector<int64_t> checked(const std::string &where,
                             std::vector<int64_t> shape,
                             const std::string &error) {
  if (shape.empty())
    fail(where, error);
  return shape;
}

void checkOp(const std::string &where, Op &op,
             const std::vector<TensorType> &in) {
  auto expectInputs = [&](size_t n) {
    if (in.size() != n)
      fail(where, std::string(opKindName(op.kind)) + " takes " +
                      std::to_string(n) + " inputs, got " +
                      std::to_string(in.size()));
  };
  auto expectResult = [&](const std::vector<int64_t> &shape, DType dtype) {
    if (op.type.shape != shape || op.type.dtype != dtype)
      fail(where, "result must be " + shapeText(shape) + " " +
                      dtypeName(dtype) + ", got " + shapeText(op.type.shape) +
                      " " + dtypeName(op.type.dtype));
  };
  switch (op.kind) {
  case OpKind::JoinAgg:
    break; // checked while parsing the region
  case OpKind::Attention: {
    expectInputs(3);
    const TensorType &q = in[0], &k = in[1], &v = in[2];
    if (q.shape.size() != 4 || k.shape.size() != 4 || v.shape.size() != 4)
      fail(where, "query, key and value must have rank 4");
    if (op.group < 1 || op.group > q.shape[1] || q.shape[1] % op.group ||
        q.shape[1] / op.group != k.shape[1] || k.shape[0] != q.shape[0] ||
        v.shape[0] != q.shape[0] || v.shape[1] != k.shape[1] ||
        v.shape[2] != k.shape[2] || k.shape[3] != q.shape[3])
      fail(where, "query " + shapeText(q.shape) + ", key " +
                      shapeText(k.shape) + " and value " + shapeText(v.shape) +
                      " do not fit group " + std::to_string(op.group));
    if (!(op.scale > 0) || !std::isfinite(op.scale) || op.queryOffset < 0 ||
        op.keyOffset < 0 || op.queryOffset > kMaxOffset ||
        op.keyOffset > kMaxOffset)
      fail(where, "scale must be positive and offsets between 0 and 2^48");
    expectResult({q.shape[0], q.shape[1], q.shape[2], v.shape[3]}, q.dtype);
    break;
  }
  case OpKind::Softmax:
    expectInputs(1);
    if (op.dim < 0 || op.dim >= static_cast<int64_t>(in[0].shape.size()))
      fail(where, "dim " + std::to_string(op.dim) + " is out of range");
    expectResult(in[0].shape, in[0].dtype);
    break;
  case OpKind::RmsNorm:
    expectInputs(2);
    if (in[0].shape.empty() ||
        in[1].shape != std::vector<int64_t>{in[0].shape.back()})
      fail(where,
           "weight must have one element per element of the last dimension");
    if (!(op.eps > 0))
      fail(where, "eps must be positive");
    expectResult(in[0].shape, in[0].dtype);
    break;
  case OpKind::LayerNorm:
    if (in.empty() || in.size() > 3)
      fail(where, "layer_norm takes 1 to 3 inputs (x, then its weight and "
                  "bias), got " +
                      std::to_string(in.size()));
    if (in[0].shape.empty())
      fail(where, "layer_norm needs an input of rank 1 or more");
    for (size_t i = 1; i < in.size(); ++i)
      if (in[i].shape != std::vector<int64_t>{in[0].shape.back()} ||
          in[i].dtype != in[0].dtype)
        fail(where, std::string(i == 1 ? "weight" : "bias") +
                        " must have one element of x's type per element of "
                        "the last dimension");
    if (!(op.eps > 0))
      fail(where, "eps must be positive");
    expectResult(in[0].shape, in[0].dtype);
    break;
  case OpKind::Gather: {
    expectInputs(2);
    const TensorType &table = in[0], &indices = in[1];
    if (table.shape.empty() || !isFloat(table.dtype))
      fail(where, "gather reads a float table of rank 1 or more");
    if (indices.dtype != DType::I64 && indices.dtype != DType::I32)
      fail(where, "gather's indices must be i64 or i32");
    if (op.rowOffset < 0 || op.rowOffset > kMaxOffset)
      fail(where, "row_offset must be between 0 and 2^48");
    std::vector<int64_t> shape = indices.shape;
    shape.insert(shape.end(), table.shape.begin() + 1, table.shape.end());
    expectResult(shape, table.dtype);
    break;
  }
  case OpKind::Conv: {
    expectInputs(2);
    const TensorType &x = in[0], &w = in[1];
    if (op.window.layout != "nhwc" && op.window.layout != "nchw")
      fail(where, "layout must be \"nhwc\" or \"nchw\"");
    if (x.shape.size() != 4 || !isFloat(x.dtype))
      fail(where, "conv reads a 4-D float input");
    if (w.shape.size() != 4 || w.dtype != x.dtype)
      fail(where, "conv's filter must be 4-D, of the input's type");
    std::string error;
    expectResult(checked(where,
                         convResultShape(op.window, x.shape, w.shape, error),
                         error),
                 x.dtype);
    break;
  }
  case OpKind::ArgReduce: {
    expectInputs(1);
    if (op.agg != Agg::Max && op.agg != Agg::Min)
      fail(where, "arg_reduce's agg must be max or min");
    if (!isFloat(in[0].dtype))
      fail(where, "arg_reduce reads a float input");
    if (op.dim < 0 || op.dim >= static_cast<int64_t>(in[0].shape.size()))
      fail(where, "dim " + std::to_string(op.dim) + " is out of range");
    if (op.type.dtype != DType::I64 && op.type.dtype != DType::I32)
      fail(where, "arg_reduce's result holds i64 or i32 indices");
    std::vector<int64_t> shape = in[0].shape;
    shape.erase(shape.begin() + op.dim);
    expectResult(shape, op.type.dtype);
    break;
  }
  case OpKind::Pool:
    expectInputs(1);
    if (op.agg != Agg::Max && op.agg != Agg::Add)
      fail(where, "pool's agg must be max or add");
    if (in[0].shape.size() != 4 || !isFloat(in[0].dtype))
      fail(where, "pool reads a 4-D float input");
    {
      std::string error;
      expectResult(
          checked(where,
                  windowResultShape(
                      op.window, in[0].shape,
                      in[0].shape[op.window.layout == "nhwc" ? 3 : 1], error),
                  error),
          in[0].dtype);
    }
    break;
  case OpKind::Reshape:
    expectInputs(1);
    if (op.type.numElements() != in[0].numElements() ||
        op.type.dtype != in[0].dtype)
      fail(where, "reshape must keep the element count and type");
    checkReshape(where, op, in[0]);
    break;
  case OpKind::Slice: {
    expectInputs(1);
    const auto &shape = in[0].shape;
    if (op.offsets.size() != shape.size() || op.sizes.size() != shape.size())
      fail(where, "offsets and sizes must have one entry per dimension");
    for (size_t d = 0; d < shape.size(); ++d)
      if (op.offsets[d] < 0 || op.sizes[d] < 1 || op.sizes[d] > shape[d] ||
          op.offsets[d] > shape[d] - op.sizes[d])
        fail(where,
             "the slice leaves the source in dimension " + std::to_string(d));
    expectResult(op.sizes, in[0].dtype);
    break;
  }
  case OpKind::Concat: {
    if (in.empty())
      fail(where, "concat needs at least one input");
    std::vector<int64_t> shape = in[0].shape;
    if (op.dim < 0 || op.dim >= static_cast<int64_t>(shape.size()))
      fail(where, "dim " + std::to_string(op.dim) + " is out of range");
    shape[op.dim] = 0;
    for (const TensorType &t : in) {
      if (t.shape.size() != shape.size() || t.dtype != in[0].dtype)
        fail(where, "inputs do not concatenate");
      for (size_t d = 0; d < shape.size(); ++d)
        if (static_cast<int64_t>(d) != op.dim && t.shape[d] != in[0].shape[d])
          fail(where, "inputs do not concatenate");
      shape[op.dim] += t.shape[op.dim];
    }
    expectResult(shape, in[0].dtype);
    break;
  }
  case OpKind::Constant:
    expectInputs(0);
    if (op.values.size() != 1 &&
        static_cast<int64_t>(op.values.size()) != op.type.numElements())
      fail(where, "a constant holds one value (a splat) or one per element");
    break;
  }
}

void parse(const json &root, Program &program) {
  Node top{root, "program"};
  top.only({"format", "version", "function", "arguments", "ops", "results"});
  if (top.at("format").str() != kFormatName)
    fail("program.format", std::string("expected \"") + kFormatName + "\"");
  int64_t version = top.at("version").integer();
  if (version != kProgramFormatVersion)
    fail("program.version", "this reader understands version " +
                                std::to_string(kProgramFormatVersion) +
                                ", the file has version " +
                                std::to_string(version));
  program.function = top.at("function").str();

  std::map<std::string, TensorType> values;
  Node args = top.at("arguments");
  for (size_t i = 0, e = args.size(); i < e; ++i) {
    Argument arg;
    args[i].only({"name", "type", "weight"});
    arg.name = args[i].at("name").str();
    arg.type = parseType(args[i].at("type"));
    if (args[i].has("weight"))
      arg.weight = args[i].at("weight").boolean();
    if (!values.emplace(arg.name, arg.type).second)
      fail(args[i].path + ".name", "'" + arg.name + "' is defined twice");
    program.arguments.push_back(arg);
  }

  Node ops = top.at("ops");
  for (size_t i = 0, e = ops.size(); i < e; ++i) {
    Node n = ops[i];
    Op op;
    op.kind = parseSpelling(kOpKinds, n.at("kind"), "op kind");
    switch (op.kind) {
    case OpKind::JoinAgg:
      n.only({"kind", "result", "type", "inputs", "input_indices",
              "output_indices", "agg", "acc", "join"});
      break;
    case OpKind::Attention:
      n.only({"kind", "result", "type", "inputs", "causal", "group", "scale",
              "query_offset", "key_offset"});
      break;
    case OpKind::Softmax:
    case OpKind::Concat:
      n.only({"kind", "result", "type", "inputs", "dim"});
      break;
    case OpKind::ArgReduce:
      n.only({"kind", "result", "type", "inputs", "agg", "dim"});
      break;
    case OpKind::RmsNorm:
    case OpKind::LayerNorm:
      n.only({"kind", "result", "type", "inputs", "eps"});
      break;
    case OpKind::Gather:
      n.only({"kind", "result", "type", "inputs", "row_offset"});
      break;
    case OpKind::Conv:
      n.only({"kind", "result", "type", "inputs", "layout", "strides",
              "dilations", "pad_low", "pad_high", "groups"});
      break;
    case OpKind::Pool:
      n.only({"kind", "result", "type", "inputs", "agg", "layout", "window",
              "strides", "dilations", "pad_low", "pad_high"});
      break;
    case OpKind::Reshape:
      n.only({"kind", "result", "type", "inputs", "reassociation"});
      break;
    case OpKind::Slice:
      n.only({"kind", "result", "type", "inputs", "offsets", "sizes"});
      break;
    case OpKind::Constant:
      n.only({"kind", "result", "type", "inputs", "values"});
      break;
    }
    op.result = n.at("result").str();
    op.type = parseType(n.at("type"));
    std::vector<TensorType> inputs;
    Node inputNames = n.at("inputs");
    for (size_t j = 0, f = inputNames.size(); j < f; ++j) {
      std::string name = inputNames[j].str();
      auto it = values.find(name);
      if (it == values.end())
        fail(inputNames[j].path,
             "value '" + name + "' is not defined before use");
      op.inputs.push_back(name);
      inputs.push_back(it->second);
    }
    switch (op.kind) {
    case OpKind::JoinAgg: {
      op.inputIndices = n.at("input_indices").integerLists();
      op.outputIndices = n.at("output_indices").integers();
      op.agg = parseAgg(n.at("agg"));
      op.acc = n.at("acc").dtype();
      int64_t numLoops = checkIndices(n.path, op, inputs);
      std::vector<DType> inputTypes;
      for (const TensorType &t : inputs)
        inputTypes.push_back(t.dtype);
      op.join = parseJoin(n.at("join"), inputTypes, numLoops, op.acc);
      break;
    }
    case OpKind::Attention:
      op.causal = n.at("causal").boolean();
      op.group = n.at("group").integer();
      op.scale = n.at("scale").number();
      op.queryOffset = n.at("query_offset").integer();
      op.keyOffset = n.at("key_offset").integer();
      break;
    case OpKind::ArgReduce:
      op.agg = parseAgg(n.at("agg"));
      [[fallthrough]];
    case OpKind::Softmax:
    case OpKind::Concat:
      op.dim = n.at("dim").integer();
      break;
    case OpKind::RmsNorm:
    case OpKind::LayerNorm:
      op.eps = n.at("eps").number();
      break;
    case OpKind::Gather:
      op.rowOffset = n.at("row_offset").integer();
      break;
    case OpKind::Pool:
      op.agg = parseAgg(n.at("agg"));
      op.window.sizes = n.at("window").integers();
      [[fallthrough]];
    case OpKind::Conv:
      readWindow(n, op.window);
      break;
    case OpKind::Reshape:
      op.reassociation = n.at("reassociation").integerLists();
      break;
    case OpKind::Slice:
      op.offsets = n.at("offsets").integers();
      op.sizes = n.at("sizes").integers();
      break;
    case OpKind::Constant: {
      Node v = n.at("values");
      for (size_t j = 0, f = v.size(); j < f; ++j)
        op.values.push_back(roundTo(op.type.dtype, v[j].number()));
      break;
    }
    }
    checkOp(n.path, op, inputs);
    if (!values.emplace(op.result, op.type).second)
      fail(n.path + ".result", "'" + op.result + "' is defined twice");
    program.ops.push_back(std::move(op));
  }

  Node results = top.at("results");
  if (results.size() == 0)
    fail(results.path, "a program needs at least one result");
  for (size_t i = 0, e = results.size(); i < e; ++i) {
    std::string name = results[i].str();
    if (!values.count(name))
      fail(results[i].path, "value '" + name + "' is not defined");
    program.results.push_back(name);
  }
}

} // namespace

std::vector<int64_t> windowResultShape(const Window2d &w,
                                       const std::vector<int64_t> &input,
                                       int64_t channels, std::string &error) {
  if (w.layout != "nhwc" && w.layout != "nchw") {
    error = "layout must be \"nhwc\" or \"nchw\"";
    return {};
  }
  if (input.size() != 4) {
    error = "a window reads a 4-D input, got " + shapeText(input);
    return {};
  }
  for (const auto *values :
       {&w.sizes, &w.strides, &w.dilations, &w.padLow, &w.padHigh})
    if (values->size() != 2) {
      error = "window, strides, dilations, pad_low and pad_high need 2 "
              "values each (rows, columns)";
      return {};
    }
  bool last = w.layout == "nhwc";
  std::vector<int64_t> shape = input;
  for (int d = 0; d < 2; ++d) {
    int64_t dim = last ? 1 + d : 2 + d;
    if (w.sizes[d] < 1 || w.sizes[d] > kMaxOffset || w.strides[d] < 1 ||
        w.strides[d] > kMaxOffset || w.dilations[d] < 1 ||
        w.dilations[d] > kMaxOffset) {
      error = "window sizes, strides and dilations must be between 1 and "
              "2^48";
      return {};
    }
    int64_t reach = (w.sizes[d] - 1) * w.dilations[d] + 1;
    if (reach > kMaxOffset || w.padLow[d] < 0 || w.padHigh[d] < 0 ||
        w.padLow[d] >= reach || w.padHigh[d] >= reach) {
      error = "padding must be non-negative and narrower than the window's "
              "reach";
      return {};
    }
    int64_t padded = input[dim] + w.padLow[d] + w.padHigh[d];
    if (reach > padded) {
      error = "the window does not fit the padded input";
      return {};
    }
    shape[dim] = (padded - reach) / w.strides[d] + 1;
  }
  shape[last ? 3 : 1] = channels;
  return shape;
}

std::vector<int64_t> convResultShape(const Window2d &w,
                                     const std::vector<int64_t> &input,
                                     const std::vector<int64_t> &filter,
                                     std::string &error) {
  bool last = w.layout == "nhwc";
  if (filter.size() != 4 || input.size() != 4) {
    error = "the input and the filter must be 4-D";
    return {};
  }
  int64_t channels = input[last ? 3 : 1], features = filter[last ? 3 : 0];
  if (w.groups < 1 || channels % w.groups != 0 || features % w.groups != 0) {
    error = "groups (" + std::to_string(w.groups) +
            ") must be positive and divide the input's " +
            std::to_string(channels) + " channels and the filter's " +
            std::to_string(features) + " output channels";
    return {};
  }
  if (filter[last ? 2 : 1] != channels / w.groups) {
    error = w.groups == 1 ? "the filter does not read the input's channels"
                          : "the filter does not read the input's channels "
                            "per group";
    return {};
  }
  Window2d window = w;
  window.sizes = last ? std::vector<int64_t>{filter[0], filter[1]}
                      : std::vector<int64_t>{filter[2], filter[3]};
  return windowResultShape(window, input, filter[last ? 3 : 0], error);
}

namespace {

/// A conversion between element types (one operand, no arithmetic).
bool isConversion(ScalarKind kind) {
  switch (kind) {
  case ScalarKind::ExtF:
  case ScalarKind::TruncF:
  case ScalarKind::SIToFP:
  case ScalarKind::UIToFP:
  case ScalarKind::FPToSI:
  case ScalarKind::IndexCast:
    return true;
  default:
    return false;
  }
}

} // namespace

size_t scalarOperandCount(ScalarKind kind) {
  if (isConversion(kind))
    return 1;
  switch (kind) {
  case ScalarKind::Constant:
  case ScalarKind::LoopIndex:
    return 0;
  case ScalarKind::NegF:
  case ScalarKind::Exp:
  case ScalarKind::Exp2:
  case ScalarKind::Log:
  case ScalarKind::Log2:
  case ScalarKind::Log1p:
  case ScalarKind::Sqrt:
  case ScalarKind::Rsqrt:
  case ScalarKind::Tanh:
  case ScalarKind::AbsF:
  case ScalarKind::Erf:
  case ScalarKind::Sin:
  case ScalarKind::Cos:
    return 1;
  case ScalarKind::Select:
  case ScalarKind::Fma:
    return 3;
  default:
    return 2;
  }
}

bool isScalarOpName(const std::string &name) {
  return parseScalarKind(name).has_value();
}

std::optional<ScalarKind> parseScalarKind(const std::string &name) {
  return lookUp(kScalarKinds, name);
}

bool parseProgram(const std::string &text, Program &program,
                  std::string &error) {
  return readJson(text, "program", error, [&](const json &root) {
    program = Program();
    parse(root, program);
  });
}

namespace {

/// A number as the exporter writes an element of `type`: an integer for the
/// integer types (i1 as 0 or 1), a float for the float types.
json writeElement(DType type, double value) {
  if (isFloat(type))
    return writeNumber(value);
  // roundTo wraps i64 into [-2^63, 2^63 - 1], whose top reads back as 2^63.
  if (value >= 0x1p63)
    return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(value);
}

json writeJoin(const JoinRegion &region) {
  std::vector<std::string> args;
  for (DType t : region.args)
    args.push_back(dtypeName(t));
  json ops = json::array();
  for (const ScalarOp &op : region.ops) {
    json entry = {{"op", scalarKindName(op.kind)},
                  {"operands", op.operands},
                  {"type", dtypeName(op.type)}};
    if (op.kind == ScalarKind::Constant)
      entry["value"] = writeElement(op.type, op.constant);
    if (op.kind == ScalarKind::CmpF || op.kind == ScalarKind::CmpI)
      entry["predicate"] = op.predicate;
    if (op.kind == ScalarKind::LoopIndex)
      entry["dim"] = op.dim;
    ops.push_back(std::move(entry));
  }
  return {{"args", args}, {"ops", std::move(ops)}, {"yield", region.yield}};
}

json writeOp(const Op &op) {
  json entry = {{"kind", opKindName(op.kind)},
                {"result", op.result},
                {"type", writeType(op.type)},
                {"inputs", op.inputs}};
  switch (op.kind) {
  case OpKind::JoinAgg:
    entry["input_indices"] = op.inputIndices;
    entry["output_indices"] = op.outputIndices;
    entry["agg"] = aggName(op.agg);
    entry["acc"] = dtypeName(op.acc);
    entry["join"] = writeJoin(op.join);
    break;
  case OpKind::Attention:
    entry["causal"] = op.causal;
    entry["group"] = op.group;
    entry["scale"] = writeNumber(op.scale);
    entry["query_offset"] = op.queryOffset;
    entry["key_offset"] = op.keyOffset;
    break;
  case OpKind::ArgReduce:
    entry["agg"] = aggName(op.agg);
    [[fallthrough]];
  case OpKind::Softmax:
  case OpKind::Concat:
    entry["dim"] = op.dim;
    break;
  case OpKind::RmsNorm:
  case OpKind::LayerNorm:
    entry["eps"] = writeNumber(op.eps);
    break;
  case OpKind::Gather:
    entry["row_offset"] = op.rowOffset;
    break;
  case OpKind::Pool:
    entry["agg"] = aggName(op.agg);
    entry["window"] = op.window.sizes;
    [[fallthrough]];
  case OpKind::Conv:
    writeWindow(entry, op.window);
    break;
  case OpKind::Reshape:
    entry["reassociation"] = op.reassociation;
    break;
  case OpKind::Slice:
    entry["offsets"] = op.offsets;
    entry["sizes"] = op.sizes;
    break;
  case OpKind::Constant: {
    json values = json::array();
    for (double v : op.values)
      values.push_back(writeElement(op.type.dtype, v));
    entry["values"] = std::move(values);
    break;
  }
  }
  return entry;
}

} // namespace

namespace {

/// Arithmetic operations in one evaluation of a join region.
double regionOperations(const JoinRegion &join) {
  double ops = 0;
  for (const ScalarOp &op : join.ops)
    if (!isConversion(op.kind) && op.kind != ScalarKind::Constant &&
        op.kind != ScalarKind::LoopIndex)
      ++ops;
  return std::max(1.0, ops);
}

/// (query, key) pairs with key + keyOffset <= query + queryOffset.
double visiblePairs(int64_t queries, int64_t keys, int64_t queryOffset,
                    int64_t keyOffset) {
  double pairs = 0;
  for (int64_t q = 0; q < queries; ++q)
    pairs +=
        double(std::clamp<int64_t>(q + queryOffset - keyOffset + 1, 0, keys));
  return pairs;
}

} // namespace

double programFlops(const Program &program) {
  std::map<std::string, const TensorType *> types;
  for (const Argument &arg : program.arguments)
    types[arg.name] = &arg.type;
  double flops = 0;
  for (const Op &op : program.ops) {
    types[op.result] = &op.type;
    auto input = [&](size_t i) -> const TensorType & {
      return *types.at(op.inputs[i]);
    };
    double elements = double(op.type.numElements());
    switch (op.kind) {
    case OpKind::JoinAgg: {
      // Each loop's extent from a dimension it indexes.
      std::map<int64_t, int64_t> extents;
      for (size_t i = 0; i < op.inputIndices.size(); ++i)
        for (size_t d = 0; d < op.inputIndices[i].size(); ++d)
          extents[op.inputIndices[i][d]] = input(i).shape[d];
      for (size_t d = 0; d < op.outputIndices.size(); ++d)
        extents[op.outputIndices[d]] = op.type.shape[d];
      double points = 1;
      for (const auto &[loop, extent] : extents)
        points *= double(extent);
      flops += points * (regionOperations(op.join) +
                         (extents.size() > op.outputIndices.size() ? 1 : 0));
      break;
    }
    case OpKind::Attention: {
      const TensorType &q = input(0), &k = input(1), &v = input(2);
      double pairs = op.causal ? visiblePairs(q.shape[2], k.shape[2],
                                              op.queryOffset, op.keyOffset)
                               : double(q.shape[2]) * double(k.shape[2]);
      flops += double(q.shape[0] * q.shape[1]) * pairs * 2.0 *
               double(q.shape[3] + v.shape[3]);
      break;
    }
    case OpKind::Softmax:
      flops += 4 * elements;
      break;
    case OpKind::RmsNorm:
      flops += 3 * elements;
      break;
    case OpKind::LayerNorm:
      flops += 6 * elements;
      break;
    case OpKind::Gather:
      flops += elements;
      break;
    case OpKind::ArgReduce:
      flops += 2 * double(input(0).numElements());
      break;
    case OpKind::Conv: {
      // Filter hwcf for nhwc, fchw for nchw: a multiply-add per window
      // element and input channel of each result element.
      const TensorType &w = input(1);
      bool last = op.window.layout == "nhwc";
      double window = double(w.shape[last ? 0 : 2] * w.shape[last ? 1 : 3]);
      flops += elements * double(w.shape[last ? 2 : 1]) * 2 * window;
      break;
    }
    case OpKind::Pool:
      flops += elements * double(op.window.sizes[0] * op.window.sizes[1]);
      break;
    case OpKind::Reshape:
    case OpKind::Slice:
    case OpKind::Concat:
    case OpKind::Constant:
      break;
    }
  }
  return flops;
}

std::string writeProgram(const Program &program) {
  json arguments = json::array(), ops = json::array();
  for (const Argument &arg : program.arguments) {
    json entry = {{"name", arg.name}, {"type", writeType(arg.type)}};
    // Only when set, as the exporter writes it.
    if (arg.weight)
      entry["weight"] = true;
    arguments.push_back(std::move(entry));
  }
  for (const Op &op : program.ops)
    ops.push_back(writeOp(op));
  json root = {
      {"format", kFormatName},        {"version", kProgramFormatVersion},
      {"function", program.function}, {"arguments", std::move(arguments)},
      {"ops", std::move(ops)},        {"results", program.results}};
  return writeJson(root) + "\n";
}

bool readProgram(const std::string &path, Program &program,
                 std::string &error) {
  std::string text;
  if (!readRegularFile(path, text, error, kMaxJsonFileBytes))
    return false;
  if (!parseProgram(text, program, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

} // namespace ein
