//===- parallel.h - Element loops over the host's cores ---------*- C++ -*-===//
//
// Internal to the runtime. Drawing, encoding and decoding a benchmark's
// inputs touch hundreds of millions of elements, each a function of its
// index alone; one thread per core does them in a fraction of the time (a
// w2 device-block program's 377M drawn elements took 7 s on the GPU
// machine's 16 cores with encoding on one thread).
//
//===----------------------------------------------------------------------===//

#ifndef EIN_LIB_PARALLEL_H
#define EIN_LIB_PARALLEL_H

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace ein {

/// The threads `work` elements' worth of work gets: one per core, and one
/// per million elements at most.
inline int64_t threadsFor(double work) {
  return std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()),
                           static_cast<int64_t>(work / double(1 << 20)));
}

/// Calls `body(first, end)` on disjoint ranges covering [0, count), on up
/// to one thread per core (one range per million elements' worth of work at
/// most, an item being `itemWork` elements' worth; small counts run on the
/// caller's thread). `body` must touch only its range.
template <typename Body>
void parallelFor(int64_t count, const Body &body, double itemWork = 1) {
  int64_t threads =
      std::min<int64_t>(threadsFor(double(count) * itemWork), count);
  if (threads <= 1) {
    body(int64_t(0), count);
    return;
  }
  std::vector<std::thread> workers;
  for (int64_t w = 0; w < threads; ++w)
    workers.emplace_back(body, count * w / threads, count * (w + 1) / threads);
  for (std::thread &worker : workers)
    worker.join();
}

} // namespace ein

#endif // EIN_LIB_PARALLEL_H
