#include "minidl/diagnostics/tensor_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "minidl/tensor/error.hpp"

namespace minidl::diagnostics {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kMaxFloat = std::numeric_limits<float>::max();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Values are summed in float lanes within a block, each block's lanes then into double
// lanes: the passes' 16 lanes add at most 16 values each, so their rounding stays within
// 16 float epsilons of the block's sum of |x|.
constexpr int64_t kBlock = 256;

void check_not_empty(const Tensor& t, const char* what) {
  if (t.numel() == 0)
    throw Error(cat(what, ": expected a tensor with at least one element, got shape ", minidl::to_string(t.shape())));
}

// 16 float lanes, and 16 int32 lanes for masks and counts (GCC's and clang's vector
// extension: lane by lane, never reassociated, so the same bits on every machine; one
// AVX-512 register, two AVX2 ones).
constexpr int64_t kLanes = 16;
using Floats16 = float __attribute__((vector_size(64)));
using Ints16 = int32_t __attribute__((vector_size(64)));
using Floats8 = float __attribute__((vector_size(32)));
using Doubles8 = double __attribute__((vector_size(64)));

Floats16 load16(const float* x) {
  Floats16 v;
  std::memcpy(&v, x, sizeof v);
  return v;
}
Floats16 abs16(Floats16 v) { return Floats16(Ints16(v) & 0x7fffffff); }
// Lane by lane: mask ? a : b (a mask lane is all ones or zero).
Ints16 select16(Ints16 mask, Ints16 a, Ints16 b) { return (mask & a) | (~mask & b); }
Floats16 select16(Ints16 mask, Floats16 a, Floats16 b) { return Floats16(select16(mask, Ints16(a), Ints16(b))); }
// The 16 lanes in double, added in pairs (lane k and lane k + 8): a block's sum leaves its
// float lanes without a chain of 16 dependent adds.
Doubles8 widen_pairs(Floats16 v) {
  const Floats8 low = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const Floats8 high = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  return __builtin_convertvector(low, Doubles8) + __builtin_convertvector(high, Doubles8);
}
double lane_sum(Doubles8 v) {
  double sum = 0.0;
  for (int k = 0; k < 8; ++k) sum += v[k];
  return sum;
}
// True when every lane is finite.
bool all_finite(Floats16 v) {
  for (int k = 0; k < kLanes; ++k)
    if (!std::isfinite(v[k])) return false;
  return true;
}

// One pass's figures: the sum of all values (NaN or infinite when one is), the finite
// values' range and count, and how many have |x| > the threshold.
struct FirstPass {
  double sum = 0.0;
  float low = kInf, high = -kInf;  // of the finite values; low > high when none is finite
  int64_t finite = 0, saturated = 0;
};

// A block's sum in double, value by value: the block's float lanes overflowed or met an inf or NaN.
double double_sum(const float* x, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += double(x[i]);
  return sum;
}

// The first pass's lanes, 16 values a step. The range and the counts stay in the lanes
// across blocks (they are exact in any order; the lanes take in at most kLaneRun values
// before they are emptied into the totals), the sum leaves its float lanes for double
// ones at each block's end.
struct FirstPassLanes {
  Floats16 low = Floats16{} + kInf, high = Floats16{} - kInf;
  Ints16 finite = {}, saturated = {};
  Doubles8 sum = {};
  void empty_into(FirstPass& p) {
    p.sum += lane_sum(sum);
    for (int k = 0; k < kLanes; ++k) {
      p.low = std::min(p.low, low[k]);
      p.high = std::max(p.high, high[k]);
      p.finite += finite[k];
      p.saturated += saturated[k];
    }
    *this = FirstPassLanes();
  }
};

// Values the lanes take in before they are emptied: each lane's int32 counts one value in
// 16, so 2^30 at most.
constexpr int64_t kLaneRun = int64_t(1) << 34;

// The first pass over one block: 16 values a step, the values left over one by one.
void first_pass_block(const float* x, int64_t n, float saturation, FirstPassLanes& lanes, FirstPass& p) {
  Floats16 sum = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Floats16 v = load16(x + i), a = abs16(v);
    const Ints16 is_finite = a <= kMaxFloat;  // false for NaN too
    const Floats16 for_low = select16(is_finite, v, Floats16{} + kInf),
                   for_high = select16(is_finite, v, Floats16{} - kInf);
    sum += v;
    lanes.low = for_low < lanes.low ? for_low : lanes.low;  // one min instruction: no NaN here
    lanes.high = for_high > lanes.high ? for_high : lanes.high;
    lanes.finite -= is_finite;  // a true lane is -1
    lanes.saturated -= a > saturation;
  }
  if (all_finite(sum)) {
    lanes.sum += widen_pairs(sum);
    for (int64_t j = i; j < n; ++j) p.sum += double(x[j]);
  } else {
    p.sum += double_sum(x, n);
  }
  for (; i < n; ++i) {
    const float v = x[i];
    if (std::isfinite(v)) p.low = std::min(p.low, v), p.high = std::max(p.high, v), ++p.finite;
    p.saturated += std::abs(v) > saturation;
  }
}

