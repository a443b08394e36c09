//===- cpu_backend.cpp - Virtual GPUs on the host -------------------------===//
//
// Each device of the bundle becomes an arena of host memory, page-aligned,
// with an inaccessible guard page on either side: a kernel that runs off the
// end of its device's memory faults instead of corrupting a neighbour. Steps
// run one after another in schedule order, which the manifest's validation
// (checkSchedule) guarantees gives the result of any order the dependencies
// allow. In a run of several ranks, each process holds its node's arenas,
// runs its node's steps in the same order and sends or receives a transfer
// between nodes at its place in that order: every rank meets every
// cross-node transfer in the one global order, so none waits for a message
// a peer sends only later.
//
//===----------------------------------------------------------------------===//

#include "backend.h"
#include "ranks.h"

#include "ein/eval.h"
#include "ein/npy.h"
#include "ein/partition.h"
#include "ein/region.h"
#include "ein/signature.h"

#include <dlfcn.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

namespace ein {
namespace {

/// The ABI of a host kernel: one pointer per argument buffer, then the
/// step's scalars.
using HostKernel = void (*)(void *const *args, const int64_t *scalars);

/// Where a kernel that faults returns to, and the address it touched.
thread_local sigjmp_buf *faultReturn = nullptr;
thread_local void *faultAddress = nullptr;
struct sigaction previousSegv, previousBus;

void onFault(int signal, siginfo_t *info, void *context) {
  // Ours only if the kernel this thread is calling raised it: the CPU raises
  // a fault with si_code > 0 (SEGV_MAPERR, SEGV_ACCERR, BUS_ADRERR, ...),
  // while a signal sent to the process (kill -SEGV, sigqueue, tgkill) has
  // si_code <= 0 (SI_USER, SI_QUEUE, SI_TKILL) and says nothing of the
  // kernel, which may happen to be running when it arrives.
  bool raisedByKernel = info && info->si_code > 0;
  if (faultReturn && raisedByKernel) {
    faultAddress = info->si_addr;
    siglongjmp(*faultReturn, 1);
  }
  // Anything else: behave as before the handler was installed. A fault
  // raised outside a kernel happens again when this returns (the
  // instruction reruns) and meets that disposition; a sent signal does
  // not, so it is raised again, pending until this returns, instead of
  // being swallowed.
  sigaction(signal, signal == SIGSEGV ? &previousSegv : &previousBus, nullptr);
  if (!raisedByKernel)
    raise(signal);
}

/// Installs the handlers once for the process; they act only on threads
/// inside callGuarded.
void installFaultHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action = {};
    action.sa_sigaction = onFault;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previousSegv);
    sigaction(SIGBUS, &action, &previousBus);
  });
}

/// Calls `kernel`; returns false with `faultAddress` set if it touched
/// memory it may not (a guard page, or anything unmapped).
bool callGuarded(HostKernel kernel, void *const *args, const int64_t *scalars) {
  installFaultHandlers();
  sigjmp_buf here;
  bool ok = true;
  if (sigsetjmp(here, /*savesigs=*/1) == 0) {
    faultReturn = &here;
    kernel(args, scalars);
  } else {
    ok = false;
  }
  faultReturn = nullptr;
  return ok;
}

class CpuBackend final : public DeviceBackend {
public:
  CpuBackend(const Bundle &bundle, const BackendOptions &options)
      : bundle(bundle), m(bundle.manifest), options(options),
        node(options.ranks ? options.ranks->rank() : -1) {
    try {
      mapArenas();
      loadKernels();
    } catch (...) {
      release(); // no destructor runs for a constructor that throws
      throw;
    }
  }

  ~CpuBackend() override { release(); }

  void release() {
    for (void *library : libraries)
      dlclose(library);
    libraries.clear();
    // A library the loader keeps (a C++ library with unique symbols is
    // never unloaded) keeps its file: were the file closed, a later memfd
    // could take its number or its inode, and dlopen would hand back this
    // library for that one.
    for (int fd : libraryFiles) {
      if (isLoaded(fdPath(fd)))
        residentLibraryFiles().push_back(fd);
      else
        ::close(fd);
    }
    libraryFiles.clear();
    if (mapping)
      munmap(mapping, mappingBytes);
    mapping = nullptr;
  }

