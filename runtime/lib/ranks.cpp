//===- ranks.cpp - Launchers, MPI through dlopen, collectives -------------===//
//
// MPI is loaded at run time, as cuBLASLt is: the few declarations used are
// written here against Open MPI's ABI (mpi.h of Open MPI 4: handles are
// pointers, MPI_COMM_WORLD and MPI_BYTE the addresses of the exported
// objects ompi_mpi_comm_world and ompi_mpi_byte, MPI_STATUS_IGNORE null).
// Other MPIs (MPICH's integer handles) are refused by name. Every wait polls
// a nonblocking request against a deadline, so no call blocks for longer
// than the rank timeout.
//
//===----------------------------------------------------------------------===//

#include "ranks.h"

#include "backend.h"

#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace ein {
namespace {

/// An environment variable as a non-negative int, or -1 when unset.
int envInt(const char *name) {
  const char *text = std::getenv(name);
  if (!text)
    return -1;
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (!*text || *end || errno || value < 0 || value > INT_MAX)
    throw RuntimeError(std::string("the launcher's variable ") + name + "='" +
                       text + "' is not a non-negative integer");
  return static_cast<int>(value);
}

void checkRank(const char *rankName, int rank, const char *sizeName, int size) {
  if (rank < 0 || size < 1 || rank >= size)
    throw RuntimeError(std::string("the launcher's variables ") + rankName +
                       "=" + std::to_string(rank) + " and " + sizeName + "=" +
                       std::to_string(size) +
                       " do not name a rank of the run (both are needed, "
                       "the rank below the size)");
}

} // namespace

Launch detectLaunch() {
  Launch launch;
  int ompiRank = envInt("OMPI_COMM_WORLD_RANK"),
      ompiSize = envInt("OMPI_COMM_WORLD_SIZE");
  if (ompiRank >= 0 || ompiSize >= 0) {
    checkRank("OMPI_COMM_WORLD_RANK", ompiRank, "OMPI_COMM_WORLD_SIZE",
              ompiSize);
    launch.kind = Launch::Kind::Mpi;
    launch.rank = ompiRank;
    launch.size = ompiSize;
    launch.localRank = std::max(0, envInt("OMPI_COMM_WORLD_LOCAL_RANK"));
    return launch;
  }
  if (std::getenv("PMI_RANK") || std::getenv("PMIX_RANK"))
    throw RuntimeError(
        "this process was started by an MPI launcher other than Open MPI's "
        "mpirun (PMI_RANK or PMIX_RANK is set); the runtime speaks Open "
        "MPI's ABI: launch with Open MPI's mpirun, or with torchrun-style "
        "variables");
  int rank = envInt("RANK"), size = envInt("WORLD_SIZE");
  if (rank < 0 && size < 0)
    return launch;
  checkRank("RANK", rank, "WORLD_SIZE", size);
  launch.kind = Launch::Kind::Torchrun;
  launch.rank = rank;
  launch.size = size;
  launch.localRank = std::max(0, envInt("LOCAL_RANK"));
  if (const char *address = std::getenv("MASTER_ADDR"))
    launch.masterAddress = address;
  launch.masterPort = std::max(0, envInt("MASTER_PORT"));
  return launch;
}

const char *launchName(Launch::Kind kind) {
  switch (kind) {
  case Launch::Kind::None:
    return "no launcher";
  case Launch::Kind::Mpi:
    return "mpirun";
  case Launch::Kind::Torchrun:
    return "torchrun-style variables";
  }
  return "?";
}

double rankTimeoutSeconds() {
  const char *text = std::getenv("EIN_RANK_TIMEOUT");
  if (!text)
    return 60;
  char *end = nullptr;
  double seconds = std::strtod(text, &end);
  if (!*text || *end || !(seconds > 0) || !std::isfinite(seconds))
    throw RuntimeError(std::string("EIN_RANK_TIMEOUT='") + text +
                       "' must be a positive number of seconds");
  return seconds;
}

