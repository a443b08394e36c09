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
  /// "cpu" or "cuda" (checked by ein::parseBackend).
  std::string target = "cpu";
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
LogicalResult writeBundle(ModuleOp module, const BundleOptions &options);

} // namespace mlir::ein

#endif // EINSUMMABLE_TARGET_BUNDLE_BUNDLEWRITER_H
