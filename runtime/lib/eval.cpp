//===- eval.cpp - The float64 reference evaluator -------------------------===//

#include "ein/eval.h"

#include "ein/random.h"
#include "ein/region.h"
#include "parallel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace ein {

namespace {

struct EvalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr double kInf = std::numeric_limits<double>::infinity();

HostTensor makeTensor(const TensorType &type) {
  HostTensor t;
  t.dtype = type.dtype;
  t.shape = type.shape;
  t.data.assign(type.numElements(), 0.0);
  return t;
}

bool compare(const std::string &p, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  if (p == "false")
    return false;
  if (p == "true")
    return true;
  if (p == "ord")
    return !unordered;
  if (p == "uno")
    return unordered;
  bool ordered = p[0] == 'o';
  if (unordered)
    return !ordered;
  std::string r = p.substr(1);
  if (r == "eq")
    return a == b;
  if (r == "ne")
    return a != b;
  if (r == "gt")
    return a > b;
  if (r == "ge")
    return a >= b;
  if (r == "lt")
    return a < b;
  return a <= b; // "le"
}

bool compareInt(const std::string &p, double a, double b) {
  if (p == "eq")
    return a == b;
  if (p == "ne")
    return a != b;
  // Values are non-negative wherever the unsigned forms make sense here.
  std::string r = p.substr(1);
  if (r == "lt")
    return a < b;
  if (r == "le")
    return a <= b;
  if (r == "gt")
    return a > b;
  return a >= b; // "ge"
}

double scalar(const ScalarOp &op, const std::vector<double> &v,
              const std::vector<int64_t> &loop) {
  auto a = [&](int i) { return v[op.operands[i]]; };
  auto asInt = [](double x) { return wrapInteger(x, 64); };
  switch (op.kind) {
  case ScalarKind::AddF:
    return a(0) + a(1);
  case ScalarKind::SubF:
    return a(0) - a(1);
  case ScalarKind::MulF:
    return a(0) * a(1);
  case ScalarKind::DivF:
    return a(0) / a(1);
  case ScalarKind::RemF:
    return std::fmod(a(0), a(1));
  case ScalarKind::NegF:
    return -a(0);
  case ScalarKind::MaximumF:
    return std::isnan(a(0)) || std::isnan(a(1)) ? std::nan("")
                                                : std::max(a(0), a(1));
  case ScalarKind::MinimumF:
    return std::isnan(a(0)) || std::isnan(a(1)) ? std::nan("")
                                                : std::min(a(0), a(1));
  case ScalarKind::MaxNumF:
    return std::fmax(a(0), a(1));
  case ScalarKind::MinNumF:
    return std::fmin(a(0), a(1));
  case ScalarKind::Exp:
    return std::exp(a(0));
  case ScalarKind::Exp2:
    return std::exp2(a(0));
  case ScalarKind::Log:
    return std::log(a(0));
  case ScalarKind::Log2:
    return std::log2(a(0));
  case ScalarKind::Log1p:
    return std::log1p(a(0));
  case ScalarKind::Sqrt:
    return std::sqrt(a(0));
  case ScalarKind::Rsqrt:
    return 1.0 / std::sqrt(a(0));
  case ScalarKind::Tanh:
    return std::tanh(a(0));
  case ScalarKind::AbsF:
    return std::fabs(a(0));
  case ScalarKind::Erf:
    return std::erf(a(0));
  case ScalarKind::Sin:
    return std::sin(a(0));
  case ScalarKind::Cos:
    return std::cos(a(0));
  case ScalarKind::PowF:
    return std::pow(a(0), a(1));
  case ScalarKind::Fma:
    return a(0) * a(1) + a(2);
  case ScalarKind::AddI:
    return a(0) + a(1);
  case ScalarKind::SubI:
    return a(0) - a(1);
  case ScalarKind::MulI:
    return a(0) * a(1);
  case ScalarKind::DivSI:
  case ScalarKind::RemSI: {
    // Division by zero is undefined in MLIR; here it gives 0. The one
    // overflowing quotient, INT64_MIN / -1, wraps (and its remainder is 0).
    int64_t x = asInt(a(0)), y = asInt(a(1));
    if (y == 0 || y == -1)
      return op.kind == ScalarKind::RemSI || y == 0
                 ? 0.0
                 : static_cast<double>(wrapInteger(-a(0), 64));
    return static_cast<double>(op.kind == ScalarKind::DivSI ? x / y : x % y);
  }
  case ScalarKind::MaxSI:
    return std::max(a(0), a(1));
  case ScalarKind::MinSI:
    return std::min(a(0), a(1));
  case ScalarKind::AndI:
    return static_cast<double>(asInt(a(0)) & asInt(a(1)));
  case ScalarKind::OrI:
    return static_cast<double>(asInt(a(0)) | asInt(a(1)));
  case ScalarKind::XOrI:
    return static_cast<double>(asInt(a(0)) ^ asInt(a(1)));
  case ScalarKind::ExtF:
  case ScalarKind::TruncF:
  case ScalarKind::SIToFP:
  case ScalarKind::UIToFP:
  case ScalarKind::IndexCast:
    return a(0);
  case ScalarKind::FPToSI:
    return std::trunc(a(0));
  case ScalarKind::CmpF:
    return compare(op.predicate, a(0), a(1)) ? 1 : 0;
  case ScalarKind::CmpI:
    return compareInt(op.predicate, a(0), a(1)) ? 1 : 0;
  case ScalarKind::Select:
    return a(0) != 0 ? a(1) : a(2);
  case ScalarKind::Constant:
    return op.constant;
  case ScalarKind::LoopIndex:
    return static_cast<double>(loop[op.dim]);
  }
  return 0;
}

double identity(Agg agg) {
  switch (agg) {
  case Agg::Max:
    return -kInf;
  case Agg::Min:
    return kInf;
  case Agg::Mul:
    return 1;
  default:
    return 0;
  }
}

void joinAgg(const Op &op, const std::vector<const HostTensor *> &in,
             HostTensor &out, const EvalOptions &options) {
  int64_t numLoops = 0;
  for (const auto &list : op.inputIndices)
    for (int64_t l : list)
      numLoops = std::max(numLoops, l + 1);
  for (int64_t l : op.outputIndices)
    numLoops = std::max(numLoops, l + 1);
  std::vector<int64_t> sizes(numLoops, 1);
  // Per operand (inputs, then the result), each loop's stride.
  std::vector<std::vector<int64_t>> strides(in.size() + 1,
                                            std::vector<int64_t>(numLoops, 0));
  auto place = [&](size_t operand, const std::vector<int64_t> &indices,
                   const std::vector<int64_t> &shape) {
    std::vector<int64_t> s = rowMajorStrides(shape);
    for (size_t d = 0; d < indices.size(); ++d) {
      sizes[indices[d]] = shape[d];
      strides[operand][indices[d]] = s[d];
    }
  };
  for (size_t i = 0; i < in.size(); ++i)
    place(i, op.inputIndices[i], in[i]->shape);
  place(in.size(), op.outputIndices, out.shape);

  double iterations = 1;
  for (int64_t s : sizes)
    iterations *= static_cast<double>(s);
  if (iterations > static_cast<double>(options.maxIterations))
    throw EvalError("needs " +
                    std::to_string(static_cast<int64_t>(iterations)) +
                    " iterations; the CPU reference stops at " +
                    std::to_string(options.maxIterations) +
                    " (check large shapes on the GPU)");

  std::fill(out.data.begin(), out.data.end(), identity(op.agg));
  // Threads split one loop of the result's (each output element is
  // accumulated by one thread, in the order one thread would): the same
  // answer to the bit, in a fraction of the time on many cores. The
  // outermost such loop of at least as many iterations as threads, else
  // the longest.
  int64_t threads = threadsFor(iterations);
  int64_t split = -1;
  for (int64_t l : op.outputIndices)
    if (sizes[l] >= threads && (split < 0 || l < split))
      split = l;
  if (split < 0)
    for (int64_t l : op.outputIndices)
      if (split < 0 || sizes[l] > sizes[split])
        split = l;
  const size_t numArgs = op.join.args.size();
  auto run = [&](int64_t first, int64_t end) {
    std::vector<double> values(numArgs + op.join.ops.size());
    std::vector<int64_t> loop(numLoops, 0), lo(numLoops, 0), hi(sizes);
    std::vector<int64_t> offset(in.size() + 1, 0);
    if (split >= 0) {
      lo[split] = loop[split] = first;
      hi[split] = end;
      for (size_t o = 0; o < offset.size(); ++o)
        offset[o] = strides[o][split] * first;
    }
    double total = 1;
    for (int64_t l = 0; l < numLoops; ++l)
      total *= static_cast<double>(hi[l] - lo[l]);
    for (int64_t it = 0, count = static_cast<int64_t>(total); it < count;
         ++it) {
      for (size_t i = 0; i < numArgs; ++i)
        values[i] = in[i]->data[offset[i]];
      for (size_t k = 0; k < op.join.ops.size(); ++k) {
        const ScalarOp &s = op.join.ops[k];
        double v = scalar(s, values, loop);
        values[numArgs + k] =
            options.roundIntermediates ? roundTo(s.type, v) : v;
      }
      double y = values[op.join.yield];
      double &acc = out.data[offset[in.size()]];
      if (options.roundIntermediates && op.agg != Agg::None)
        y = roundTo(op.acc, y);
      switch (op.agg) {
      case Agg::None:
        acc = y;
        break;
      case Agg::Add:
        acc += y;
        break;
      case Agg::Mul:
        acc *= y;
        break;
      case Agg::Max:
        acc =
            std::isnan(y) || std::isnan(acc) ? std::nan("") : std::max(acc, y);
        break;
      case Agg::Min:
        acc =
            std::isnan(y) || std::isnan(acc) ? std::nan("") : std::min(acc, y);
        break;
      }
      if (options.roundIntermediates && op.agg != Agg::None)
        acc = roundTo(op.acc, acc);
      // Advance the odometer (last loop fastest) and every operand's
      // offset.
      for (int64_t l = numLoops - 1; l >= 0; --l) {
        if (++loop[l] < hi[l]) {
          for (size_t o = 0; o < offset.size(); ++o)
            offset[o] += strides[o][l];
          break;
        }
        loop[l] = lo[l];
        for (size_t o = 0; o < offset.size(); ++o)
          offset[o] -= strides[o][l] * (hi[l] - lo[l] - 1);
      }
    }
  };
  if (split < 0) {
    run(0, 1);
    return;
  }
  parallelFor(sizes[split], run, iterations / double(sizes[split]));
}

void softmax(const HostTensor &x, int64_t dim, HostTensor &out) {
  std::vector<int64_t> strides = rowMajorStrides(x.shape);
  int64_t n = x.shape[dim], stride = strides[dim];
  for (int64_t base = 0; base < x.numElements(); ++base) {
    if ((base / stride) % n != 0)
      continue; // visit each row once, from its first element
    double mx = -kInf, sum = 0;
    for (int64_t i = 0; i < n; ++i)
      mx = std::max(mx, x.data[base + i * stride]);
    for (int64_t i = 0; i < n; ++i)
      sum += std::exp(x.data[base + i * stride] - mx);
    for (int64_t i = 0; i < n; ++i)
      out.data[base + i * stride] =
          std::exp(x.data[base + i * stride] - mx) / sum;
  }
}

void rmsNorm(const HostTensor &x, const HostTensor &w, double eps,
             HostTensor &out) {
  int64_t width = x.shape.back(), rows = x.numElements() / width;
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = &x.data[r * width];
    double squares = 0;
    for (int64_t i = 0; i < width; ++i)
      squares += row[i] * row[i];
    double inv = 1.0 / std::sqrt(squares / width + eps);
    for (int64_t i = 0; i < width; ++i)
      out.data[r * width + i] = row[i] * inv * w.data[i];
  }
}

