//===- fuzz_program.cpp - libFuzzer: the program.json reader --------------===//
//
// Any bytes through parseProgram; a program it accepts must round-trip
// through writeProgram, and evaluate (under a small element budget) without
// crashing.
//
//===----------------------------------------------------------------------===//

#include "ein/eval.h"
#include "ein/program.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size), error;
  ein::Program program;
  if (!ein::parseProgram(text, program, error))
    return 0;
  std::string written = ein::writeProgram(program);
  ein::Program again;
  if (!ein::parseProgram(written, again, error) ||
      ein::writeProgram(again) != written)
    std::abort(); // the writer and the reader disagree
  // Inputs drawn from a seed, as ein-eval draws them, under budgets that
  // keep one input fast.
  ein::EvalOptions options;
  options.maxElements = 1 << 14;
  options.maxIterations = 1 << 20;
  std::vector<ein::HostTensor> inputs, results;
  std::vector<int64_t> bounds = ein::indexBounds(program);
  for (size_t i = 0; i < program.arguments.size(); ++i) {
    if (program.arguments[i].type.numElements() > options.maxElements)
      return 0;
    inputs.push_back(
        ein::randomInput(program.arguments[i].type, 1, int(i), bounds[i]));
  }
  (void)ein::evaluate(program, inputs, results, error, options);
  return 0;
}
