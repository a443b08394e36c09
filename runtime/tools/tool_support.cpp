//===- tool_support.cpp - What ein-eval and ein-run share -----------------===//

#include "tool_support.h"

#include "ein/eval.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

namespace ein::tools {

static const char *toolName = "ein";

void setToolName(const char *name) { toolName = name; }

void die(const std::string &message) {
  std::fflush(stdout); // what was printed so far comes first
  std::fprintf(stderr, "%s: error: %s\n", toolName, message.c_str());
  std::exit(1);
}

CommandLine parseCommandLine(int argc, char **argv, const char *usage,
                             const std::set<std::string> &withValue,
                             const std::set<std::string> &flags,
                             const std::set<std::string> &optionalValue) {
  CommandLine line;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      line.positional.push_back(arg);
      continue;
    }
    std::string key = arg.substr(2), value;
    bool hasValue = false;
    if (size_t eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
      hasValue = true;
    }
    if (flags.count(key)) {
      if (hasValue && !optionalValue.count(key))
        die("--" + key + " takes no value");
      if (hasValue && value.empty())
        die("--" + key + "= needs a value after '='");
      if (hasValue)
        line.values[key] = value;
      line.flags.insert(key);
      continue;
    }
    if (!withValue.count(key))
      die("unknown option '--" + key + "'\n" + usage);
    if (!hasValue) {
      if (i + 1 >= argc)
        die("--" + key + " needs a value");
      value = argv[++i];
    }
    line.values[key] = value;
  }
  return line;
}

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

uint64_t parseCount(const std::string &option, const std::string &text,
                    uint64_t max) {
  char *end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || text[0] == '-' || errno == ERANGE ||
      n > max)
    die("--" + option + " needs " +
        (max == UINT64_MAX ? std::string("a non-negative integer")
                           : "an integer from 0 to " + std::to_string(max)) +
        ", got '" + text + "'");
  return n;
}

static std::string typeText(const std::vector<int64_t> &shape, DType dtype) {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + dtypeName(dtype);
}

MemoryLimit memoryLimit(const CommandLine &line) {
  MemoryLimit limit;
  if (line.values.count("max-bytes")) {
    limit.bytes = parseCount("max-bytes", line.values.at("max-bytes"));
    limit.given = true;
    return limit;
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && uint64_t(pages) <= UINT64_MAX / uint64_t(page))
    limit.bytes = uint64_t(pages) * uint64_t(page);
  return limit;
}

// Shapes hold at most 2^48 elements (the readers' bound), so one tensor's
// bytes fit; sums of many saturate instead of wrapping.
uint64_t float64Bytes(const TensorType &type) {
  return uint64_t(type.numElements()) * sizeof(double);
}

uint64_t denseBytes(const TensorType &type) {
  return uint64_t(type.numElements()) * dtypeBytes(type.dtype);
}

uint64_t addBytes(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t evaluatorBytes(const Program &program) {
  std::map<std::string, uint64_t> valueBytes;
  uint64_t bytes = 0;
  for (const Argument &arg : program.arguments) {
    valueBytes[arg.name] = float64Bytes(arg.type);
    bytes = addBytes(bytes, float64Bytes(arg.type));
  }
  for (const Op &op : program.ops) {
    valueBytes[op.result] = float64Bytes(op.type);
    bytes = addBytes(bytes, float64Bytes(op.type));
  }
  for (const std::string &result : program.results)
    bytes = addBytes(bytes, valueBytes[result]);
  return bytes;
}

/// "than the limit of N bytes (--max-bytes)", or the default's words.
static std::string thanLimit(const MemoryLimit &limit) {
  std::string bytes = std::to_string(limit.bytes) + " bytes";
  return limit.given ? "than the limit of " + bytes + " (--max-bytes)"
                     : "than the machine's physical memory, " + bytes +
                           " (--max-bytes=N sets another limit)";
}

void checkArguments(const Program &program, int64_t maxElements,
                    const MemoryLimit &limit) {
  for (size_t i = 0; i < program.arguments.size(); ++i) {
    const Argument &arg = program.arguments[i];
    if (arg.type.numElements() > maxElements)
      die("argument " + std::to_string(i) + " ('" + arg.name + "') has " +
          std::to_string(arg.type.numElements()) +
          " elements; the CPU reference stops at " +
          std::to_string(maxElements) + " (check large shapes on the GPU)");
    if (float64Bytes(arg.type) > limit.bytes)
      die("argument " + std::to_string(i) + " ('" + arg.name + "') is " +
          typeText(arg.type.shape, arg.type.dtype) + ", " +
          std::to_string(float64Bytes(arg.type)) +
          " bytes as the float64 values the tool holds: more " +
          thanLimit(limit));
  }
}

void checkHostBytes(const std::string &what, uint64_t bytes,
                    const std::string &why, const MemoryLimit &limit) {
  if (bytes > limit.bytes)
    die(what + " takes " +
        (bytes == UINT64_MAX ? std::string("more than 2^64")
                             : std::to_string(bytes)) +
        " bytes of host memory (" + why + "): more " + thanLimit(limit));
}

std::vector<HostTensor> loadInputs(const Program &program,
                                   const std::vector<std::string> &files,
                                   uint64_t seed, int64_t maxElements) {
  const std::vector<Argument> &arguments = program.arguments;
  std::vector<int64_t> bounds = indexBounds(program);
  std::vector<HostTensor> inputs(arguments.size());
  std::string error;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Argument &arg = arguments[i];
    if (arg.type.numElements() > maxElements)
      die("argument " + std::to_string(i) + " ('" + arg.name + "') has " +
          std::to_string(arg.type.numElements()) +
          " elements; the CPU reference stops at " +
          std::to_string(maxElements) + " (check large shapes on the GPU)");
    if (files.empty() || files[i].empty()) {
      inputs[i] = randomInput(arg.type, seed, static_cast<int>(i), bounds[i]);
      continue;
    }
    if (!readNpy(files[i], arg.type.dtype, inputs[i], error))
      die(error);
    if (inputs[i].shape != arg.type.shape)
      die("'" + files[i] + "' has shape " +
          typeText(inputs[i].shape, arg.type.dtype) + " but argument " +
          std::to_string(i) + " ('" + arg.name + "') is " +
          typeText(arg.type.shape, arg.type.dtype));
  }
  return inputs;
}

