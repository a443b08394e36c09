//===- eval.h - The float64 reference evaluator -----------------*- C++ -*-===//
//
// The oracle every correctness claim is checked against: a direct evaluation
// of a logical program in float64 on the CPU. Inputs are rounded to their
// declared element types (as the program receives them); everything after
// that is computed in float64, so the reference is the exact math of the
// program, not of any one device's rounding. `roundIntermediates` instead
// rounds every scalar and tensor result to its declared type, to imitate a
// device when diagnosing a difference.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_EVAL_H
#define EIN_EVAL_H

#include "ein/npy.h"
#include "ein/program.h"

#include <string>
#include <vector>

namespace ein {

struct EvalOptions {
  bool roundIntermediates = false;
  /// The most loop iterations (attention: multiply-adds) one op may take;
  /// beyond it evaluation stops with an error instead of running for hours.
  int64_t maxIterations = int64_t(1) << 33;
  /// The most elements one argument or op result may hold (8 bytes each
  /// here); beyond it evaluation stops with an error instead of exhausting
  /// memory.
  int64_t maxElements = int64_t(1) << 31;
};

/// Input `argument` of type `type`, drawn as docs/program-format.md says
/// (ein/random.h). The caller bounds its size (evaluate checks arguments
/// against maxElements before anything is drawn or read).
/// Indices (`indexBound` > 0, an integer type) are drawn uniformly from
/// -1 to indexBound: rows of the table they index, and one outside it at
/// each end (which a gather reads as 0).
HostTensor randomInput(const TensorType &type, uint64_t seed, int argument,
                       int64_t indexBound = 0);

/// Per argument of `program`, the rows of the largest table a gather
/// indexes with it (0 where no gather does): randomInput's indexBound.
std::vector<int64_t> indexBounds(const Program &program);

/// Evaluates `program` on `inputs` (one per argument, matching its type).
/// On failure returns false with `error` naming the op.
bool evaluate(const Program &program, const std::vector<HostTensor> &inputs,
              std::vector<HostTensor> &results, std::string &error,
              const EvalOptions &options = {});

/// Scaled dot-product attention in float64 on [batch, heads, queries, dim]
/// query, [batch, kv_heads, keys, dim] key and value; query head h reads KV
/// head h / group. With `causal`, query s sees key t when
/// t + keyOffset <= s + queryOffset. `lse`, when given, receives the
/// log-sum-exp of the scaled scores per [batch, heads, queries] (-inf where
/// no key is visible, whose output row is 0).
void attention(const HostTensor &q, const HostTensor &k, const HostTensor &v,
               bool causal, int64_t group, double scale, int64_t queryOffset,
               int64_t keyOffset, HostTensor &out, HostTensor *lse);

/// The online-softmax aggregation: combines attention results computed over
/// disjoint sets of keys, each with its log-sum-exp, into the result over all
/// of them (and its log-sum-exp when `lse` is given).
void combineAttention(const std::vector<HostTensor> &outs,
                      const std::vector<HostTensor> &lses, HostTensor &out,
                      HostTensor *lse);

} // namespace ein

#endif // EIN_EVAL_H
