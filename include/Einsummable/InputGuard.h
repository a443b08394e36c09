//===- InputGuard.h - Inputs MLIR's own parser would crash on ---*- C++ -*-===//
//
// Inputs LLVM 22's parsers crash on instead of diagnosing: a dense array of
// `index` elements (`array<index: 0>`: SIGSEGV in parseDenseArrayAttr), and
// a linalg op whose integer list (`dimensions =` of linalg.reduce and
// linalg.broadcast, `permutation =` of linalg.transpose, ...) is not a
// closed list of integers (its parser keeps a null attribute; the broadcast
// and transpose cases found by tools/fuzz-ir). ein-opt and ein-compile scan
// their input for both before parsing and refuse it with a diagnostic of their
// own.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_INPUTGUARD_H
#define EINSUMMABLE_INPUTGUARD_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>

namespace mlir::ein {

/// Whether `items` is a comma-separated list of decimal 64-bit integers
/// (maybe empty), as between the brackets of `[0, -1, 2]`.
inline bool isIntegerList(llvm::StringRef items) {
  if (items.trim(" \t\r\n").empty())
    return true;
  llvm::SmallVector<llvm::StringRef> parts;
  items.split(parts, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  for (llvm::StringRef item : parts) {
    // Decimal digits only (no 0x, no +), in range of an i64.
    item = item.trim(" \t\r\n");
    long long value;
    if (item.empty() ||
        item.drop_front(item.starts_with("-"))
                .find_first_not_of("0123456789") != llvm::StringRef::npos ||
        item.getAsInteger(10, value))
      return false;
  }
  return true;
}

/// Whether `input` (named `name` in messages) is free of the text MLIR's
/// parser crashes on; if not, prints "NAME:LINE:COL: error: ..." to
/// `errs` and returns false.
inline bool checkParserSafe(const llvm::MemoryBuffer &input,
                            llvm::StringRef name, llvm::raw_ostream &errs) {
  llvm::StringRef text = input.getBuffer();
  auto report = [&](size_t at, const llvm::Twine &what) {
    llvm::StringRef before = text.take_front(at);
    size_t line = before.count('\n') + 1;
    size_t lineStart = before.rfind('\n');
    size_t column =
        at - (lineStart == llvm::StringRef::npos ? 0 : lineStart + 1) + 1;
    errs << name << ":" << line << ":" << column << ": error: " << what << "\n";
    return false;
  };
  // The integer lists of linalg's custom forms: linalg.reduce and
  // linalg.broadcast's `dimensions`, linalg.transpose's `permutation`,
  // linalg.pack's `inner_dims_pos` and `outer_dims_perm`.
  for (llvm::StringRef key :
       {"dimensions", "permutation", "inner_dims_pos", "outer_dims_perm"})
    for (size_t at = text.find(key); at != llvm::StringRef::npos;
         at = text.find(key, at + 1)) {
      llvm::StringRef rest = text.drop_front(at + key.size()).ltrim(" \t\r\n");
      if (!rest.consume_front("="))
        continue;
      rest = rest.ltrim(" \t\r\n");
      // In an attribute dictionary (the generic form's {dimensions =
      // array<i64: ...>}) the attribute parser diagnoses what it cannot
      // read; only the custom form's list is parsed without a check.
      llvm::StringRef before = text.take_front(at).rtrim(" \t\r\n");
      if (before.ends_with("{") || before.ends_with(","))
        continue;
      if (!rest.starts_with("["))
        return report(at, "'" + key.str() +
                              " =' must be followed by an array such as [1] "
                              "(MLIR's linalg parser would crash on anything "
                              "else)");
      // A broken list (`[0, 1, 2>`, `[1, 0.]`) leaves the parser a null
      // attribute too.
      size_t close = rest.find(']');
      if (close == llvm::StringRef::npos ||
          !isIntegerList(rest.slice(1, close)))
        return report(at, "'" + key.str() +
                              " =' must be followed by a list of integers "
                              "such as [0, 1] (MLIR's linalg parser would "
                              "crash on anything else)");
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
