//===- ein-eval.cpp - The reference evaluator's command line --------------===//
//
//   ein-eval PROGRAM.json [--inputs=a.npy,b.npy,...] [--outputs=o.npy,...]
//            [--seed=S] [--save-inputs=a.npy,...] [--round-intermediates]
//            [--max-bytes=N]
//
// Evaluates a logical program (program.json) in float64. Without --inputs the
// inputs are drawn from the seed as docs/program-format.md says; --save-inputs
// writes them out so another tool can check against the same data. Prints one
// line per result; writes each result in its element type with --outputs.
// Before reading or drawing anything it refuses a program whose values, as
// the evaluator holds them, would take more host memory than --max-bytes
// (by default the machine's physical memory).
//
//===----------------------------------------------------------------------===//

#include "tool_support.h"

#include "ein/eval.h"

#include <exception>

using namespace ein::tools;

namespace {

const char *kUsage =
    "usage: ein-eval PROGRAM.json [--inputs=a.npy,...] [--outputs=o.npy,...]\n"
    "                [--seed=S] [--save-inputs=a.npy,...] "
    "[--round-intermediates]\n"
    "                [--max-bytes=N]\n";

int run(int argc, char **argv) {
  CommandLine line = parseCommandLine(
      argc, argv, kUsage,
      {"inputs", "outputs", "seed", "save-inputs", "max-bytes"},
      {"round-intermediates"});
  if (line.positional.empty())
    die(std::string("no program given\n") + kUsage);
  if (line.positional.size() > 1)
    die("more than one program given ('" + line.positional[0] + "' and '" +
        line.positional[1] + "')");
  auto list = [&](const char *key) {
    return line.values.count(key) ? splitList(key, line.values.at(key))
                                  : std::vector<std::string>();
  };
  std::vector<std::string> inputFiles = list("inputs"),
                           outputFiles = list("outputs"),
                           saveFiles = list("save-inputs");
  uint64_t seed =
      line.values.count("seed") ? parseCount("seed", line.values["seed"]) : 0;
  MemoryLimit limit = memoryLimit(line);

  ein::Program program;
  std::string error;
  if (!ein::readProgram(line.positional[0], program, error))
    die(error);
  size_t count = program.arguments.size();
  checkFileCount("inputs", inputFiles, count, program.function, "takes",
                 "arguments");
  checkFileCount("save-inputs", saveFiles, count, program.function, "takes",
                 "arguments");
  checkFileCount("outputs", outputFiles, program.results.size(),
                 program.function, "has", "results");
  std::vector<std::string> reads = inputFiles, written = outputFiles;
  reads.push_back(line.positional[0]);
  written.insert(written.end(), saveFiles.begin(), saveFiles.end());
  refuseOverwrites("outputs and --save-inputs", written, reads, "");

  ein::EvalOptions options;
  options.roundIntermediates = line.flags.count("round-intermediates");
  // The inputs as read, and what the evaluator keeps to the end.
  checkArguments(program, options.maxElements, limit);
  uint64_t bytes = evaluatorBytes(program);
  for (const ein::Argument &arg : program.arguments)
    bytes = addBytes(bytes, float64Bytes(arg.type));
  checkHostBytes("evaluating '" + program.function + "'", bytes,
                 "its arguments as read and as the evaluator keeps them, every "
                 "op's result and the results returned, as float64",
                 limit);
  std::vector<ein::HostTensor> inputs =
      loadInputs(program, inputFiles, seed, options.maxElements);
  writeOutputs(saveFiles, inputs);

  std::vector<ein::HostTensor> results;
  if (!ein::evaluate(program, inputs, results, error, options))
    die(error);
  for (size_t r = 0; r < results.size(); ++r)
    printResult(r, program.results[r], results[r]);
  writeOutputs(outputFiles, results);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  setToolName("ein-eval");
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    die("out of memory: the program is too large for the CPU reference");
  } catch (const std::exception &e) {
    die(std::string("internal error: ") + e.what());
  }
}
