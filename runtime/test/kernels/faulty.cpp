//===- faulty.cpp - A host kernel that writes where it is told ------------===//
//
// For the CPU backend's tests: pokes one byte at scalars[0] bytes from the
// start of its first argument, so a test can aim at a guard page; or sends
// its own process SIGSEGV, as kill -SEGV from outside would, while a kernel
// call is in progress.
//
//===----------------------------------------------------------------------===//

#include <cstdint>

#include <signal.h>
#include <unistd.h>

extern "C" void poke(void *const *args, const int64_t *scalars) {
  static_cast<volatile char *>(args[0])[scalars[0]] = 1;
}

/// Not a fault of the kernel's: a signal sent to the process (si_code
/// SI_USER), which the backend must not take for one.
extern "C" void segv(void *const *, const int64_t *) {
  kill(getpid(), SIGSEGV);
}

/// A table that lies: poke touches whatever byte scalars[0] names, not only
/// its four floats. Signatures bound what a manifest may pass a kernel;
/// the guard pages catch a kernel that breaks its own signature.
extern "C" __attribute__((visibility("default")))
const char ein_kernel_signatures[] =
    R"({"format": "ein-kernel-signatures", "kernels": {"poke": )"
    R"({"args": [{"dtype": "f32", "shape": [4], "access": "readwrite"}], )"
    R"("scalars": 1}, "segv": )"
    R"({"args": [{"dtype": "f32", "shape": [4], "access": "readwrite"}], )"
    R"("scalars": 0}}})";
