//===- region.h - Copying sub-rectangles of dense tensors -------*- C++ -*-===//
//
// The one strided copy the runtime needs: a hyper-rectangle of one dense
// row-major tensor into a hyper-rectangle of another, as transfers, input
// scattering and output gathering do. Header-only, MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_REGION_H
#define EIN_REGION_H

#include <cstdint>
#include <cstring>
#include <vector>

namespace ein {

/// The row-major strides of `shape`, in units of `unit` (1 for elements,
/// the element width for bytes).
inline std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape,
                                            int64_t unit = 1) {
  std::vector<int64_t> strides(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = unit;
    unit *= shape[d];
  }
  return strides;
}

/// Copies the elements [srcOffset, srcOffset + extent) of a tensor of shape
/// `srcShape` at `src` to [dstOffset, dstOffset + extent) of a tensor of
/// shape `dstShape` at `dst`; elements are `width` bytes. All vectors have
/// the tensors' rank, and the regions lie inside their tensors.
inline void copyRegion(const unsigned char *src,
                       const std::vector<int64_t> &srcShape,
                       const std::vector<int64_t> &srcOffset,
                       unsigned char *dst, const std::vector<int64_t> &dstShape,
                       const std::vector<int64_t> &dstOffset,
                       const std::vector<int64_t> &extent, int64_t width) {
  size_t rank = extent.size();
  if (rank == 0) {
    std::memcpy(dst, src, width);
    return;
  }
  std::vector<int64_t> srcStride = rowMajorStrides(srcShape, width),
                       dstStride = rowMajorStrides(dstShape, width);
  const unsigned char *srcBase = src;
  unsigned char *dstBase = dst;
  for (size_t i = 0; i < rank; ++i) {
    srcBase += srcOffset[i] * srcStride[i];
    dstBase += dstOffset[i] * dstStride[i];
  }
  // Walk the rows (all dimensions but the last) with an odometer.
  int64_t rowBytes = extent[rank - 1] * width, rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i)
    rows *= extent[i];
  std::vector<int64_t> index(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t so = 0, dof = 0;
    for (size_t i = 0; i + 1 < rank; ++i) {
      so += index[i] * srcStride[i];
      dof += index[i] * dstStride[i];
    }
    std::memcpy(dstBase + dof, srcBase + so, rowBytes);
    for (size_t i = rank - 1; i-- > 0;) {
      if (++index[i] < extent[i])
        break;
      index[i] = 0;
    }
  }
}

} // namespace ein

#endif // EIN_REGION_H
