#pragma once
// Deterministic, vectorized sums for the norm kernels: float arithmetic in 8-float
// vectors (one AVX register) where the work is, double only where short float sums meet.
// Private to the library, which is compiled for the machine's CPU: its inline functions
// pass vectors in AVX registers, and code built without AVX must not share them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace minidl::kernels {

/// 8 floats in one register (GCC/Clang vector extension: +, -, * work lane by lane and
/// broadcast a float operand).
using Floats8 = float __attribute__((vector_size(32)));

/// p[0 .. 7] as Floats8.
inline Floats8 load8(const float* p) {
  Floats8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// The square root of each lane, correctly rounded as std::sqrt: one instruction on AVX.
inline Floats8 sqrt8(Floats8 v) {
#if defined(__AVX__)
  return Floats8(_mm256_sqrt_ps(__m256(v)));
#else
  for (int k = 0; k < 8; ++k) v[k] = std::sqrt(v[k]);
  return v;
#endif
}

/// Loads for the sums' element functions: `at(p)` is p[i .. i + 7] as Floats8 ...
struct VectorAt {
  int64_t i;
  Floats8 operator()(const float* p) const {
    Floats8 v;
    std::memcpy(&v, p + i, sizeof v);
    return v;
  }
};
/// ... or p[i] alone, for the last values of a run.
struct ScalarAt {
  int64_t i;
  float operator()(const float* p) const { return p[i]; }
};

/// The 8 lanes of v added in a fixed order.
inline float lane_total(Floats8 v) { return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7])); }

/// lane_total of each of 8 vectors at once: out[k] = lane_total(v[k]), the same additions in
/// the same order (so the same bits), in 3 rounds of shuffles and adds for all 8 instead of
/// 7 scalar steps each. Round 1 adds lanes i and i + 4, round 2 lanes i and i + 2 of that,
/// round 3 the last two.
inline Floats8 lane_totals8(const Floats8* v) {
  Floats8 u[4], w[2];  // u[p]: rows 2p, 2p + 1 (4 lanes each); w[q]: rows 4q..4q + 3 (2 lanes each)
  for (int p = 0; p < 4; ++p)
    u[p] = __builtin_shufflevector(v[2 * p], v[2 * p + 1], 0, 1, 2, 3, 8, 9, 10, 11) +
           __builtin_shufflevector(v[2 * p], v[2 * p + 1], 4, 5, 6, 7, 12, 13, 14, 15);
  // w[q] holds rows (4q, 4q + 2, 4q + 1, 4q + 3), two lanes each
  for (int q = 0; q < 2; ++q)
    w[q] = __builtin_shufflevector(u[2 * q], u[2 * q + 1], 0, 1, 8, 9, 4, 5, 12, 13) +
           __builtin_shufflevector(u[2 * q], u[2 * q + 1], 2, 3, 10, 11, 6, 7, 14, 15);
  return __builtin_shufflevector(w[0], w[1], 0, 4, 2, 6, 8, 12, 10, 14) +
         __builtin_shufflevector(w[0], w[1], 1, 5, 3, 7, 9, 13, 11, 15);
}

/// Values one float accumulator lane takes before it is added into its double total: a
/// float sum of at most this many terms stays within about 1e-6 of exact.
constexpr int64_t kLaneRun = 64;

/// Adds the K values f(at, v) writes for i in [start, end) into lanes: the 8-value vectors
/// alternately to low and high (two registers, so consecutive adds do not wait on each
/// other), the values left over to tail.
template <int K, typename F>
inline void add_to_lanes(int64_t start, int64_t end, F f, Floats8* low, Floats8* high, float* tail) {
  int64_t i = start;
  for (; i + 16 <= end; i += 16) {
    Floats8 a[K], b[K];
    f(VectorAt{i}, a);
    f(VectorAt{i + 8}, b);
    for (int j = 0; j < K; ++j) {
      low[j] += a[j];
      high[j] += b[j];
    }
  }
  if (i + 8 <= end) {
    Floats8 a[K];
    f(VectorAt{i}, a);
    for (int j = 0; j < K; ++j) low[j] += a[j];
    i += 8;
  }
  for (; i < end; ++i) {
    float a[K];
    f(ScalarAt{i}, a);
    for (int j = 0; j < K; ++j) tail[j] += a[j];
  }
}

/// K running sums fed in runs. add(n, f) adds, for i in [0, n), the K values that
/// f(at, v) writes to v[0..K), where `at` loads the element(s) at i (f is written once for
/// both: `[&](auto at, auto* v) { v[0] = at(x) - shift; }`). Values go to 16 float lanes
/// and a scalar tail (add_to_lanes), flushed into double totals every kLaneRun values. The order of every addition
/// depends only on the run lengths: the same bits every time, whatever the thread count.
template <int K>
class LaneSums {
 public:
  template <typename F>
  void add(int64_t n, F f) {
    for (int64_t start = 0; start < n; start += 16 * kLaneRun) {
      const int64_t end = n - start < 16 * kLaneRun ? n : start + 16 * kLaneRun;
      add_to_lanes<K>(start, end, f, low_, high_, tail_);
      steps_ += (end - start + 15) / 16;
      if (steps_ >= kLaneRun) flush();
    }
  }

