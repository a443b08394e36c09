//===- backend.h - What a device backend does for the runtime ---*- C++ -*-===//
//
// Internal to the runtime. The C API (runtime.cpp) handles bundles, inputs
// and outputs as whole tensors; a backend owns the devices' memory and runs
// the schedule. The CPU backend (cpu_backend.cpp) treats each device as a
// virtual GPU with its own arena; a CUDA backend plugs in behind the same
// interface.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_BACKEND_H
#define EIN_LIB_BACKEND_H

#include "ein/bundle.h"
#include "ein/runtime.h"
#include "ein/signature.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ein {

/// What backends throw; the C API turns it into an error message.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Communicator;

struct BackendOptions {
  bool debug = false;
  /// A run of several ranks (ranks.h): this process owns node
  /// ranks->rank()'s devices only, runs their steps, and moves transfers
  /// between nodes through it. Null: every device is here.
  Communicator *ranks = nullptr;
  /// Under ranks, how a CUDA bundle's transfers between nodes move
  /// (EIN_TRANSPORT): "auto" (NCCL where every device of the run is on a
  /// GPU of its own, else MPI), "mpi" or "nccl". The CPU backend's are
  /// always MPI's.
  std::string transport = "auto";
  /// Logical devices (ein_load_options.device_map): the CUDA backend runs
  /// device d on GPU deviceMap[d]. Empty: device d on GPU d. The C API
  /// has checked its form and that it has one entry per device; the CPU
  /// backend is never given one.
  std::vector<int> deviceMap;
};

/// What runs a bundle's schedule on its devices (ein::Backend, target.h,
/// names the kind).
/// A region of buffer `src` at `srcOffset` copied to `dstOffset` of buffer
/// `dst` (DeviceBackend::copyBetween).
struct BufferCopy {
  int src = -1, dst = -1;
  std::vector<int64_t> srcOffset, dstOffset, extent;
};

/// When one step ran in a profiled run (DeviceBackend::profile).
struct StepTime {
  double start = 0, end = 0;
  int lane = 0;
};

class DeviceBackend {
public:
  virtual ~DeviceBackend() = default;
  /// Copies a whole buffer (Buffer::bytes() bytes) from or to the host; the
  /// buffer is on a device of this process.
  virtual void writeBuffer(int buffer, const unsigned char *host) = 0;
  virtual void readBuffer(int buffer, unsigned char *host) const = 0;
  /// Copies each region between buffers of this process's devices (an
  /// output carried into an input, ein_bundle_carry) and waits for them;
  /// no copy writes a buffer another one reads.
  virtual void copyBetween(const std::vector<BufferCopy> &copies) = 0;
  /// Runs every step of the schedule once and waits for the last.
  virtual void run() = 0;
  /// The time of one run, in milliseconds, measured as the backend can.
  virtual double timedRun() = 0;
  /// One line on what runs the bundle, for logs.
  virtual std::string describe() const = 0;
  /// The bytes device `device` holds for the bundle (ein_memory_info).
  virtual ein_memory_info memory(int device) const = 0;
  /// Runs the schedule once, step by step (on CUDA eagerly, not as a graph,
  /// on the streams it runs on), and returns each step's times in
  /// milliseconds since the run began: its start, when it could start on
  /// its lane (its waits met, the lane's earlier steps done), and its end,
  /// so waiting for another device is not counted in end - start; and its
  /// lane (0: the device's stream, 1: its copy stream, 2..: a dataflow
  /// bundle's further compute streams). All zero for a step
  /// of another rank's devices.
  virtual std::vector<StepTime> profile() = 0;
};

/// Loads the bundle's kernel libraries and finds the kernel of every kernel
/// step, the same way on every backend, so that they fail alike. Each
/// library's bytes are read and their hash checked (readKernelLibrary) before
/// `open(path, bytes)` loads them and returns a handle; its signature table
/// (`signatureText(handle, path)`) is read, and every kernel step checked
/// against the tables, before `lookup(handle, name)` finds each step's
/// kernel (null: not in that library), searching the libraries in order, and
/// `kernels` maps its name to it. Throws RuntimeError.
template <typename Kernel, typename Open, typename SignatureText,
          typename Lookup>
void loadKernelLibraries(const Bundle &bundle,
                         std::map<std::string, Kernel> &kernels, Open open,
                         SignatureText signatureText, Lookup lookup) {
  const Manifest &m = bundle.manifest;
  using Library = decltype(open(std::string(), std::string()));
  std::vector<Library> libraries;
  KernelSignatures signatures;
  for (size_t index = 0; index < m.kernelLibraries.size(); ++index) {
    std::string path = bundle.directory + "/" + m.kernelLibraries[index], bytes,
                error;
    if (!readKernelLibrary(bundle, index, bytes, error))
      throw RuntimeError(error);
    Library library = open(path, bytes);
    libraries.push_back(library);
    if (!addKernelSignatures(signatureText(library, path), signatures, error))
      throw RuntimeError("kernel library '" + path + "': " + error);
  }
  std::string error;
  if (!checkKernelSteps(m, signatures, error))
    throw RuntimeError(error);
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const Step &step = m.steps[i];
    if (step.kind != StepKind::Kernel || kernels.count(step.kernel))
      continue;
    Kernel kernel = nullptr;
    for (Library library : libraries)
      if ((kernel = lookup(library, step.kernel)))
        break;
    if (!kernel)
      throw RuntimeError("manifest.steps[" + std::to_string(i) +
                         "]: no kernel library defines '" + step.kernel + "'");
    kernels[step.kernel] = kernel;
  }
}

/// The CPU backend: one arena per device, separated by guard pages; kernel
/// steps call functions from the bundle's kernels/*.so. Throws RuntimeError.
std::unique_ptr<DeviceBackend> createCpuBackend(const Bundle &bundle,
                                                const BackendOptions &options);

#ifdef EIN_HAVE_CUDA
/// The CUDA backend (cuda/cuda_backend.cpp): the schedule captured once into
/// one CUDA graph over the bundle's GPUs and replayed. Throws RuntimeError.
std::unique_ptr<DeviceBackend> createCudaBackend(const Bundle &bundle,
                                                 const BackendOptions &options);
#endif

} // namespace ein

#endif // EIN_LIB_BACKEND_H