FirstPass first_pass(const float* x, int64_t n, float saturation) {
  FirstPass p;
  FirstPassLanes lanes;
  for (int64_t start = 0; start < n; start += kBlock) {
    first_pass_block(x + start, std::min(kBlock, n - start), saturation, lanes, p);
    if ((start + kBlock) % kLaneRun == 0) lanes.empty_into(p);
  }
  lanes.empty_into(p);
  return p;
}

// The sum of squared deviations from `mean` over finite values whose largest |x| is
// `largest`. In float lanes on values scaled by a power of two that brings the largest to
// [0.5, 1) (exact; no square overflows or underflows where it matters), about the mean
// rounded to float; the deviations' own sum corrects for that rounding (the corrected
// two-pass formula, sum d^2 - (sum d)^2 / n).
double squared_deviations(const float* x, int64_t n, double mean, float largest) {
  int exponent = 0;
  std::frexp(largest, &exponent);
  const float scale = std::ldexp(1.0f, -std::clamp(exponent, -125, 125));
  const float centre = float(mean * double(scale));
  double squares = 0.0, deviations = 0.0;
  Doubles8 square_lanes = {}, deviation_lanes = {};
  for (int64_t start = 0; start < n; start += kBlock) {
    const float* b = x + start;
    const int64_t len = std::min(kBlock, n - start);
    Floats16 sq = {}, dev = {};
    int64_t i = 0;
    for (; i + kLanes <= len; i += kLanes) {
      const Floats16 d = load16(b + i) * scale - centre;
      sq += d * d;
      dev += d;
    }
    square_lanes += widen_pairs(sq);
    deviation_lanes += widen_pairs(dev);
    for (; i < len; ++i) {
      const float d = b[i] * scale - centre;
      squares += double(d * d);
      deviations += double(d);
    }
  }
  squares += lane_sum(square_lanes);
  deviations += lane_sum(deviation_lanes);
  const double corrected = std::max(0.0, squares - deviations * deviations / double(n));
  return corrected / (double(scale) * double(scale));
}

// Mean and std with Bessel's correction from the first pass's figures and a second pass.
// A non-finite value makes the mean NaN or infinite and the std NaN (as torch.mean and
// torch.std); equal values give their value and 0 exactly.
std::pair<double, double> moments(const float* x, int64_t n, const FirstPass& p) {
  if (p.finite == n && p.low == p.high) return {double(p.low), n > 1 ? 0.0 : kNaN};
  const double mean = p.sum / double(n);
  if (p.finite < n || n < 2) return {mean, kNaN};
  const float largest = std::max(std::abs(p.low), std::abs(p.high));
  return {mean, std::sqrt(squared_deviations(x, n, mean, largest) / double(n - 1))};
}

