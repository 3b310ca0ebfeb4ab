#pragma once
// The norm kernels' loop over independent pieces of work (rows, chunks of a batch).
#include <cstdint>

namespace minidl::kernels {

/// Calls f(i) for i in [0, n): on the OpenMP threads when `parallel`, else as a plain loop
/// on this thread. The plain loop skips OpenMP entirely: even `parallel for if (false)`
/// sets up a team, a cost that showed on the lesson's (64, 64) calls. Every f(i) must
/// write its own outputs, so the result is the same either way.
template <typename F>
inline void parallel_for(int64_t n, bool parallel, F f) {
  if (!parallel || n < 2) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) f(i);
}

}  // namespace minidl::kernels
