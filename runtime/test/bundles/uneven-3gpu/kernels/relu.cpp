//===- relu.cpp - The uneven-3gpu bundle's host kernel --------------------===//
//
// Hand-written in the CPU kernel ABI (docs/bundle-format.md): one pointer
// per argument buffer, then the step's scalars.
//
//===----------------------------------------------------------------------===//

#include <cstdint>

/// Rectifies args[0], scalars[0] bf16 values, in place; NaN stays NaN.
extern "C" void relu_bf16(void *const *args, const int64_t *scalars) {
  auto *x = static_cast<uint16_t *>(args[0]);
  for (int64_t i = 0; i < scalars[0]; ++i) {
    bool nan = (x[i] & 0x7f80) == 0x7f80 && (x[i] & 0x007f) != 0;
    if ((x[i] & 0x8000) && !nan)
      x[i] = 0;
  }
}

/// The library's signature table (docs/bundle-format.md): relu_bf16 reads
/// and writes as many bf16 elements of its one buffer as scalars[0] says.
extern "C" __attribute__((visibility("default")))
const char ein_kernel_signatures[] =
    R"({"format": "ein-kernel-signatures", "kernels": {"relu_bf16": )"
    R"({"args": [{"dtype": "bf16", "elements_in_scalar": 0, )"
    R"("access": "readwrite"}], "scalars": 1}}})";
