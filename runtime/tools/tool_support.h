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
