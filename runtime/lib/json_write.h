//===- json_write.h - JSON text as the compiler prints it -------*- C++ -*-===//
//
// Internal to the runtime: the one printer of manifest.json and program.json.
// It prints exactly what llvm::formatv("{0:2}", llvm::json::Value) prints,
// so a file the runtime writes is byte for byte the file the compiler
// wrote before it wrote through these structs.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_JSON_WRITE_H
#define EIN_LIB_JSON_WRITE_H

#include <nlohmann/json.hpp>

#include <string>

namespace ein::format {

/// `value` as llvm::json::OStream prints it with indent 2 (LLVM 22,
/// llvm/lib/Support/JSON.cpp): object members sorted by key as bytes; each
/// member and array element on its own line, indented 2 more than its
/// container; `"key": value`; empty arrays and objects as [] and {};
/// integers as integers and floats as printf's "%.17g" (1.0 prints as 1);
/// strings with '"' and '\' escaped, \t \n \r short and other bytes below
/// 0x20 as \u00xx, every other byte as is. Store a double as number_float
/// and an integer as number_integer: that is what decides how it prints.
/// No trailing newline.
std::string writeJson(const nlohmann::json &value);

} // namespace ein::format

#endif // EIN_LIB_JSON_WRITE_H
