//===- nccl.cpp - NCCL, found and bound at run time -----------------------===//

#include "nccl.h"

#include "../backend.h"
#include "library_search.h"

#include <algorithm>
#include <mutex>

namespace ein::cuda {

void Nccl::check(NcclResult result, const char *call) const {
  if (result == 0)
    return;
  throw RuntimeError(std::string(call) + " failed: " +
                     (getErrorString
                          ? getErrorString(result)
                          : "NCCL result " + std::to_string(result)) +
                     " (NCCL " + version + ", " + path + ")");
}

const Nccl &nccl() {
  static Nccl library;
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    try {
      LoadedLibrary found = openLibrary(
          "EIN_NCCL", {"libnccl.so.2", "libnccl.so"}, "libnccl.so.2",
          "NCCL, which moves a CUDA bundle's data between processes,");
      library.path = found.path;
      auto bind = [&](auto &slot, const char *name) {
        slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
            librarySymbol(found, name, "a usable NCCL 2"));
      };
      bind(library.getVersion, "ncclGetVersion");
      bind(library.getUniqueId, "ncclGetUniqueId");
      bind(library.commInitRank, "ncclCommInitRank");
      bind(library.commInitAll, "ncclCommInitAll");
      bind(library.commDestroy, "ncclCommDestroy");
      bind(library.commAbort, "ncclCommAbort");
      bind(library.commGetAsyncError, "ncclCommGetAsyncError");
      bind(library.send, "ncclSend");
      bind(library.recv, "ncclRecv");
      bind(library.groupStart, "ncclGroupStart");
      bind(library.groupEnd, "ncclGroupEnd");
      bind(library.getErrorString, "ncclGetErrorString");
      int code = 0;
      library.getVersion(&code);
      // NCCL 2.9 and later: major * 10000 + minor * 100 + patch.
      library.version = std::to_string(code / 10000) + "." +
                        std::to_string(code / 100 % 100) + "." +
                        std::to_string(code % 100);
      if (code < 20900)
        throw RuntimeError("NCCL " + std::to_string(code) + " (" +
                           library.path +
                           ") is older than 2.9, whose point-to-point "
                           "calls the runtime needs");
    } catch (const RuntimeError &e) {
      failure = e.what();
    }
  });
  if (!failure.empty())
    throw RuntimeError(failure);
  return library;
}

NcclGroup::NcclGroup(const NcclUniqueId &id, int worldDevices,
                     const std::vector<int> &devices,
                     const std::vector<int> &ordinals)
    : devices(devices) {
  const Nccl &n = nccl();
  comms.assign(devices.size(), nullptr);
  // A process with several GPUs initialises their ranks in one group.
  n.check(n.groupStart(), "ncclGroupStart");
  for (size_t i = 0; i < devices.size(); ++i) {
    cudaSetDevice(ordinals[i]);
    n.check(n.commInitRank(&comms[i], worldDevices, id, devices[i]),
            "ncclCommInitRank");
  }
  n.check(n.groupEnd(), "ncclGroupEnd (initialising the communicators)");
}

NcclGroup::NcclGroup(const std::vector<int> &ordinals) {
  const Nccl &n = nccl();
  comms.assign(ordinals.size(), nullptr);
  for (size_t i = 0; i < ordinals.size(); ++i)
    devices.push_back(static_cast<int>(i));
  n.check(n.commInitAll(comms.data(), static_cast<int>(ordinals.size()),
                        ordinals.data()),
          "ncclCommInitAll");
}

NcclGroup::~NcclGroup() {
  const Nccl &n = nccl();
  for (NcclComm c : comms)
    if (c)
      n.commDestroy(c);
}

NcclComm NcclGroup::comm(int device) const {
  auto it = std::find(devices.begin(), devices.end(), device);
  if (it == devices.end())
    throw RuntimeError("NCCL: bundle device " + std::to_string(device) +
                       " is not one of this process's");
  return comms[it - devices.begin()];
}

void NcclGroup::send(int from, int to, const void *data, size_t bytes,
                     cudaStream_t stream) const {
  nccl().check(nccl().send(data, bytes, kNcclUint8, to, comm(from), stream),
               "ncclSend");
}

void NcclGroup::receive(int from, int to, void *data, size_t bytes,
                        cudaStream_t stream) const {
  nccl().check(nccl().recv(data, bytes, kNcclUint8, from, comm(to), stream),
               "ncclRecv");
}

void NcclGroup::groupStart() const {
  nccl().check(nccl().groupStart(), "ncclGroupStart");
}

void NcclGroup::groupEnd() const {
  nccl().check(nccl().groupEnd(), "ncclGroupEnd");
}

std::string NcclGroup::asyncError() const {
  const Nccl &n = nccl();
  for (NcclComm c : comms) {
    NcclResult result = 0;
    if (c && n.commGetAsyncError(c, &result) == 0 && result != 0 &&
        result != kNcclInProgress)
      return n.getErrorString(result);
  }
  return "";
}

void NcclGroup::abort() {
  const Nccl &n = nccl();
  for (NcclComm &c : comms)
    if (c) {
      n.commAbort(c);
      c = nullptr; // the destructor must not destroy it again
    }
}

} // namespace ein::cuda
