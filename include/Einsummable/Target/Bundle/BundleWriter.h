//===- BundleWriter.h - Device-level ein to a bundle ------------*- C++ -*-===//
//
// The translation from a device-level module (ein-synthesize-exchanges, then
// ein-lower-to-cpu or ein-lower-to-cuda) to a bundle directory
// (docs/bundle-format.md), as upstream MLIR keeps translations to external
// formats under lib/Target. The pass ein-write-bundle is a thin shell over
// it.
//
//===----------------------------------------------------------------------===//

#ifndef EINSUMMABLE_TARGET_BUNDLE_BUNDLEWRITER_H
#define EINSUMMABLE_TARGET_BUNDLE_BUNDLEWRITER_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>

namespace mlir::ein {

struct BundleOptions {
  /// The bundle directory.
  std::string dir;
  /// "cpu" or "cuda" (checked by ein::parseBackend): the backend when
  /// `targetGiven` or the #ein.target names none (resolveBackend).
  std::string target = "cpu";
  bool targetGiven = true;
  /// A program.json to ship as the bundle's reference for --check instead
  /// of the device-level program.
  std::string reference;
  /// Bytes a device's arena may take (0: no limit).
  int64_t memoryLimit = 0;
};

/// Writes `module` (device level, one program function) as a bundle: the
/// manifest, program.json and the kernel library. The bundle is read back
/// with the runtime's reader before this returns; a bundle the runtime would
/// refuse, or a buffer plan over the memory limit, is an error on `module`.
/// The files are written into bundleStagingDirectory(dir) and the whole
/// directory then takes `dir`'s place (an existing one is exchanged with it
/// at once, then removed, what else it held moved over first): a failure
/// leaves `dir` as it was, and nothing is ever written through a link.
LogicalResult writeBundle(ModuleOp module, const BundleOptions &options);

/// Where a bundle for `dir` is assembled before it replaces `dir`: the
/// hidden sibling `.NAME.partial` (ein-compile's pipeline exports the
/// reference program.json into it first).
std::string bundleStagingDirectory(llvm::StringRef dir);

} // namespace mlir::ein

#endif // EINSUMMABLE_TARGET_BUNDLE_BUNDLEWRITER_H
