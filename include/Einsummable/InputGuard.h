//===- InputGuard.h - Inputs MLIR's own parser would crash on ---*- C++ -*-===//
//
// Inputs LLVM 22's parsers crash on instead of diagnosing: a dense array of
// `index` elements (`array<index: 0>`: SIGSEGV in parseDenseArrayAttr), and
// a `linalg.reduce` whose `dimensions =` is not followed by an array (its
// parser keeps a null attribute). ein-opt and ein-compile scan their input
// for both before parsing and refuse it with a diagnostic of their own.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_INPUTGUARD_H
#define EINSUMMABLE_INPUTGUARD_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>

namespace mlir::ein {

/// Whether `input` (named `name` in messages) is free of the text MLIR's
/// parser crashes on; if not, prints "NAME:LINE:COL: error: ..." to
/// `errs` and returns false.
inline bool checkParserSafe(const llvm::MemoryBuffer &input,
                            llvm::StringRef name, llvm::raw_ostream &errs) {
  llvm::StringRef text = input.getBuffer();
  auto report = [&](size_t at, llvm::StringRef what) {
    llvm::StringRef before = text.take_front(at);
    size_t line = before.count('\n') + 1;
    size_t lineStart = before.rfind('\n');
    size_t column =
        at - (lineStart == llvm::StringRef::npos ? 0 : lineStart + 1) + 1;
    errs << name << ":" << line << ":" << column << ": error: " << what << "\n";
    return false;
  };
  for (size_t at = text.find("dimensions"); at != llvm::StringRef::npos;
       at = text.find("dimensions", at + 1)) {
    llvm::StringRef rest = text.drop_front(at + 10).ltrim(" \t\r\n");
    if (!rest.consume_front("="))
      continue;
    rest = rest.ltrim(" \t\r\n");
    // The custom form's [1, 2]; the generic form's array<i64: ...>.
    if (!rest.starts_with("[") && !rest.starts_with("array<") &&
        !rest.starts_with("dense<"))
      return report(at, "'dimensions =' must be followed by an array such "
                        "as [1] (MLIR's linalg parser would crash on "
                        "anything else)");
  }
  for (size_t at = text.find("array<"); at != llvm::StringRef::npos;
       at = text.find("array<", at + 1)) {
    // Not a word that merely ends in "array" (dense_array<...> is fine).
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) ||
                   text[at - 1] == '_'))
      continue;
    llvm::StringRef rest = text.drop_front(at + 6).ltrim(" \t\r\n");
    if (!rest.starts_with("index") ||
        (rest.size() > 5 &&
         (std::isalnum(static_cast<unsigned char>(rest[5])) || rest[5] == '_')))
      continue;
    return report(at, "a dense array of 'index' elements (array<index: "
                      "...>) is not valid IR, and MLIR's parser would crash "
                      "on it; use array<i64: ...>");
  }
  return true;
}

} // namespace mlir::ein

#endif // EINSUMMABLE_INPUTGUARD_H
