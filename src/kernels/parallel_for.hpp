#pragma once
// One loop, on OpenMP threads only when it is long enough: `#pragma omp parallel for if (false)`
// still enters the OpenMP runtime (a team of one), which costs more than the whole loop over
// a (64, 64) tensor (docs/benchmarks.md, "What makes it fast"). Small loops must not pay it.
#include <algorithm>
#include <cstdint>

namespace minidl::kernels {

/// Elements of work past which a loop is worth a team of OpenMP threads.
constexpr int64_t kParallelElements = 1 << 16;

/// Values per task of an element-wise update split over the threads (the optimizers' steps).
constexpr int64_t kValuesPerTask = 1 << 14;

/// The grain of a loop whose iterations each cost about `work` elements: iterations past it
/// make kParallelElements of work in all. At least 1, so a single iteration stays serial.
constexpr int64_t grain_for(int64_t work) {
  return std::max<int64_t>(1, kParallelElements / std::max<int64_t>(1, work));
}

/// Calls f(i) for i in [0, n): split statically over OpenMP's threads when n > grain, else
/// a plain loop in the calling thread. Results must not depend on which (each i on its own).
template <typename F>
inline void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n > grain) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  for (int64_t i = 0; i < n; ++i) f(i);
}

/// Calls f(begin, count) for the consecutive chunks of at most `chunk` values of [0, n), in
/// parallel (parallel_for). Each chunk on its own: the same bits on any number of threads.
template <typename F>
inline void parallel_chunks(int64_t n, int64_t chunk, F&& f) {
  parallel_for((n + chunk - 1) / chunk, grain_for(chunk),
               [&](int64_t c) { f(c * chunk, std::min(chunk, n - c * chunk)); });
}

}  // namespace minidl::kernels