/// "%.6g", but "nan", "inf" and "-inf" the same on every C library.
static std::string number(double x) {
  if (std::isnan(x))
    return "nan";
  if (std::isinf(x))
    return x > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

void printResult(size_t index, const std::string &name,
                 const HostTensor &tensor) {
  double maxAbs = 0, sum = 0;
  int64_t nonFinite = 0;
  for (double x : tensor.data) {
    if (!std::isfinite(x))
      ++nonFinite;
    // NaN propagates into both figures.
    maxAbs = std::isnan(x) || std::isnan(maxAbs)
                 ? NAN
                 : std::max(maxAbs, std::fabs(x));
    sum += x;
  }
  std::string shape;
  for (size_t d = 0; d < tensor.shape.size(); ++d)
    shape += (d ? "x" : "") + std::to_string(tensor.shape[d]);
  std::printf("result %zu '%s': %s %s max_abs=%s sum=%s", index, name.c_str(),
              shape.c_str(), dtypeName(tensor.dtype), number(maxAbs).c_str(),
              number(sum).c_str());
  if (nonFinite)
    std::printf(" (%lld not finite)", static_cast<long long>(nonFinite));
  std::printf("\n");
}

void writeOutputs(const std::vector<std::string> &files,
                  const std::vector<HostTensor> &tensors) {
  std::string error;
  for (size_t i = 0; i < files.size(); ++i)
    if (!writeNpy(files[i], tensors[i], error))
      die(error);
}

void refuseOverwrites(const std::string &option,
                      const std::vector<std::string> &outputs,
                      const std::vector<std::string> &reads,
                      const std::string &directory) {
  namespace fs = std::filesystem;
  auto resolved = [](const std::string &path) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
    return ec ? fs::path(path).lexically_normal() : p;
  };
  std::string inside;
  if (!directory.empty())
    inside = resolved(directory).string() + "/";
  std::vector<fs::path> seen;
  for (const std::string &out : outputs) {
    if (out.empty())
      continue;
    fs::path p = resolved(out);
    if (!inside.empty() && p.string().compare(0, inside.size(), inside) == 0)
      die("--" + option + " names '" + out + "', inside the bundle '" +
          directory +
          "': outputs go elsewhere (the bundle's files are what "
          "it runs)");
    for (const std::string &in : reads)
      if (!in.empty() && resolved(in) == p)
        die("--" + option + " names '" + out + "', which the run reads ('" +
            in + "'): outputs go elsewhere");
    if (std::find(seen.begin(), seen.end(), p) != seen.end())
      die("--" + option + " names '" + out + "' twice");
    seen.push_back(p);
  }
}

void checkFileCount(const std::string &option,
                    const std::vector<std::string> &files, size_t count,
                    const std::string &function, const char *verb,
                    const char *noun) {
  if (!files.empty() && files.size() != count)
    die("--" + option + " names " + std::to_string(files.size()) +
        " files but '" + function + "' " + verb + " " + std::to_string(count) +
        " " + noun);
}

} // namespace ein::tools
