#pragma once
// Shared by the bench_* apps: best-of-N wall clock and CPU timing.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>

namespace minidl::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// CPU time of the whole process (all threads), in seconds. On a busy machine a
/// single-threaded workload's CPU time is steadier than its wall time.
inline double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

struct Timing {
  double wall = std::numeric_limits<double>::infinity();  // the fastest repeat's wall time
  double cpu = std::numeric_limits<double>::infinity();   // the least CPU time of a repeat
};

/// Times `repeats` runs of f and keeps the minimum of each clock: on a shared machine the
/// minimum is the figure least disturbed by other processes.
template <typename F>
Timing best_timing(int repeats, F&& f) {
  Timing best;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    const double cpu_start = process_cpu_seconds();
    f();
    best.cpu = std::min(best.cpu, process_cpu_seconds() - cpu_start);
    best.wall = std::min(best.wall, seconds_since(start));
  }
  return best;
}

}  // namespace minidl::bench
