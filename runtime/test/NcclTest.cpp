//===- NcclTest.cpp - NCCL loaded at run time, on one GPU -----------------===//
//
// What one GPU allows of the GPU ranks' engine (docs/distributed.md): NCCL
// is found (the system's, or PyTorch's wheels'), its version read, and a
// one-rank communicator sends bytes to itself, eagerly and captured in a
// CUDA graph replayed on new data. Skips where no GPU is usable; where one
// is, a missing NCCL fails the test.
//
//===----------------------------------------------------------------------===//

#include "../lib/cuda/nccl.h"
#include "../lib/backend.h"

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

using namespace ein;
using namespace ein::cuda;

namespace {

bool gpuUsable() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

/// Bytes whose every position differs from its neighbours', per `seed`.
std::vector<unsigned char> pattern(size_t bytes, unsigned seed) {
  std::vector<unsigned char> data(bytes);
  for (size_t i = 0; i < bytes; ++i)
    data[i] = static_cast<unsigned char>((i * 131 + seed * 7 + i / 251) & 255);
  return data;
}

} // namespace

TEST(Nccl, OneRankCommunicatorSendsToItself) {
  if (!gpuUsable())
    GTEST_SKIP() << "no usable GPU";
  const Nccl &n = nccl();
  EXPECT_FALSE(n.path.empty());
  EXPECT_EQ(n.version.rfind("2.", 0), 0u) << n.version;
  std::printf("NCCL %s from %s\n", n.version.c_str(), n.path.c_str());
  NcclUniqueId id;
  n.check(n.getUniqueId(&id), "ncclGetUniqueId");
  NcclGroup group(id, /*worldDevices=*/1, /*devices=*/{0}, /*ordinals=*/{0});

  // An odd size: NCCL moves bytes, whatever the element type.
  const size_t bytes = (size_t(1) << 20) + 3;
  void *from = nullptr, *to = nullptr;
  CUDA_OK(cudaSetDevice(0));
  CUDA_OK(cudaMalloc(&from, bytes));
  CUDA_OK(cudaMalloc(&to, bytes));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // Every copy goes through `stream`: a non-blocking stream does not wait
  // for the legacy default stream's cudaMemset, nor for the tail of a
  // pageable cudaMemcpy.
  auto upload = [&](const std::vector<unsigned char> &data) {
    ASSERT_EQ(cudaMemcpyAsync(from, data.data(), bytes, cudaMemcpyHostToDevice,
                              stream),
              cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(to, 0, bytes, stream), cudaSuccess);
  };
  auto download = [&](std::vector<unsigned char> &data) {
    ASSERT_EQ(
        cudaMemcpyAsync(data.data(), to, bytes, cudaMemcpyDeviceToHost, stream),
        cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  };
  std::vector<unsigned char> sent = pattern(bytes, 1), got(bytes, 0);
  upload(sent);
  // A rank sending to itself posts both sides in one group.
  group.groupStart();
  group.send(0, 0, from, bytes, stream);
  group.receive(0, 0, to, bytes, stream);
  group.groupEnd();
  download(got);
  EXPECT_EQ(got, sent);

  // Captured in a CUDA graph (as a step's graph would hold it) and replayed
  // on other data.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  group.groupStart();
  group.send(0, 0, from, bytes, stream);
  group.receive(0, 0, to, bytes, stream);
  group.groupEnd();
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (unsigned seed : {2u, 3u}) {
    sent = pattern(bytes, seed);
    upload(sent);
    CUDA_OK(cudaGraphLaunch(exec, stream));
    download(got);
    EXPECT_EQ(got, sent) << "replay with seed " << seed;
  }
  CUDA_OK(cudaGraphExecDestroy(exec));
  CUDA_OK(cudaGraphDestroy(graph));
  CUDA_OK(cudaStreamDestroy(stream));
  CUDA_OK(cudaFree(from));
  CUDA_OK(cudaFree(to));
}

TEST(Nccl, OneProcessCommunicatorOverItsGpus) {
  if (!gpuUsable())
    GTEST_SKIP() << "no usable GPU";
  NcclGroup group(std::vector<int>{0});
  // Device 3 is not one of this process's.
  EXPECT_THROW(group.receive(0, 3, nullptr, 0, nullptr), RuntimeError);
}
