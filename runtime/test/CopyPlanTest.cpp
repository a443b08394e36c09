//===- CopyPlanTest.cpp - The CUDA backend's transfer plans, on the CPU ---===//
//
// Every plan planCopy makes (copy engine, 2-D, or the copy kernel with its
// unit) is carried out here on host memory, the kernel through the same
// copyUnitOffsets it runs on the GPU, and compared with copyRegion.
//
//===----------------------------------------------------------------------===//

#include "../lib/cuda/copy_plan.h"

#include "ein/partition.h"
#include "ein/region.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace ein;
using namespace ein::cuda;

namespace {

void execute(const CopyPlan &plan) {
  switch (plan.kind) {
  case CopyPlan::Contiguous:
    std::memcpy(plan.dst, plan.src, plan.bytes);
    return;
  case CopyPlan::TwoD:
    for (int64_t r = 0; r < plan.rows; ++r)
      std::memcpy(plan.dst + r * plan.dstPitch, plan.src + r * plan.srcPitch,
                  plan.bytes);
    return;
  case CopyPlan::Kernel:
    for (int64_t i = 0; i < plan.kernel.count; ++i) {
      int64_t s, d;
      copyUnitOffsets(plan.kernel, i, s, d);
      std::memcpy(plan.kernel.dst + d * plan.kernel.width,
                  plan.kernel.src + s * plan.kernel.width, plan.kernel.width);
    }
    return;
  }
}

} // namespace

TEST(CopyPlan, EveryPlanCopiesWhatCopyRegionCopies) {
  std::mt19937 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int kinds[3] = {0, 0, 0};
  for (int trial = 0; trial < 2000; ++trial) {
    size_t rank = pick(1, 4);
    int64_t width = int64_t(1) << pick(0, 3);
    std::vector<int64_t> srcShape(rank), dstShape(rank), extent(rank),
        srcOffset(rank), dstOffset(rank);
    for (size_t d = 0; d < rank; ++d) {
      extent[d] = pick(1, 5);
      // Often whole, so contiguous runs and 2-D copies occur.
      srcShape[d] = extent[d] + (pick(0, 1) ? 0 : pick(1, 3));
      dstShape[d] = extent[d] + (pick(0, 1) ? 0 : pick(1, 3));
      srcOffset[d] = pick(0, srcShape[d] - extent[d]);
      dstOffset[d] = pick(0, dstShape[d] - extent[d]);
    }
    // Misalign the tensors' starts now and then (by whole elements).
    int64_t srcShift = pick(0, 1) * width, dstShift = pick(0, 1) * width;
    std::vector<unsigned char> src(product(srcShape) * width + 32),
        want(product(dstShape) * width + 32, 0xee), got = want;
    for (size_t i = 0; i < src.size(); ++i)
      src[i] = static_cast<unsigned char>(rng());
    auto aligned = [](std::vector<unsigned char> &v, int64_t shift) {
      uintptr_t p = reinterpret_cast<uintptr_t>(v.data());
      return v.data() + ((16 - p % 16) % 16) + shift;
    };
    copyRegion(aligned(src, srcShift), srcShape, srcOffset,
               aligned(want, dstShift), dstShape, dstOffset, extent, width);
    for (bool useKernel : {false, true}) {
      got.assign(want.size(), 0xee);
      CopyPlan plan = planCopy(aligned(src, srcShift), srcShape, srcOffset,
                               aligned(got, dstShift), dstShape, dstOffset,
                               extent, width, useKernel);
      if (useKernel) {
        EXPECT_EQ(plan.kind, CopyPlan::Kernel);
      }
      ++kinds[plan.kind];
      execute(plan);
      ASSERT_EQ(got, want) << "trial " << trial << ", plan " << plan.kind
                           << (plan.kind == CopyPlan::Kernel
                                   ? ", unit " +
                                         std::to_string(plan.kernel.width)
                                   : "");
    }
  }
  // Every kind of plan was exercised.
  EXPECT_GT(kinds[CopyPlan::Contiguous], 100);
  EXPECT_GT(kinds[CopyPlan::TwoD], 100);
  EXPECT_GT(kinds[CopyPlan::Kernel], 2000);
}

TEST(CopyPlan, KernelUsesTheWidestUnit) {
  alignas(16) unsigned char src[4096], dst[4096];
  // A whole 32x32 f32 tensor: one run of 4 KiB, moved 16 bytes at a time.
  CopyPlan plan = planCopy(src, {32, 32}, {0, 0}, dst, {32, 32}, {0, 0},
                           {32, 32}, 4, /*useKernel=*/true);
  EXPECT_EQ(plan.kernel.width, 16);
  EXPECT_EQ(plan.kernel.count, 256);
  // Starting one f32 in, 4 bytes is the widest.
  plan =
      planCopy(src, {32, 32}, {0, 1}, dst, {32, 31}, {0, 0}, {32, 31}, 4, true);
  EXPECT_EQ(plan.kernel.width, 4);
  // More strided dimensions than the kernel takes.
  EXPECT_THROW(
      planCopy(src, {2, 2, 2, 2, 2, 2, 2, 2, 2}, {0, 0, 0, 0, 0, 0, 0, 0, 0},
               dst, {3, 3, 3, 3, 3, 3, 3, 3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0},
               {2, 2, 2, 2, 2, 2, 2, 2, 2}, 4, false),
      std::invalid_argument);
}
