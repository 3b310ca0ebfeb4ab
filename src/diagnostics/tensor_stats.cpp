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
// Values are summed in float lanes within a block, each block's lanes then in double: the
// passes' 16 lanes (two sets of 8, so that no add waits on the one before) add at most 16
// values each, so their rounding stays within 16 float epsilons of the block's sum of |x|.
constexpr int64_t kBlock = 256;

void check_not_empty(const Tensor& t, const char* what) {
  if (t.numel() == 0)
    throw Error(cat(what, ": expected a tensor with at least one element, got shape ", minidl::to_string(t.shape())));
}

// 8 float lanes, and 8 int32 lanes for masks and counts (GCC's and clang's vector
// extension: lane by lane, never reassociated, so the same bits on every machine).
using Floats8 = float __attribute__((vector_size(32)));
using Ints8 = int32_t __attribute__((vector_size(32)));

Floats8 load8(const float* x) {
  Floats8 v;
  std::memcpy(&v, x, sizeof v);
  return v;
}
Floats8 abs8(Floats8 v) { return Floats8(Ints8(v) & 0x7fffffff); }
// Lane by lane: mask ? a : b (a mask lane is all ones or zero).
Floats8 select8(Ints8 mask, Floats8 a, Floats8 b) { return Floats8((mask & Ints8(a)) | (~mask & Ints8(b))); }

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

// The first pass's lanes: 16 values a step in two sets of 8. The range and the counts stay
// in the lanes across blocks (they are exact in any order; a lane counts at most kLaneRun
// values before it is emptied into the totals), the sum leaves them at each block's end.
struct FirstPassLanes {
  Floats8 low[2], high[2];
  Ints8 finite[2] = {}, saturated[2] = {};
  FirstPassLanes() {
    for (int s = 0; s < 2; ++s) low[s] = Floats8{} + kInf, high[s] = Floats8{} - kInf;
  }
  void empty_into(FirstPass& p) {
    for (int s = 0; s < 2; ++s)
      for (int k = 0; k < 8; ++k) {
        p.low = std::min(p.low, low[s][k]);
        p.high = std::max(p.high, high[s][k]);
        p.finite += finite[s][k];
        p.saturated += saturated[s][k];
      }
    *this = FirstPassLanes();
  }
};

// Values the lanes take in before they are emptied: each lane's int32 counts one value in
// 16, so 2^30 at most.
constexpr int64_t kLaneRun = int64_t(1) << 34;

// The first pass over one block: 16 values a step, the values left over one by one.
void first_pass_block(const float* x, int64_t n, float saturation, FirstPassLanes& lanes, FirstPass& p) {
  Floats8 sum[2] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int s = 0; s < 2; ++s) {
      const Floats8 v = load8(x + i + 8 * s), a = abs8(v);
      const Ints8 is_finite = a <= kMaxFloat;  // false for NaN too
      const Floats8 for_low = select8(is_finite, v, Floats8{} + kInf),
                    for_high = select8(is_finite, v, Floats8{} - kInf);
      sum[s] += v;
      lanes.low[s] = select8(for_low < lanes.low[s], for_low, lanes.low[s]);
      lanes.high[s] = select8(for_high > lanes.high[s], for_high, lanes.high[s]);
      lanes.finite[s] -= is_finite;  // a true lane is -1
      lanes.saturated[s] -= a > saturation;
    }
  double block_sum = 0.0;
  for (int s = 0; s < 2; ++s)
    for (int k = 0; k < 8; ++k) block_sum += double(sum[s][k]);
  for (; i < n; ++i) {
    const float v = x[i];
    block_sum += double(v);
    if (std::isfinite(v)) p.low = std::min(p.low, v), p.high = std::max(p.high, v), ++p.finite;
    p.saturated += std::abs(v) > saturation;
  }
  p.sum += std::isfinite(block_sum) ? block_sum : double_sum(x, n);
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
  for (int64_t start = 0; start < n; start += kBlock) {
    const float* b = x + start;
    const int64_t len = std::min(kBlock, n - start);
    Floats8 sq[2] = {}, dev[2] = {};
    int64_t i = 0;
    for (; i + 16 <= len; i += 16)
      for (int s = 0; s < 2; ++s) {
        const Floats8 d = load8(b + i + 8 * s) * scale - centre;
        sq[s] += d * d;
        dev[s] += d;
      }
    for (int s = 0; s < 2; ++s)
      for (int k = 0; k < 8; ++k) squares += double(sq[s][k]), deviations += double(dev[s][k]);
    for (; i < len; ++i) {
      const float d = b[i] * scale - centre;
      squares += double(d * d);
      deviations += double(d);
    }
  }
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

// The bin j whose edges hold v (edges[j] <= v < edges[j + 1]), from a guess near it.
int32_t exact_bin(float v, int32_t j, const std::vector<float>& edges) {
  while (v < edges[size_t(j)]) --j;
  while (v >= edges[size_t(j) + 1]) ++j;
  return j;
}

