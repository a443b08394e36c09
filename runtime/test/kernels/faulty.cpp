//===- faulty.cpp - A host kernel that writes where it is told ------------===//
//
// For the CPU backend's tests: pokes one byte at scalars[0] bytes from the
// start of its first argument, so a test can aim at a guard page.
//
//===----------------------------------------------------------------------===//

#include <cstdint>

extern "C" void poke(void *const *args, const int64_t *scalars) {
  static_cast<volatile char *>(args[0])[scalars[0]] = 1;
}
