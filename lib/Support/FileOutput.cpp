//===- FileOutput.cpp - Files written whole or not at all ----------------===//

#include "Einsummable/Support/FileOutput.h"

#include "ein/staged_file.h"

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
  std::string text;
  raw_string_ostream os(text);
  write(os);
  os.flush();
  if (path == "-") {
    outs() << text;
    outs().flush();
    return true;
  }
  // The runtime's tools stage their files the same way: one implementation
  // below both.
  ::ein::StagedFile file(path.str());
  if (file.open() && file.write(text.data(), text.size()) && file.commit())
    return true;
  error = file.error();
  return false;
}
