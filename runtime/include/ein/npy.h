//===- npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes the .npy format (versions 1 to 3, little-endian, C order).
// Element types map one to one: f64 <f8, f32 <f4, f16 <f2, i64 and index <i8,
// i32 <i4, i1 |b1, and bf16, which NumPy lacks, as 2-byte payloads <u2 whose
// type the program or bundle declares.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_NPY_H
#define EIN_NPY_H

#include "ein/dtype.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ein {

/// A dense row-major tensor whose values are kept in float64; `dtype` says
/// what they are (and how they are stored in a file).
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<double> data;

  int64_t numElements() const;
};

/// `tensor`'s values as they lie in memory: dtypeBytes(dtype) little-endian
/// bytes each, in row-major order.
std::vector<unsigned char> tensorBytes(const HostTensor &tensor);

/// The `count` elements of `type` that tensorBytes laid out at `bytes`.
std::vector<double> tensorValues(DType type, const unsigned char *bytes,
                                 size_t count);

/// The .npy descriptor for an element type ("<f4", "<u2" for bf16, ...).
const char *npyDescriptor(DType type);

/// Reads `path`, whose element type must be `declared` (a bf16 file holds
/// <u2 payloads). On failure returns false and sets `error` to a sentence
/// naming the file and what is wrong.
bool readNpy(const std::string &path, DType declared, HostTensor &out,
             std::string &error);

/// readNpy on the bytes of a file already read (`path` names it in errors).
bool parseNpy(const std::string &bytes, const std::string &path, DType declared,
              HostTensor &out, std::string &error);

/// Writes `tensor` as its dtype; returns false with `error` on failure.
bool writeNpy(const std::string &path, const HostTensor &tensor,
              std::string &error);

} // namespace ein

#endif // EIN_NPY_H
