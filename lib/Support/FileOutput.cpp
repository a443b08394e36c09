//===- FileOutput.cpp - Files written whole or not at all ----------------===//

#include "Einsummable/Support/FileOutput.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

std::string mlir::ein::takeStreamError(raw_fd_ostream &os) {
  os.flush();
  std::error_code ec = os.error();
  if (!ec)
    return "";
  os.clear_error();
  return ec.message();
}

bool mlir::ein::writeFileAtomically(StringRef path,
                                    function_ref<void(raw_ostream &)> write,
                                    std::string &error) {
  if (path == "-") {
    write(outs());
    outs().flush();
    return true;
  }
  SmallString<256> dir(path);
  sys::path::remove_filename(dir);
  SmallString<256> model = dir;
  sys::path::append(model, "." + sys::path::filename(path) + ".%%%%%%");
  int fd = -1;
  SmallString<256> staged;
  if (std::error_code ec = sys::fs::createUniqueFile(model, fd, staged)) {
    error = "'" + path.str() + "': " + ec.message();
    return false;
  }
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    os.close();
    error = takeStreamError(os);
  }
  if (error.empty())
    if (std::error_code ec = sys::fs::rename(staged, path))
      error = ec.message();
  if (error.empty())
    return true;
  error = "'" + path.str() + "': " + error;
  sys::fs::remove(staged);
  return false;
}
