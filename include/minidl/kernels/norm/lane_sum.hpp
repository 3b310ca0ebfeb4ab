#pragma once
// A deterministic, vectorizable sum for the norm kernels.
#include <cstdint>

namespace minidl::kernels {

/// Sum of f(i) for i in [0, n), in double, over 8 interleaved accumulators combined in a
/// fixed order: one dependency chain per lane instead of one for the whole sum (so the
/// compiler can vectorize it), and the same bits on every run and thread count.
template <typename F>
inline double lane_sum(int64_t n, F f) {
  constexpr int64_t kLanes = 8;
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t k = 0; k < kLanes; ++k) acc[k] += double(f(i + k));
  for (int64_t k = 0; i < n; ++i, ++k) acc[k] += double(f(i));
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace minidl::kernels
