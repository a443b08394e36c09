//===- tool_support.h - What ein-eval and ein-run share ---------*- C++ -*-===//
//
// Command-line parsing (both --k=v and --k v), the inputs a run uses (.npy
// files or seeded random tensors, docs/program-format.md) and the one-line
// summary of a result. Errors end the tool with "TOOL: error: ..." and exit
// status 1.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_TOOLS_TOOL_SUPPORT_H
#define EIN_TOOLS_TOOL_SUPPORT_H

#include "ein/npy.h"
#include "ein/program.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ein::tools {

/// Names the tool in every error; set it first thing in main.
void setToolName(const char *name);

[[noreturn]] void die(const std::string &message);

struct CommandLine {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::set<std::string> flags;

  bool has(const std::string &key) const {
    return values.count(key) || flags.count(key);
  }
};

/// Parses argv: options in `withValue` take a value (--k=v or --k v),
/// options in `flags` take none, unless they are also in `optionalValue`:
/// then --k sets the flag and --k=v sets the flag and the value; anything
/// else starting with "--" is an error. -h and --help print `usage` and
/// exit 0.
CommandLine parseCommandLine(int argc, char **argv, const char *usage,
                             const std::set<std::string> &withValue,
                             const std::set<std::string> &flags,
                             const std::set<std::string> &optionalValue = {});

/// A comma-separated list of files; an empty item is an error (it would
/// shift files onto the wrong tensors).
std::vector<std::string> splitList(const std::string &option,
                                   const std::string &text);

/// A non-negative integer option, at most `max`.
uint64_t parseCount(const std::string &option, const std::string &text,
                    uint64_t max = UINT64_MAX);

/// The most bytes of host memory a run's tensors may take: --max-bytes=N,
/// or by default the machine's physical memory. Checked before anything is
/// allocated, so a shape too large for the machine is an error naming it
/// instead of a run the kernel's OOM killer ends.
struct MemoryLimit {
  uint64_t bytes = UINT64_MAX;
  bool given = false; // --max-bytes, not the default
};

/// --max-bytes from `line`, or sysconf(_SC_PHYS_PAGES) * the page size.
MemoryLimit memoryLimit(const CommandLine &line);

/// The bytes of `type`'s values as float64 (how the tools hold a tensor's
/// values), and of `type` in its element type.
uint64_t float64Bytes(const TensorType &type);
uint64_t denseBytes(const TensorType &type);

/// a + b, or UINT64_MAX where that overflows.
uint64_t addBytes(uint64_t a, uint64_t b);

/// What the reference evaluator keeps of `program` to the end, in float64:
/// its own copy of each input, every op's result, the results it returns.
uint64_t evaluatorBytes(const Program &program);

/// Refuses (die) an argument of more than `maxElements` elements, or whose
/// values as float64 take more than `limit`, naming the argument and its
/// size; before any input is read or drawn.
void checkArguments(const Program &program, int64_t maxElements,
                    const MemoryLimit &limit);

/// Refuses (die) when `bytes`, what `what` takes ("evaluating 'mlp' takes
/// ... (why)"), exceed `limit`.
void checkHostBytes(const std::string &what, uint64_t bytes,
                    const std::string &why, const MemoryLimit &limit);

/// The inputs of a program: read from `files` (one per argument, of the
/// argument's type) or, when `files` is empty or an argument's file name
/// is, drawn from `seed`. Fails on
/// an argument of more than `maxElements` elements. A gather's indices are
/// drawn over its table's rows (indexBounds).
std::vector<HostTensor> loadInputs(const Program &program,
                                   const std::vector<std::string> &files,
                                   uint64_t seed, int64_t maxElements);

/// "result 0 'v3': 64x128 f32 max_abs=... sum=..."
void printResult(size_t index, const std::string &name,
                 const HostTensor &tensor);

/// Writes `tensors` to `files` (equal counts, checked by the caller).
void writeOutputs(const std::vector<std::string> &files,
                  const std::vector<HostTensor> &tensors);

/// Refuses (die) output files that would overwrite what the run reads or
/// another output: a file inside `directory` (the bundle; "" for none), one
/// of `reads`, or an output named twice. Paths are compared after resolving
/// links and "..", so another spelling of the same file is the same file.
void refuseOverwrites(const std::string &option,
                      const std::vector<std::string> &outputs,
                      const std::vector<std::string> &reads,
                      const std::string &directory);

/// Checks that `files` names one file per item ("--inputs names 1 files but
/// 'mlp' takes 3 arguments").
void checkFileCount(const std::string &option,
                    const std::vector<std::string> &files, size_t count,
                    const std::string &function, const char *verb,
                    const char *noun);

} // namespace ein::tools

#endif // EIN_TOOLS_TOOL_SUPPORT_H
