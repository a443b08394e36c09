//===- ein-eval.cpp - The reference evaluator's command line --------------===//
//
//   ein-eval PROGRAM.json [--inputs=a.npy,b.npy,...] [--outputs=o.npy,...]
//            [--seed=S] [--save-inputs=a.npy,...] [--round-intermediates]
//
// Evaluates a logical program (program.json) in float64. Without --inputs the
// inputs are drawn from the seed as DESIGN §3 says; --save-inputs writes them
// out so another tool can check against the same data. Prints one line per
// result; writes each result in its element type with --outputs.
//
//===----------------------------------------------------------------------===//

#include "ein/eval.h"
#include "ein/npy.h"
#include "ein/program.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char *kUsage =
    "usage: ein-eval PROGRAM.json [--inputs=a.npy,...] [--outputs=o.npy,...]\n"
    "                [--seed=S] [--save-inputs=a.npy,...] "
    "[--round-intermediates]\n";

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "ein-eval: error: %s\n", message.c_str());
  std::exit(1);
}

/// A comma-separated list of files; an empty list or an empty item is an
/// error (it would silently shift files onto the wrong arguments).
std::vector<std::string> splitList(const std::string &option,
                                   const std::string &text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma - start);
    if (item.empty())
      die("--" + option + " has an empty file name in '" + text + "'");
    items.push_back(item);
    if (comma == std::string::npos)
      return items;
    start = comma + 1;
  }
}

struct Options {
  std::string program;
  std::vector<std::string> inputs, outputs, saveInputs;
  uint64_t seed = 0;
  bool roundIntermediates = false;
};

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      if (!o.program.empty())
        die("more than one program given ('" + o.program + "' and '" + arg +
            "')");
      o.program = arg;
      continue;
    }
    std::string key = arg.substr(2), value;
    bool hasValue = false;
    if (size_t eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
      hasValue = true;
    }
    if (key == "round-intermediates") {
      if (hasValue)
        die("--round-intermediates takes no value");
      o.roundIntermediates = true;
      continue;
    }
    if (key != "inputs" && key != "outputs" && key != "seed" &&
        key != "save-inputs")
      die("unknown option '--" + key + "'\n" + kUsage);
    if (!hasValue) {
      if (i + 1 >= argc)
        die("--" + key + " needs a value");
      value = argv[++i];
    }
    if (key == "inputs")
      o.inputs = splitList(key, value);
    else if (key == "outputs")
      o.outputs = splitList(key, value);
    else if (key == "save-inputs")
      o.saveInputs = splitList(key, value);
    else {
      char *end = nullptr;
      unsigned long long seed = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || value[0] == '-')
        die("--seed needs a non-negative integer, got '" + value + "'");
      o.seed = seed;
    }
  }
  if (o.program.empty())
    die(std::string("no program given\n") + kUsage);
  return o;
}

int run(int argc, char **argv) {
  Options o = parseArgs(argc, argv);
  ein::Program program;
  std::string error;
  if (!ein::readProgram(o.program, program, error))
    die(error);
  size_t count = program.arguments.size();
  if (!o.inputs.empty() && o.inputs.size() != count)
    die("--inputs names " + std::to_string(o.inputs.size()) + " files but '" +
        program.function + "' takes " + std::to_string(count) + " arguments");
  if (!o.saveInputs.empty() && o.saveInputs.size() != count)
    die("--save-inputs names " + std::to_string(o.saveInputs.size()) +
        " files but '" + program.function + "' takes " + std::to_string(count) +
        " arguments");
  if (!o.outputs.empty() && o.outputs.size() != program.results.size())
    die("--outputs names " + std::to_string(o.outputs.size()) + " files but '" +
        program.function + "' has " + std::to_string(program.results.size()) +
        " results");

  ein::EvalOptions options;
  options.roundIntermediates = o.roundIntermediates;
  std::vector<ein::HostTensor> inputs(count);
  for (size_t i = 0; i < count; ++i) {
    const ein::Argument &arg = program.arguments[i];
    if (arg.type.numElements() > options.maxElements)
      die("argument " + std::to_string(i) + " ('" + arg.name + "') has " +
          std::to_string(arg.type.numElements()) +
          " elements; the CPU reference stops at " +
          std::to_string(options.maxElements) +
          " (check large shapes on the GPU)");
    if (o.inputs.empty()) {
      inputs[i] = ein::randomInput(arg.type, o.seed, static_cast<int>(i));
    } else {
      if (!ein::readNpy(o.inputs[i], arg.type.dtype, inputs[i], error))
        die(error);
      if (inputs[i].shape != arg.type.shape) {
        std::string want, got;
        for (int64_t d : arg.type.shape)
          want += std::to_string(d) + "x";
        for (int64_t d : inputs[i].shape)
          got += std::to_string(d) + "x";
        die("'" + o.inputs[i] + "' has shape " + got +
            ein::dtypeName(arg.type.dtype) + " but argument " +
            std::to_string(i) + " ('" + arg.name + "') is " + want +
            ein::dtypeName(arg.type.dtype));
      }
    }
    if (!o.saveInputs.empty() &&
        !ein::writeNpy(o.saveInputs[i], inputs[i], error))
      die(error);
  }

  std::vector<ein::HostTensor> results;
  if (!ein::evaluate(program, inputs, results, error, options))
    die(error);
  for (size_t r = 0; r < results.size(); ++r) {
    const ein::HostTensor &t = results[r];
    double maxAbs = 0, sum = 0;
    bool finite = true;
    for (double x : t.data) {
      finite &= std::isfinite(x);
      maxAbs = std::max(maxAbs, std::fabs(x));
      sum += x;
    }
    std::string shape;
    for (size_t d = 0; d < t.shape.size(); ++d)
      shape += (d ? "x" : "") + std::to_string(t.shape[d]);
    std::printf("result %zu '%s': %s %s max_abs=%.6g sum=%.6g%s\n", r,
                program.results[r].c_str(), shape.c_str(),
                ein::dtypeName(t.dtype), maxAbs, sum,
                finite ? "" : " (not all finite)");
    if (!o.outputs.empty() && !ein::writeNpy(o.outputs[r], t, error))
      die(error);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    die("out of memory: the program is too large for the CPU reference");
  } catch (const std::exception &e) {
    die(std::string("internal error: ") + e.what());
  }
}