  /// Sum j of everything added so far.
  double total(int j) {
    if (steps_ > 0) flush();
    return totals_[j];
  }

 private:
  void flush() {
    for (int j = 0; j < K; ++j) {
      totals_[j] += double(lane_total(low_[j] + high_[j]) + tail_[j]);
      low_[j] = high_[j] = Floats8{};
      tail_[j] = 0.0f;
    }
    steps_ = 0;
  }

  Floats8 low_[K] = {}, high_[K] = {};
  float tail_[K] = {};
  double totals_[K] = {};
  int64_t steps_ = 0;  // values per lane since the last flush
};

/// sums[j] = the sum over i in [0, n) of the values f(at, v) writes to v[j], as one run of
/// LaneSums would add them (the same bits), without its bookkeeping when the run is short
/// (one flush): a row of the lesson's 64 values pays for little else.
template <int K, typename F>
inline void lane_sums(int64_t n, F f, double* sums) {
  if (n > 16 * kLaneRun) {
    LaneSums<K> lanes;
    lanes.add(n, f);
    for (int j = 0; j < K; ++j) sums[j] = lanes.total(j);
    return;
  }
  Floats8 low[K] = {}, high[K] = {};
  float tail[K] = {};
  add_to_lanes<K>(0, n, f, low, high, tail);
  for (int j = 0; j < K; ++j) sums[j] = 0.0 + double(lane_total(low[j] + high[j]) + tail[j]);
}

/// lane_sums for up to 8 rows at once: sums[j][k] is what lane_sums<K> gives for row k <
/// count, where f(k, at, v) writes row k's values (the same bits), and 0 for k >= count.
/// The rows' horizontal sums share one lane_totals8 per j, so a group of short rows (the
/// lesson's 64 values) does not pay 7 dependent steps per row and sum.
template <int K, typename F>
inline void lane_sums8(int64_t count, int64_t n, F f, double (*sums)[8]) {
  // Long rows (their own flushes: the horizontal sums cost nothing beside them) or a few
  // rows (a batch of one: the 8-row shuffles would be most of the work): row by row.
  if (n > 16 * kLaneRun || count < 4) {
    for (int64_t k = 0; k < 8; ++k) {
      double row[K] = {};
      if (k < count)
        lane_sums<K>(
            n, [&](auto at, auto* v) { f(k, at, v); }, row);
      for (int j = 0; j < K; ++j) sums[j][k] = row[j];
    }
    return;
  }
  Floats8 lanes[K][8];  // per sum, per row: low + high (zeros past count: cleared row by row, not all)
  float tail[K][8];
  for (int64_t k = count; k < 8; ++k)
    for (int j = 0; j < K; ++j) {
      lanes[j][k] = Floats8{};
      tail[j][k] = 0.0f;
    }
  for (int64_t k = 0; k < count; ++k) {
    Floats8 low[K] = {}, high[K] = {};
    float t[K] = {};
    add_to_lanes<K>(
        0, n, [&](auto at, auto* v) { f(k, at, v); }, low, high, t);
    for (int j = 0; j < K; ++j) {
      lanes[j][k] = low[j] + high[j];
      tail[j][k] = t[j];
    }
  }
  for (int j = 0; j < K; ++j) {
    // Rows of whole vectors have no tail: adding zeros held in a register spares the load
    // of 8 floats just stored one by one (a load that waits for the stores to drain).
    const Floats8 totals = lane_totals8(lanes[j]) + (n % 8 == 0 ? Floats8{} : load8(tail[j]));
    for (int k = 0; k < 8; ++k) sums[j][k] = 0.0 + double(totals[k]);
  }
}

/// The sum over i in [0, n) of the value f(at) returns (see LaneSums).
template <typename F>
inline double lane_sum(int64_t n, F f) {
  double sum;
  lane_sums<1>(
      n, [&](auto at, auto* v) { v[0] = f(at); }, &sum);
  return sum;
}

/// The two sums of each of `entries` entries over chunks' partials, (chunks, 2, entries) of
/// float or double: chunks added in order in double (the same bits whatever the thread
/// count), entries in blocks so the loop across them vectorizes. Only a block's `width`
/// accumulators are cleared: a (64, 64) call must not pay for clearing 2 x 256 doubles.
/// done(e, first sum, second sum) takes each entry's.
template <typename T, typename F>
inline void sum_chunk_partials(const T* partials, int64_t chunks, int64_t entries, F done) {
  constexpr int64_t kBlock = 256;
  for (int64_t e0 = 0; e0 < entries; e0 += kBlock) {
    const int64_t width = std::min(kBlock, entries - e0);
    double first[kBlock], second[kBlock];  // (width)
    std::fill_n(first, width, 0.0);
    std::fill_n(second, width, 0.0);
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      const T* p = partials + chunk * 2 * entries + e0;  // (width), then the second sums at p + entries
      for (int64_t k = 0; k < width; ++k) {
        first[k] += double(p[k]);
        second[k] += double(p[entries + k]);
      }
    }
    for (int64_t k = 0; k < width; ++k) done(e0 + k, first[k], second[k]);
  }
}

}  // namespace minidl::kernels