/// `(x - mean) / sqrt(variance + eps) * w + b` along the last dimension;
/// `w` and `b` may be null.
void layerNorm(const HostTensor &x, const HostTensor *w, const HostTensor *b,
               double eps, HostTensor &out) {
  int64_t width = x.shape.back(), rows = x.numElements() / width;
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = &x.data[r * width];
    double sum = 0, deviations = 0;
    for (int64_t i = 0; i < width; ++i)
      sum += row[i];
    double mean = sum / width;
    for (int64_t i = 0; i < width; ++i)
      deviations += (row[i] - mean) * (row[i] - mean);
    double inv = 1.0 / std::sqrt(deviations / width + eps);
    for (int64_t i = 0; i < width; ++i) {
      double y = (row[i] - mean) * inv;
      if (w)
        y *= w->data[i];
      if (b)
        y += b->data[i];
      out.data[r * width + i] = y;
    }
  }
}

/// `out[i..., t...] = table[idx[i...] - rowOffset, t...]`, 0 where that is
/// not a row of the table.
void gather(const HostTensor &table, const HostTensor &indices,
            int64_t rowOffset, HostTensor &out) {
  int64_t rows = table.shape[0], width = table.numElements() / rows;
  for (int64_t i = 0, n = indices.numElements(); i < n; ++i) {
    double idx = indices.data[i] - double(rowOffset);
    bool inside = idx >= 0 && idx < double(rows);
    for (int64_t t = 0; t < width; ++t)
      out.data[i * width + t] =
          inside ? table.data[int64_t(idx) * width + t] : 0.0;
  }
}

