//===- staged_file.h - Files written whole or not at all --------*- C++ -*-===//
//
// Every file the runtime's tools write (ein-run and ein-eval's --outputs,
// ein-eval's --save-inputs, ein-run's --profile trace) is written under a
// name of its own beside its target, `.NAME.XXXXXX` (mkstemp), and renamed
// over the target once complete. So a failed write leaves the target as it
// was, a link at the target is replaced instead of written through, and two
// processes writing one file at once each rename a whole file of their own:
// the file ends up one of theirs, never a mix, and neither can take the
// other's staging file (a fixed name such as `PATH.partial` could be).
//
//===----------------------------------------------------------------------===//

#ifndef EIN_STAGED_FILE_H
#define EIN_STAGED_FILE_H

#include <cstddef>
#include <string>

namespace ein {

class StagedFile {
public:
  explicit StagedFile(std::string target);
  /// Removes the staging file unless commit() moved it into place.
  ~StagedFile();
  StagedFile(const StagedFile &) = delete;
  StagedFile &operator=(const StagedFile &) = delete;

  /// Creates the staging file beside the target. Each step returns false on
  /// failure, with error() and errorNumber() saying why; the staging file is
  /// then removed and the target left as it was.
  bool open();
  bool write(const void *data, size_t size);
  /// Closes the staging file and renames it over the target.
  bool commit();

  /// A sentence naming the target (and the staging file, where it matters).
  const std::string &error() const { return message; }
  /// The errno of the failure (0 if none was set).
  int errorNumber() const { return number; }

private:
  bool fail(const std::string &sentence, int code);
  void discard();

  std::string target, staging, message;
  int fd = -1, number = 0;
  bool committed = false;
};

} // namespace ein

#endif // EIN_STAGED_FILE_H
