//===- FileOutput.h - Files written whole or not at all ---------*- C++ -*-===//
//
// How the compiler writes a file (program.json, an explanation, a report, a
// trace, an annotated program): staged under a unique name beside it, then
// renamed over it, so that a failed write (a full disk, a file size limit)
// or a concurrent writer never leaves a truncated or mixed file, and a
// stream error is reported as an error, not as LLVM's fatal "IO failure on
// output stream".
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_SUPPORT_FILEOUTPUT_H
#define EINSUMMABLE_SUPPORT_FILEOUTPUT_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::ein {

/// Writes what `write` prints to `path` ("-": standard output), staged as
/// the runtime's tools stage theirs (ein::StagedFile: a new file
/// `.NAME.XXXXXX` in `path`'s directory, renamed over `path` once
/// complete). On failure, `path` is as it was, the staging file is gone, and
/// false is returned with `error` saying why (a sentence naming `path`).
bool writeFileAtomically(llvm::StringRef path,
                         llvm::function_ref<void(llvm::raw_ostream &)> write,
                         std::string &error);

/// `os`'s error after flushing it, cleared (so its destructor does not end
/// the process), as "why" text; empty when there was none.
std::string takeStreamError(llvm::raw_fd_ostream &os);

} // namespace mlir::ein

#endif // EINSUMMABLE_SUPPORT_FILEOUTPUT_H
