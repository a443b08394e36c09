//===- program.h - The logical program (program.json) -----------*- C++ -*-===//
//
// An MLIR-free description of a logical ein program: what the compiler
// exports (ein-opt --ein-export-program, ein-compile) and what the reference
// evaluator reads, with its one reader and one writer (program.cpp). The
// format is documented in docs/program-format.md.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_PROGRAM_H
#define EIN_PROGRAM_H

#include "ein/dtype.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ein {

constexpr int kProgramFormatVersion = 1;

struct TensorType {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numElements() const;
};

enum class Agg { None, Add, Max, Min, Mul };

/// The scalar operations a join region may hold.
enum class ScalarKind {
  // float arithmetic
  AddF,
  SubF,
  MulF,
  DivF,
  RemF,
  NegF,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  // math
  Exp,
  Exp2,
  Log,
  Log2,
  Log1p,
  Sqrt,
  Rsqrt,
  Tanh,
  AbsF,
  Erf,
  Sin,
  Cos,
  PowF,
  Fma,
  // integer arithmetic
  AddI,
  SubI,
  MulI,
  DivSI,
  RemSI,
  MaxSI,
  MinSI,
  AndI,
  OrI,
  XOrI,
  // conversions
  ExtF,
  TruncF,
  SIToFP,
  UIToFP,
  FPToSI,
  IndexCast,
  // comparisons and selection
  CmpF,
  CmpI,
  Select,
  // leaves
  Constant,
  LoopIndex,
};

struct ScalarOp {
  ScalarKind kind;
  std::string name;          // as written, e.g. "arith.mulf"
  std::vector<int> operands; // value numbers: region arguments, then op results
  DType type;                // of the result
  double constant = 0;       // Constant
  std::string predicate;     // CmpF, CmpI
  int64_t dim = 0;           // LoopIndex
};

struct JoinRegion {
  std::vector<DType> args;
  std::vector<ScalarOp> ops;
  int yield = 0;
};

enum class OpKind {
  JoinAgg,
  Attention,
  Softmax,
  RmsNorm,
  LayerNorm,
  Gather,
  Conv,
  Pool,
  ArgReduce,
  Reshape,
  Slice,
  Concat,
  Constant
};

/// A 2-D window (conv, pool): over "nhwc" or "nchw" tensors, two values
/// each (rows, columns). `sizes` is a pool's window (a conv's is its
/// filter's rows and columns). `groups` is a conv's group count: its
/// input and output channels split into that many groups, each output
/// channel reading its group's input channels (the filter holds one
/// group's); written as "groups" only where it is not 1.
struct Window2d {
  std::string layout;
  std::vector<int64_t> sizes, strides, dilations, padLow, padHigh;
  int64_t groups = 1;
};

struct Op {
  OpKind kind;
  std::string result;
  TensorType type;
  std::vector<std::string> inputs;
  // join_agg
  std::vector<std::vector<int64_t>> inputIndices;
  std::vector<int64_t> outputIndices;
  Agg agg = Agg::None;
  DType acc = DType::F32;
  JoinRegion join;
  // attention
  bool causal = false;
  int64_t group = 1;
  double scale = 0;
  int64_t queryOffset = 0, keyOffset = 0;
  // softmax, concat, arg_reduce (whose `agg` is max or min)
  int64_t dim = 0;
  // rms_norm, layer_norm (whose inputs are x, then its weight and bias if
  // it has them)
  double eps = 0;
  // gather: inputs [table, indices]; the first table row the op holds
  int64_t rowOffset = 0;
  // conv (inputs [x, filter]; filter hwcf for "nhwc", fchw for "nchw") and
  // pool (`agg` max or add)
  Window2d window;
  // reshape
  std::vector<std::vector<int64_t>> reassociation;
  // slice
  std::vector<int64_t> offsets, sizes;
  // constant: one value (a splat) or one per element
  std::vector<double> values;
};

/// The shape of a window's result (`w.sizes` its rows and columns) over an
/// `input` of that layout with `channels` result channels; empty with `error`
/// set (a sentence) where the window is not valid: the layout, two values each,
/// sizes, strides and dilations between 1 and 2^48, paddings narrower than the
/// window's reach
/// `(k - 1) * d + 1`, a window that fits the padded input.
std::vector<int64_t> windowResultShape(const Window2d &w,
                                       const std::vector<int64_t> &input,
                                       int64_t channels, std::string &error);

/// The shape of a conv's result over `input` by `filter` (hwcf for nhwc,
/// fchw for nchw; `w.sizes` unused: the filter's rows and columns); empty
/// with `error` set where the filter does not read the input's channels in
/// `w.groups` groups (a positive count dividing the input's and the
/// filter's output channels) or the window is not valid
/// (windowResultShape).
std::vector<int64_t> convResultShape(const Window2d &w,
                                     const std::vector<int64_t> &input,
                                     const std::vector<int64_t> &filter,
                                     std::string &error);

struct Argument {
  std::string name;
  TensorType type;
  bool weight = false;
};

struct Program {
  std::string function;
  std::vector<Argument> arguments;
  std::vector<Op> ops;
  std::vector<std::string> results;
};

/// Parses and validates program.json text. On failure returns false and sets
/// `error` to a sentence naming the offending field (e.g. "ops[3].inputs[1]:
/// value 'v9' is not defined before use").
bool parseProgram(const std::string &text, Program &program,
                  std::string &error);

/// Reads and parses a program.json file.
bool readProgram(const std::string &path, Program &program, std::string &error);

/// The text of program.json for `program`: what the compiler's exporter
/// writes (keys sorted, indented by 2, a newline at the end), byte for byte,
/// and what parseProgram reads back as `program`.
std::string writeProgram(const Program &program);

/// The floating-point operations of one run of `program`, counted as the
/// compiler counts them (docs/bundle-format.md, "FLOPs"): per point of an
/// op's loop space, one per arithmetic operation of a join region (casts,
/// constants and loop indices do none) plus one for its aggregation; a
/// multiply-add per head element of Q.K^T and P.V for each visible (query,
/// key) pair of attention (a causal mask's hidden pairs do no work); a
/// multiply-add per window element of a convolution; reshapes, slices,
/// concatenations and constants none. `program` is one parseProgram
/// accepted.
double programFlops(const Program &program);

/// Whether `name` (an MLIR op name such as "arith.mulf") is a scalar
/// operation join regions may hold. The exporter and the reader share it.
bool isScalarOpName(const std::string &name);
/// How many operands a scalar operation of `kind` takes (what the reader
/// checks).
size_t scalarOperandCount(ScalarKind kind);

/// The scalar operation an MLIR op name spells, if join regions may hold it.
std::optional<ScalarKind> parseScalarKind(const std::string &name);

const char *aggName(Agg agg);
const char *opKindName(OpKind kind);
/// The MLIR op name of a scalar operation ("arith.mulf").
const char *scalarKindName(ScalarKind kind);

} // namespace ein

#endif // EIN_PROGRAM_H