/// A 2-D window over `x` (conv's filter `w`, or a pool's window when `w` is
/// null): every output point reads the input points its window covers,
/// skipping the padding.
void window(const Op &op, const HostTensor &x, const HostTensor *w,
            HostTensor &out) {
  bool last = op.window.layout == "nhwc";
  // Strides of n, c, h, w in x and out.
  auto strides = [&](const std::vector<int64_t> &s) {
    return last ? std::array<int64_t, 4>{s[1] * s[2] * s[3], 1, s[2] * s[3],
                                         s[3]}
                : std::array<int64_t, 4>{s[1] * s[2] * s[3], s[2] * s[3], s[3],
                                         1};
  };
  auto xs = strides(x.shape), os = strides(out.shape);
  int64_t batch = x.shape[0], inC = x.shape[last ? 3 : 1];
  int64_t h = x.shape[last ? 1 : 2], wd = x.shape[last ? 2 : 3];
  int64_t outC = out.shape[last ? 3 : 1];
  int64_t oh = out.shape[last ? 1 : 2], ow = out.shape[last ? 2 : 3];
  // A conv's output channel f reads the inC / groups input channels of its
  // group f / (outC / groups).
  int64_t perGroup = inC / op.window.groups,
          featuresPerGroup = outC / op.window.groups;
  std::vector<int64_t> win = op.window.sizes;
  if (w)
    win = last ? std::vector<int64_t>{w->shape[0], w->shape[1]}
               : std::vector<int64_t>{w->shape[2], w->shape[3]};
  // Filter element (i, j, c, f).
  auto filterAt = [&](int64_t i, int64_t j, int64_t c, int64_t f) {
    const auto &s = w->shape;
    return last ? w->data[((i * s[1] + j) * s[2] + c) * s[3] + f]
                : w->data[((f * s[1] + c) * s[2] + i) * s[3] + j];
  };
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t f = 0; f < outC; ++f)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t z = 0; z < ow; ++z) {
          double acc = w || op.agg == Agg::Add ? 0.0 : -kInf;
          for (int64_t i = 0; i < win[0]; ++i) {
            int64_t r = y * op.window.strides[0] + i * op.window.dilations[0] -
                        op.window.padLow[0];
            if (r < 0 || r >= h)
              continue;
            for (int64_t j = 0; j < win[1]; ++j) {
              int64_t q = z * op.window.strides[1] +
                          j * op.window.dilations[1] - op.window.padLow[1];
              if (q < 0 || q >= wd)
                continue;
              int64_t at = n * xs[0] + r * xs[2] + q * xs[3];
              if (!w) {
                double v = x.data[at + f * xs[1]];
                acc = op.agg == Agg::Add ? acc + v : std::max(acc, v);
                continue;
              }
              int64_t first = f / featuresPerGroup * perGroup;
              for (int64_t c = 0; c < perGroup; ++c)
                acc += x.data[at + (first + c) * xs[1]] * filterAt(i, j, c, f);
            }
          }
          out.data[n * os[0] + f * os[1] + y * os[2] + z * os[3]] = acc;
        }
}

