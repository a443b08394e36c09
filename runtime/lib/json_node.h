//===- json_node.h - Walking JSON with paths for diagnostics -----*- C++
//-*-===//
//
// Internal to the runtime: what the program.json and manifest.json readers
// share. Every failure names the path of the offending field
// ("manifest.steps[3].deps[0]: ...") and a misspelt field is an error.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_JSON_NODE_H
#define EIN_LIB_JSON_NODE_H

#include "ein/program.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ein::format {

using json = nlohmann::json;

constexpr size_t kMaxRank = 64;

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string &where,
                              const std::string &what) {
  throw FormatError(where + ": " + what);
}

/// A JSON node and the path that leads to it, for diagnostics.
struct Node {
  const json &value;
  std::string path;

  Node at(const std::string &key) const {
    if (!value.is_object())
      fail(path, "expected an object");
    auto it = value.find(key);
    if (it == value.end())
      fail(path, "missing field '" + key + "'");
    return {*it, path + "." + key};
  }
  /// Fails on a key not in `known`: a misspelt field is an error, not a
  /// silently ignored one.
  void only(std::initializer_list<const char *> known) const {
    if (!value.is_object())
      fail(path, "expected an object");
    for (auto it = value.begin(); it != value.end(); ++it)
      if (std::none_of(known.begin(), known.end(),
                       [&](const char *k) { return it.key() == k; }))
        fail(path, "unknown field '" + it.key() + "'");
  }
  bool has(const std::string &key) const {
    return value.is_object() && value.contains(key);
  }
  Node operator[](size_t i) const {
    return {value[i], path + "[" + std::to_string(i) + "]"};
  }
  size_t size() const {
    if (!value.is_array())
      fail(path, "expected an array");
    return value.size();
  }
  std::string str() const {
    if (!value.is_string())
      fail(path, "expected a string");
    return value.get<std::string>();
  }
  int64_t integer() const {
    if (!value.is_number_integer())
      fail(path, "expected an integer");
    return value.get<int64_t>();
  }
  bool boolean() const {
    if (!value.is_boolean())
      fail(path, "expected true or false");
    return value.get<bool>();
  }
  /// A number, or "inf", "-inf", "nan" (JSON has no literals for them).
  double number() const {
    if (value.is_number())
      return value.get<double>();
    if (value.is_string()) {
      std::string s = value.get<std::string>();
      if (s == "inf")
        return std::numeric_limits<double>::infinity();
      if (s == "-inf")
        return -std::numeric_limits<double>::infinity();
      if (s == "nan")
        return std::numeric_limits<double>::quiet_NaN();
    }
    fail(path, "expected a number (or \"inf\", \"-inf\", \"nan\")");
  }
  std::vector<int64_t> integers() const {
    std::vector<int64_t> out;
    for (size_t i = 0, e = size(); i < e; ++i)
      out.push_back((*this)[i].integer());
    return out;
  }
  std::vector<std::vector<int64_t>> integerLists() const {
    std::vector<std::vector<int64_t>> out;
    for (size_t i = 0, e = size(); i < e; ++i)
      out.push_back((*this)[i].integers());
    return out;
  }
  DType dtype() const {
    std::string name = str();
    std::optional<DType> type = parseDType(name);
    if (!type)
      fail(path, "unknown element type '" + name + "'");
    return *type;
  }
};

/// "[2, 3]".
std::string shapeText(const std::vector<int64_t> &shape);
/// A TYPE object: {"dtype": D, "shape": [...]}, positive dimensions.
TensorType parseType(const Node &node);
/// An aggregation kind by name.
Agg parseAgg(const Node &node);
/// The whole of a file; false with "cannot open 'PATH'" otherwise.
bool readTextFile(const std::string &path, std::string &text,
                  std::string &error);

} // namespace ein::format

#endif // EIN_LIB_JSON_NODE_H