  void writeBuffer(int buffer, const unsigned char *host) override {
    std::memcpy(address(buffer), host, m.buffers[buffer].bytes());
  }

  void readBuffer(int buffer, unsigned char *host) const override {
    std::memcpy(host, address(buffer), m.buffers[buffer].bytes());
  }

  void copyBetween(const std::vector<BufferCopy> &copies) override {
    for (const BufferCopy &c : copies) {
      const Buffer &from = m.buffers[c.src], &to = m.buffers[c.dst];
      copyRegion(address(c.src), from.type.shape, c.srcOffset, address(c.dst),
                 to.type.shape, c.dstOffset, c.extent,
                 dtypeBytes(to.type.dtype));
    }
  }

  void run() override {
    if (options.debug)
      poison();
    for (size_t i = 0; i < m.steps.size(); ++i)
      if (mine(m.steps[i]))
        execute(m.steps[i], i);
  }

  double timedRun() override {
    auto start = std::chrono::steady_clock::now();
    run();
    return millisecondsSince(start);
  }

  std::vector<StepTime> profile() override {
    if (options.debug)
      poison();
    std::vector<StepTime> times(m.steps.size());
    auto begin = std::chrono::steady_clock::now();
    for (size_t i = 0; i < m.steps.size(); ++i) {
      if (!mine(m.steps[i]))
        continue;
      times[i].start = millisecondsSince(begin);
      execute(m.steps[i], i);
      times[i].end = millisecondsSince(begin);
    }
    return times;
  }

  std::string describe() const override {
    std::string text =
        "cpu: " + std::to_string(m.devices) + " virtual GPUs, arenas of";
    for (size_t d = 0; d < m.arenaBytes.size(); ++d)
      text += (d ? ", " : " ") + std::to_string(m.arenaBytes[d]);
    text += " bytes between guard pages";
    if (node >= 0)
      text += "; this rank holds node " + std::to_string(node) +
              "'s, transfers between nodes through " + options.ranks->engine();
    return text;
  }

