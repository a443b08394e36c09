//===- fuzz_topology.cpp - libFuzzer: the topology reader -----------------===//
//
// Any bytes through parseTopology (docs/physical.md's JSON form).
//
//===----------------------------------------------------------------------===//

#include "ein/topology.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size), error;
  ein::Topology topology;
  (void)ein::parseTopology(text, topology, error);
  return 0;
}