/// The index along `dim` of the first element above every earlier one
/// (below, for min), from -inf (+inf) at index 0: NaNs never win.
void argReduce(const HostTensor &x, int64_t dim, bool max, HostTensor &out) {
  int64_t inner = 1;
  for (size_t d = dim + 1; d < x.shape.size(); ++d)
    inner *= x.shape[d];
  int64_t n = x.shape[dim], outer = x.numElements() / (n * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double best = max ? -kInf : kInf;
      int64_t at = 0;
      for (int64_t j = 0; j < n; ++j) {
        double v = x.data[(o * n + j) * inner + i];
        if (max ? v > best : v < best) {
          best = v;
          at = j;
        }
      }
      out.data[o * inner + i] = double(at);
    }
}

/// Copies the hyper-rectangle `offsets` + shape of `dst` out of `src`
/// (extract) or `src` into `dst` at `offsets` (insert).
void copyRegion(const HostTensor &src, HostTensor &dst,
                const std::vector<int64_t> &offsets, bool extract) {
  const HostTensor &region = extract ? dst : src;
  const HostTensor &whole = extract ? src : dst;
  std::vector<int64_t> wholeStrides = rowMajorStrides(whole.shape);
  std::vector<int64_t> index(region.shape.size(), 0);
  for (int64_t i = 0; i < region.numElements(); ++i) {
    int64_t at = 0;
    for (size_t d = 0; d < index.size(); ++d)
      at += (index[d] + offsets[d]) * wholeStrides[d];
    if (extract)
      dst.data[i] = src.data[at];
    else
      dst.data[at] = src.data[i];
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < region.shape[d])
        break;
      index[d] = 0;
    }
  }
}

} // namespace

