//===- relu.cu - The CUDA test bundles' hand-written kernel ---------------===//
//
// In the CUDA kernel ABI of docs/bundle-format.md: the argument buffers'
// pointers, then the step's scalars as 64-bit integers.
//
//===----------------------------------------------------------------------===//

#include <cstdint>

/// Rectifies n bf16 values in place; NaN stays NaN.
extern "C" __global__ void relu_bf16(uint16_t *x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    uint16_t v = x[i];
    bool nan = (v & 0x7f80) == 0x7f80 && (v & 0x007f) != 0;
    if ((v & 0x8000) && !nan)
      x[i] = 0;
  }
}

/// The library's signature table (docs/bundle-format.md), as a device
/// global the runtime reads: relu_bf16 reads and writes as many bf16
/// elements of its one buffer as its scalar says.
extern "C" __device__ const char ein_kernel_signatures[] =
    R"({"format": "ein-kernel-signatures", "kernels": {"relu_bf16": )"
    R"({"args": [{"dtype": "bf16", "elements_in_scalar": 0, )"
    R"("access": "readwrite"}], "scalars": 1}}})";
