//===- fuzz_signatures.cpp - libFuzzer: kernel signature tables -----------===//
//
// Any bytes through parseKernelSignatures; an accepted table round-trips
// through writeKernelSignatures.
//
//===----------------------------------------------------------------------===//

#include "ein/signature.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size), error;
  ein::KernelSignatures table, again;
  if (!ein::parseKernelSignatures(text, table, error))
    return 0;
  std::string written = ein::writeKernelSignatures(table);
  if (!ein::parseKernelSignatures(written, again, error) ||
      ein::writeKernelSignatures(again) != written)
    std::abort();
  return 0;
}