GpuTransport chooseGpuTransport(const std::string &asked,
                                const std::vector<std::string> &gpus,
                                size_t idBytes, int devicesPerNode) {
  std::map<std::string, int> owner;
  std::string shared;
  for (int r = 0; r < int(gpus.size()) && shared.empty(); ++r)
    for (size_t i = 0; (i + 1) * idBytes <= gpus[r].size(); ++i) {
      int device = r * devicesPerNode + int(i);
      auto [it, fresh] =
          owner.insert({gpus[r].substr(i * idBytes, idBytes), device});
      if (!fresh) {
        shared = "devices " + std::to_string(it->second) + " (rank " +
                 std::to_string(it->second / devicesPerNode) + ") and " +
                 std::to_string(device) + " (rank " + std::to_string(r) +
                 ") are on one GPU";
        break;
      }
    }
  using Kind = GpuTransport::Kind;
  if (asked == "mpi")
    return {Kind::Mpi, "EIN_TRANSPORT=mpi"};
  if (shared.empty())
    return {Kind::Nccl,
            "EIN_TRANSPORT=" + asked + ", every device on a GPU of its own"};
  if (asked == "nccl")
    return {Kind::Refused,
            "EIN_TRANSPORT=nccl: " + shared +
                ", and NCCL refuses two of its ranks on one GPU (one "
                "communicator rank per device); use EIN_TRANSPORT=mpi or auto"};
  return {Kind::Mpi, "EIN_TRANSPORT=auto, " + shared};
}

bool pollUntil(double seconds, const std::function<bool()> &ready) {
  auto start = std::chrono::steady_clock::now();
  long pause = 1000; // nanoseconds
  for (int polls = 0;; ++polls) {
    if (ready())
      return true;
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (waited > seconds)
      return false;
    if (polls < 1000)
      continue;
    timespec ts{0, pause};
    nanosleep(&ts, nullptr);
    pause = std::min(pause * 2, 1000000L);
  }
}

std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

std::string Communicator::prefix() const {
  return "rank " + std::to_string(rank()) + " of " + std::to_string(size()) +
         ": ";
}

namespace {

/// A length-prefixed message: its size first (8 bytes), then its bytes.
void sendText(Communicator &c, int peer, const std::string &text,
              const std::string &what) {
  uint64_t bytes = text.size();
  c.send(peer, &bytes, sizeof bytes, what);
  if (bytes)
    c.send(peer, text.data(), text.size(), what);
}

std::string receiveText(Communicator &c, int peer, const std::string &what) {
  uint64_t bytes = 0;
  c.receive(peer, &bytes, sizeof bytes, what);
  if (bytes > (uint64_t(1) << 32))
    throw RuntimeError(c.prefix() + "rank " + std::to_string(peer) +
                       " announced a message of " + std::to_string(bytes) +
                       " bytes (" + what +
                       "): the ranks disagree on what "
                       "they exchange");
  std::string text(bytes, '\0');
  if (bytes)
    c.receive(peer, text.data(), text.size(), what);
  return text;
}

} // namespace

std::vector<std::string> Communicator::gather(const std::string &mine,
                                              const std::string &what) {
  if (rank() != 0) {
    sendText(*this, 0, mine, what);
    return {};
  }
  std::vector<std::string> all{mine};
  for (int r = 1; r < size(); ++r)
    all.push_back(receiveText(*this, r, what));
  return all;
}

std::string Communicator::broadcast(const std::string &text,
                                    const std::string &what) {
  if (rank() != 0)
    return receiveText(*this, 0, what);
  for (int r = 1; r < size(); ++r)
    sendText(*this, r, text, what);
  return text;
}

double Communicator::maximum(double value, const std::string &what) {
  std::string mine(sizeof value, '\0');
  std::memcpy(mine.data(), &value, sizeof value);
  double result = value;
  for (const std::string &other : gather(mine, what)) {
    double x = 0;
    if (other.size() != sizeof x)
      throw RuntimeError(prefix() + "a rank sent " +
                         std::to_string(other.size()) + " bytes for " + what);
    std::memcpy(&x, other.data(), sizeof x);
    result = std::max(result, x);
  }
  std::string all(sizeof result, '\0');
  std::memcpy(all.data(), &result, sizeof result);
  all = broadcast(all, what);
  if (all.size() != sizeof result)
    throw RuntimeError(prefix() + "rank 0 sent " + std::to_string(all.size()) +
                       " bytes for " + what);
  std::memcpy(&result, all.data(), sizeof result);
  return result;
}

