//===- staged_file.cpp - Files written whole or not at all ----------------===//

#include "ein/staged_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

namespace ein {
namespace {

/// The process's file-creation mask, read without changing it: umask(2)
/// reads it only by setting it, which would race with another thread
/// creating a file meanwhile.
mode_t currentUmask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

} // namespace

StagedFile::StagedFile(std::string target) : target(std::move(target)) {}

StagedFile::~StagedFile() {
  if (!committed)
    discard();
}

bool StagedFile::fail(const std::string &sentence, int code) {
  message = sentence;
  number = code;
  discard();
  return false;
}

void StagedFile::discard() {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
  if (!staging.empty())
    ::unlink(staging.c_str());
  staging.clear();
}

bool StagedFile::open() {
  // In the target's directory, so the rename stays within one file system;
  // hidden, and short enough for a file name's limit (255 bytes).
  size_t slash = target.rfind('/');
  std::string directory =
      slash == std::string::npos ? "" : target.substr(0, slash + 1);
  std::string name =
      slash == std::string::npos ? target : target.substr(slash + 1);
  std::string pattern = directory + "." + name.substr(0, 200) + ".XXXXXX";
  std::vector<char> chosen(pattern.begin(), pattern.end());
  chosen.push_back('\0');
  fd = ::mkostemp(chosen.data(), O_CLOEXEC);
  if (fd < 0) {
    int code = errno;
    return fail("cannot write '" + target + "' (its staging file '" + pattern +
                    "' cannot be created: " + std::strerror(code) + ")",
                code);
  }
  staging = chosen.data();
  // mkstemp makes the file its owner's alone; the target gets what a file
  // created in its place would (0666 less the umask), as before staging.
  if (::fchmod(fd, 0666 & ~currentUmask()) != 0) {
    int code = errno;
    return fail("cannot write '" + target + "' (its staging file '" + staging +
                    "' cannot be given the target's permissions: " +
                    std::strerror(code) + ")",
                code);
  }
  return true;
}

bool StagedFile::write(const void *data, size_t size) {
  if (fd < 0)
    return fail("failed writing '" + target + "': its staging file is not open",
                EBADF);
  const char *at = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, at, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int code = n < 0 ? errno : EIO;
      return fail("failed writing '" + target + "': " + std::strerror(code),
                  code);
    }
    at += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool StagedFile::commit() {
  if (fd < 0)
    return fail("failed writing '" + target + "': its staging file is not open",
                EBADF);
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0) {
    int code = errno;
    return fail("failed writing '" + target + "': " + std::strerror(code),
                code);
  }
  // The one step that changes the target: whole, or not at all.
  if (::rename(staging.c_str(), target.c_str()) != 0) {
    int code = errno;
    return fail("cannot move '" + staging + "' to '" + target +
                    "': " + std::strerror(code),
                code);
  }
  committed = true;
  staging.clear();
  return true;
}

} // namespace ein
