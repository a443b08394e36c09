//===- cudnn_attention.cpp - Fused attention through cuDNN's graph API ----===//
//
// softmax(scale q k^T + mask) v as one cuDNN 9 operation graph, built from
// backend descriptors (cudnn_graph.h; cudnn-frontend is not available) in
// the pattern cudnn-frontend's composite SDPA node emits for cuDNN before
// 9.21, which cuDNN's fused flash-attention engines recognise and run as one
// kernel:
//
//   s = q k^T            matmul; k is read as k^T [b, kvHeads, d, keys] and
//                        grouped-query attention is k and v having kvHeads
//                        where q has heads (the matmul broadcasts them)
//   s = s * scale        pointwise MUL by a by-value f32
//   causal (see mask()):
//     i, j = the query and key index of each score        GEN_INDEX, int32
//     i = i + diagonal   ADD (+ keys, SUB queries for the bottom-right one)
//     s = i >= j ? s : -inf                        CMP_GE, BINARY_SELECT
//   m = max_t s, e = exp(s - m), z = sum_t e       REDUCTION, SUB, EXP
//   lse = m + log z      LOG, ADD: f32 [b, h, queries, 1], natural log of
//                        the scaled, masked scores, as attention.h's lse;
//                        virtual when the problem has no lse
//   o = (e / z) v        DIV into the io type, matmul
//
// cuDNN 9.13.1's single SDPA_FWD operation would be shorter, but until 9.21
// it takes no mask other than a block mask, and no score-modifier subgraph
// (cuDNN 9.19's cudnn_graph.h has neither attribute), so it cannot express a
// causal mask, let alone one with an arbitrary diagonal; cudnn-frontend too
// builds masked attention from the composite graph before 9.21.
//
//===----------------------------------------------------------------------===//

#include "cudnn_attention.h"

#include "cudnn_graph.h"

#include <array>
#include <climits>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ein::cuda {
namespace {

/// A rank-4 tensor's dims and strides, in elements.
struct Layout {
  std::array<int64_t, 4> dims, strides;
};

Layout rowMajor(const std::array<int64_t, 4> &dims) {
  return {dims, {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1}};
}

enum class Storage { Device, Virtual, ByValue };

/// The uids the variant pack names the caller's buffers and the by-value
/// scalars by; the graph's intermediates count up from kFirstVirtualUid.
enum : int64_t {
  kUidQ = 1,
  kUidK,
  kUidV,
  kUidO,
  kUidLse,
  kUidScale,
  kUidMaskFill,
  kUidDiagonal,
  kUidKeys,
  kUidQueries,
  kFirstVirtualUid = 100
};

/// Why the graph below cannot compute `p` exactly; empty when it can.
std::string unsupported(const AttentionProblem &p) {
  if (p.type != F16 && p.type != BF16)
    return "its element type is neither f16 nor bf16";
  for (int64_t n :
       {p.batch, p.heads, p.kvHeads, p.queries, p.keys, p.headDim, p.valueDim})
    if (n < 1)
      return "a size is not positive";
  if (p.heads % p.kvHeads)
    return "query heads are not a multiple of KV heads";
  if (p.headDim % 8 || p.valueDim % 8 || p.headDim > 256 || p.valueDim > 256)
    return "cuDNN's fused attention engines take head dims that are "
           "multiples of 8 up to 256";
  if (!p.causal)
    return "";
  // The mask's index arithmetic is int32, and its right bound is >= 0 (as
  // cudnn-frontend checks): with diagonal < 0, queries 0 .. -diagonal - 1
  // see no key and must give o = 0 and lse = -inf, but what cuDNN writes
  // for a row whose scores are all -inf is not specified.
  if (p.queries > INT32_MAX || p.keys > INT32_MAX)
    return "the causal mask indexes queries and keys in int32";
  if (p.diagonal < 0)
    return "with diagonal " + std::to_string(p.diagonal) + ", queries 0.." +
           std::to_string(std::min(-p.diagonal, p.queries) - 1) +
           " see no key, which must give o = 0 and lse = -inf; cuDNN's "
           "result for a fully masked row is unspecified";
  return "";
}

class CudnnAttention final : public Attention {
public:
  CudnnAttention(const Cudnn &api, DeviceHandle &device, int deviceIndex,
                 const AttentionProblem &problem)
      : api(api), device(device), deviceIndex(deviceIndex), problem(problem),
        described(problem.describe()),
        descriptors(api, "cuDNN attention for " + described),
        scale(problem.scale) {
    std::lock_guard<std::mutex> lock(device.mutex);
    buildGraph();
    chosen = choosePlan(api, descriptors, device, graph, described);
  }

  size_t workspaceBytes() const override { return chosen.workspace; }

