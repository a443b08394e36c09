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
  return text;
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
