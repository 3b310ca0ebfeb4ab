#include "minidl/diagnostics/tensor_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "minidl/tensor/error.hpp"

namespace minidl::diagnostics {
namespace {

void check_not_empty(const Tensor& t, const char* what) {
  if (t.numel() == 0)
    throw Error(cat(what, ": expected a tensor with at least one element, got shape ", minidl::to_string(t.shape())));
}

// The finite values' range; [0, 0] when none is finite.
std::pair<double, double> finite_range(const float* x, int64_t n) {
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(x[i])) low = std::min(low, double(x[i])), high = std::max(high, double(x[i]));
  return low <= high ? std::make_pair(low, high) : std::make_pair(0.0, 0.0);
}

// Sum of f(x[i]) in eight independent double accumulators: one chain of dependent adds would
// make the recorder's passes latency-bound (the figures are summaries, not bit-exact sums).
template <typename F>
double sum_of(const float* x, int64_t n, F f) {
  double part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) part[k] += f(double(x[i + k]));
  for (; i < n; ++i) part[0] += f(double(x[i]));
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

// Mean and std with Bessel's correction, in two passes (no cancellation when the mean is
// large against the spread).
std::pair<double, double> moments(const float* x, int64_t n) {
  const double mean = sum_of(x, n, [](double v) { return v; }) / double(n);
  const double squares = sum_of(x, n, [mean](double v) { return (v - mean) * (v - mean); });
  return {mean, n > 1 ? std::sqrt(squares / double(n - 1)) : std::numeric_limits<double>::quiet_NaN()};
}

}  // namespace

double standard_deviation(const Tensor& t) {
  check_not_empty(t, "standard_deviation");
  return moments(t.data(), t.numel()).second;
}

Histogram histogram(const Tensor& t, const HistogramOptions& options) {
  check_not_empty(t, "histogram");
  if (options.bins < 1) throw Error(cat("histogram: expected at least 1 bin, got ", options.bins));
  const float* x = t.data();
  const int64_t n = t.numel();
  Histogram h;
  if (options.range > 0.0f) {
    h.low = -double(options.range);
    h.high = double(options.range);
  } else {
    std::tie(h.low, h.high) = finite_range(x, n);
    if (h.low == h.high) h.low -= 0.5, h.high += 0.5;
  }
  const double width = (h.high - h.low) / double(options.bins);
  const double per_width = double(options.bins) / (h.high - h.low);
  const double last = double(options.bins - 1);
  // Four sets of counts taken in turn: neighbouring values often share a bin, and one set
  // would make each increment wait for the previous one.
  std::vector<int64_t> counts(size_t(options.bins) * 4, 0);
  int64_t counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) continue;
    // Clamped before the cast, which then truncates a value >= 0: floor. The top edge joins
    // the last bin, values beyond a fixed range the end bins.
    const size_t bin = size_t(std::clamp((double(x[i]) - h.low) * per_width, 0.0, last));
    counts[size_t(i & 3) * size_t(options.bins) + bin] += 1;
    ++counted;
  }
  for (size_t b = 0; b < size_t(options.bins); ++b)
    counts[b] +=
        counts[b + size_t(options.bins)] + counts[b + 2 * size_t(options.bins)] + counts[b + 3 * size_t(options.bins)];
  counts.resize(size_t(options.bins));
  h.density.resize(counts.size());
  for (size_t b = 0; b < counts.size(); ++b)
    h.density[b] = counted > 0 ? double(counts[b]) / (double(counted) * width) : 0.0;
  return h;
}

TensorStats describe(const Tensor& t, float saturation, const HistogramOptions& options) {
  check_not_empty(t, "describe");
  TensorStats s;
  const float* x = t.data();
  const int64_t n = t.numel();
  std::tie(s.mean, s.std) = moments(x, n);
  int64_t saturated = 0;
  for (int64_t i = 0; i < n; ++i) saturated += std::abs(x[i]) > saturation;
  s.saturated = double(saturated) / double(n);
  s.histogram = histogram(t, options);
  return s;
}

}  // namespace minidl::diagnostics
