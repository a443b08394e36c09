//===- runtime_c.cpp - The C API as a shared library ----------------------===//
//
// libeinsummable_runtime.so: every ein_* function of include/ein/runtime.h,
// taken whole from the backends' static library (the WHOLE_ARCHIVE link in
// runtime/CMakeLists.txt). This file only gives the library a source; the
// API lives in runtime.cpp.
//
//===----------------------------------------------------------------------===//

#include "ein/runtime.h"