HostTensor randomInput(const TensorType &type, uint64_t seed, int argument,
                       int64_t indexBound) {
  HostTensor t = makeTensor(type);
  int64_t last = type.shape.empty() ? 1 : type.shape.back();
  int64_t count = t.numElements();
  bool indices = indexBound > 0 && !isFloat(type.dtype);
  auto fill = [&](int64_t first, int64_t end) {
    for (int64_t i = first; i < end; ++i)
      t.data[i] =
          indices
              ? std::floor(uniform(seed, argument, i) * double(indexBound + 2) -
                           1e-12) -
                    1
              : roundTo(type.dtype, inputValue(seed, argument, i, last));
  };
  // Each element is a function of its index alone, so threads give the
  // same values; the large weights of a benchmark draw in seconds, not
  // minutes.
  parallelFor(count, fill);
  return t;
}

std::vector<int64_t> indexBounds(const Program &program) {
  std::vector<int64_t> bounds(program.arguments.size(), 0);
  std::map<std::string, const TensorType *> types;
  for (const Argument &a : program.arguments)
    types[a.name] = &a.type;
  for (const Op &op : program.ops)
    types[op.result] = &op.type;
  for (const Op &op : program.ops) {
    if (op.kind != OpKind::Gather)
      continue;
    int64_t rows = types.at(op.inputs[0])->shape[0];
    for (size_t a = 0; a < program.arguments.size(); ++a)
      if (program.arguments[a].name == op.inputs[1])
        bounds[a] = std::max(bounds[a], rows);
  }
  return bounds;
}