  void run(const void *q, const void *k, const void *v, void *o, float *lse,
           void *workspaceMemory, cudaStream_t stream) override {
    if (problem.withLse && !lse)
      throw RuntimeError("cuDNN attention for " + described +
                         ": run without an lse buffer, but it writes lse");
    std::vector<void *> pointers = packValues;
    for (size_t i = 0; i < packUids.size(); ++i) {
      switch (packUids[i]) {
      case kUidQ:
        pointers[i] = const_cast<void *>(q);
        break;
      case kUidK:
        pointers[i] = const_cast<void *>(k);
        break;
      case kUidV:
        pointers[i] = const_cast<void *>(v);
        break;
      case kUidO:
        pointers[i] = o;
        break;
      case kUidLse:
        pointers[i] = lse;
        break;
      default: // a by-value scalar, already pointed at
        break;
      }
    }
    executePlan(api, device, deviceIndex, "cuDNN attention for " + described,
                chosen, packUids, pointers, workspaceMemory, stream);
  }

  std::string name() const override {
    return "cudnn " + api.version + " engine " + std::to_string(chosen.engine);
  }

private:
  cudnnBackendDescriptor_t tensor(int64_t uid, const std::string &name,
                                  cudnnDataType_t type, const Layout &layout,
                                  Storage storage) {
    cudnnBackendDescriptor_t t = descriptors.create(
        CUDNN_BACKEND_TENSOR_DESCRIPTOR,
        "tensor '" + name + "' (uid " + std::to_string(uid) + ")");
    const int64_t alignment = 16;
    const bool yes = true;
    descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_DATA_TYPE), &type);
    descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_DIMENSIONS),
                    layout.dims.data(), 4);
    descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_STRIDES),
                    layout.strides.data(), 4);
    descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_UNIQUE_ID), &uid);
    descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT), &alignment);
    if (storage == Storage::Virtual)
      descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_IS_VIRTUAL), &yes);
    if (storage == Storage::ByValue)
      descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_IS_BY_VALUE), &yes);
    descriptors.finalize(t);
    if (storage == Storage::Device) {
      packUids.push_back(uid);
      packValues.push_back(nullptr); // the caller's, set by run()
    }
    return t;
  }

  cudnnBackendDescriptor_t intermediate(const std::string &name,
                                        cudnnDataType_t type,
                                        const Layout &layout) {
    return tensor(nextUid++, name, type, layout, Storage::Virtual);
  }

  /// A scalar the variant pack passes from host memory at `value`, a member
  /// of this object, which never moves (it lives behind a unique_ptr).
  cudnnBackendDescriptor_t scalar(int64_t uid, const std::string &name,
                                  cudnnDataType_t type, void *value) {
    cudnnBackendDescriptor_t t =
        tensor(uid, name, type, {{1, 1, 1, 1}, {1, 1, 1, 1}}, Storage::ByValue);
    packUids.push_back(uid);
    packValues.push_back(value);
    return t;
  }

  /// y = mode(x[, b[, t]]); `axis` is GEN_INDEX's.
  void pointwise(const std::string &name, cudnnPointwiseMode_t mode,
                 cudnnDataType_t precision, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                 cudnnBackendDescriptor_t y, int64_t axis = -1) {
    cudnnBackendDescriptor_t desc = descriptors.create(
        CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "pointwise '" + name + "'");
    descriptors.set(desc, EIN_ATTR(CUDNN_ATTR_POINTWISE_MODE), &mode);
    descriptors.set(desc, EIN_ATTR(CUDNN_ATTR_POINTWISE_MATH_PREC), &precision);
    if (mode == CUDNN_POINTWISE_GEN_INDEX)
      descriptors.set(desc, EIN_ATTR(CUDNN_ATTR_POINTWISE_AXIS), &axis);
    descriptors.finalize(desc);
    cudnnBackendDescriptor_t op =
        descriptors.create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                           "operation '" + name + "'");
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR),
                    &desc);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_XDESC), &x);
    if (b)
      descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_BDESC), &b);
    if (t)
      descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_TDESC), &t);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_YDESC), &y);
    // As cudnn-frontend sets them on every pointwise operation.
    const float one = 1;
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1), &one);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2), &one);
    descriptors.finalize(op);
    operations.push_back(op);
  }

  /// y = the `reduce` of x over the dims where y has size 1, in f32.
  void reduction(const std::string &name, cudnnReduceTensorOp_t reduce,
                 cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
    cudnnBackendDescriptor_t desc = descriptors.create(
        CUDNN_BACKEND_REDUCTION_DESCRIPTOR, "reduction '" + name + "'");
    const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    descriptors.set(desc, EIN_ATTR(CUDNN_ATTR_REDUCTION_COMP_TYPE), &precision);
    descriptors.set(desc, EIN_ATTR(CUDNN_ATTR_REDUCTION_OPERATOR), &reduce);
    descriptors.finalize(desc);
    cudnnBackendDescriptor_t op =
        descriptors.create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
                           "operation '" + name + "'");
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_REDUCTION_DESC), &desc);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_REDUCTION_XDESC), &x);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_REDUCTION_YDESC), &y);
    descriptors.finalize(op);
    operations.push_back(op);
  }

  /// c = a b over the last two dims, batched (and broadcast) over the first
  /// two, accumulating in f32.
  void matmul(const std::string &name, cudnnBackendDescriptor_t a,
              cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c) {
    cudnnBackendDescriptor_t desc = descriptors.create(
        CUDNN_BACKEND_MATMUL_DESCRIPTOR, "matmul '" + name + "'");
    const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    descriptors.set(desc, EIN_ATTR(CUDNN_ATTR_MATMUL_COMP_TYPE), &precision);
    descriptors.finalize(desc);
    cudnnBackendDescriptor_t op = descriptors.create(
        CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "operation '" + name + "'");
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_MATMUL_ADESC), &a);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_MATMUL_BDESC), &b);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_MATMUL_CDESC), &c);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_MATMUL_DESC), &desc);
    descriptors.finalize(op);
    operations.push_back(op);
  }

  /// `scores` where query s sees key t (t <= s + diagonal), else -inf, in
  /// the index arithmetic of cudnn-frontend's causal masks, which the fused
  /// engines recognise and turn into skipped tiles. A top-left mask
  /// (diagonal 0) compares the indices as they are; a bottom-right one, whose
  /// diagonal is keys minus queries, adds keys to the query index and then
  /// subtracts queries; any other diagonal is cudnn-frontend's right bound,
  /// added to the query index.
  cudnnBackendDescriptor_t mask(cudnnBackendDescriptor_t scores,
                                const Layout &layout) {
    cudnnBackendDescriptor_t query =
        intermediate("query index", CUDNN_DATA_INT32, layout);
    pointwise("query index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT,
              scores, nullptr, nullptr, query, /*axis=*/2);
    cudnnBackendDescriptor_t key =
        intermediate("key index", CUDNN_DATA_INT32, layout);
    pointwise("key index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores,
              nullptr, nullptr, key, /*axis=*/3);
    // The last key each query sees.
    cudnnBackendDescriptor_t last = query;
    if (problem.diagonal != 0 &&
        problem.diagonal == problem.keys - problem.queries) {
      keys = static_cast<int32_t>(problem.keys);
      queries = static_cast<int32_t>(problem.queries);
      cudnnBackendDescriptor_t plusKeys =
          intermediate("query index + keys", CUDNN_DATA_INT32, layout);
      pointwise("add keys", CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, query,
                scalar(kUidKeys, "keys", CUDNN_DATA_INT32, &keys), nullptr,
                plusKeys);
      last = intermediate("query index + keys - queries", CUDNN_DATA_INT32,
                          layout);
      pointwise("subtract queries", CUDNN_POINTWISE_SUB, CUDNN_DATA_INT32,
                plusKeys,
                scalar(kUidQueries, "queries", CUDNN_DATA_INT32, &queries),
                nullptr, last);
    } else if (problem.diagonal != 0) {
      diagonal = static_cast<int32_t>(problem.diagonal);
      last = intermediate("query index + diagonal", CUDNN_DATA_INT32, layout);
      pointwise("add diagonal", CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, query,
                scalar(kUidDiagonal, "diagonal", CUDNN_DATA_INT32, &diagonal),
                nullptr, last);
    }
    cudnnBackendDescriptor_t visible =
        intermediate("visible", CUDNN_DATA_BOOLEAN, layout);
    pointwise("key visible", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, last,
              key, nullptr, visible);
    cudnnBackendDescriptor_t masked =
        intermediate("masked scores", CUDNN_DATA_FLOAT, layout);
    pointwise("mask", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, scores,
              scalar(kUidMaskFill, "-inf", CUDNN_DATA_FLOAT, &maskFill),
              visible, masked);
    return masked;
  }

  /// The operation graph of the file comment, finalized.
  void buildGraph() {
    const AttentionProblem &p = problem;
    const cudnnDataType_t io =
        p.type == F16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    const int64_t d = p.headDim, t = p.keys, kvHeads = p.kvHeads;
    // The caller's tensors at their strides (dense or views); k is read
    // as k^T by swapping its last two.
    const std::array<int64_t, 4> ks = p.strides(1);
    cudnnBackendDescriptor_t q =
        tensor(kUidQ, "q", io, {{p.batch, p.heads, p.queries, d}, p.strides(0)},
               Storage::Device);
    cudnnBackendDescriptor_t kT =
        tensor(kUidK, "k, read as k^T", io,
               {{p.batch, kvHeads, d, t}, {ks[0], ks[1], ks[3], ks[2]}},
               Storage::Device);
    cudnnBackendDescriptor_t v = tensor(
        kUidV, "v", io, {{p.batch, kvHeads, t, p.valueDim}, p.strides(2)},
        Storage::Device);
    cudnnBackendDescriptor_t o =
        tensor(kUidO, "o", io,
               {{p.batch, p.heads, p.queries, p.valueDim}, p.strides(3)},
               Storage::Device);
    const Layout scores = rowMajor({p.batch, p.heads, p.queries, t});
    const Layout rows = rowMajor({p.batch, p.heads, p.queries, 1});

    cudnnBackendDescriptor_t qk = intermediate("q k^T", f32, scores);
    matmul("bmm1 q k^T", q, kT, qk);
    cudnnBackendDescriptor_t scaled =
        intermediate("scaled scores", f32, scores);
    pointwise("scale", CUDNN_POINTWISE_MUL, f32, qk,
              scalar(kUidScale, "scale", f32, &scale), nullptr, scaled);
    // With diagonal >= keys - 1 every query sees every key: no mask.
    cudnnBackendDescriptor_t masked =
        p.causal && p.diagonal < p.keys - 1 ? mask(scaled, scores) : scaled;
    cudnnBackendDescriptor_t rowMax = intermediate("row max", f32, rows);
    reduction("row max", CUDNN_REDUCE_TENSOR_MAX, masked, rowMax);
    cudnnBackendDescriptor_t shifted =
        intermediate("scores - row max", f32, scores);
    pointwise("subtract row max", CUDNN_POINTWISE_SUB, f32, masked, rowMax,
              nullptr, shifted);
    cudnnBackendDescriptor_t exps =
        intermediate("exp(scores - row max)", f32, scores);
    pointwise("exp", CUDNN_POINTWISE_EXP, f32, shifted, nullptr, nullptr, exps);
    cudnnBackendDescriptor_t rowSum = intermediate("row sum", f32, rows);
    reduction("row sum", CUDNN_REDUCE_TENSOR_ADD, exps, rowSum);
    cudnnBackendDescriptor_t logSum = intermediate("log row sum", f32, rows);
    pointwise("log", CUDNN_POINTWISE_LOG, f32, rowSum, nullptr, nullptr,
              logSum);
    // Computed even when nothing reads them, into a virtual tensor, as
    // cudnn-frontend's inference graphs do: the fused engines are matched
    // against the graphs it builds.
    cudnnBackendDescriptor_t lse =
        p.withLse ? tensor(kUidLse, "lse", f32, rows, Storage::Device)
                  : intermediate("lse", f32, rows);
    pointwise("lse", CUDNN_POINTWISE_ADD, f32, rowMax, logSum, nullptr, lse);
    cudnnBackendDescriptor_t probabilities =
        intermediate("probabilities", io, scores);
    pointwise("normalise", CUDNN_POINTWISE_DIV, f32, exps, rowSum, nullptr,
              probabilities);
    matmul("bmm2 p v", probabilities, v, o);

    graph = operationGraph(descriptors, device, operations, described);
  }

  const Cudnn &api;
  DeviceHandle &device;
  const int deviceIndex;
  const AttentionProblem problem;
  const std::string described;
  Descriptors descriptors;
  std::vector<cudnnBackendDescriptor_t> operations;
  cudnnBackendDescriptor_t graph = nullptr;
  ChosenPlan chosen;
  int64_t nextUid = kFirstVirtualUid;
  // The by-value scalars, which the variant pack passes by address.
  float scale;
  float maskFill = -std::numeric_limits<float>::infinity();
  int32_t diagonal = 0, keys = 0, queries = 0;
  // The variant pack: every non-virtual uid and its address (null for the
  // caller's buffers, which run() fills in).
  std::vector<int64_t> packUids;
  std::vector<void *> packValues;
};

} // namespace

std::unique_ptr<Attention>
createCudnnAttention(const AttentionProblem &problem) {
  if (std::string why = unsupported(problem); !why.empty())
    throw RuntimeError("cuDNN attention cannot run " + problem.describe() +
                       ": " + why);
  const Cudnn &api = cudnn();
  int device = -1;
  if (cudaError_t status = cudaGetDevice(&device); status != cudaSuccess)
    throw RuntimeError("cuDNN attention for " + problem.describe() +
                       ": cudaGetDevice failed: " + cudaGetErrorString(status));
  return std::make_unique<CudnnAttention>(api, deviceHandle(api, device),
                                          device, problem);
}

} // namespace ein::cuda
