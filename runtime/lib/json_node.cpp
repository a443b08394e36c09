//===- json_node.cpp - Reading and writing JSON fields --------------------===//

#include "json_node.h"

#include <algorithm>

#include <fstream>

#include <sys/stat.h>

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

void readWindow(const Node &node, Window2d &window) {
  window.layout = node.at("layout").str();
  window.strides = node.at("strides").integers();
  window.dilations = node.at("dilations").integers();
  window.padLow = node.at("pad_low").integers();
  window.padHigh = node.at("pad_high").integers();
  if (node.has("groups"))
    window.groups = node.at("groups").integer();
}

void writeWindow(json &entry, const Window2d &window) {
  entry["layout"] = window.layout;
  entry["strides"] = window.strides;
  entry["dilations"] = window.dilations;
  entry["pad_low"] = window.padLow;
  entry["pad_high"] = window.padHigh;
  if (window.groups != 1)
    entry["groups"] = window.groups;
}

json writeNumber(double value) {
  if (const char *name = nonFiniteName(value))
    return name;
  return value;
}

bool readJson(const std::string &text, const char *what, std::string &error,
              const std::function<void(const json &)> &read,
              const char *invalid) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    error = invalid;
    return false;
  }
  try {
    read(root);
  } catch (const FormatError &e) {
    error = e.what();
    return false;
  } catch (const json::exception &e) {
    error = std::string("malformed ") + what + ": " + e.what();
    return false;
  }
  return true;
}

bool readRegularFile(const std::string &path, std::string &bytes,
                     std::string &error, uint64_t maxBytes, uint64_t prefix,
                     uint64_t *size) {
  // Checked before opening: a FIFO would block the open, a device
  // (/dev/zero) never ends, a directory has no bytes to read.
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    error = "cannot open '" + path + "'";
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    error = "'" + path + "' is not a regular file (" +
            (S_ISDIR(info.st_mode)    ? "a directory"
             : S_ISFIFO(info.st_mode) ? "a pipe"
             : S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)
                 ? "a device"
                 : "not a plain file") +
            ")";
    return false;
  }
  if (uint64_t(info.st_size) > maxBytes) {
    error = "'" + path + "' is " + std::to_string(info.st_size) +
            " bytes, over the limit of " + std::to_string(maxBytes);
    return false;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot open '" + path + "'";
    return false;
  }
  if (size)
    *size = uint64_t(info.st_size);
  bytes.resize(static_cast<size_t>(std::min(uint64_t(info.st_size), prefix)));
  if (!bytes.empty() && !file.read(&bytes[0], std::streamsize(bytes.size()))) {
    error = "cannot read '" + path + "'";
    return false;
  }
  return true;
}

} // namespace ein::format
