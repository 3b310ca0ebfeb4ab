#pragma once
// Sums in double that the compiler vectorizes: kLanes interleaved partial sums, combined
// in a fixed order at the end. A single running double is a chain of dependent adds (one
// value per 4 cycles); the lanes are independent, and the order never depends on the
// thread count, so the bits stay the same.
#include <cstdint>

namespace minidl::kernels {

constexpr int64_t kLanes = 8;

/// Sum of f(i) for i in [0, n), f returning double.
template <typename F>
inline double lane_sum(int64_t n, F f) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] += f(i + j);
  for (int64_t j = 0; i < n; ++i, ++j) lanes[j] += f(i);
  double total = 0.0;
  for (double lane : lanes) total += lane;
  return total;
}

/// Two sums in one pass: a += fa(i), b += fb(i) for i in [0, n).
template <typename FA, typename FB>
inline void lane_sum2(int64_t n, FA fa, FB fb, double& a, double& b) {
  double la[kLanes] = {}, lb[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) {
      la[j] += fa(i + j);
      lb[j] += fb(i + j);
    }
  for (int64_t j = 0; i < n; ++i, ++j) {
    la[j] += fa(i);
    lb[j] += fb(i);
  }
  a = b = 0.0;
  for (int64_t j = 0; j < kLanes; ++j) a += la[j], b += lb[j];
}

}  // namespace minidl::kernels
