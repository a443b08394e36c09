//===- fuzz_manifest.cpp - libFuzzer: the manifest reader and its checks --===//
//
// Any bytes through parseManifest (structure, references, layouts, the race
// check, the data-flow check); a manifest it accepts must write back to text
// that it reads as the same manifest (writeManifest is its inverse).
//
//===----------------------------------------------------------------------===//

#include "ein/bundle.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size), error;
  ein::Manifest manifest;
  if (!ein::parseManifest(text, manifest, error))
    return 0;
  std::string written = ein::writeManifest(manifest);
  ein::Manifest again;
  if (!ein::parseManifest(written, again, error) ||
      ein::writeManifest(again) != written)
    std::abort(); // the writer and the reader disagree
  return 0;
}
