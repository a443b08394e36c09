//===- json_node.cpp - Reading and writing JSON fields --------------------===//

#include "json_node.h"

#include <fstream>

namespace ein::format {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

TensorType parseType(const Node &node) {
  node.only({"dtype", "shape"});
  TensorType type;
  type.dtype = node.at("dtype").dtype();
  type.shape = node.at("shape").integers();
  if (type.shape.size() > kMaxRank)
    fail(node.path + ".shape", "rank " + std::to_string(type.shape.size()) +
                                   " exceeds " + std::to_string(kMaxRank));
  int64_t elements = 1;
  for (int64_t d : type.shape) {
    if (d < 1)
      fail(node.path + ".shape",
           "dimensions must be positive, got " + shapeText(type.shape));
    if (elements > (int64_t(1) << 48) / d)
      fail(node.path + ".shape", "too many elements");
    elements *= d;
  }
  return type;
}

json writeType(const TensorType &type) {
  return {{"dtype", dtypeName(type.dtype)}, {"shape", type.shape}};
}

json writeNumber(double value) {
  if (const char *name = nonFiniteName(value))
    return name;
  return value;
}

bool readTextFile(const std::string &path, std::string &text,
                  std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot open '" + path + "'";
    return false;
  }
  text.assign((std::istreambuf_iterator<char>(file)),
              std::istreambuf_iterator<char>());
  return true;
}

} // namespace ein::format
