//===- ProgramBuilder.h - program.json snippets for tests -------*- C++ -*-===//

#ifndef EIN_TEST_PROGRAMBUILDER_H
#define EIN_TEST_PROGRAMBUILDER_H

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ein::test {

using json = nlohmann::json;

inline json type(std::vector<int64_t> shape, const std::string &dtype = "f32") {
  return {{"shape", shape}, {"dtype", dtype}};
}

inline json argument(const std::string &name, json t) {
  return {{"name", name}, {"type", t}};
}

inline json program(std::vector<json> args, std::vector<json> ops,
                    std::vector<std::string> results) {
  return {{"format", "ein-program"}, {"version", 1}, {"function", "f"},
          {"arguments", args},       {"ops", ops},   {"results", results}};
}

/// A join whose region applies `scalarOp` to its arguments (or passes the
/// only argument through when `scalarOp` is empty). Arguments of another
/// element type than f32 are extended to f32 first.
inline json joinAgg(const std::string &result, json t,
                    std::vector<std::string> inputs,
                    std::vector<std::vector<int64_t>> inputIndices,
                    std::vector<int64_t> outputIndices, const std::string &agg,
                    const std::string &scalarOp = "",
                    const std::string &argType = "f32") {
  json args = json::array(), ops = json::array();
  std::vector<int> operands;
  int next = static_cast<int>(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    args.push_back(argType);
    if (argType == "f32") {
      operands.push_back(static_cast<int>(i));
      continue;
    }
    ops.push_back({{"op", "arith.extf"},
                   {"operands", {static_cast<int>(i)}},
                   {"type", "f32"}});
    operands.push_back(next++);
  }
  int yield = operands.size() == 1 ? operands[0] : 0;
  if (!scalarOp.empty()) {
    ops.push_back({{"op", scalarOp}, {"operands", operands}, {"type", "f32"}});
    yield = next;
  }
  return {{"kind", "join_agg"},
          {"result", result},
          {"type", t},
          {"inputs", inputs},
          {"input_indices", inputIndices},
          {"output_indices", outputIndices},
          {"agg", agg},
          {"acc", "f32"},
          {"join", {{"args", args}, {"ops", ops}, {"yield", yield}}}};
}

} // namespace ein::test

#endif // EIN_TEST_PROGRAMBUILDER_H
