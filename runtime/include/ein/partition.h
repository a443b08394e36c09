//===- partition.h - How a tensor is cut into blocks ------------*- C++ -*-===//
//
// The block arithmetic every component shares: the compiler's relation type,
// the planner, the runtime and the reference evaluator must agree on where
// each block of an (unevenly) cut tensor starts. Header-only, MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_PARTITION_H
#define EIN_PARTITION_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ein {

/// A half-open interval [offset, offset + size) of one dimension.
struct Range {
  int64_t offset;
  int64_t size;
  bool operator==(const Range &o) const {
    return offset == o.offset && size == o.size;
  }
};

/// The unit an uneven cut moves in: the largest of 64, 32, 16 and 8 that
/// divides `size` at least 16 times per part, else 1. An even cut is exact
/// (granule 1). Whole granules keep every block's offset and extent a
/// multiple of 8 elements where the size allows, which is what cuBLASLt's
/// fast kernels and 16-byte vector accesses need (4096 rows on 3 GPUs are
/// 1408, 1344, 1344, not 1366, 1365, 1365), while the largest block stays
/// within 1/16 of an exact share.
inline int64_t cutGranule(int64_t size, int64_t parts) {
  if (size % parts == 0)
    return 1;
  for (int64_t granule = 64; granule >= 8; granule /= 2)
    if (size % granule == 0 && size / granule >= 16 * parts)
      return granule;
  return 1;
}

/// Block `i` of a dimension of `size` elements cut into `parts` blocks. Cuts
/// may be uneven: counted in granules (cutGranule), the first blocks hold
/// one granule more, so a size of 10 in 4 parts gives 3, 3, 2, 2. Requires
/// 1 <= parts and 0 <= i < parts.
inline Range blockRange(int64_t size, int64_t parts, int64_t i) {
  int64_t granule = cutGranule(size, parts);
  int64_t units = size / granule;
  int64_t base = units / parts, extra = units % parts;
  int64_t offset = i * base + (i < extra ? i : extra);
  return {offset * granule, (base + (i < extra ? 1 : 0)) * granule};
}

/// The offsets where the blocks of a dimension start, scaled by `stride`,
/// followed by the end: the cut points of the dimension.
inline std::vector<int64_t> cutPoints(int64_t size, int64_t parts,
                                      int64_t stride = 1) {
  std::vector<int64_t> points;
  points.reserve(parts + 1);
  for (int64_t i = 0; i < parts; ++i)
    points.push_back(blockRange(size, parts, i).offset * stride);
  points.push_back(size * stride);
  return points;
}

/// The product of a list of sizes: elements of a shape, blocks of a cut.
template <typename Container> int64_t product(const Container &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

/// The number of blocks: the product of the parts.
template <typename Container> int64_t numBlocks(const Container &parts) {
  return product(parts);
}

/// The block index (one entry per dimension) of the block with row-major
/// linear index `linear`.
template <typename Container>
std::vector<int64_t> delinearize(int64_t linear, const Container &parts) {
  std::vector<int64_t> index(parts.size());
  for (size_t d = parts.size(); d-- > 0;) {
    index[d] = linear % parts[d];
    linear /= parts[d];
  }
  return index;
}

/// The row-major linear index of a block index.
template <typename IndexContainer, typename PartsContainer>
int64_t linearize(const IndexContainer &index, const PartsContainer &parts) {
  int64_t linear = 0;
  for (size_t d = 0; d < parts.size(); ++d)
    linear = linear * parts[d] + index[d];
  return linear;
}

/// The shape of the block with row-major linear index `linear`.
template <typename ShapeContainer, typename PartsContainer>
std::vector<int64_t> blockShape(const ShapeContainer &shape,
                                const PartsContainer &parts, int64_t linear) {
  std::vector<int64_t> index = delinearize(linear, parts);
  std::vector<int64_t> result(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    result[d] = blockRange(shape[d], parts[d], index[d]).size;
  return result;
}

/// Whether cutting the factors of a collapsed dimension (`sizes`, outermost
/// first, into `parts` each) gives exactly the blocks of an ordinary cut of
/// the collapsed dimension into the product of the parts: every block
/// contiguous, in order, where blockRange puts it. A cut of the outermost
/// factor alone qualifies when the cut points agree; an inner factor may be
/// cut only under a fully cut outer one.
template <typename Container>
bool cutsLikeOneDimension(const Container &sizes, const Container &parts) {
  size_t n = sizes.size();
  std::vector<int64_t> strides(n, 1);
  int64_t total = 1;
  for (size_t i = n; i-- > 0;) {
    strides[i] = total;
    total *= sizes[i];
  }
  int64_t blocks = product(parts);
  for (int64_t k = 0; k < blocks; ++k) {
    std::vector<int64_t> coords = delinearize(k, parts);
    int64_t first = 0, last = 0, count = 1;
    for (size_t i = 0; i < n; ++i) {
      Range r = blockRange(sizes[i], parts[i], coords[i]);
      first += r.offset * strides[i];
      last += (r.offset + r.size - 1) * strides[i];
      count *= r.size;
    }
    Range expected = blockRange(total, blocks, k);
    if (last - first + 1 != count || first != expected.offset ||
        count != expected.size)
      return false;
  }
  return true;
}

} // namespace ein

#endif // EIN_PARTITION_H
