//===- attention.cpp - Choosing the fused attention implementation --------===//

#include "attention.h"

#include "../backend.h"
#include "cudnn_attention.h"
#include "flash_attention.h"

namespace ein::cuda {

std::string AttentionProblem::describe() const {
  std::string text =
      std::string(type == F16 ? "f16" : "bf16") +
      " b=" + std::to_string(batch) + " h=" + std::to_string(heads) + "/" +
      std::to_string(kvHeads) + " s=" + std::to_string(queries) +
      " t=" + std::to_string(keys) + " d=" + std::to_string(headDim);
  if (valueDim != headDim)
    text += " dv=" + std::to_string(valueDim);
  if (causal)
    text += " causal(diagonal " + std::to_string(diagonal) + ")";
  if (withLse)
    text += " lse";
  if (!dense())
    text += " strided";
  return text;
}

std::array<int64_t, 4> AttentionProblem::denseStrides(int tensor) const {
  int64_t h = tensor == 1 || tensor == 2 ? kvHeads : heads;
  int64_t tokens = tensor == 1 || tensor == 2 ? keys : queries;
  int64_t dim = tensor == 0 || tensor == 1 ? headDim : valueDim;
  return {h * tokens * dim, tokens * dim, dim, 1};
}

const std::array<int64_t, 4> &AttentionProblem::givenStrides(int tensor) const {
  return tensor == 0   ? qStrides
         : tensor == 1 ? kStrides
         : tensor == 2 ? vStrides
                       : oStrides;
}

bool AttentionProblem::dense() const {
  for (int t = 0; t < 4; ++t)
    if (givenStrides(t) != std::array<int64_t, 4>{} &&
        givenStrides(t) != denseStrides(t))
      return false;
  return true;
}

std::array<int64_t, 4> AttentionProblem::strides(int tensor) const {
  if (givenStrides(tensor) != std::array<int64_t, 4>{})
    return givenStrides(tensor);
  return denseStrides(tensor);
}

std::unique_ptr<Attention> createAttention(const AttentionProblem &problem,
                                           const std::string &choice) {
  std::string cudnnWhy;
  if (choice != "kernel") {
    try {
      return createCudnnAttention(problem);
    } catch (const RuntimeError &e) {
      if (choice == "cudnn")
        throw;
      cudnnWhy = e.what();
    }
  }
  std::string why;
  if (!flashAttentionSupports(problem, why))
    throw RuntimeError("no attention implementation runs " +
                       problem.describe() +
                       (cudnnWhy.empty() ? "" : ": cuDNN: " + cudnnWhy + ";") +
                       " the runtime's kernel: " + why);
  return createFlashAttention(problem);
}

} // namespace ein::cuda