void Communicator::barrier(const std::string &what) {
  gather("", what);
  broadcast("", what);
}

namespace {

/// Open MPI's libmpi, loaded once per process and finalized at exit.
struct MpiLibrary {
  using Handle = void *;
  int (*init)(int *, char ***) = nullptr;
  int (*initialized)(int *) = nullptr;
  int (*finalize)() = nullptr;
  int (*commRank)(Handle, int *) = nullptr;
  int (*commSize)(Handle, int *) = nullptr;
  int (*isend)(const void *, int, Handle, int, int, Handle, Handle *) = nullptr;
  int (*irecv)(void *, int, Handle, int, int, Handle, Handle *) = nullptr;
  int (*test)(Handle *, int *, void *) = nullptr;
  int (*getLibraryVersion)(char *, int *) = nullptr;
  Handle commWorld = nullptr, byte = nullptr;
  std::string path, version;
  /// Set when a wait timed out: messages are left in flight, and
  /// MPI_Finalize (which waits for the peers) must not run.
  bool broken = false;
};

MpiLibrary &mpi() {
  static MpiLibrary library;
  return library;
}

void finalizeAtExit() {
  MpiLibrary &m = mpi();
  if (!m.broken)
    m.finalize();
}

template <typename F> void bind(void *handle, const char *name, F &slot) {
  void *symbol = dlsym(handle, name);
  if (!symbol)
    throw RuntimeError(mpi().path + " has no " + name);
  slot = reinterpret_cast<F>(symbol);
}

/// Loads libmpi (EIN_MPI_LIBRARY, else libmpi.so.40 or libmpi.so) and calls
/// MPI_Init, once; throws RuntimeError on every call after a failure too.
void startMpi() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    MpiLibrary &m = mpi();
    std::vector<std::string> names;
    if (const char *chosen = std::getenv("EIN_MPI_LIBRARY"))
      names.push_back(chosen);
    else
      names = {"libmpi.so.40", "libmpi.so"};
    void *handle = nullptr;
    std::string tried;
    for (const std::string &name : names) {
      // Global: Open MPI's own plugins resolve libmpi's symbols.
      if ((handle = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL))) {
        m.path = name;
        break;
      }
      tried += std::string(tried.empty() ? "" : "; ") + dlerror();
    }
    if (!handle) {
      failure = "cannot load MPI, which runs the ranks of a CPU bundle (" +
                tried +
                "): install Open MPI (Debian: apt-get install openmpi-bin) "
                "or name its libmpi.so in EIN_MPI_LIBRARY";
      return;
    }
    try {
      if (!dlsym(handle, "ompi_mpi_comm_world"))
        throw RuntimeError(m.path +
                           " is not Open MPI's libmpi (no "
                           "ompi_mpi_comm_world); the runtime speaks Open "
                           "MPI's ABI, not MPICH's");
      bind(handle, "MPI_Init", m.init);
      bind(handle, "MPI_Initialized", m.initialized);
      bind(handle, "MPI_Finalize", m.finalize);
      bind(handle, "MPI_Comm_rank", m.commRank);
      bind(handle, "MPI_Comm_size", m.commSize);
      bind(handle, "MPI_Isend", m.isend);
      bind(handle, "MPI_Irecv", m.irecv);
      bind(handle, "MPI_Test", m.test);
      bind(handle, "MPI_Get_library_version", m.getLibraryVersion);
      m.commWorld = dlsym(handle, "ompi_mpi_comm_world");
      m.byte = dlsym(handle, "ompi_mpi_byte");
      if (!m.byte)
        throw RuntimeError(m.path + " has no ompi_mpi_byte");
      char version[4096] = {};
      int length = 0;
      m.getLibraryVersion(version, &length);
      m.version.assign(version, strnlen(version, sizeof version));
      m.version = m.version.substr(0, m.version.find_first_of(",\n"));
      int already = 0;
      m.initialized(&already);
      if (!already) {
        if (m.init(nullptr, nullptr) != 0)
          throw RuntimeError("MPI_Init failed");
        std::atexit(finalizeAtExit);
      }
    } catch (const RuntimeError &e) {
      failure = e.what();
    }
  });
  if (!failure.empty())
    throw RuntimeError(failure);
}

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(int rank, int size, double timeout)
      : rankIndex(rank), worldSize(size), timeout(timeout) {}

  int rank() const override { return rankIndex; }
  int size() const override { return worldSize; }
  std::string engine() const override {
    return mpi().version + " (" + mpi().path + ")";
  }

  void send(int peer, const void *data, size_t bytes,
            const std::string &what) override {
    transfer(peer, const_cast<void *>(data), bytes, what, /*sending=*/true);
  }

  void receive(int peer, void *data, size_t bytes,
               const std::string &what) override {
    transfer(peer, data, bytes, what, /*sending=*/false);
  }

  void abandon() override { mpi().broken = true; }

