//===- fuzz_npy.cpp - libFuzzer: the .npy reader --------------------------===//
//
// Any bytes through parseNpy, as each element type a program can declare;
// an accepted file holds exactly the elements its shape says.
//
//===----------------------------------------------------------------------===//

#include "ein/npy.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size), error;
  for (ein::DType type : {ein::DType::F32, ein::DType::BF16, ein::DType::F64,
                          ein::DType::I64, ein::DType::I32}) {
    ein::HostTensor tensor;
    if (!ein::parseNpy(bytes, "fuzz.npy", type, tensor, error))
      continue;
    int64_t count = 1;
    for (int64_t d : tensor.shape)
      count *= d;
    if (tensor.dtype != type || int64_t(tensor.data.size()) != count)
      std::abort();
  }
  return 0;
}
