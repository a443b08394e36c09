//===- json_node.h - Reading and writing JSON fields ------------*- C++ -*-===//
//
// Internal to the runtime: what the program.json and manifest.json readers
// and writers share. Every read failure names the path of the offending
// field ("manifest.steps[3].deps[0]: ...") and a misspelt field is an error.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_JSON_NODE_H
#define EIN_LIB_JSON_NODE_H

#include "ein/bundle.h"
#include "ein/program.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
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

/// How the formats spell a double JSON has no literal for; null for a
/// finite one.
inline const char *nonFiniteName(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return nullptr;
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
      for (double v : {std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::quiet_NaN()})
        if (s == nonFiniteName(v))
          return v;
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

/// How an enum value is spelled in a format. Each enum has one table of
/// spellings, which its reader and its writer both go through.
template <typename Enum> struct Spelling {
  Enum value;
  const char *name;
};

template <typename Enum, size_t N>
const char *spell(const Spelling<Enum> (&table)[N], Enum value) {
  for (const Spelling<Enum> &s : table)
    if (s.value == value)
      return s.name;
  return "?";
}

template <typename Enum, size_t N>
std::optional<Enum> lookUp(const Spelling<Enum> (&table)[N],
                           const std::string &name) {
  for (const Spelling<Enum> &s : table)
    if (name == s.name)
      return s.value;
  return std::nullopt;
}

/// The value `node` spells, or a failure "unknown WHAT 'x'; expected a, b or
/// c".
template <typename Enum, size_t N>
Enum parseSpelling(const Spelling<Enum> (&table)[N], const Node &node,
                   const std::string &what) {
  std::string name = node.str();
  if (std::optional<Enum> value = lookUp(table, name))
    return *value;
  std::string expected;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0)
      expected += i + 1 == N ? " or " : ", ";
    expected += table[i].name;
  }
  fail(node.path, "unknown " + what + " '" + name + "'; expected " + expected);
}

/// A kernel argument's access, in manifest.json and in kernel signatures.
constexpr Spelling<Access> kAccesses[] = {{Access::Read, "read"},
                                          {Access::Write, "write"},
                                          {Access::ReadWrite, "readwrite"}};

/// "[2, 3]".
std::string shapeText(const std::vector<int64_t> &shape);
/// A TYPE object: {"dtype": D, "shape": [...]}, positive dimensions.
TensorType parseType(const Node &node);
json writeType(const TensorType &type);
/// A window's fields ("layout", "strides", "dilations", "pad_low",
/// "pad_high"; not a pool's "window", its sizes), spelled alike by
/// manifest.json's conv steps and program.json's conv and pool ops.
void readWindow(const Node &node, Window2d &window);
void writeWindow(json &entry, const Window2d &window);
/// An aggregation kind by name (program.cpp holds the names).
Agg parseAgg(const Node &node);
/// A double as Node::number reads it: a JSON float (number_float, so it
/// prints as a float), or "inf", "-inf", "nan".
json writeNumber(double value);
/// Parses `text` and hands its root to `read`, which fills its structure
/// through Node and throws FormatError on what it refuses: the skeleton the
/// program, manifest and kernel signature readers share, so that they fail
/// alike. On failure returns false with `error` set to `invalid` (text that
/// is not JSON), the FormatError's message, or "malformed WHAT: " and the
/// JSON library's message (a node of a type `read` did not check).
bool readJson(const std::string &text, const char *what, std::string &error,
              const std::function<void(const json &)> &read,
              const char *invalid = "not valid JSON");
/// The largest program.json or manifest.json the readers take (a
/// transformer block's manifest is a few megabytes).
constexpr uint64_t kMaxJsonFileBytes = uint64_t(1) << 30;

/// Reads the whole of the regular file `path` (its size known before
/// reading: a pipe, a device or a directory is refused with a sentence in
/// `error`, never read without end or waited on), refusing one of more than
/// `maxBytes`. With `prefix`, reads only the first `prefix` bytes (or all,
/// if fewer); `size`, when given, receives the file's size.
bool readRegularFile(const std::string &path, std::string &bytes,
                     std::string &error, uint64_t maxBytes = UINT64_MAX,
                     uint64_t prefix = UINT64_MAX, uint64_t *size = nullptr);

} // namespace ein::format

#endif // EIN_LIB_JSON_NODE_H