void attention(const HostTensor &q, const HostTensor &k, const HostTensor &v,
               bool causal, int64_t group, double scale, int64_t queryOffset,
               int64_t keyOffset, HostTensor &out, HostTensor *lse) {
  int64_t B = q.shape[0], H = q.shape[1], S = q.shape[2], D = q.shape[3];
  int64_t Hk = k.shape[1], T = k.shape[2], Dv = v.shape[3];
  out.dtype = q.dtype;
  out.shape = {B, H, S, Dv};
  out.data.assign(B * H * S * Dv, 0.0);
  if (lse) {
    lse->dtype = DType::F32;
    lse->shape = {B, H, S};
    lse->data.assign(B * H * S, -kInf);
  }
  std::vector<double> scores(T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      int64_t kh = h / group;
      const double *K = &k.data[(b * Hk + kh) * T * D];
      const double *V = &v.data[(b * Hk + kh) * T * Dv];
      for (int64_t s = 0; s < S; ++s) {
        const double *Q = &q.data[((b * H + h) * S + s) * D];
        double mx = -kInf;
        for (int64_t t = 0; t < T; ++t) {
          if (causal && t + keyOffset > s + queryOffset) {
            scores[t] = -kInf;
            continue;
          }
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += Q[d] * K[t * D + d];
          scores[t] = dot * scale;
          mx = std::isnan(scores[t]) ? scores[t] : std::max(mx, scores[t]);
          if (std::isnan(mx))
            break;
        }
        double *Out = &out.data[((b * H + h) * S + s) * Dv];
        if (std::isnan(mx)) { // a NaN score poisons its row, as it would
          for (int64_t d = 0; d < Dv; ++d)
            Out[d] = mx;
          if (lse)
            lse->data[(b * H + h) * S + s] = mx;
          continue;
        }
        if (mx == -kInf)
          continue; // no visible key: output 0, lse -inf
        double sum = 0;
        for (int64_t t = 0; t < T; ++t) {
          if (scores[t] == -kInf)
            continue;
          double p = std::exp(scores[t] - mx);
          sum += p;
          for (int64_t d = 0; d < Dv; ++d)
            Out[d] += p * V[t * Dv + d];
        }
        for (int64_t d = 0; d < Dv; ++d)
          Out[d] /= sum;
        if (lse)
          lse->data[(b * H + h) * S + s] = mx + std::log(sum);
      }
    }
}

void combineAttention(const std::vector<HostTensor> &outs,
                      const std::vector<HostTensor> &lses, HostTensor &out,
                      HostTensor *lse) {
  out = outs.front();
  std::fill(out.data.begin(), out.data.end(), 0.0);
  int64_t rows = lses.front().numElements();
  int64_t width = out.numElements() / rows;
  if (lse) {
    *lse = lses.front();
  }
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -kInf;
    for (const HostTensor &l : lses)
      mx = std::isnan(l.data[r]) || std::isnan(mx) ? std::nan("")
                                                   : std::max(mx, l.data[r]);
    if (std::isnan(mx)) {
      for (int64_t d = 0; d < width; ++d)
        out.data[r * width + d] = mx;
      if (lse)
        lse->data[r] = mx;
      continue;
    }
    if (mx == -kInf) {
      if (lse)
        lse->data[r] = -kInf;
      continue;
    }
    double sum = 0;
    for (const HostTensor &l : lses)
      sum += std::exp(l.data[r] - mx);
    double total = mx + std::log(sum);
    for (size_t p = 0; p < outs.size(); ++p) {
      double weight = std::exp(lses[p].data[r] - total);
      for (int64_t d = 0; d < width; ++d)
        out.data[r * width + d] += weight * outs[p].data[r * width + d];
    }
    if (lse)
      lse->data[r] = total;
  }
}