// The smallest float >= v: a float x is >= v exactly when it is >= this.
float float_at_or_above(double v) {
  const float f = float(v);
  return double(f) < v ? std::nextafter(f, kInf) : f;
}

// Counts of the finite values in `bins` equal-width bins over [low, high]; values below
// low count in the first bin, the top edge and values above in the last. A value's bin is
// decided against the bins' edges exactly (edge j = low + j * width in double, the edges
// the bins' names print), so a value on an edge is in the bin above it on every machine:
// the bin its position guesses, moved until its edges hold the value.
std::vector<int64_t> bin_counts(const float* x, int64_t n, double low, double high, int64_t bins, int64_t& counted) {
  const double width = (high - low) / double(bins), per_width = double(bins) / (high - low);
  std::vector<float> edges(size_t(bins) + 1);  // (bins + 1): edges[j] <= x < edges[j + 1] in bin j
  edges.front() = -kInf;
  for (int64_t j = 1; j < bins; ++j) edges[size_t(j)] = float_at_or_above(low + double(j) * width);
  edges.back() = kInf;
  std::vector<int64_t> counts(size_t(bins), 0);
  counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (!std::isfinite(v)) continue;
    auto j = size_t(std::clamp((double(v) - low) * per_width, 0.0, double(bins - 1)));
    while (v < edges[j]) --j;
    while (v >= edges[j + 1]) ++j;
    ++counts[j];
    ++counted;
  }
  return counts;
}

Histogram histogram_of(const float* x, int64_t n, const FirstPass& p, const HistogramOptions& options) {
  Histogram h;
  if (options.range > 0.0f) {
    h.low = -double(options.range);
    h.high = double(options.range);
  } else if (p.low <= p.high) {
    h.low = double(p.low);
    h.high = double(p.high);
  }  // else no finite value: [0, 0], widened below
  if (h.low == h.high) h.low -= 0.5, h.high += 0.5;
  int64_t counted = 0;
  const std::vector<int64_t> counts = bin_counts(x, n, h.low, h.high, options.bins, counted);
  const double width = (h.high - h.low) / double(options.bins);
  h.density.resize(counts.size());
  for (size_t b = 0; b < counts.size(); ++b)
    h.density[b] = counted > 0 ? double(counts[b]) / (double(counted) * width) : 0.0;
  return h;
}

// The edges are floats, which hold whole numbers exactly up to 2^24: more bins than that
// could not all be told apart.
constexpr int64_t kMaxBins = int64_t(1) << 24;

void check_bins(int64_t bins) {
  if (bins < 1) throw Error(cat("histogram: expected at least 1 bin, got ", bins));
  if (bins > kMaxBins) throw Error(cat("histogram: expected at most ", kMaxBins, " bins, got ", bins));
}

}  // namespace

double standard_deviation(const Tensor& t) {
  check_not_empty(t, "standard_deviation");
  return moments(t.data(), t.numel(), first_pass(t.data(), t.numel(), kInf)).second;
}

Histogram histogram(const Tensor& t, const HistogramOptions& options) {
  check_not_empty(t, "histogram");
  check_bins(options.bins);
  return histogram_of(t.data(), t.numel(), first_pass(t.data(), t.numel(), kInf), options);
}

TensorStats describe(const Tensor& t, float saturation, const HistogramOptions& options) {
  check_not_empty(t, "describe");
  check_bins(options.bins);
  const float* x = t.data();
  const int64_t n = t.numel();
  const FirstPass p = first_pass(x, n, saturation);
  TensorStats s;
  std::tie(s.mean, s.std) = moments(x, n, p);
  s.saturated = double(p.saturated) / double(n);
  s.histogram = histogram_of(x, n, p, options);
  return s;
}

}  // namespace minidl::diagnostics