// Counts of the finite values in `bins` equal-width bins over [low, high]; values below
// low count in the first bin, the top edge and values above in the last. A value's bin is
// decided against the bins' edges exactly (edge j = low + j * width in double, the edges
// the bins' names print), so a value on an edge is in the bin above it on every machine.
// A vectorized pass guesses each bin in float arithmetic and marks the guesses that float
// rounding may have put on the wrong side of an edge (a position within `slack` of a whole
// number); only those are checked against the edges.
std::vector<int64_t> bin_counts(const float* x, int64_t n, double low, double high, int64_t bins, int64_t& counted) {
  const double width = (high - low) / double(bins);
  std::vector<float> edges(size_t(bins) + 1);  // (bins + 1): edges[j] <= x < edges[j + 1] in bin j
  edges.front() = -kInf;
  for (int64_t j = 1; j < bins; ++j) edges[size_t(j)] = float_at_or_above(low + double(j) * width);
  edges.back() = kInf;
  const float origin = float(low), per_width = float(double(bins) / (high - low)), top = float(bins);
  const Ints8 last = Ints8{} + int32_t(bins - 1);
  // The guess's error, in bins: a few roundings of positions up to bins and of the origin.
  const double eps = std::numeric_limits<float>::epsilon();
  const double error = 8.0 * eps * (double(bins) + (std::abs(low) + std::abs(high)) * double(per_width));
  const bool close_guess = error < 0.25;
  const float slack = close_guess ? float(error) : 1.0f;  // 1: check every value
  // Only the edges between bins can be misjudged: a guess within a quarter bin of low or of
  // high (all the values below low or above high among them) is in the end bin either way.
  // Exact in float: a close guess has bins < 2^18.
  const float inner_low = close_guess ? 0.5f : -1.0f, inner_high = close_guess ? top - 0.5f : top + 1.0f;
  constexpr int32_t kCheck = int32_t(1) << 30;  // the flag on a guess to check
  const int32_t dump = int32_t(bins);           // the slot of the values left out
  // Eight sets of counts, value i counting in set i % 8 (counts[set * stride + bin]):
  // neighbouring values often share a bin, and one count would make each increment wait
  // for the previous one.
  constexpr size_t kSets = 8;
  const size_t stride = size_t(bins) + 1;          // the last slot for the values left out
  std::vector<int64_t> counts(kSets * stride, 0);  // (8, bins + 1)
  int32_t guess[kBlock];
  for (int64_t start = 0; start < n; start += kBlock) {
    const float* b = x + start;
    const int64_t len = std::min(kBlock, n - start);
    int64_t i = 0;
    Ints8 any_check = {};
    for (; i + 8 <= len; i += 8) {
      const Floats8 v = load8(b + i);
      Floats8 t = (v - origin) * per_width;
      t = select8(t > 0.0f, t, Floats8{});  // below low, and NaN: 0
      t = select8(t < top, t, Floats8{} + top);
      Ints8 bin = __builtin_convertvector(t, Ints8);
      const Floats8 fraction = t - __builtin_convertvector(bin, Floats8);
      const Ints8 above_last = bin > last;
      bin = (bin & ~above_last) | (last & above_last);  // high itself, and above a fixed range
      const Ints8 check = ((fraction < slack) | (fraction > 1.0f - slack)) & (t > inner_low) & (t < inner_high);
      const Ints8 is_finite = abs8(v) <= kMaxFloat;
      const Ints8 guess8 = (is_finite & (bin | (check & kCheck))) | (~is_finite & dump);
      any_check |= is_finite & check;
      std::memcpy(guess + i, &guess8, sizeof guess8);
    }
    bool to_settle = i < len;
    for (int k = 0; k < 8; ++k) to_settle = to_settle || any_check[k] != 0;
    for (; i < len; ++i) guess[i] = std::isfinite(b[i]) ? kCheck : dump;  // the few left over: found from bin 0
    // The marked guesses settled first (most blocks have none), so the counting has no branch.
    for (i = 0; to_settle && i < len; ++i)
      if (guess[i] & kCheck) guess[i] = exact_bin(b[i], guess[i] & ~kCheck, edges);
    int64_t* const set = counts.data();
    for (i = 0; i + int64_t(kSets) <= len; i += int64_t(kSets))
      for (size_t k = 0; k < kSets; ++k) set[k * stride + size_t(guess[i + int64_t(k)])] += 1;
    for (; i < len; ++i) set[size_t(i % int64_t(kSets)) * stride + size_t(guess[i])] += 1;
  }
  counted = 0;
  std::vector<int64_t> total(size_t(bins), 0);
  for (size_t j = 0; j < size_t(bins); ++j) {
    for (size_t set = 0; set < kSets; ++set) total[j] += counts[set * stride + j];
    counted += total[j];
  }
  return total;
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

// The float guess of a bin is an int32 and exact for whole numbers up to 2^24.
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
