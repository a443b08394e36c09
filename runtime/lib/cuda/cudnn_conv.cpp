//===- cudnn_conv.cpp - Convolutions through cuDNN's graph API ------------===//
//
// One CONVOLUTION_FORWARD operation, y = conv(x, w) with alpha 1 and beta 0,
// in cuDNN's dimension order (x [n, c, h, w], w [k, c, r, s], y [n, k, p,
// q]) with the strides of the buffers' own layout: nhwc and hwcf, or nchw
// and fchw, row-major; grouped, w holds c / groups channels [k, c / g, r,
// s]. The padding before and after may differ (a block cut
// by rows has padding on one side only), which the backend API takes as
// pre- and post-paddings.
//
//===----------------------------------------------------------------------===//

#include "cudnn_conv.h"

#include "cudnn_graph.h"

#include <array>
#include <string>
#include <vector>

namespace ein::cuda {

std::string ConvProblem::describe() const {
  auto x = [](std::initializer_list<int64_t> v) {
    std::string text;
    for (int64_t d : v)
      text += (text.empty() ? "" : "x") + std::to_string(d);
    return text;
  };
  return std::string("conv ") + (channelsLast ? "nhwc" : "nchw") + " " +
         x({batch, channels, rows, columns}) + " * " +
         x({features, windowRows, windowColumns}) + " -> " +
         x({batch, features, outRows, outColumns}) + " " +
         (type == BF16  ? "bf16"
          : type == F16 ? "f16"
                        : "f32") +
         ", stride " + x({strides[0], strides[1]}) + ", dilation " +
         x({dilations[0], dilations[1]}) + ", padding " +
         x({padLow[0], padLow[1]}) + " before, " + x({padHigh[0], padHigh[1]}) +
         " after" +
         (groups != 1 ? ", " + std::to_string(groups) + " groups" : "");
}

namespace {

enum : int64_t { kUidX = 1, kUidW, kUidY };

/// Strides of a tensor of dims [n, c, h, w] laid out channels last
/// (n, h, w, c) or first (row-major).
std::array<int64_t, 4> stridesOf(const std::array<int64_t, 4> &d,
                                 bool channelsLast) {
  if (channelsLast)
    return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
  return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
}

class CudnnConv final : public Conv {
public:
  CudnnConv(const Cudnn &api, DeviceHandle &device, int deviceIndex,
            const ConvProblem &problem)
      : api(api), device(device), deviceIndex(deviceIndex),
        described(problem.describe()),
        descriptors(api, "cuDNN convolution for " + described) {
    std::lock_guard<std::mutex> lock(device.mutex);
    const ConvProblem &p = problem;
    cudnnDataType_t io = p.type == BF16  ? CUDNN_DATA_BFLOAT16
                         : p.type == F16 ? CUDNN_DATA_HALF
                                         : CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t x =
        tensor(kUidX, "x", io, {p.batch, p.channels, p.rows, p.columns},
               p.channelsLast);
    // The filter [k, c, r, s] channels last is fhwc (k, r, s, c), as
    // cuDNN's channels-last engines read it (they give wrong results for
    // an hwcf filter, k innermost, whose strides they accept). Grouped, it
    // holds c / groups channels, which is how cuDNN tells the groups.
    cudnnBackendDescriptor_t w = tensor(
        kUidW, "w", io,
        {p.features, p.channels / p.groups, p.windowRows, p.windowColumns},
        p.channelsLast);
    cudnnBackendDescriptor_t y =
        tensor(kUidY, "y", io, {p.batch, p.features, p.outRows, p.outColumns},
               p.channelsLast);

    cudnnBackendDescriptor_t conv = descriptors.create(
        CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "the convolution descriptor");
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const int64_t spatial = 2;
    descriptors.set(conv, EIN_ATTR(CUDNN_ATTR_CONVOLUTION_COMP_TYPE), &f32);
    descriptors.set(conv, EIN_ATTR(CUDNN_ATTR_CONVOLUTION_CONV_MODE), &mode);
    descriptors.set(conv, EIN_ATTR(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS),
                    &spatial);
    descriptors.set(conv, EIN_ATTR(CUDNN_ATTR_CONVOLUTION_DILATIONS),
                    p.dilations.data(), 2);
    descriptors.set(conv, EIN_ATTR(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES),
                    p.strides.data(), 2);
    descriptors.set(conv, EIN_ATTR(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS),
                    p.padLow.data(), 2);
    descriptors.set(conv, EIN_ATTR(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS),
                    p.padHigh.data(), 2);
    descriptors.finalize(conv);

    cudnnBackendDescriptor_t op = descriptors.create(
        CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
        "the convolution");
    const float one = 1, zero = 0;
    descriptors.set(
        op, EIN_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA), &one);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA),
                    &zero);
    descriptors.set(
        op, EIN_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC),
        &conv);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X),
                    &x);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W),
                    &w);
    descriptors.set(op, EIN_ATTR(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y),
                    &y);
    descriptors.finalize(op);
    cudnnBackendDescriptor_t graph =
        operationGraph(descriptors, device, {op}, described);
    chosen = choosePlan(api, descriptors, device, graph, described);
  }

  size_t workspaceBytes() const override { return chosen.workspace; }

  void run(const void *x, const void *w, void *y, void *workspace,
           cudaStream_t stream) override {
    std::vector<void *> pointers = {const_cast<void *>(x),
                                    const_cast<void *>(w), y};
    executePlan(api, device, deviceIndex, "cuDNN convolution for " + described,
                chosen, {kUidX, kUidW, kUidY}, pointers, workspace, stream);
  }

  std::string name() const override {
    return "cudnn " + api.version + " engine " + std::to_string(chosen.engine);
  }

private:
  cudnnBackendDescriptor_t tensor(int64_t uid, const std::string &name,
                                  cudnnDataType_t type,
                                  const std::array<int64_t, 4> &dims,
                                  bool channelsLast) {
    std::array<int64_t, 4> strides = stridesOf(dims, channelsLast);
    cudnnBackendDescriptor_t t = descriptors.create(
        CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor '" + name + "'");
    // Buffers start at multiples of kBufferAlignment (bundle.h).
    const int64_t alignment = 16;
    descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_DATA_TYPE), &type);
    descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_DIMENSIONS), dims.data(), 4);
    descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_STRIDES), strides.data(), 4);
    descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_UNIQUE_ID), &uid);
    descriptors.set(t, EIN_ATTR(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT), &alignment);
    descriptors.finalize(t);
    return t;
  }

  const Cudnn &api;
  DeviceHandle &device;
  const int deviceIndex;
  const std::string described;
  Descriptors descriptors;
  ChosenPlan chosen;
};

} // namespace

std::unique_ptr<Conv> createCudnnConv(const ConvProblem &problem) {
  const Cudnn &api = cudnn();
  int device = -1;
  if (cudaError_t status = cudaGetDevice(&device); status != cudaSuccess)
    throw RuntimeError("cuDNN convolution for " + problem.describe() +
                       ": cudaGetDevice failed: " + cudaGetErrorString(status));
  return std::make_unique<CudnnConv>(api, deviceHandle(api, device), device,
                                     problem);
}

} // namespace ein::cuda