  ein_memory_info memory(int device) const override {
    // Host memory: nothing to measure against a device's free memory.
    return {static_cast<size_t>(m.arenaBytes[device]), 0};
  }

private:
  static double millisecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
        .count();
  }

  const Bundle &bundle;
  const Manifest &m;
  BackendOptions options;
  int node; // the node whose devices this process holds; -1: all
  std::vector<unsigned char> message; // a cross-node transfer's bytes
  void *mapping = nullptr;
  size_t mappingBytes = 0;
  std::vector<unsigned char *> arenas;
  std::vector<void *> libraries;
  std::vector<int> libraryFiles; // the memfds they were loaded from
  std::map<std::string, HostKernel> kernels;

  static size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

  void mapArenas() {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    mappingBytes = page;
    for (int d = 0; d < m.devices; ++d)
      if (local(d))
        mappingBytes +=
            roundUp(static_cast<size_t>(m.arenaBytes[d]), page) + page;
    void *p = mmap(nullptr, mappingBytes, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      throw RuntimeError(
          "cannot reserve " + std::to_string(mappingBytes) +
          " bytes for the devices' arenas: " + std::strerror(errno));
    mapping = p;
    unsigned char *cursor = static_cast<unsigned char *>(p) + page;
    for (int d = 0; d < m.devices; ++d) {
      int64_t bytes = m.arenaBytes[d];
      if (!local(d)) {
        arenas.push_back(nullptr); // another rank's
        continue;
      }
      size_t size = roundUp(static_cast<size_t>(bytes), page);
      if (size && mprotect(cursor, size, PROT_READ | PROT_WRITE) != 0)
        throw RuntimeError("cannot allocate an arena of " +
                           std::to_string(bytes) +
                           " bytes: " + std::strerror(errno));
      arenas.push_back(cursor);
      cursor += size + page;
    }
  }

  /// Each library is read and its hash checked first, then loaded from an
  /// anonymous in-memory file holding exactly the bytes checked (so nothing
  /// done to the file afterwards reaches the mapping), then its signature
  /// table is read and every kernel step checked against it, all before
  /// anything runs.
  void loadKernels() {
    loadKernelLibraries(
        bundle, kernels,
        [&](const std::string &path, const std::string &bytes) {
          void *library = openFromMemory(path, bytes, libraryFiles);
          libraries.push_back(library);
          return library;
        },
        signatureText,
        [](void *library, const std::string &name) {
          return reinterpret_cast<HostKernel>(dlsym(library, name.c_str()));
        });
  }

  static std::string fdPath(int fd) {
    return "/proc/self/fd/" + std::to_string(fd);
  }

  /// Whether the dynamic loader holds an object loaded from `path`.
  static bool isLoaded(const std::string &path) {
    struct Search {
      const std::string *path;
      bool found = false;
    } search{&path};
    dl_iterate_phdr(
        [](struct dl_phdr_info *info, size_t, void *data) {
          auto *s = static_cast<Search *>(data);
          if (info->dlpi_name && *s->path == info->dlpi_name)
            s->found = true;
          return 0;
        },
        &search);
    return search.found;
  }

  /// The files of libraries that stay loaded after their bundle is freed.
  static std::vector<int> &residentLibraryFiles() {
    static std::vector<int> files;
    return files;
  }

  /// The loader knows a library by its path, /proc/self/fd/N: the file
  /// stays open while the library is loaded, so no two loaded libraries
  /// share a path (a second dlopen of a path returns the first library).
  static void *openFromMemory(const std::string &path, const std::string &bytes,
                              std::vector<int> &files) {
    int fd = memfd_create("ein-kernels", MFD_CLOEXEC);
    if (fd < 0)
      throw RuntimeError("cannot load kernel library '" + path +
                         "': memfd_create: " + std::strerror(errno));
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) {
        ::close(fd);
        throw RuntimeError("cannot load kernel library '" + path +
                           "': writing it to memory failed");
      }
      done += size_t(n);
    }
    files.push_back(fd);
    std::string name = fdPath(fd);
    void *library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library)
      throw RuntimeError("cannot load kernel library '" + path +
                         "': " + dlerror());
    // The loader must have loaded this file, not handed back another.
    struct link_map *map = nullptr;
    if (dlinfo(library, RTLD_DI_LINKMAP, &map) != 0 || !map ||
        name != map->l_name) {
      dlclose(library);
      throw RuntimeError("cannot load kernel library '" + path +
                         "': the dynamic loader returned another library");
    }
    return library;
  }

  /// The library's signature table: the symbol's bytes up to its NUL, never
  /// past the symbol's size.
  static std::string signatureText(void *library, const std::string &path) {
    void *symbol = dlsym(library, kSignatureSymbol);
    Dl_info info;
    void *extra = nullptr;
    if (!symbol || !dladdr1(symbol, &info, &extra, RTLD_DL_SYMENT) || !extra)
      throw RuntimeError("kernel library '" + path + "' has no '" +
                         kSignatureSymbol +
                         "' table (built by an older ein-compile, or not a "
                         "bundle's library; recompile the bundle)");
    const char *text = static_cast<const char *>(symbol);
    size_t size = static_cast<const ElfW(Sym) *>(extra)->st_size;
    return std::string(text, strnlen(text, size));
  }

  unsigned char *address(int buffer) const {
    const Buffer &b = m.buffers[buffer];
    return arenas[b.device] + b.offset;
  }

  /// The debug check: the memory a step touches lies in the arena of the
  /// device that holds it, and local operands are on the step's device.
  unsigned char *checked(int buffer, int device, const Step &step) const {
    const Buffer &b = m.buffers[buffer];
    unsigned char *p = address(buffer);
    if (options.debug) {
      unsigned char *base = arenas[device];
      if (p < base || p + b.bytes() > base + m.arenaBytes[device])
        throw RuntimeError(std::string(stepKindName(step.kind)) + " step '" +
                           step.label + "': buffer '" + b.name +
                           "' lies outside device " + std::to_string(device) +
                           "'s arena");
    }
    return p;
  }

  /// Where `address` lies relative to the arenas, for a fault's message.
  std::string describe(const void *address) const {
    auto *p = static_cast<const unsigned char *>(address);
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    char hex[32];
    std::snprintf(hex, sizeof hex, "%p", address);
    for (int d = 0; d < m.devices; ++d) {
      if (!arenas[d])
        continue;
      const unsigned char *begin = arenas[d],
                          *end = begin + roundUp(m.arenaBytes[d], page);
      if (p >= begin - page && p < begin)
        return std::string("it touched ") + hex +
               ", in the guard page before device " + std::to_string(d) +
               "'s arena";
      if (p >= end && p < end + page)
        return std::string("it touched ") + hex +
               ", in the guard page after device " + std::to_string(d) +
               "'s arena";
    }
    return std::string("it touched ") + hex + ", outside every arena";
  }

  void poison() {
    for (int device = 0; device < m.devices; ++device)
      if (local(device))
        for (auto [first, last] : nonInputSpans(m, device))
          std::memset(arenas[device] + first, 0xff, last - first);
  }

  bool local(int device) const { return node < 0 || m.nodeOf(device) == node; }

  /// Whether this process takes part in `step`: it runs on one of its
  /// devices, or it is a transfer from or to one.
  bool mine(const Step &step) const {
    if (step.kind != StepKind::Transfer)
      return local(step.device);
    auto [from, to] = m.transferEnds(step);
    return local(from) || local(to);
  }

  /// A transfer between nodes: the sending rank packs its regions into one
  /// message, the receiving rank unpacks it into the destinations.
  void transferBetweenNodes(const Step &step, size_t index) {
    auto [fromDevice, toDevice] = m.transferEnds(step);
    int from = m.nodeOf(fromDevice), to = m.nodeOf(toDevice);
    int width =
        dtypeBytes(m.buffers[step.copies.front().src.buffer].type.dtype);
    size_t total = m.messageBytes(step);
    message.resize(total);
    std::string what = "transfer step " + std::to_string(index) +
                       (step.label.empty() ? "" : " '" + step.label + "'") +
                       ", " + std::to_string(total) + " bytes";
    bool sending = node == from;
    if (!sending)
      options.ranks->receive(from, message.data(), total, what);
    size_t at = 0;
    for (const Step::Copy &c : step.copies) {
      const Region &r = sending ? c.src : c.dst;
      const Buffer &b = m.buffers[r.buffer];
      std::vector<int64_t> origin(r.extent.size(), 0);
      unsigned char *place = checked(r.buffer, b.device, step);
      if (sending)
        copyRegion(place, b.type.shape, r.offset, message.data() + at, r.extent,
                   origin, r.extent, width);
      else
        copyRegion(message.data() + at, r.extent, origin, place, b.type.shape,
                   r.offset, r.extent, width);
      at += static_cast<size_t>(product(r.extent)) * width;
    }
    if (sending)
      options.ranks->send(to, message.data(), total, what);
  }

  void execute(const Step &step, size_t index) {
    switch (step.kind) {
    case StepKind::Kernel: {
      std::vector<void *> args;
      for (const KernelArg &a : step.args)
        args.push_back(checked(a.buffer, step.device, step));
      if (!callGuarded(kernels.at(step.kernel), args.data(),
                       step.scalars.data()))
        throw RuntimeError("kernel '" + step.kernel + "' on device " +
                           std::to_string(step.device) +
                           " faulted: " + describe(faultAddress) +
                           " (the bundle's kernel or its buffer plan is "
                           "wrong)");
      return;
    }
    case StepKind::Library:
      if (step.call == "attention")
        attention(step);
      else
        gemm(step);
      return;
    case StepKind::Transfer:
      if (node >= 0 && m.crossesNodes(step)) {
        transferBetweenNodes(step, index);
        return;
      }
      for (const Step::Copy &c : step.copies) {
        const Buffer &from = m.buffers[c.src.buffer],
                     &to = m.buffers[c.dst.buffer];
        copyRegion(checked(c.src.buffer, from.device, step), from.type.shape,
                   c.src.offset, checked(c.dst.buffer, to.device, step),
                   to.type.shape, c.dst.offset, c.src.extent,
                   dtypeBytes(from.type.dtype));
      }
      return;
    case StepKind::Aggregate:
      aggregate(step);
      return;
    }
  }

  std::vector<float> decodeFloats(int buffer, const Step &step) const {
    const Buffer &b = m.buffers[buffer];
    const unsigned char *p = checked(buffer, step.device, step);
    int width = dtypeBytes(b.type.dtype);
    std::vector<float> out(b.type.numElements());
    if (b.type.dtype == DType::F32) {
      std::memcpy(out.data(), p, out.size() * 4);
      return out;
    }
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<float>(decodeElement(b.type.dtype, p + i * width));
    return out;
  }

  /// c = act(alpha * op(a) op(b) + beta * c + bias + addend), f32
  /// accumulation, batched over c's leading dimensions, rounded once.
  void gemm(const Step &step) {
    const TensorType &ta = m.buffers[step.a].type, &tb = m.buffers[step.b].type,
                     &tc = m.buffers[step.c].type;
    size_t rank = tc.shape.size();
    int64_t rows = tc.shape[rank - 2], cols = tc.shape[rank - 1];
    int64_t inner = ta.shape[ta.shape.size() - (step.transposeA ? 2 : 1)];
    int64_t batch = product(tc.shape) / (rows * cols);
    int64_t strideA = ta.shape.size() == rank ? rows * inner : 0;
    int64_t strideB = tb.shape.size() == rank ? inner * cols : 0;
    std::vector<float> a = decodeFloats(step.a, step),
                       b = decodeFloats(step.b, step);
    std::vector<float> c(product(tc.shape), 0.0f);
    if (step.beta != 0)
      c = decodeFloats(step.c, step);
    std::vector<float> bias, addend;
    if (step.bias >= 0)
      bias = decodeFloats(step.bias, step);
    if (step.addend >= 0)
      addend = decodeFloats(step.addend, step);
    std::vector<float> row(cols);
    for (int64_t n = 0; n < batch; ++n) {
      const float *pa = a.data() + n * strideA, *pb = b.data() + n * strideB;
      float *pc = c.data() + n * rows * cols;
      for (int64_t i = 0; i < rows; ++i) {
        std::fill(row.begin(), row.end(), 0.0f);
        for (int64_t k = 0; k < inner; ++k) {
          float x = step.transposeA ? pa[k * rows + i] : pa[i * inner + k];
          if (step.transposeB)
            for (int64_t j = 0; j < cols; ++j)
              row[j] += x * pb[j * inner + k];
          else
            for (int64_t j = 0; j < cols; ++j)
              row[j] += x * pb[k * cols + j];
        }
        float alpha = static_cast<float>(step.alpha),
              beta = static_cast<float>(step.beta);
        for (int64_t j = 0; j < cols; ++j) {
          int64_t at = n * rows * cols + i * cols + j;
          float v =
              alpha * row[j] + (beta != 0 ? beta * pc[i * cols + j] : 0.0f);
          if (!bias.empty())
            v += bias[j];
          if (!addend.empty())
            v += addend[at];
          pc[i * cols + j] =
              static_cast<float>(applyActivation(step.activation, v));
        }
      }
    }
    unsigned char *out = checked(step.c, step.device, step);
    if (tc.dtype == DType::F32) {
      std::memcpy(out, c.data(), c.size() * 4);
      return;
    }
    for (size_t i = 0; i < c.size(); ++i)
      encodeElement(tc.dtype, c[i], out + i * 2);
  }

  HostTensor decode(int buffer, const Step &step) const {
    const TensorType &type = m.buffers[buffer].type;
    return {type.dtype, type.shape,
            tensorValues(type.dtype, checked(buffer, step.device, step),
                         type.numElements())};
  }

  /// `t` (of the buffer's type) into the buffer.
  void encode(const HostTensor &t, int buffer, const Step &step) {
    std::vector<unsigned char> bytes = tensorBytes(t);
    std::memcpy(checked(buffer, step.device, step), bytes.data(), bytes.size());
  }

  /// The reference's float64 attention (ein/eval.h), whose diagonal is its
  /// query offset.
  void attention(const Step &step) {
    HostTensor q = gather(step.q, step.qView, step),
               k = gather(step.k, step.kView, step),
               v = gather(step.v, step.vView, step), o, lse;
    int64_t group = q.shape[1] / k.shape[1];
    ein::attention(q, k, v, step.causal, group, step.scale, step.diagonal, 0, o,
                   step.lse >= 0 ? &lse : nullptr);
    if (step.oView) {
      // The buffer's elements where the view puts each of o's.
      HostTensor stored = decode(step.o, step);
      forEachViewed(*step.oView, [&](int64_t i, int64_t at) {
        stored.data[at] = o.data[i];
      });
      o = std::move(stored);
    }
    encode(o, step.o, step);
    if (step.lse >= 0)
      encode(lse, step.lse, step);
  }

  /// `f(i, at)` for the view's elements i in row-major order, `at` where
  /// each lies in its buffer.
  template <typename F>
  static void forEachViewed(const StridedView &view, F &&f) {
    int64_t count = 1;
    for (int64_t n : view.shape)
      count *= n;
    std::vector<int64_t> index(view.shape.size(), 0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t at = view.offset;
      for (size_t d = 0; d < index.size(); ++d)
        at += index[d] * view.strides[d];
      f(i, at);
      for (int d = int(index.size()) - 1; d >= 0; --d) {
        if (++index[d] < view.shape[d])
          break;
        index[d] = 0;
      }
    }
  }

  /// `buffer` as `view` sees it, or the whole buffer.
  HostTensor gather(int buffer, const std::optional<StridedView> &view,
                    const Step &step) const {
    HostTensor whole = decode(buffer, step);
    if (!view)
      return whole;
    HostTensor t{whole.dtype, view->shape, {}};
    t.data.reserve(size_t(t.numElements()));
    forEachViewed(
        *view, [&](int64_t, int64_t at) { t.data.push_back(whole.data[at]); });
    return t;
  }

  void aggregate(const Step &step) {
    const Buffer &out = m.buffers[step.output];
    int64_t count = out.type.numElements();
    std::vector<double> acc(count);
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      const Buffer &in = m.buffers[step.inputs[k]];
      const unsigned char *p = checked(step.inputs[k], step.device, step);
      int width = dtypeBytes(in.type.dtype);
      for (int64_t i = 0; i < count; ++i) {
        double x = decodeElement(in.type.dtype, p + i * width);
        if (k == 0) {
          acc[i] = x;
          continue;
        }
        switch (step.op) {
        case Agg::Add:
          acc[i] += x;
          break;
        case Agg::Mul:
          acc[i] *= x;
          break;
        case Agg::Max:
          acc[i] = std::isnan(x) || x > acc[i] ? x : acc[i];
          break;
        case Agg::Min:
          acc[i] = std::isnan(x) || x < acc[i] ? x : acc[i];
          break;
        case Agg::None:
          break;
        }
      }
    }
    unsigned char *p = checked(step.output, step.device, step);
    int width = dtypeBytes(out.type.dtype);
    for (int64_t i = 0; i < count; ++i)
      encodeElement(out.type.dtype, acc[i], p + i * width);
  }
};

} // namespace

std::unique_ptr<DeviceBackend> createCpuBackend(const Bundle &bundle,
                                                const BackendOptions &options) {
  return std::make_unique<CpuBackend>(bundle, options);
}

} // namespace ein
