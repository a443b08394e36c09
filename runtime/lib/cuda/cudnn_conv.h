//===- cudnn_conv.h - Convolutions through cuDNN ------------------*- C++
//-*-===//
//
// The `conv` steps: a 2-D convolution (cross-correlation) in nhwc (filter
// fhwc, which cuDNN's channels-last engines read; the backend reorders the
// step's hwcf filter into it) or nchw (filter fchw), f32, f16 or bf16
// accumulating in f32, as one
// cuDNN 9 CONVOLUTION_FORWARD operation graph. Planned once per problem
// (cuDNN's heuristics, then its fallback list), then run on any stream,
// also under CUDA stream capture. cuDNN is loaded on first use
// (cudnn_graph.h).
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_CUDNN_CONV_H
#define EIN_LIB_CUDA_CUDNN_CONV_H

#include "attention.h"

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace ein::cuda {

struct ConvProblem {
  /// nhwc with an hwcf filter, or nchw with an fchw one.
  bool channelsLast = true;
  /// Input [batch, channels, rows, columns], whatever the layout.
  int64_t batch = 0, channels = 0, rows = 0, columns = 0;
  /// Filter: `features` output channels over a rows x columns window.
  int64_t features = 0, windowRows = 0, windowColumns = 0;
  int64_t outRows = 0, outColumns = 0;
  std::array<int64_t, 2> strides{1, 1}, dilations{1, 1}, padLow{0, 0},
      padHigh{0, 0};
  /// Channel groups: the filter reads `channels / groups` input channels,
  /// those of its output channel's group (cuDNN infers the count from the
  /// filter's channels).
  int64_t groups = 1;
  ElementType type = BF16;

  /// "conv nhwc 32x64x56x56 * 64x3x3 -> 32x64x56x56 bf16, stride 1x1, ...".
  std::string describe() const;
};

class Conv {
public:
  virtual ~Conv() = default;
  /// Device memory run() needs as scratch.
  virtual size_t workspaceBytes() const = 0;
  virtual void run(const void *x, const void *w, void *y, void *workspace,
                   cudaStream_t stream) = 0;
  /// "cudnn 9.19.0 engine 12".
  virtual std::string name() const = 0;
};

/// The convolution `problem` on the current device; throws RuntimeError
/// (../backend.h) with the reason when cuDNN is missing or none of its
/// engines runs it.
std::unique_ptr<Conv> createCudnnConv(const ConvProblem &problem);

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_CUDNN_CONV_H
