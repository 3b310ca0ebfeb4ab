#pragma once
// Shared by the bench_* apps: best-of-N wall clock timing and the "GEMM floor", the time
// the sgemm calls a workload made take when replayed alone, same shapes, same process.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <limits>
#include <vector>

#include "minidl/kernels/gemm.hpp"

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

/// The fastest wall time of `repeats` runs of f, in seconds.
template <typename F>
double best_seconds(int repeats, F&& f) {
  return best_timing(repeats, f).wall;
}

/// Runs f once under a GemmRecorder and returns the sgemm calls it made.
template <typename F>
std::vector<kernels::GemmCall> record_gemm_calls(F&& f) {
  kernels::GemmRecorder recorder;
  f();
  return recorder.calls();
}

/// Replays `calls` through kernels::gemm on buffers big enough for the largest of them
/// (small values, so no denormals or infinities), best of `repeats`.
inline Timing gemm_floor(const std::vector<kernels::GemmCall>& calls, int repeats) {
  size_t a_size = 1, b_size = 1, c_size = 1;
  for (const kernels::GemmCall& c : calls) {
    a_size = std::max(a_size, size_t(c.m * c.k));
    b_size = std::max(b_size, size_t(c.k * c.n));
    c_size = std::max(c_size, size_t(c.m * c.n));
  }
  std::vector<float> a(a_size, 0.01f), b(b_size, 0.02f), out(c_size, 0.0f);
  return best_timing(repeats, [&] {
    for (const kernels::GemmCall& c : calls)
      kernels::gemm(c.transpose_a, c.transpose_b, c.m, c.n, c.k, 1.0f, a.data(), b.data(), c.beta, out.data());
  });
}

inline double gemm_flops(const std::vector<kernels::GemmCall>& calls) {
  double flops = 0.0;
  for (const kernels::GemmCall& c : calls) flops += 2.0 * double(c.m) * double(c.n) * double(c.k);
  return flops;
}

}  // namespace minidl::bench