private:
  int rankIndex, worldSize;
  double timeout;
  static constexpr int kTag = 7;
  static constexpr size_t kChunk = size_t(1) << 30;

  void transfer(int peer, void *data, size_t bytes, const std::string &what,
                bool sending) {
    MpiLibrary &m = mpi();
    if (m.broken)
      throw RuntimeError(prefix() + "MPI is unusable after an earlier "
                                    "timeout");
    auto *p = static_cast<unsigned char *>(data);
    // MPI counts are ints: large messages go in chunks, in order.
    size_t done = 0;
    do {
      size_t n = std::min(kChunk, bytes - done);
      void *request = nullptr;
      int status = sending ? m.isend(p + done, static_cast<int>(n), m.byte,
                                     peer, kTag, m.commWorld, &request)
                           : m.irecv(p + done, static_cast<int>(n), m.byte,
                                     peer, kTag, m.commWorld, &request);
      if (status != 0)
        throw RuntimeError(prefix() + (sending ? "MPI_Isend" : "MPI_Irecv") +
                           " to rank " + std::to_string(peer) + " failed (" +
                           what + ")");
      wait(request, peer, what, sending);
      done += n;
    } while (done < bytes);
  }

  /// Polls `request` until it completes or the rank timeout passes.
  void wait(void *&request, int peer, const std::string &what, bool sending) {
    MpiLibrary &m = mpi();
    bool completed = pollUntil(timeout, [&] {
      int done = 0;
      if (m.test(&request, &done, nullptr) != 0)
        throw RuntimeError(prefix() + "MPI_Test failed waiting for rank " +
                           std::to_string(peer) + " (" + what + ")");
      return done != 0;
    });
    if (completed)
      return;
    m.broken = true;
    throw RuntimeError(prefix() + "waited " + secondsText(timeout) + " s to " +
                       (sending ? "send to" : "receive from") + " rank " +
                       std::to_string(peer) + " (" + what + "): rank " +
                       std::to_string(peer) +
                       " has died or hangs (EIN_RANK_TIMEOUT sets the wait)");
  }
};

} // namespace

std::unique_ptr<Communicator> openMpiCommunicator(const Launch &launch) {
  double timeout = rankTimeoutSeconds();
  startMpi();
  MpiLibrary &m = mpi();
  int rank = -1, size = 0;
  m.commRank(m.commWorld, &rank);
  m.commSize(m.commWorld, &size);
  if (rank != launch.rank || size != launch.size)
    throw RuntimeError(
        "MPI says this process is rank " + std::to_string(rank) + " of " +
        std::to_string(size) + ", but the launcher's variables say rank " +
        std::to_string(launch.rank) + " of " + std::to_string(launch.size));
  return std::make_unique<MpiCommunicator>(rank, size, timeout);
}

} // namespace ein
