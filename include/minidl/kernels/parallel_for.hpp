#pragma once
// One loop, on OpenMP threads only when asked: `#pragma omp parallel for if (false)` still
// enters the OpenMP runtime (a team of one), about 0.6-0.9 us a loop here, more than the
// whole loop over a (64, 64) tensor costs. Small loops must not pay it.
#include <cstdint>

namespace minidl::kernels {

/// Calls f(i) for i in [0, n): split statically over OpenMP's threads when `parallel`,
/// else a plain loop in the calling thread.
template <typename F>
inline void parallel_for(int64_t n, bool parallel, F&& f) {
  if (parallel) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  for (int64_t i = 0; i < n; ++i) f(i);
}

}  // namespace minidl::kernels
