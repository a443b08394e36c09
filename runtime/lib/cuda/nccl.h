//===- nccl.h - NCCL, declared here and loaded at run time ------*- C++ -*-===//
//
// The GPU ranks' engine (docs/distributed.md): NCCL's point-to-point send
// and receive between the GPUs of different processes. Like cuBLASLt it is
// loaded with dlopen, from the system or from PyTorch's wheels
// (site-packages/nvidia/nccl/lib, library_search.h; $EIN_NCCL names the
// file), so the runtime neither builds against nor starts with it. The few
// declarations used are written here against NCCL 2's ABI (nccl.h of NCCL
// 2.x): results and data types are C enums (ints), a communicator is an
// opaque pointer, and a unique id is 128 bytes passed by value.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_CUDA_NCCL_H
#define EIN_LIB_CUDA_NCCL_H

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

namespace ein::cuda {

/// nccl.h's ncclUniqueId: what every rank of a communicator must share.
struct NcclUniqueId {
  char internal[128];
};
using NcclComm = struct NcclCommOpaque *;
using NcclResult = int;            // ncclResult_t; 0 is ncclSuccess
constexpr int kNcclUint8 = 1;      // ncclDataType_t ncclUint8
constexpr int kNcclInProgress = 7; // ncclResult_t ncclInProgress (2.14+)

/// NCCL's functions, bound once per process.
struct Nccl {
  NcclResult (*getVersion)(int *) = nullptr;
  NcclResult (*getUniqueId)(NcclUniqueId *) = nullptr;
  NcclResult (*commInitRank)(NcclComm *, int, NcclUniqueId, int) = nullptr;
  NcclResult (*commInitAll)(NcclComm *, int, const int *) = nullptr;
  NcclResult (*commDestroy)(NcclComm) = nullptr;
  NcclResult (*commAbort)(NcclComm) = nullptr;
  NcclResult (*commGetAsyncError)(NcclComm, NcclResult *) = nullptr;
  NcclResult (*send)(const void *, size_t, int, int, NcclComm,
                     cudaStream_t) = nullptr;
  NcclResult (*recv)(void *, size_t, int, int, NcclComm,
                     cudaStream_t) = nullptr;
  NcclResult (*groupStart)() = nullptr;
  NcclResult (*groupEnd)() = nullptr;
  const char *(*getErrorString)(NcclResult) = nullptr;

  std::string path;
  /// "2.28.3", from ncclGetVersion.
  std::string version;

  /// Throws RuntimeError naming `call` and NCCL's message when `result` is
  /// not success.
  void check(NcclResult result, const char *call) const;
};

/// The process's NCCL, loaded on first use; throws RuntimeError naming
/// every path tried when it is missing, or the symbol a library lacks.
const Nccl &nccl();

/// One NCCL communicator per local GPU of a run over several processes:
/// NCCL rank r is bundle device r, so `devices` here are the bundle's
/// device indices this process holds, each on CUDA device `ordinals[i]`.
/// Every process of the run constructs it with the same `id` (rank 0's
/// ncclGetUniqueId, shared by the launcher's engine) and `worldDevices`.
class NcclGroup {
public:
  NcclGroup(const NcclUniqueId &id, int worldDevices,
            const std::vector<int> &devices, const std::vector<int> &ordinals);
  /// One process holding every device: ncclCommInitAll, no id needed.
  explicit NcclGroup(const std::vector<int> &ordinals);
  ~NcclGroup();
  NcclGroup(const NcclGroup &) = delete;
  NcclGroup &operator=(const NcclGroup &) = delete;

  /// Enqueues on `stream` the send of `bytes` bytes from bundle device
  /// `from` (held here) to bundle device `to`, or the receive at `to`
  /// (held here) from `from`. Matching calls must be enqueued in the same
  /// order on both sides; calls between groupStart and groupEnd proceed
  /// together (a rank sending to and receiving from itself needs them).
  void send(int from, int to, const void *data, size_t bytes,
            cudaStream_t stream) const;
  void receive(int from, int to, void *data, size_t bytes,
               cudaStream_t stream) const;
  void groupStart() const;
  void groupEnd() const;
  /// The first communicator's asynchronous error, as NCCL words it; empty
  /// while there is none.
  std::string asyncError() const;
  /// Aborts every communicator (ncclCommAbort): operations in flight end,
  /// and the group is unusable after.
  void abort();

private:
  NcclComm comm(int device) const;
  std::vector<int> devices;
  std::vector<NcclComm> comms;
};

} // namespace ein::cuda

#endif // EIN_LIB_CUDA_NCCL_H
