//===- ranks.h - One process per node: launchers and engines ----*- C++ -*-===//
//
// Internal to the runtime. A bundle for K nodes (manifest.nodes) runs as K
// processes, rank r owning node r's devices, when a launcher started K of
// them; the ranks talk through an existing engine, never a transport of our
// own: MPI (Open MPI's libmpi, loaded at run time, so nothing here links it
// and a machine without it runs single-process bundles as before). Every
// blocking call between ranks waits at most EIN_RANK_TIMEOUT seconds (60 by
// default) and then fails naming the rank it waited for.
// docs/distributed.md describes the whole path.
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_RANKS_H
#define EIN_LIB_RANKS_H

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ein {

/// How this process was started, from its environment.
struct Launch {
  enum class Kind {
    None,     // no launcher: one process runs every node
    Mpi,      // Open MPI's mpirun (OMPI_COMM_WORLD_RANK, ..._SIZE)
    Torchrun, // RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
  };
  Kind kind = Kind::None;
  int rank = 0, size = 1, localRank = 0;
  std::string masterAddress;
  int masterPort = 0;
};

/// Reads the launcher's variables. Open MPI's win over torchrun's (mpirun
/// may pass a user's RANK through); another MPI's launcher (PMI_RANK,
/// PMIX_RANK without Open MPI's) is refused, as are malformed values.
/// Throws RuntimeError.
Launch detectLaunch();

/// "mpirun" or "torchrun-style variables".
const char *launchName(Launch::Kind kind);

/// EIN_RANK_TIMEOUT, in seconds (60 when unset); throws RuntimeError when
/// it is not a positive number.
double rankTimeoutSeconds();

/// Calls `ready` until it returns true (then returns true) or `seconds`
/// have passed (then false): spinning at first, then sleeping up to a
/// millisecond between calls. Every bounded wait of the ranks' (MPI's
/// requests, the CUDA backend's NCCL streams) polls through it.
bool pollUntil(double seconds, const std::function<bool()> &ready);
/// `seconds` as messages print it ("60", "2.5").
std::string secondsText(double seconds);

/// Byte messages between the ranks of one run. Messages between two ranks
/// arrive in the order they were sent. Every call waits at most the rank
/// timeout, then throws RuntimeError naming the rank it waited for and
/// `what` it waited for; a communicator that timed out is broken, and the
/// process then ends without waiting for its peers.
class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// The engine, for logs ("Open MPI v4.1.4 (libmpi.so.40)").
  virtual std::string engine() const = 0;
  virtual void send(int peer, const void *data, size_t bytes,
                    const std::string &what) = 0;
  virtual void receive(int peer, void *data, size_t bytes,
                       const std::string &what) = 0;

  /// Collectives over send and receive, rooted at rank 0, called by every
  /// rank in the same order.
  /// At rank 0, every rank's `mine` by rank; elsewhere, nothing.
  std::vector<std::string> gather(const std::string &mine,
                                  const std::string &what);
  /// Rank 0's `text`, on every rank.
  std::string broadcast(const std::string &text, const std::string &what);
  /// The largest of every rank's `value`, on every rank.
  double maximum(double value, const std::string &what);
  /// Returns once every rank has called it.
  void barrier(const std::string &what);
  /// Takes the run for broken (a wait elsewhere, such as a GPU transport's,
  /// gave a peer up for dead): messages may be left in flight, and the
  /// process ends without waiting for its peers.
  virtual void abandon() = 0;

  /// "rank R of N: " for messages.
  std::string prefix() const;
};

/// How a CUDA bundle's ranks move its transfers between nodes
/// (cuda_backend.cpp), as rank 0 decides it.
struct GpuTransport {
  enum class Kind { Mpi, Nccl, Refused } kind = Kind::Mpi;
  /// Why this one, for describe(); for Refused, the error.
  std::string why;
};

/// The transport for `asked` (EIN_TRANSPORT: "auto", "mpi" or "nccl") given
/// `gpus`, per rank, its devices' GPU identities (`idBytes` bytes each, in
/// device order; devicesPerNode of them). NCCL (one communicator rank per
/// bundle device) refuses two ranks on one GPU: "nccl" is then refused,
/// naming the first two devices that share one, and "auto" takes MPI,
/// saying so; "auto" takes NCCL where every device has a GPU of its own.
/// (Whether NCCL loads is for the caller.)
GpuTransport chooseGpuTransport(const std::string &asked,
                                const std::vector<std::string> &gpus,
                                size_t idBytes, int devicesPerNode);

/// Starts MPI (once per process; it is finalized at exit) and returns the
/// world communicator, which must have `launch.size` ranks with this
/// process at `launch.rank`. Throws RuntimeError when libmpi cannot be
/// loaded or is not Open MPI's.
std::unique_ptr<Communicator> openMpiCommunicator(const Launch &launch);

} // namespace ein

#endif // EIN_LIB_RANKS_H
