# Libraries that `cmake --install` ships and exports as Einsummable::<name>
# (docs/package.md). add_mlir_library would install each one into MLIR's
# export set (AddMLIR's add_mlir_library_install: EXPORT MLIRTargets), which
# is not ours to install; ours are built with DISABLE_INSTALL and join the
# EinsummableTargets export set instead.
include_guard(GLOBAL)

set(EIN_INSTALL_INCLUDE_DIR include)
set(EIN_INSTALL_LIB_DIR lib${LLVM_LIBDIR_SUFFIX})
set(EIN_INSTALL_PACKAGE_DIR ${EIN_INSTALL_LIB_DIR}/cmake/einsummable)

# Installs library NAME and exports it; its users outside the build get the
# installed headers.
function(ein_install_library name)
  target_include_directories(${name} INTERFACE
    $<INSTALL_INTERFACE:${EIN_INSTALL_INCLUDE_DIR}>)
  install(TARGETS ${name} EXPORT EinsummableTargets
    ARCHIVE DESTINATION ${EIN_INSTALL_LIB_DIR}
    LIBRARY DESTINATION ${EIN_INSTALL_LIB_DIR})
endfunction()

function(add_ein_library name)
  add_mlir_library(${ARGV} DISABLE_INSTALL)
  ein_install_library(${name})
endfunction()

function(add_ein_dialect_library name)
  add_mlir_dialect_library(${ARGV} DISABLE_INSTALL)
  ein_install_library(${name})
endfunction()
