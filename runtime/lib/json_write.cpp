//===- json_write.cpp - JSON text as the compiler prints it ---------------===//

#include "json_write.h"

#include <cstdio>
#include <limits>
#include <stdexcept>

namespace ein::format {

namespace {

void quote(std::string &out, const std::string &s) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c >= 0x20) {
      out += static_cast<char>(c);
      continue;
    }
    out += '\\';
    switch (c) {
    case '\t':
      out += 't';
      break;
    case '\n':
      out += 'n';
      break;
    case '\r':
      out += 'r';
      break;
    default:
      out += "u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  out += '"';
}

void newline(std::string &out, int indent) {
  out += '\n';
  out.append(indent, ' ');
}

void write(std::string &out, const nlohmann::json &value, int indent) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
  case Type::null:
    out += "null";
    return;
  case Type::boolean:
    out += value.get<bool>() ? "true" : "false";
    return;
  case Type::number_integer:
    out += std::to_string(value.get<int64_t>());
    return;
  case Type::number_unsigned:
    out += std::to_string(value.get<uint64_t>());
    return;
  case Type::number_float: {
    char text[32];
    std::snprintf(text, sizeof(text), "%.*g",
                  std::numeric_limits<double>::max_digits10,
                  value.get<double>());
    out += text;
    return;
  }
  case Type::string:
    quote(out, value.get_ref<const std::string &>());
    return;
  case Type::array:
  case Type::object: {
    bool object = value.is_object();
    out += object ? '{' : '[';
    if (value.empty()) {
      out += object ? '}' : ']';
      return;
    }
    bool first = true;
    // nlohmann::json's objects are std::maps: iteration is in key order.
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!first)
        out += ',';
      first = false;
      newline(out, indent + 2);
      if (object) {
        quote(out, it.key());
        out += ": ";
      }
      write(out, *it, indent + 2);
    }
    newline(out, indent);
    out += object ? '}' : ']';
    return;
  }
  case Type::binary:
  case Type::discarded:
    break;
  }
  throw std::invalid_argument("writeJson: binary and discarded values have "
                              "no JSON text");
}

} // namespace

std::string writeJson(const nlohmann::json &value) {
  std::string out;
  write(out, value, 0);
  return out;
}

} // namespace ein::format