bool evaluate(const Program &program, const std::vector<HostTensor> &inputs,
              std::vector<HostTensor> &results, std::string &error,
              const EvalOptions &options) {
  if (inputs.size() != program.arguments.size()) {
    error = "the program takes " + std::to_string(program.arguments.size()) +
            " inputs, got " + std::to_string(inputs.size());
    return false;
  }
  for (const Argument &arg : program.arguments)
    if (arg.type.numElements() > options.maxElements) {
      error = "argument '" + arg.name + "' has " +
              std::to_string(arg.type.numElements()) +
              " elements; the CPU reference stops at " +
              std::to_string(options.maxElements) +
              " (check large shapes on the GPU)";
      return false;
    }
  std::map<std::string, HostTensor> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Argument &arg = program.arguments[i];
    if (inputs[i].shape != arg.type.shape ||
        inputs[i].dtype != arg.type.dtype ||
        static_cast<int64_t>(inputs[i].data.size()) != arg.type.numElements()) {
      error = "input " + std::to_string(i) + " ('" + arg.name +
              "') does not have the argument's shape and element type " +
              dtypeName(arg.type.dtype);
      return false;
    }
    values[arg.name] = inputs[i];
  }
  for (size_t index = 0; index < program.ops.size(); ++index) {
    const Op &op = program.ops[index];
    std::vector<const HostTensor *> in;
    for (const std::string &name : op.inputs)
      in.push_back(&values.at(name));
    try {
      if (op.type.numElements() > options.maxElements)
        throw EvalError("has " + std::to_string(op.type.numElements()) +
                        " elements; the CPU reference stops at " +
                        std::to_string(options.maxElements) +
                        " (check large shapes on the GPU)");
      if (op.kind == OpKind::Conv) {
        const auto &w = in[1]->shape;
        double work = static_cast<double>(op.type.numElements()) * w[0] * w[1] *
                      w[2] * w[3] /
                      op.type.shape[op.window.layout == "nhwc" ? 3 : 1];
        if (work > static_cast<double>(options.maxIterations))
          throw EvalError("needs about " + std::to_string(int64_t(work)) +
                          " multiply-adds; the CPU reference stops at " +
                          std::to_string(options.maxIterations) +
                          " (check large shapes on the GPU)");
      }
      if (op.kind == OpKind::Attention) {
        const auto &q = in[0]->shape, &k = in[1]->shape, &v = in[2]->shape;
        double work = static_cast<double>(q[0]) * q[1] * q[2] * k[2] *
                      static_cast<double>(q[3] + v[3]);
        if (work > static_cast<double>(options.maxIterations))
          throw EvalError("needs about " + std::to_string(int64_t(work)) +
                          " multiply-adds; the CPU reference stops at " +
                          std::to_string(options.maxIterations) +
                          " (check large shapes on the GPU)");
      }
    } catch (const EvalError &e) {
      error = "op " + std::to_string(index) + " (" + opKindName(op.kind) +
              " '" + op.result + "') " + e.what();
      return false;
    }
    HostTensor out = makeTensor(op.type);
    try {
      switch (op.kind) {
      case OpKind::JoinAgg:
        joinAgg(op, in, out, options);
        break;
      case OpKind::Attention:
        attention(*in[0], *in[1], *in[2], op.causal, op.group, op.scale,
                  op.queryOffset, op.keyOffset, out, nullptr);
        out.dtype = op.type.dtype;
        break;
      case OpKind::Softmax:
        softmax(*in[0], op.dim, out);
        break;
      case OpKind::RmsNorm:
        rmsNorm(*in[0], *in[1], op.eps, out);
        break;
      case OpKind::Gather:
        gather(*in[0], *in[1], op.rowOffset, out);
        break;
      case OpKind::LayerNorm:
        layerNorm(*in[0], in.size() > 1 ? in[1] : nullptr,
                  in.size() > 2 ? in[2] : nullptr, op.eps, out);
        break;
      case OpKind::Conv:
        window(op, *in[0], in[1], out);
        break;
      case OpKind::Pool:
        window(op, *in[0], nullptr, out);
        break;
      case OpKind::ArgReduce:
        argReduce(*in[0], op.dim, op.agg == Agg::Max, out);
        break;
      case OpKind::Reshape:
        out.data = in[0]->data;
        break;
      case OpKind::Slice:
        copyRegion(*in[0], out, op.offsets, /*extract=*/true);
        break;
      case OpKind::Concat: {
        std::vector<int64_t> at(op.type.shape.size(), 0);
        for (const HostTensor *part : in) {
          copyRegion(*part, out, at, /*extract=*/false);
          at[op.dim] += part->shape[op.dim];
        }
        break;
      }
      case OpKind::Constant:
        for (int64_t i = 0; i < out.numElements(); ++i)
          out.data[i] = op.values.size() == 1 ? op.values[0] : op.values[i];
        break;
      }
    } catch (const EvalError &e) {
      error = "op " + std::to_string(index) + " (" + opKindName(op.kind) +
              " '" + op.result + "') " + e.what();
      return false;
    }
    if (options.roundIntermediates)
      for (double &x : out.data)
        x = roundTo(op.type.dtype, x);
    values[op.result] = std::move(out);
  }
  results.clear();
  for (const std::string &name : program.results)
    results.push_back(values.at(name));
  return true;
}

} // namespace ein
