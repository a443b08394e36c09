//===- signature.h - What a kernel library says its kernels take -*- C++
//-*-===//
//
// Every kernel library of a bundle (host .so, cubin) carries a table of its
// kernels' signatures, as JSON text in the symbol `ein_kernel_signatures`
// (docs/bundle-format.md, "Kernel signatures"): per kernel, its arguments,
// each with its element type, its shape (or the scalar that counts its
// elements) and its access, and how many scalars it takes. Before anything
// runs the runtime checks every kernel step of the manifest against the
// signature of the kernel it names, so a manifest edited by hand cannot pass
// a kernel buffers it would read or write past, or hide a write from the
// schedule's checks. The compiler computes the table from the kernels it
// builds, embeds it in the library and checks its own manifest against it
// with the same function.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_SIGNATURE_H
#define EIN_SIGNATURE_H

#include "ein/bundle.h"

#include <map>
#include <string>
#include <vector>

namespace ein {

/// The symbol (a NUL-terminated array of char) that holds a library's table.
constexpr const char *kSignatureSymbol = "ein_kernel_signatures";

struct SignatureArg {
  DType dtype = DType::F32;
  /// The buffer's exact shape, unless `elementsScalar` >= 0: then the kernel
  /// touches the first scalars[elementsScalar] elements of a buffer of any
  /// shape with at least that many.
  std::vector<int64_t> shape;
  int elementsScalar = -1;
  /// Read: never written. Write: written, its earlier contents never read.
  /// ReadWrite: its earlier contents may be read, and it may be written.
  Access access = Access::Read;
};

struct KernelSignature {
  std::vector<SignatureArg> args;
  int scalars = 0;
};

/// Kernel name -> signature.
using KernelSignatures = std::map<std::string, KernelSignature>;

/// Parses a library's table; on failure returns false with `error` naming
/// the field.
bool parseKernelSignatures(const std::string &text,
                           KernelSignatures &signatures, std::string &error);

/// Parses a library's table and adds its kernels to `signatures` (a kernel
/// already there keeps its signature: the first library that defines a
/// kernel is the one it loads from).
bool addKernelSignatures(const std::string &text, KernelSignatures &signatures,
                         std::string &error);

/// The table's text (JSON, keys sorted, on one line): what the compiler
/// embeds and parseKernelSignatures reads back.
std::string writeKernelSignatures(const KernelSignatures &signatures);

/// Checks every kernel step of `manifest` against the signature of the
/// kernel it names: one argument per signature argument, each of its
/// element type and shape (or with as many elements as its scalar counts),
/// the same access, as many scalars. On failure returns false with `error`
/// naming the step, the kernel and the argument.
bool checkKernelSteps(const Manifest &manifest,
                      const KernelSignatures &signatures, std::string &error);

} // namespace ein

#endif // EIN_SIGNATURE_H
